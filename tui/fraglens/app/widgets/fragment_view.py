"""A call's argument text as received, with where each fragment began.

Shown by ``v`` when fragment boundaries are on (``b``). The text is cut into
rows of a fixed number of characters (half as many when it holds wide ones,
so that a row always fits), so that row ``y`` starts at character ``y * n``
and rendering a row is a slice and a binary search in the call's fragment
ends: the cost is the screen's, never the text's. Fragments alternate two
styles (the second also underlined, so that it reads without colour), and
each row's gutter gives the fragment that row starts in and its event.
Line breaks and tabs show as ``↵`` and ``→``, one character for one.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...engine.calls import Call
from ...redact import TextScrub
from ..scrubbed import masked
from .cells import cell_safe
from .styled import ComponentStyles

_VISIBLE = str.maketrans({"\n": "↵", "\t": "→", "\r": "␍"})


class FragmentView(ComponentStyles, ScrollView, can_focus=True):
    STYLE_PREFIX = "fragment-view"
    COMPONENT_CLASSES = {"fragment-view--gutter", "fragment-view--a", "fragment-view--b"}

    def __init__(self, call: Call, step: int, scrub: TextScrub, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.call = call
        #: fragments and characters that had arrived after the step
        self.fragments = call.fragments_at(step)
        self.length = call.length_at(step)
        # each value the same length as before: row y must still start at y * n
        self.text = masked(call.text[: self.length], scrub)
        self._wide = not self.text.isascii()
        self._gutter = len(f"{self.fragments:,}") + len(f"{call.last_event:,}") + 5
        self._per_row = 1
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(1024)

    def on_resize(self) -> None:
        self._layout_rows()

    def on_mount(self) -> None:
        self._layout_rows()

    def _layout_rows(self) -> None:
        room = max(8, self.scrollable_content_region.width - self._gutter)
        self._per_row = max(4, room // 2 if self._wide else room)
        rows = -(-self.length // self._per_row) if self.length else 1
        self.virtual_size = Size(self._gutter + self._per_row * (2 if self._wide else 1), rows)
        self._cache.clear()
        self.refresh()

    def row_start(self, y: int) -> int:
        return y * self._per_row

    def fragment_at(self, offset: int) -> int:
        """The fragment (from 0) that brought the character at ``offset``."""
        return bisect_right(self.call.frag_end, offset, 0, self.fragments)

    def render_line(self, y: int) -> Strip:
        row = y + int(self.scroll_y)
        width = self.scrollable_content_region.width
        key = (row, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._render_row(row, width)
        return strip.crop(int(self.scroll_x), int(self.scroll_x) + width)

    def _render_row(self, row: int, width: int) -> Strip:
        base = self.rich_style
        start = self.row_start(row)
        if not self.length:
            note = Text("(no argument text at this step)", self._style("gutter"), end="")
            return Strip(list(note.render(self.app.console))).extend_cell_length(width, base)
        if start >= self.length:
            return Strip.blank(width, base)
        end = min(self.length, start + self._per_row)
        line = Text(end="", no_wrap=True)
        k = self.fragment_at(start)
        gutter = f"f{k:,} e{self.call.frag_event[k]:,}"
        line.append(f"{gutter:>{self._gutter - 2}}  ", self._style("gutter"))
        body = Text(cell_safe(self.text[start:end].translate(_VISIBLE)), end="")
        styles = (self._style("a"), self._style("b"))
        ends = self.call.frag_end
        at = start
        while at < end and k < self.fragments:
            stop = min(end, ends[k])
            body.stylize(styles[k % 2], at - start, stop - start)
            at = stop
            k += 1
        line.append_text(body)
        segments = list(line.render(self.app.console))
        return Strip(Segment.simplify(segments)).extend_cell_length(width, base)
