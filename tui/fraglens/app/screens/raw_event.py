"""``enter``: one event in full, and what the engine took from it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import HELP_BINDING
from ..scrubbed import scrubbed
from ..steps import StepIndex
from ..widgets.chunk_line import parse
from ..widgets.parse import SEVERITY_GLYPH, pretty

#: a raw event is shown whole up to this many pretty-printed lines
RAW_LINES = 5000


class RawEventScreen(ModalScreen[None]):
    ABOUT_TITLE = "the event as it came"
    ABOUT = [
        (
            "Raw event",
            "The current event's payload as it came, its JSON pretty-printed, and "
            "the diagnostics it carries.",
        ),
    ]
    ABOUT_KEYS = [("Raw event", "↑ ↓  pgup pgdn", "scroll")]
    BINDINGS = [Binding("escape,enter,q", "dismiss(None)", "Close", id="raw.close"), HELP_BINDING]

    def __init__(self, index: StepIndex, number: int) -> None:
        super().__init__()
        self.index = index
        self.number = number

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="raw-box") as box:
            box.border_title = f"event {self.number}"
            box.border_subtitle = "esc closes"
            scrub = self.index.scrub
            yield Static(scrubbed(self._about(), scrub), id="raw-about")
            yield Static(scrubbed(self._body(), scrub), id="raw-body")

    def _about(self) -> Text:
        stream = self.index.stream
        ev = stream.events[self.number]
        facts = [f"kind {ev.kind}", f"type {stream.labels[self.number]}"]
        if ev.event:
            facts.append(f"SSE event {ev.event}")
        if ev.id:
            facts.append(f"SSE id {ev.id}")
        if ev.time is not None:
            facts.append(f"at {ev.time:.3f}s")
        if ev.span:
            facts.append(f"bytes {ev.span[0]:,}–{ev.span[1]:,}")
        out = Text(" · ".join(facts), end="")
        for added in self.index.added_at(self.number):
            name = added.call.name_at(self.number) or "(no name yet)"
            position = self.index.position[added.call.seq]
            out.append(f"\nadded to #{position} {name}: ", "bold")
            out.append(repr(added.text) if added.text else "(an empty fragment)")
        for d in self.index.diagnostics_at(self.number):
            if d.event == self.number:
                out.append(f"\n{SEVERITY_GLYPH[d.severity]} {d.code}: {d.message}", "bold")
        return out

    def _body(self) -> Text:
        ev = self.index.stream.events[self.number]
        value, ok = parse(ev.data) if ev.kind == "data" else (None, False)
        if ok:
            return pretty(value, RAW_LINES, "cut for the screen", self.index.scrub)
        return Text(ev.data, end="")
