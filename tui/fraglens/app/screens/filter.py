"""``&``: choose which events the Stream pane shows.

One list of choices, each led by its group: the two kinds of noise to hide
(keep-alives, usage-only chunks), the calls, the event types (with how many
events of each), the diagnostics (any, or by code). ``space`` ticks a choice, ``enter`` applies
them all, ``backspace`` clears them, ``esc`` leaves the filter as it was.
Within a group any ticked choice lets an event through; across groups every
group with a tick must (see ``rows.py``).
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from ...engine.plural import counted
from ..keys import HELP_BINDING
from ..rows import KEEP_ALIVE, RowFilter
from ..steps import StepIndex

_HIDE_KEEP_ALIVES = "hide:keep-alives"
_HIDE_USAGE = "hide:usage"
_ANY_DIAGNOSTIC = "diagnostic:any"


def choices(index: StepIndex, current: RowFilter) -> list[Selection[str]]:
    """Every choice the stream offers, ticked as ``current`` has them, each
    led by its group's name."""
    out: list[Selection[str]] = [
        _choice("hide", "keep-alives (SSE comments)", _HIDE_KEEP_ALIVES,
                current.hide_keep_alives),
        _choice("hide", "usage-only chunks", _HIDE_USAGE, current.hide_usage),
    ]
    for position, call in enumerate(index.calls):
        label = f"#{position} {call.name or '(no name)'} ({counted(call.fragments, 'fragment')})"
        out.append(_choice("call", label, f"call:{call.seq}", call.seq in current.calls))
    labels = Counter(index.stream.labels)
    for label, count in sorted(labels.items(), key=lambda item: -item[1]):
        shown = "keep-alive (comment)" if label == KEEP_ALIVE else label
        out.append(_choice("type", f"{shown} ({count:,})", f"type:{label}",
                           label in current.types))
    codes = Counter(d.code for d in index.diagnostics_at(None) if d.event is not None)
    if codes:
        out.append(_choice("diagnostic", "any", _ANY_DIAGNOSTIC, current.any_diagnostic))
        for code, count in sorted(codes.items()):
            out.append(_choice("diagnostic", f"{code} ({count:,})", f"code:{code}",
                               code in current.codes))
    return out


def _choice(group: str, label: str, value: str, ticked: bool) -> Selection[str]:
    # Text, not markup: a label may be "[DONE]"
    prompt = Text.assemble((f"{group:<10} ", "dim"), label)
    return Selection(prompt, value, ticked)


def from_ticks(ticked: list[str]) -> RowFilter:
    """The filter the ticked choices make."""
    def picked(kind: str) -> frozenset[str]:
        return frozenset(v.split(":", 1)[1] for v in ticked if v.startswith(kind + ":"))

    return RowFilter(
        calls=frozenset(int(seq) for seq in picked("call")),
        types=picked("type"),
        codes=picked("code"),
        any_diagnostic=_ANY_DIAGNOSTIC in ticked,
        hide_keep_alives=_HIDE_KEEP_ALIVES in ticked,
        hide_usage=_HIDE_USAGE in ticked,
    )


class FilterScreen(ModalScreen[RowFilter | None]):
    """Returns the new filter, or None (left as it was)."""

    ABOUT_TITLE = "filter the Stream pane"
    ABOUT = [
        (
            "Filter",
            "Choices in four groups: calls, event types, diagnostics, noise. Within"
            " a group any ticked choice lets an event through; across groups all "
            "must.",
        ),
    ]
    ABOUT_KEYS = [("Filter", "↑ ↓  space", "move, tick or untick a choice")]
    BINDINGS = [
        Binding("enter", "apply", "Apply", priority=True, id="filter.apply"),
        Binding("backspace", "clear", "Clear", id="filter.clear"),
        Binding("escape,q", "dismiss(None)", "Cancel", id="filter.cancel"),
        HELP_BINDING,
    ]

    def __init__(self, index: StepIndex, current: RowFilter) -> None:
        super().__init__()
        self.index = index
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="filter-box") as box:
            box.border_title = "Filter the Stream pane"
            box.border_subtitle = "space ticks · enter applies · backspace clears · esc cancels"
            yield Static(
                "Stepping (n / p) goes from shown event to shown event; each step still "
                "shows the state after every event up to it, hidden ones included.",
                id="filter-about",
            )
            yield SelectionList[str](*choices(self.index, self.current), id="filter-list")

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    def action_apply(self) -> None:
        self.dismiss(from_ticks(list(self.query_one(SelectionList).selected)))

    def action_clear(self) -> None:
        self.dismiss(RowFilter())
