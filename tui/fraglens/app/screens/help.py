"""``?``: every key, and what each pane says, on one screen."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import PANE_KEYS, SECTIONS

PANES = [
    (
        "Stream",
        "Every event as it arrived: number, time (when the recording has times), type, "
        "then which call it fed (#0, #1…) and the chunk on one line. Keys that repeat "
        "the previous chunk are elided ({…,) and the tool-call bytes are highlighted. "
        "▶ marks the current event; ● ▲ ✖ mark an info, warning or error diagnostic.",
    ),
    (
        "Buffers",
        "One card per tool call: its argument text as it stood after the current "
        "event, the bytes this event added highlighted (+N now), fragment and char "
        "counts, and the JSON scanner's state: valid (a prefix of some valid JSON) with "
        "where it stands and the nesting depth, complete, or invalid from a char. "
        "▶ marks the selected call: c, r and f act on it.",
    ),
    (
        "Parse",
        "Each call's verdict once it is finished: ok, empty, repaired, truncated, "
        "invalid or aborted, the parsed value, and for a repair what changed, with the "
        "raw and repaired text side by side. Below: the diagnostics up to the current "
        "event; click e12 to go to event 12, click a code (or press e) for what it means "
        "and what to do, the text `fraglens explain CODE` prints.",
    ),
    (
        "A step",
        "is one event. The panes show the state after it, exactly as it was then: "
        "n and p step, ] goes to the next diagnostic, f steps through one call only.",
    ),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss(None)", "Close", id="help.close"),
    ]

    def __init__(self, keys: dict[str, list[str]], bindings: list[Binding]) -> None:
        """``keys``: binding id -> the keys that trigger it now (after a keymap)."""
        super().__init__()
        self.keys = keys
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "fraglens — keys and panes"
            box.border_subtitle = "esc closes"
            yield Static(self._panes(), id="help-panes")
            yield Static(self._keys(), id="help-keys")

    def _panes(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(ratio=1)
        for name, what in PANES:
            table.add_row(name, what)
        return table

    def _keys(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(ratio=1)
        section = None
        for binding in self.bindings:
            assert binding.id is not None
            head = SECTIONS[binding.id.split(".")[0]]
            keys = "  ".join(self.keys.get(binding.id, [])) or "(unbound)"
            table.add_row(head if head != section else "", keys, binding.tooltip)
            section = head
        pane = None
        for where, keys, what in PANE_KEYS:
            table.add_row(where if where != pane else "", keys, what)
            pane = where
        return table
