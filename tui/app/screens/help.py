"""``?``: every key, and what each pane says, on one screen."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import PANE_KEYS, SECTIONS

PANES = [
    (
        "Stream",
        "every event as it arrived: number, time when recorded, type, and the chunk "
        "on one line with the repeated envelope elided ({…,) and the tool-call bytes "
        "highlighted. ▶ marks the current event; ▲ ✖ · mark events with a warning, error, "
        "info.",
    ),
    (
        "Buffers",
        "one card per tool call: its argument text after the current event, the "
        "bytes this event added highlighted, fragment and char counts, and the JSON "
        "scanner's state (depth, inside a string, valid so far, complete, first bad char).",
    ),
    (
        "Parse",
        "each call's verdict once it is finished (ok, empty, repaired, truncated, "
        "invalid, aborted), the parsed value, what a repair changed with the raw and "
        "repaired text side by side; below, the diagnostics up to the current event.",
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
        table.add_row("", "")
        table.add_row(
            "step",
            Text(
                "the state after event N, exactly: n / p move one event, "
                "] jumps to the next diagnostic, f steps through one call."
            ),
        )
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
