"""The Buffers pane: one card per call, its argument text as it stood at the step.

Everything a card shows is read from the engine's per-step readers
(``length_at``, ``scan_at``, ``fragments_at``, ``name_at``, ``id_at``): the
text at step N is a prefix of the call's buffer. Long buffers are shown around
the newest fragment, never rendered whole.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from ...engine.calls import Call
from ..keys import PANE_BINDINGS
from ..scrubbed import scrubbed, window_start
from ..steps import StepIndex
from .cells import cell_safe
from .prerendered import Prerendered
from .styled import ComponentStyles
from .titled import Titled

#: lines of argument text a card shows (the newest), at most and at least
WINDOW_LINES = 12
MIN_LINES = 2
#: a card's lines besides its text: two borders, id, counts, scanner
CARD_CHROME = 5


#: what a call's wire ``index`` counts, in the formats where it is not the
#: position among the tool calls: Anthropic and Bedrock number every content
#: block (a text block before the call is block 0, so the first call is block
#: 1); the Responses API numbers output items
INDEX_COUNTS = {
    "anthropic": "content block",
    "bedrock-converse": "content block",
    "bedrock-invoke": "content block",
    "openai-responses": "output item",
}


def call_title(call: Call, step: int, position: int) -> str:
    name = call.name_at(step) or "(no name yet)"
    return f"#{position} {name}"


def scan_words(call: Call, step: int) -> tuple[str, str]:
    """The scanner state in a few words, and the style name that goes with it."""
    scan = call.scan_at(step)
    if not scan.valid:
        return f"✖ invalid from char {scan.bad_offset}", "bad"
    if scan.complete:
        return "✔ complete JSON value", "good"
    if scan.offset == 0:
        return "empty so far", "meta"
    # "valid": a prefix of some valid JSON text
    where = "in escape" if scan.in_escape else "in string" if scan.in_string else "open"
    return f"valid · {where} · depth {scan.depth}", "open"


class CallCard(ComponentStyles, Titled, Prerendered):
    """One call's buffer at the app's step. The pane calls ``show`` with the
    step; a click posts ``Chosen``.

    It renders again only when what it shows changed, and asks for a layout
    pass only when its height did: stepping usually changes one card's text by
    a few characters, and a layout of the whole screen per step is what made
    stepping slow.
    """

    STYLE_PREFIX = "call-card"

    COMPONENT_CLASSES = {
        "call-card--meta",
        "call-card--added",
        "call-card--frag-a",
        "call-card--frag-b",
        "call-card--bad",
        "call-card--good",
        "call-card--open",
        "call-card--elided",
        "call-card--match",
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
        self.selected = False
        #: at most this many lines of argument text, the newest ones
        self.text_lines = WINDOW_LINES
        #: the last search's pattern: its matches are marked in the text shown
        self.highlight: re.Pattern[str] | None = None
        self._shows: tuple = ()

    def _synthetic_id(self, step: int) -> str | None:
        """The id fraglens gave the call when none came, from the event that
        says so (``id-missing``) on: the card then says what the diagnostic says."""
        call = self.call
        made_up_at = self.index.id_made_up.get(call.seq)
        if call.synthetic_id is None or made_up_at is None or made_up_at > step:
            return None
        return call.synthetic_id

    def show(
        self, step: int, boundaries: bool, selected: bool, highlight: re.Pattern[str] | None = None
    ) -> None:
        call = self.call
        self.display = call.first_event <= step
        self.step, self.boundaries, self.selected = step, boundaries, selected
        self.highlight = highlight
        if not self.display:
            return
        position = self.index.position.get(call.seq, call.seq)
        title = call_title(call, step, position)
        # the selection is in the title, not a CSS class: a class change restyles
        # the card, which costs more than the rest of a step
        self.set_titles(
            f"[reverse] ▶ {title} [/]" if selected else f" {title} ",
            f"choice {call.choice}" if len(self.index.stream.reassembler.choices) > 1 else None,
        )
        added = self.index.added(call, step)
        shows = (
            call.fragments_at(step),
            added is not None,
            call.id_at(step),
            self._synthetic_id(step),
            boundaries,
            self.text_lines,
            highlight,
        )
        if shows != self._shows:
            self._shows = shows
            self.update_content()

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Chosen(self.call.seq))

    def content(self, width: int) -> RenderableType:
        return Text("\n", end="").join(self._compose_lines(width))

    def _compose_lines(self, width: int) -> list[Text]:
        call, step = self.call, self.step
        meta = self._style("meta")
        wire_id = call.id_at(step)
        ident = Text(no_wrap=True, overflow="ellipsis", end="")
        if call.index is not None:
            counts_what = INDEX_COUNTS.get(self.index.stream.format or "", "index")
            ident.append(f"{counts_what} {call.index} · ", meta)
        made_up = None if wire_id else self._synthetic_id(step)
        if made_up is not None:
            # none came: the id fraglens gave it, as id-missing says
            ident.append("made-up id ", meta)
            ident.append(made_up)
        else:
            ident.append("id ", meta)
            ident.append(wire_id or "(none yet)", None if wire_id else meta)
        # most important first: the line is cut at the card's width
        counts = Text(no_wrap=True, overflow="ellipsis", end="")
        added = self.index.added(call, step)
        if added is not None:
            counts.append(f"+{added.end - added.start} now", self._style("added"))
            counts.append(" · ", meta)
        k = call.fragments_at(step)
        counts.append(
            f"{k}/{call.fragments} frags · {call.length_at(step):,}/{call.length:,} chars", meta
        )
        words, style = scan_words(call, step)
        scanner = Text(words, self._style(style), no_wrap=True, overflow="ellipsis", end="")
        lines = [ident, *self._argument_lines(width), counts, scanner]
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return lines

    def _argument_lines(self, width: int) -> list[Text]:
        """The newest ``text_lines`` lines of the text at the step, wrapped at
        ``width``; an ellipsis opens the first one when older text is hidden."""
        call, step = self.call, self.step
        end = call.length_at(step)
        if end == 0:
            return [Text("(no argument text yet)", self._style("meta"), end="")]
        scrub = self.index.scrub
        start = window_start(call.text, max(0, end - width * self.text_lines), end, scrub)
        body = Text(cell_safe(call.text[start:end]), end="")
        if self.boundaries:
            ends = call.boundaries_at(step)
            i = bisect_right(ends, start)
            prev = start
            styles = (self._style("frag-a"), self._style("frag-b"))
            while i < len(ends):
                if ends[i] > prev:
                    body.stylize(styles[i % 2], prev - start, ends[i] - start)
                prev = ends[i]
                i += 1
        if self.highlight is not None:
            for found in self.highlight.finditer(body.plain):
                body.stylize(self._style("match"), found.start(), found.end())
        added = self.index.added(call, step)
        if added is not None and added.end > added.start:
            body.stylize(self._style("added"), max(0, added.start - start), added.end - start)
        scan = call.scan_at(step)
        if scan.bad_offset is not None and start <= scan.bad_offset < end:
            at = scan.bad_offset - start
            body.stylize(self._style("bad"), at, at + 1)
        body = scrubbed(body, scrub)
        lines = list(body.wrap(self.app.console, width, overflow="fold"))
        cut = start > 0 or len(lines) > self.text_lines
        lines = lines[-self.text_lines :]
        if cut:
            first = lines[0]
            lines[0] = Text("…", self._style("elided"), end="") + first[1:]
        for line in lines:
            line.end = ""
        return lines


class AssistantText(ComponentStyles, Titled, Prerendered):
    """What the assistant said besides its calls (text, reasoning), as it stood
    at the step: the newest lines, with what this event added highlighted."""

    STYLE_PREFIX = "said"
    COMPONENT_CLASSES = {"said--meta", "said--added"}
    #: lines of text shown per choice and channel
    LINES = 3

    def __init__(self, index: StepIndex, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.step = 0
        self._shows: tuple = ()
        self.border_title = "assistant text"

    def show(self, step: int) -> None:
        self.step = step
        said = self.index.said_at(step, 0)
        self.display = bool(said)
        shows = tuple((s.choice, s.channel, s.length, s.added) for s in said)
        if shows != self._shows:
            self._shows = shows
            self.update_content()

    def content(self, width: int) -> RenderableType:
        meta = self._style("meta")
        several = len(self.index.stream.reassembler.choices) > 1
        lines: list[Text] = []
        scrub = self.index.scrub
        shown = width * self.LINES
        for s in self.index.said_at(self.step, shown + scrub.reach):
            head = Text(no_wrap=True, overflow="ellipsis", end="")
            if s.added:
                head.append(f"+{len(s.added)} now", self._style("added"))
                head.append(" · ", meta)
            label = "reasoning" if s.channel == "reasoning" else "text"
            where = f"choice {s.choice} " if several else ""
            head.append(f"{where}{label} · {s.length:,} chars", meta)
            tail = s.tail[window_start(s.tail, max(0, len(s.tail) - shown), len(s.tail), scrub) :]
            body = Text(cell_safe(tail), end="")
            if s.added and tail.endswith(s.added):
                body.stylize(self._style("added"), len(tail) - len(s.added))
            body = scrubbed(body, scrub)
            wrapped = list(body.wrap(self.app.console, width, overflow="fold"))[-self.LINES :]
            for line in wrapped:
                line.end = ""
            lines += [*wrapped, head]
        for line in lines:
            line.truncate(width, overflow="ellipsis")
        return Text("\n", end="").join(lines)


class BuffersPane(Titled, VerticalScroll):
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
        self._last: tuple[int, bool, int | None] | None = None
        #: the last search's pattern, handed to every card
        self.highlight: re.Pattern[str] | None = None
        self.border_title = "Buffers"

    def compose(self):
        yield Static(
            "No tool call yet at this event. Step with n / →.", id="buffers-empty", classes="empty"
        )
        yield AssistantText(self.index, id="said")

    def show(self, step: int, boundaries: bool, selected: int | None) -> None:
        self._mount_new_cards()
        highlight = self.highlight
        self._last = (step, boundaries, selected)
        shown = sum(call.first_event <= step for call in self.index.calls)
        # share the height: each card shows as many text lines as fit
        height = self.scrollable_content_region.height
        lines = WINDOW_LINES
        if height:
            lines = max(MIN_LINES, min(WINDOW_LINES, height // max(1, shown) - CARD_CHROME))
        for seq, card in self.cards.items():
            card.text_lines = lines
            card.show(step, boundaries, seq == selected, highlight)
        self.query_one(AssistantText).show(step)
        self.query_one("#buffers-empty").display = shown == 0
        self.set_titles(subtitle=f"{shown} call{'s' if shown != 1 else ''}")
        chosen = self.cards.get(selected) if selected is not None else None
        if chosen is not None and chosen.display and selected != self._scrolled_to:
            # after the layout that places a card that may have just appeared
            self.call_after_refresh(self.scroll_to_widget, chosen, animate=False)
        self._scrolled_to = selected

    def reveal(self) -> None:
        """Scroll the selected card into view at the next show, even if it was
        selected already (the user may have scrolled away)."""
        self._scrolled_to = None

    def on_resize(self) -> None:
        if self._last is not None:
            self._scrolled_to = None  # bring the selected card back into view
            self.show(*self._last)

    def _mount_new_cards(self) -> None:
        """Cards for calls the stream grew since last time, in display order,
        above the assistant's text."""
        following: Widget = self.query_one(AssistantText)
        for call in reversed(self.index.calls):
            card = self.cards.get(call.seq)
            if card is None:
                card = self.cards[call.seq] = CallCard(self.index, call)
                self.mount(card, before=following)
            following = card
