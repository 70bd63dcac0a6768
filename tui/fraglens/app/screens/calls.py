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

from ...report.cost import PriceOptions, cost_of, cost_text
from ...report.identity import streamed_identity
from ...report.timing import stream_timing
from ...report.usage import read_usage, usage_text
from ..steps import StepIndex
from ..widgets.parse import STATUS_GLYPH


def call_line(index: StepIndex, position: int) -> Text:
    """``#0  call_abc  read_file  ✔ ok  1,234 chars  e3–e40``."""
    call = index.calls[position]
    result = call.result
    status = STATUS_GLYPH[result.status] if result is not None else "… open"
    last = max(call.first_event, call.last_event)
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f"#{position:<3}", "bold")
    line.append(f"{call.id or '(no id)':<28} ")
    line.append(f"{call.name or '(no name)':<24} ", "bold")
    line.append(f"{status:<12} ")
    line.append(f"{call.length:>10,} chars  e{call.first_event}–e{last}")
    return line


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
    r = stream.reassembler
    used = read_usage(r.usage[-1][1]) if r.usage else None
    if used is not None:
        found, note = cost_of(used, streamed_identity(stream.events).model, stream.format,
                              PriceOptions())
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
                f"{len(timing['stalls'])} stall(s) over 1 s",
            ]
            if timing["output_tokens_per_s"] is not None:
                parts.append(f"{timing['output_tokens_per_s']:,} tokens/s")
            lines.append("timing: " + " · ".join(parts))
    elif not index.timed:
        lines.append("no receive times in this capture (a recording, HAR or live call has them)")
    return "\n".join(lines)


class CallsScreen(ModalScreen[int | None]):
    """Returns the chosen call's seq, or None."""

    BINDINGS = [Binding("escape,C,q", "dismiss(None)", "Close", id="calls.close")]

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
            yield OptionList(
                *(Option(call_line(index, i), id=str(c.seq)) for i, c in enumerate(index.calls)),
                id="calls-list",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        assert event.option.id is not None
        self.dismiss(int(event.option.id))
