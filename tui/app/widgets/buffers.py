"""The Buffers pane: one card per call, its argument text as it stood at the step.

Everything a card shows is read from the engine's per-step readers
(``length_at``, ``scan_at``, ``fragments_at``, ``name_at``, ``id_at``): the
text at step N is a prefix of the call's buffer. Long buffers are shown around
the newest fragment, never rendered whole.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...engine.calls import Call
from ..keys import PANE_BINDINGS
from ..steps import StepIndex

#: lines of argument text a card shows around the newest fragment
WINDOW_LINES = 8


def call_title(call: Call, step: int, position: int) -> str:
    name = call.name_at(step) or "(no name yet)"
    return f"#{position} {name}"


def scan_words(call: Call, step: int) -> tuple[str, str]:
    """The scanner state in words, and the style name that goes with it."""
    scan = call.scan_at(step)
    if not scan.valid:
        return f"✖ not JSON from char {scan.bad_offset}", "bad"
    if scan.complete:
        return "✔ one complete JSON value", "good"
    if scan.offset == 0:
        return "empty so far", "meta"
    where = "inside a string" if scan.in_string else "between tokens"
    if scan.in_escape:
        where = "inside an escape"
    return f"valid so far · {where} · depth {scan.depth}", "open"


class CallCard(Widget):
    """One call's buffer at the app's step. The app sets ``step`` and
    ``boundaries`` and calls ``refresh``; a click posts ``Chosen``."""

    COMPONENT_CLASSES = {
        "call-card--meta",
        "call-card--added",
        "call-card--frag-a",
        "call-card--frag-b",
        "call-card--bad",
        "call-card--good",
        "call-card--open",
        "call-card--elided",
    }

    class Chosen(Message):
        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, index: StepIndex, call: Call, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.call = call
        self.step = 0
        self.boundaries = False

    def show(self, step: int, boundaries: bool, selected: bool) -> None:
        self.step = step
        self.boundaries = boundaries
        call = self.call
        self.display = call.first_event <= step
        self.set_class(selected, "-selected")
        self.set_class(self.index.added(call, step) is not None, "-touched")
        position = self.index.position.get(call.seq, call.seq)
        self.border_title = call_title(call, step, position)
        if len(self.index.stream.reassembler.choices) > 1:
            self.border_subtitle = f"choice {call.choice}"
        self.refresh(layout=True)

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Chosen(self.call.seq))

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"call-card--{name}", partial=True)

    def render(self) -> RenderableType:
        call, step = self.call, self.step
        meta = self._style("meta")
        wire_id = call.id_at(step)
        ident = Text(no_wrap=True, overflow="ellipsis")
        if call.index is not None:
            ident.append(f"index {call.index} · ", meta)
        ident.append("id ", meta)
        ident.append(wire_id or "(none yet)", None if wire_id else meta)
        counts = Text(no_wrap=True, overflow="ellipsis")
        k = call.fragments_at(step)
        counts.append(
            f"fragments {k}/{call.fragments} · chars {call.length_at(step):,}/{call.length:,}", meta
        )
        added = self.index.added(call, step)
        if added is not None:
            counts.append(" · ", meta)
            counts.append(f"+{added.end - added.start} now", self._style("added"))
        words, style = scan_words(call, step)
        scanner = Text()
        scanner.append("scanner ", meta)
        scanner.append(words, self._style(style))
        return Group(ident, self._arguments(), counts, scanner)

    def _arguments(self) -> Text:
        call, step = self.call, self.step
        end = call.length_at(step)
        if end == 0:
            return Text("(no argument text yet)", self._style("meta"))
        width = max(20, self.content_size.width or 40)
        budget = width * WINDOW_LINES
        start = max(0, end - budget)
        text = call.text
        out = Text(overflow="fold")
        if start:
            out.append(f"…{start:,} chars before… ", self._style("elided"))
        body = Text(text[start:end])
        if self.boundaries:
            ends = call.frag_end
            i = bisect_right(ends, start)
            prev = start
            styles = (self._style("frag-a"), self._style("frag-b"))
            while i < len(ends) and ends[i] <= end:
                if ends[i] > prev:
                    body.stylize(styles[i % 2], prev - start, ends[i] - start)
                prev = ends[i]
                i += 1
        added = self.index.added(call, step)
        if added is not None and added.end > added.start:
            body.stylize(self._style("added"), max(0, added.start - start), added.end - start)
        scan = call.scan_at(step)
        if scan.bad_offset is not None and start <= scan.bad_offset < end:
            at = scan.bad_offset - start
            body.stylize(self._style("bad"), at, at + 1)
        out.append_text(body)
        return out


class BuffersPane(VerticalScroll):
    """The cards, mounted as calls appear; hidden until their first event."""

    BINDINGS = [
        *PANE_BINDINGS,
        Binding("up,k", "app.select_call(-1)", "Previous call", show=False),
        Binding("down,j", "app.select_call(1)", "Next call", show=False),
        Binding("escape", "app.unpin", "Automatic selection", show=False),
    ]

    def __init__(self, index: StepIndex, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.cards: dict[int, CallCard] = {}
        #: the selection last scrolled into view: scroll only when it changes
        self._scrolled_to: int | None = None
        self.border_title = "Buffers"

    def compose(self):
        yield Static(
            "No tool call yet at this event. Step with n / →.", id="buffers-empty", classes="empty"
        )

    def show(self, step: int, boundaries: bool, selected: int | None) -> None:
        self._mount_new_cards()
        shown = 0
        for seq, card in self.cards.items():
            card.show(step, boundaries, seq == selected)
            shown += card.display
        self.query_one("#buffers-empty").display = shown == 0
        self.border_subtitle = f"{shown} call{'s' if shown != 1 else ''}"
        card = self.cards.get(selected) if selected is not None else None
        if card is not None and card.display and selected != self._scrolled_to:
            self.scroll_to_widget(card, animate=False, immediate=True)
        self._scrolled_to = selected

    def _mount_new_cards(self) -> None:
        """Cards for calls the stream grew since last time, in display order."""
        following: CallCard | None = None
        for call in reversed(self.index.calls):
            card = self.cards.get(call.seq)
            if card is None:
                card = self.cards[call.seq] = CallCard(self.index, call)
                if following is None:
                    self.mount(card)
                else:
                    self.mount(card, before=following)
            following = card
