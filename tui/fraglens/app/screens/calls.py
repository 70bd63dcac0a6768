"""``C``: every call on one line each, and when the stream arrived.

One line per call (position, id, name, verdict, size, first to last event)
so that a session with 15 calls fits on one screen; ``enter`` goes to the
chosen call's first event and selects it. Above the list: the usage the
stream reported and what it cost at the table's prices (``check``'s
figure), and, in a recording with receive times, the timing the ``check``
report gives (time to the first event and to the first tool byte,
duration, stalls) with a sparkline of the gaps between events.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Sparkline, Static
from textual.widgets.option_list import Option

from ...engine.plural import counted
from ...report.cost import cost_text
from ...report.document import stream_cost
from ...report.timing import stream_timing
from ...report.usage import usage_text
from ..keys import HELP_BINDING
from ..steps import StepIndex
from ..widgets.parse import STATUS_GLYPH

#: the longest a name or an id is shown; longer ones end in "…"
LONGEST = 32
#: the fewest cells a name is cut to before the row drops the id instead
NAME_AT_LEAST = 12


def call_lines(index: StepIndex, width: int) -> list[Text]:
    """One line per call, ``#0  call_abc  read_file  ✔ ok  1,234 chars  e3–e40``,
    each column as wide as its widest value (the verdicts as wide as the
    longest verdict there is), so that the rows line up. When ``width`` cells
    are too few, the id goes first (the name says which call it is), then the
    name is cut: a row never wraps."""
    rows = []
    for position, call in enumerate(index.calls):
        result = call.result
        rows.append((
            f"#{position}",
            _cut(index.scrub.text(call.id or "(no id)"), LONGEST),
            _cut(index.scrub.text(call.name or "(no name)"), LONGEST),
            STATUS_GLYPH[result.status] if result is not None else "… open",
            counted(call.length, "char"),
            f"e{call.first_event}–e{max(call.first_event, call.last_event)}",
        ))
    if not rows:
        return []
    widths = [max(len(row[k]) for row in rows) for k in range(6)]
    widths[3] = max(len(g) for g in [*STATUS_GLYPH.values(), "… open"])
    gap = 2
    keep = [True] * 6
    if sum(widths) + gap * 5 > width:
        keep[1] = False  # the id
    room = width - sum(w for w, k in zip(widths, keep, strict=True) if k) - gap * (sum(keep) - 1)
    if room < 0:
        widths[2] = max(NAME_AT_LEAST, widths[2] + room)
    out = []
    for row in rows:
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        cells = [(c, w, k) for c, w, k in zip(row, widths, range(6), strict=True) if keep[k]]
        for i, (cell, w, k) in enumerate(cells):
            text = _cut(cell, w)
            padded = text.rjust(w) if k == 4 else text.ljust(w)
            line.append(padded, "bold" if k in (0, 2) else "")
            if i < len(cells) - 1:
                line.append(" " * gap)
        out.append(line)
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def gaps_ms(index: StepIndex) -> list[float]:
    """Milliseconds between each timed event and the timed event before it."""
    out: list[float] = []
    previous: float | None = None
    for ev in index.stream.events:
        if ev.time is None:
            continue
        if previous is not None:
            out.append((ev.time - previous) * 1000)
        previous = ev.time
    return out


def about(index: StepIndex) -> str:
    stream = index.stream
    lines: list[str] = []
    used, found, note = stream_cost(stream)
    if used is not None:
        lines.append(f"usage: {usage_text(used.as_json())} tokens")
        lines.append(f"cost: {cost_text(found, note)}")
    timing = stream_timing(stream) if index.timed else None
    if timing is not None:
        if timing.get("note"):
            lines.append(f"timing: {timing['note']}; it took {timing['duration_ms']:,} ms")
        else:
            parts = [
                f"first event {timing['first_event_ms']:,} ms",
                f"first tool byte {timing['first_tool_byte_ms']:,} ms"
                if timing["first_tool_byte_ms"] is not None
                else "no tool byte",
                f"done at {timing['duration_ms']:,} ms",
                f"{counted(len(timing['stalls']), 'stall')} over 1 s",
            ]
            if timing["output_tokens_per_s"] is not None:
                parts.append(f"{timing['output_tokens_per_s']:,} tokens/s")
            lines.append("timing: " + " · ".join(parts))
    elif not index.timed:
        lines.append("no receive times in this capture (a recording, HAR or live call has them)")
    return "\n".join(lines)


class CallsScreen(ModalScreen[int | None]):
    """Returns the chosen call's seq, or None."""

    ABOUT_TITLE = "every call"
    ABOUT = [
        (
            "Calls",
            "Every call on one line: position, id, name, verdict, size, first to "
            "last event; above, the usage and timing the stream reported.",
        ),
    ]
    ABOUT_KEYS = [
        ("Calls", "↑ ↓  enter", "choose a call; enter goes to its first event and selects it")
    ]
    BINDINGS = [Binding("escape,C,q", "dismiss(None)", "Close", id="calls.close"), HELP_BINDING]

    def __init__(self, index: StepIndex) -> None:
        super().__init__()
        self.index = index

    def compose(self) -> ComposeResult:
        index = self.index
        with Vertical(id="calls-box") as box:
            n = len(index.calls)
            box.border_title = f"{n} call{'' if n == 1 else 's'}"
            box.border_subtitle = "enter goes to the call · esc closes"
            yield Static(about(index), id="calls-about")
            gaps = gaps_ms(index) if index.timed else []
            if gaps:
                yield Static("gaps between events (ms), in arrival order:", id="calls-gaps-label")
                yield Sparkline(gaps, summary_function=max, id="calls-gaps")
            yield OptionList(id="calls-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_resize(self) -> None:
        """The rows are laid out for the list's width: again when it changes."""
        listing = self.query_one(OptionList)
        width = listing.scrollable_content_region.width - 2  # an option's padding
        if width <= 0:
            return
        highlighted = listing.highlighted
        listing.clear_options()
        lines = call_lines(self.index, width)
        calls = self.index.calls
        listing.add_options(
            Option(line, id=str(c.seq)) for line, c in zip(lines, calls, strict=True)
        )
        listing.highlighted = highlighted if highlighted is not None else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        assert event.option.id is not None
        self.dismiss(int(event.option.id))
