"""The Stream pane: every event as it arrived, one line each.

A Line API ``ScrollView``: only the rows on screen are rendered, and rendered
rows are kept in an LRU cache, so a 100k-event recording scrolls like a short
one (the toolong approach). The current event is marked with ``▶`` and a
reversed row, so it stays visible without colour (``NO_COLOR``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...engine.plural import counted
from ..keys import PANE_BINDINGS
from ..rows import RowFilter, Rows
from ..scrubbed import scrubbed
from ..steps import StepIndex
from .cells import cell_safe
from .chunk_line import ChunkLine, compact, mark, parse, window
from .styled import ComponentStyles
from .titled import Titled

_SEVERITY_GLYPH = {0: ("●", "info"), 1: ("▲", "warning"), 2: ("✖", "error")}
#: How far back to look for the previous data chunk when eliding the envelope.
_LOOKBACK = 8


#: characters of one fragment a row shows
ROW_CHARS = 400
#: the widest type column; longer types are cut with "…"
LABEL_WIDTH = 18


def short_label(label: str) -> str:
    """Drop the namespace every chunk of a stream repeats, and shorten the
    long Anthropic block names the same way for all three (``block_start``,
    ``block_delta``, ``block_stop``), so that they stay apart. What a
    WebSocket client sent keeps its ``sent`` (``sent create``)."""
    if label.startswith("sent "):
        return "sent " + short_label(label[5:])
    for prefix in ("chat.completion.", "response."):
        if label.startswith(prefix) and len(label) > len(prefix):
            label = label[len(prefix) :]
            break
    return label.replace("content_block_", "block_")


def fragment_line(index: StepIndex, row: int) -> ChunkLine | None:
    """What event ``row`` fed, as the row shows it by default: the name and id
    of a call it opened, each call's fragment as a JSON string
    (``+"ty\\":\\"上"``; the call is in the column before) and the assistant
    text it carried; None when it fed nothing (the raw chunk is shown then)."""
    parts: list[str] = []
    marks: list[tuple[int, int, str]] = []
    at = 0
    for call in index.calls:
        if call.first_event == row:  # a new call: its name and id, as it opened
            piece = (" " if parts else "") + "new "
            name = call.name_at(row) or "(no name)"
            marks.append((at + len(piece), at + len(piece) + len(name), "name"))
            piece += f"{name} {call.id_at(row) or '(no id)'}"
            parts.append(piece)
            at += len(piece)
    for added in index.added_at(row):
        if not added.text:
            continue
        text = added.text[:ROW_CHARS]  # a row shows a screen's width at most
        piece = (" " if parts else "") + "+" + json.dumps(text, ensure_ascii=False)
        piece += "…" if len(added.text) > ROW_CHARS else ""
        marks.append((at + piece.index('"'), at + len(piece), "args"))
        parts.append(piece)
        at += len(piece)
    for said in index.text_added_at(row):
        piece = ("  " if parts else "") + "text +" + json.dumps(said, ensure_ascii=False)
        marks.append((at + piece.index('"'), at + len(piece), "text"))
        parts.append(piece)
        at += len(piece)
    if not parts:
        return None
    return ChunkLine("".join(parts), tuple(marks))


class StreamList(ComponentStyles, Titled, ScrollView, can_focus=True):
    """Rows of events; ``current`` is set by the app, clicks go up as ``Selected``."""

    STYLE_PREFIX = "stream-list"

    COMPONENT_CLASSES = {
        "stream-list--number",
        "stream-list--time",
        "stream-list--label",
        "stream-list--json",
        "stream-list--args",
        "stream-list--name",
        "stream-list--text",
        "stream-list--comment",
        "stream-list--done",
        "stream-list--broken",
        "stream-list--usage",
        "stream-list--current",
        "stream-list--info",
        "stream-list--warning",
        "stream-list--error",
        "stream-list--match",
    }

    BINDINGS = [
        *PANE_BINDINGS,
        Binding("up,k", "app.step_prev", "Previous event", show=False),
        Binding("down,j", "app.step_next", "Next event", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]

    #: the rows of the old and new current event are repainted by the watcher
    current: reactive[int] = reactive(0, init=False, repaint=False)

    class Selected(Message):
        """The user picked an event (click, page keys)."""

        def __init__(self, event: int) -> None:
            super().__init__()
            self.event = event

    def __init__(self, index: StepIndex, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(2048)
        self._base: Style | None = None
        self._values: LRUCache[int, tuple[Any, bool]] = LRUCache(4096)
        self._labels_seen = 0
        #: the distinct labels measured for the type column so far
        self._measured: set[str] = set()
        #: the last search's pattern: its matches are marked in the rows
        self.highlight: re.Pattern[str] | None = None
        #: rows show each event's JSON, not the fragments it fed
        self.raw = False
        self._label_width = 0
        self._digits = self._call_width = 0
        self._shape: tuple[int, ...] = ()
        #: the filter's rows (None: every event is a row)
        self.rows: Rows | None = None
        self.border_title = "Stream"

    # -- the app talks down ------------------------------------------------
    def on_mount(self) -> None:
        self.sync()

    def sync(self) -> None:
        """Re-read the stream's length (it grows when live)."""
        stream = self.index.stream
        if self.rows is not None:
            self.rows.update()
        self._size_rows()
        before = self._shape
        self._digits = len(str(max(len(stream.events) - 1, 0)))
        # labels only grow: measure the new ones (a loading capture syncs often),
        # each distinct one once (a stream names a few types, a million times)
        labels = stream.labels
        fresh = set(labels[self._labels_seen :]) - self._measured
        self._measured |= fresh
        widest = max((len(short_label(x)) for x in fresh), default=0)
        self._labels_seen = len(labels)
        self._label_width = min(LABEL_WIDTH, max(self._label_width, widest))
        calls = len(self.index.calls)
        # "#12", or "#3+2" for an event that fed several calls (#3 and two more)
        self._call_width = 0 if not calls else len(str(calls - 1)) + 1
        if calls > 1:
            self._call_width += len(str(calls - 1)) + 1
        # a row is drawn again only when the columns moved, a call came (the
        # positions may shift) or a diagnostic marked an event: an event's
        # own text never changes once read (a loading capture syncs often)
        self._shape = (self._digits, self._label_width, self._call_width, calls,
                       len(self.index.diagnostic_events))
        if self._shape != before:
            self._cache.clear()
        self._update_subtitle()
        self.refresh()

    def set_filter(self, flt: RowFilter) -> None:
        """Show only the events ``flt`` lets through (an inactive filter: all)."""
        self.rows = Rows(self.index, flt) if flt.active else None
        what = flt.describe(self.index) if flt.active else ""
        self.set_titles("Stream · " + what if what else "Stream")
        self._size_rows()
        self._update_subtitle()
        self.refresh()
        self.scroll_current_into_view()

    # -- rows and events: the same numbers unless a filter hides some -----------
    def _hidden_current(self) -> bool:
        """The current event is hidden by the filter: it is shown anyway, in its
        place, so that the step is never off screen."""
        rows = self.rows
        return rows is not None and not rows.shown(self.current)

    def _size_rows(self) -> None:
        rows = self.rows
        total = len(self.index.stream.events)
        if rows is not None:
            total = len(rows) + self._hidden_current()
        size = Size(0, total)
        if size == self.virtual_size:
            return
        window = self.scrollable_content_region.height
        if self.show_vertical_scrollbar and min(total, self.virtual_size.height) > window > 0:
            # the scrollbar stays, only its thumb changes: a new virtual size
            # would lay the whole screen out again, and while a capture loads
            # that came with every redraw (a sixth of a 1M-event load under cProfile)
            self.set_reactive(StreamList.virtual_size, size)
            self.vertical_scrollbar.window_virtual_size = total
            return
        self.virtual_size = size

    def event_at(self, y: int) -> int | None:
        """The event shown on row ``y`` (from the top of the list)."""
        rows = self.rows
        if rows is None:
            return y if 0 <= y < len(self.index.stream.events) else None
        if self._hidden_current():
            at = rows.position(self.current)
            if y == at:
                return self.current
            if y > at:
                y -= 1
        return rows.events[y] if 0 <= y < len(rows) else None

    def row_of(self, event: int) -> int:
        """The row that shows ``event`` (or where it would be)."""
        rows = self.rows
        if rows is None:
            return event
        y = rows.position(event)
        if self._hidden_current() and event > self.current:
            y += 1
        return y

    def show_raw(self, raw: bool) -> None:
        """Rows show each event's JSON (True) or what it fed (False)."""
        self.raw = raw
        self._cache.clear()
        self.refresh()

    def mark(self, pattern: re.Pattern[str] | None) -> None:
        """Mark ``pattern``'s matches in every row (None: no marks)."""
        self.highlight = pattern
        self._cache.clear()
        self.refresh()

    def watch_current(self, old: int, new: int) -> None:
        rows = self.rows
        if rows is not None and not (rows.shown(old) and rows.shown(new)):
            # a hidden current row came or went: the rows below it moved
            self._size_rows()
            self.refresh()
        else:
            self._refresh_row(old)
            self._refresh_row(new)
        self.scroll_current_into_view()
        if rows is not None:
            self._update_subtitle()

    def _update_subtitle(self) -> None:
        total = len(self.index.stream.events)
        rows = self.rows
        if rows is None:
            self.set_titles(subtitle=counted(total, "event"))
            return
        hidden = f" · e{self.current} hidden" if self._hidden_current() else ""
        self.set_titles(subtitle=f"{len(rows):,} of {counted(total, 'event')}{hidden}")

    def scroll_current_into_view(self) -> None:
        height = self.scrollable_content_region.height or 1
        top = int(self.scroll_y)
        y = self.row_of(self.current)
        if top <= y < top + height:
            return
        target = max(0, y - height // 3)
        self.scroll_to(y=target, animate=False, immediate=True)

    def on_resize(self) -> None:
        self.call_after_refresh(self.scroll_current_into_view)

    def _refresh_row(self, event: int) -> None:
        y = self.row_of(event) - int(self.scroll_y)
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._cache.clear()

    # -- input -------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = self.event_at(offset.y + int(self.scroll_y))
        if row is not None:
            self.post_message(self.Selected(row))

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        last = self.virtual_size.height - 1
        y = min(last, max(0, self.row_of(self.current) + direction * height))
        row = self.event_at(y)
        if row is not None:
            self.post_message(self.Selected(row))

    # -- rendering ---------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        row = self.event_at(y + int(self.scroll_y))
        width = self.scrollable_content_region.width
        if row is None:
            return Strip.blank(width, self._base or self.rich_style)
        if row == self.current:
            return self._render_row(row, width, current=True)
        key = (row, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._render_row(row, width, current=False)
        return strip

    def _render_row(self, row: int, width: int, current: bool) -> Strip:
        stream = self.index.stream
        ev = stream.events[row]
        if self._base is None:
            self._base = self.rich_style  # walks the ancestors: once, not per row
        base = self._base
        if current:
            base = base + self._style("current")
        line = Text(style=base, end="", no_wrap=True)
        # ▷: the current event, shown although the filter hides it
        line.append(("▷" if self._hidden_current() else "▶") if current else " ")
        line.append(f"{row:>{self._digits}} ", self._style("number"))
        if self.index.timed:
            t = "" if ev.time is None else f"{ev.time:7.3f}s"
            line.append(f"{t:>8} ", self._style("time"))
        rank = self.index.severity.get(row)
        if rank is None:
            line.append("  ")
        else:
            glyph, name = _SEVERITY_GLYPH[rank]
            line.append(glyph + " ", self._style(name))
        label = short_label(stream.labels[row]) if row < len(stream.labels) else ev.kind
        if len(label) > self._label_width:
            label = label[: self._label_width - 1] + "…"
        kind_style = self._kind_style(ev.kind, label)
        line.append(f"{label:<{self._label_width}} ", kind_style or self._style("label"))
        touched = self._touched(row)
        if self._call_width:
            calls = f"#{self.index.position[touched[0].seq]}" if touched else ""
            if len(touched) > 1:
                calls += f"+{len(touched) - 1}"
            line.append(f"{calls:<{self._call_width}} ", self._style("name"))
        room = max(0, width - line.cell_len)
        chunk = None if self.raw else fragment_line(self.index, row)
        if chunk is None:
            chunk = self._chunk(row, room)
        text = cell_safe(chunk.text)
        body = Text(text, style=kind_style or self._style("json"), end="", no_wrap=True)
        for start, end, kind in chunk.marks:
            body.stylize(self._style(kind), start, end)
        if self.highlight is not None:
            for found in self.highlight.finditer(text):
                body.stylize(self._style("match"), found.start(), found.end())
        line.append_text(scrubbed(body, self.index.scrub))
        segments = list(line.render(self.app.console))
        return Strip(Segment.simplify(segments)).crop_extend(0, width, base)

    def _touched(self, row: int) -> list:
        """The calls this event opened or added text to, in display order."""
        return [
            c
            for c in self.index.calls
            if c.first_event == row
            or (c.first_event <= row <= c.last_event and self.index.added(c, row) is not None)
        ]

    def _kind_style(self, kind: str, label: str) -> Style | None:
        if kind in ("comment", "sent", "close"):
            # what is not the server's stream: a keep-alive, what the client sent, a close
            return self._style("comment")
        if kind == "done":
            return self._style("done")
        if label in ("error", "non-json"):
            return self._style("broken")
        if label == "usage":
            return self._style("usage")
        return None

    def _chunk(self, row: int, width: int) -> ChunkLine:
        stream = self.index.stream
        ev = stream.events[row]
        if ev.kind == "comment":  # a comment block may span lines: a row is one
            return ChunkLine(": " + " ".join(ev.data.split()))
        if ev.kind == "done":
            return ChunkLine("end of stream")
        if ev.kind == "binary":
            size = len(ev.data) * 3 // 4 - ev.data[-2:].count("=")
            return ChunkLine(f"binary message from the {ev.event}, {size} bytes: {ev.data} "
                             "(base64)")
        if ev.kind == "close":
            close, ok = self._value(row)
            close = close if ok and isinstance(close, dict) else {}
            by = f" by the {close['from']}" if close.get("from") else ""
            why = f" ({close['reason']})" if close.get("reason") else ""
            return ChunkLine(f"connection closed{by} with code {close.get('code')}{why}")
        value, ok = self._value(row)
        if not ok:
            return ChunkLine(" ".join(ev.data.split()), broken=True)
        previous = None
        for back in range(row - 1, max(-1, row - 1 - _LOOKBACK), -1):
            if stream.events[back].kind == "data":
                previous = self._value(back)[0]
                break
        text = compact(value, previous)
        added = self.index.added_at(row)
        firsts = [(c.id_at(row), c.name_at(row)) for c in self.index.calls if c.first_event == row]
        said = self.index.text_added_at(row)
        return window(ChunkLine(text, tuple(mark(text, added, firsts, said))), width)

    def _value(self, row: int) -> tuple[Any, bool]:
        found = self._values.get(row)
        if found is None:
            found = self._values[row] = parse(self.index.stream.events[row].data)
        return found
