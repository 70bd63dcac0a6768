"""A choice's text (or reasoning) as it came: its pieces, each with its event.

It reads as the list of ``(event, piece)`` it once was (views binary-search
it by event to show any step), but keeps the pieces compactly: their events
and where each ends in the text, in arrays, and the characters in chunks (one
piece appended alone, or a run of pieces read in bulk joined at once). A
tuple, an int and a string per piece cost about 150 bytes, more than an
Ollama text line itself; here a piece costs 16 bytes and its characters. The
whole text, which the report and the end checks read, is joined once and
kept; piece ``i`` is a slice of its chunk, found by binary search.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, compress
from typing import overload


class TextPieces(Sequence[tuple[int, str]]):
    """``(event, piece)`` in event order, append-only."""

    __slots__ = ("_chunk_at", "_chunks", "_ends", "_events")

    def __init__(self, items: Iterable[tuple[int, str]] = ()) -> None:
        self._events = array("q")  # the event of each piece
        self._ends = array("q")  # where each piece ends in the whole text
        self._chunks: list[str] = []  # the text, in chunks of whole pieces
        self._chunk_at = array("q")  # the first piece of each chunk
        self.extend(items)

    # -- growing ---------------------------------------------------------------
    def append(self, item: tuple[int, str]) -> None:
        event, piece = item
        self._chunk_at.append(len(self._events))
        self._chunks.append(piece)
        self._events.append(event)
        self._ends.append(self.length + len(piece))

    def extend(self, items: Iterable[tuple[int, str]]) -> None:
        for item in items:
            self.append(item)

    def extend_run(self, first_event: int, texts: list[str]) -> None:
        """The k-th of ``texts`` came in event ``first_event + k``, but the
        empty ones, which add no piece (a run read in bulk): one chunk."""
        events: Iterable[int] = range(first_event, first_event + len(texts))
        if "" in texts:
            keep = list(map(bool, texts))
            events, texts = compress(events, keep), list(compress(texts, keep))
        if not texts:
            return
        self._chunk_at.append(len(self._events))
        self._chunks.append("".join(texts))
        self._events.extend(events)
        ends = accumulate(map(len, texts), initial=self.length)
        next(ends)  # the length before the first piece
        self._ends.extend(ends)

    # -- reading ---------------------------------------------------------------
    @property
    def length(self) -> int:
        """Characters in all the pieces."""
        return self._ends[-1] if self._ends else 0

    @property
    def text(self) -> str:
        """All the pieces joined (kept: the chunks become this one)."""
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
            self._chunk_at = array("q", (0,))
        return self._chunks[0] if self._chunks else ""

    @property
    def events(self) -> array[int]:
        """The event of each piece, in order (a binary search by event needs no tuples)."""
        return self._events

    @property
    def ends(self) -> array[int]:
        """Where each piece ends in the text."""
        return self._ends

    def event_at(self, offset: int) -> int:
        """The event of the piece that holds character ``offset`` of the text
        (past the end: the last piece's)."""
        return self._events[min(bisect_right(self._ends, offset), len(self._ends) - 1)]

    def text_upto(self, step: int) -> str:
        """The text of the pieces that came by event ``step``."""
        k = bisect_right(self._events, step)
        return self.text[: self._ends[k - 1]] if k else ""

    def __len__(self) -> int:
        return len(self._events)

    @overload
    def __getitem__(self, i: int) -> tuple[int, str]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, str]]: ...
    def __getitem__(self, i: int | slice) -> tuple[int, str] | list[tuple[int, str]]:
        if isinstance(i, slice):
            return [self._piece(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("piece number out of range")
        return self._piece(i)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        ends, events = self._ends, self._events
        for c, chunk in enumerate(list(self._chunks)):
            first = self._chunk_at[c]
            last = self._chunk_at[c + 1] if c + 1 < len(self._chunk_at) else len(events)
            base = ends[first - 1] if first else 0
            start = base
            for k in range(first, last):
                yield events[k], chunk[start - base : ends[k] - base]
                start = ends[k]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (TextPieces, list)):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"TextPieces({list(self)!r})"

    def _piece(self, i: int) -> tuple[int, str]:
        c = bisect_right(self._chunk_at, i) - 1
        first = self._chunk_at[c]
        ends = self._ends
        base = ends[first - 1] if first else 0
        start = ends[i - 1] if i else 0
        return self._events[i], self._chunks[c][start - base : ends[i] - base]
