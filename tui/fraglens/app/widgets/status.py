"""The status line: where we are, how the stream ended, playing or not, and a
slot for the live-calls and proxy features to say what they are doing."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from .styled import ComponentStyles


@dataclass(frozen=True, slots=True)
class Status:
    """What the app tells the status line; set as a whole, rendered as one line."""

    source: str
    step: int
    last: int
    time: float | None = None
    format: str | None = None
    framing: str | None = None
    end: str | None = None
    playing: bool = False
    speed: float = 1.0
    paced: bool = False
    follow: str | None = None
    live: str = ""
    new_events: int = 0
    #: how much of the capture is read (0 to 1) while it loads, else None
    loading: float | None = None
    #: the whole stream's verdicts in a few words, once it is read
    summary: str = ""


#: cells of the loading bar
BAR = 10
#: what the status line leaves out when it is too long, first to last: the
#: event's time, the format and framing, how the stream ended (the Diagnostics
#: say it too; a live call's line says it is streaming), the play speed, the
#: file's name or the URL, the verdicts' summary; the event, the playing
#: state, what a live call is doing and the new events stay
DROPPED_FIRST = ("time", "format", "end", "speed", "source", "summary")


def loading_bar(fraction: float) -> str:
    """``▰▰▰▱▱▱▱▱▱▱ 30%``: readable without colour."""
    filled = min(BAR, int(fraction * BAR))
    return "▰" * filled + "▱" * (BAR - filled) + f" {int(fraction * 100)}%"


class StatusBar(ComponentStyles, Widget):
    STYLE_PREFIX = "status-bar"

    COMPONENT_CLASSES = {"status-bar--key", "status-bar--live", "status-bar--play"}

    def __init__(self, status: Status, **kwargs) -> None:
        super().__init__(**kwargs)
        self.status = status

    def show(self, status: Status) -> None:
        if status != self.status:
            self.status = status
            self.refresh()

    def render(self) -> Text:
        """The line; when it is longer than the widget, the least useful parts go
        first (``DROPPED_FIRST``), whole, so that what stays is never cut."""
        width = self.size.width or 10_000
        dropped: set[str] = set()
        line = self._line(dropped)
        for part in DROPPED_FIRST:
            if line.cell_len <= width:
                break
            dropped.add(part)
            line = self._line(dropped)
        return line

    def _line(self, dropped: set[str]) -> Text:
        s = self.status
        key = self._style("key")
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        if s.loading is not None:
            out.append(f" loading {loading_bar(s.loading)} ", self._style("live"))
        # before the first event (a live call not answered yet, or refused) there
        # is no step to show: "event 0/-1" read as a count
        if s.last >= 0:
            out.append(f" event {s.step}/{s.last}", key)
        else:
            out.append(" no events yet" if s.end in ("streaming", "loading") else " no events", key)
        if s.time is not None and "time" not in dropped:
            out.append(f" at {s.time:.3f}s")
        if s.playing:
            pace = "recorded pace" if s.paced else "steady"
            out.append(f"  ▶ playing ×{s.speed:g} ({pace})", self._style("play"))
        elif s.speed != 1 and "speed" not in dropped:
            out.append(f"  speed ×{s.speed:g}")
        if s.follow:
            out.append(f"  following {s.follow}", key)
        if s.new_events:
            out.append(f"  {s.new_events:,} new (end to catch up)", self._style("live"))
        if s.live:
            out.append(f"  {s.live}", self._style("live"))
        if s.summary and "summary" not in dropped:
            out.append(f"  {s.summary}", key)
        formats = (s.format, s.framing) if "format" not in dropped else ()
        end = f"end: {s.end}" if s.end and "end" not in dropped else ""
        described = " · ".join(x for x in (*formats, end) if x)
        if "source" not in dropped:
            out.append(f"  {s.source}")
            if described:
                out.append(f" ({described})")
        elif described:
            out.append(f"  {described}")
        return out
