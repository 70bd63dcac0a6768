"""One tool call's append-only buffer, and how it looked after any event.

The buffer only ever grows, so the state after event N is a set of prefix
lengths: every fragment records the event it came in, the text length after
it and the scanner's state after it, in compact arrays. Looking up a step is a
binary search, never a replay. That is what makes stepping through a
100k-event recording instant.

The scanner follows the fragments when someone asks what it saw - the app
showing a step, a keying rule that needs to know whether the arguments are
complete, finalize when a strict parse fails - and then catches up fragment by
fragment, so every per-fragment record is the same as if it had run on every
append. A call nobody asks about (``check`` on a call whose text
``json.loads`` accepts as one object or array) is never scanned: that parse
already proves what the scanner would say at the end.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress
from typing import Any, TypeVar

from . import int64s
from .finalize import Result
from .scanner import COMPLETE, EMPTY_STATE, IN_ESCAPE, IN_STRING, Scanner, ScanState

T = TypeVar("T")


class Call:
    """A call as the engine knows it. Only the engine mutates it."""

    def __init__(self, seq: int, choice: int, first_event: int, index: int | None = None) -> None:
        self.seq = seq  # creation order, across choices
        self.choice = choice
        self.first_event = first_event
        self.index = index  # first wire index
        self.id: str | None = None
        self.name: str | None = None
        self.aliases: list[str] = []
        self.synthetic_id: str | None = None
        #: merged object arguments (args-object), when they came as objects
        self.obj: Any = None
        self.obj_seen = False
        #: characters of the buffer that are object arguments' serialization: any
        #: more is text that came for the same call, and then no value is dropped
        self.obj_chars = 0
        #: (text, value, no float): a text, the value it is the JSON text of
        #: and whether that holds no float, where one was known (a fragment's
        #: ``ToolDelta.args_value``; the call's text an adapter parsed,
        #: ``ArgsParsed``); finalize takes the value when that text is still
        #: the call's whole text (the very string)
        self.text_value: tuple[str, Any, bool] | None = None
        self.hosted = False
        self.over_limit = False
        #: UTF-8 bytes buffered, counted only once the call nears the size limit
        self.nbytes: int | None = None
        self.dropped_bytes = 0
        self.last_event = -1
        #: (event, name) and (event, id) each time they changed, for stepping
        self.name_history: list[tuple[int, str]] = []
        self.id_history: list[tuple[int, str]] = []
        #: (event, result); the last one is the call's verdict
        self.results: list[tuple[int, Result]] = []
        self.finalized = False
        self.notes: list[str] = []
        #: codes already raised for this call (info codes are raised once per call)
        self.raised: set[str] = set()
        #: the calls a ``multi_tool_use.parallel`` wrapper holds (name, arguments)
        self.inner_calls: list[dict[str, Any]] | None = None
        #: (event, output, error) each time the stream carried the tool's result
        self.outputs: list[tuple[int, Any, str | None]] = []
        #: the text in chunks of whole fragments: one appended alone, or the
        #: fragments of a run read in bulk joined at once (no string kept per
        #: fragment: a 100k-fragment call keeps its characters and two arrays)
        self.chunks: list[str] = []
        self._joined: str | None = ""
        #: made when something first asks what the scanner saw (most calls
        #: ``check`` reads are never scanned: see the module's doc)
        self._scanner: Scanner | None = None
        #: the chunks the scanner has not read to their end, the first from
        #: character ``_unscanned_at`` of the text
        self._unscanned: list[str] = []
        self._unscanned_at = 0
        #: the fragment in which the scanner saw a surrogate pair split (args-surrogate-split)
        self.surrogate_split_at: int | None = None
        self.frag_event = array("q")
        self.frag_end = array("q")
        #: depth << 3 | the scanner's flags, after each fragment scanned so far
        self.frag_shape = array("q")
        #: characters buffered so far (the last fragment's end)
        self.length = 0
        #: how many fragments there were when finalize proved the text one whole
        #: JSON object or array (the proof holds while no fragment follows)
        self.proved_whole_at: int | None = None
        #: the arguments restated whole by the adapter, replacing the text
        #: streamed so far (ArgsFinal.replaces), when that happened
        self.restated: str | None = None
        #: ``restated`` is the last of cumulative pieces (engine/cumulative.py),
        #: found by the engine itself, not restated by the adapter
        self.cumulative = False
        #: the state after the whole text, scanned in one feed (scan_state)
        self._ended: ScanState | None = None

    # -- growing ------------------------------------------------------------

    @property
    def fragments(self) -> int:
        return len(self.frag_event)

    def append(self, event: int, text: str) -> None:
        self.chunks.append(text)
        self._joined = None
        self._unscanned.append(text)
        self.length += len(text)
        self.frag_event.append(event)
        self.frag_end.append(self.length)
        self.last_event = event

    def extend(self, first_event: int, texts: list[str], step: int = 1,
               lengths: Iterable[int] | None = None, joined: str | None = None) -> None:
        """``append`` of each text in turn, the k-th in event ``first_event +
        step * k`` (a run of events read in bulk, with ``step - 1`` other
        events before each after the first), with the records built in C
        loops. ``lengths``: the texts' lengths, when they were counted before;
        ``joined``: the texts joined, when they were (kept, not copied)."""
        if not texts:
            return
        self._add_chunk("".join(texts) if joined is None else joined)
        last = first_event + step * (len(texts) - 1)
        int64s.extend(self.frag_event, range(first_event, last + 1, step))
        self._ends(texts, lengths)
        self.last_event = last

    def extend_at(self, events: Sequence[int], texts: list[str],
                  lengths: Iterable[int] | None = None, joined: str | None = None) -> None:
        """``append`` of each text in turn, the k-th in event ``events[k]``
        (a call's pieces among other calls' in a run read in bulk)."""
        if not texts:
            return
        self._add_chunk("".join(texts) if joined is None else joined)
        if type(events) is list:
            self.frag_event.fromlist(events)  # (twice as fast as extend from a list)
        else:
            int64s.extend(self.frag_event, events)
        self._ends(texts, lengths)
        self.last_event = events[-1]

    def _ends(self, texts: list[str], lengths: Iterable[int] | None) -> None:
        ends = accumulate(map(len, texts) if lengths is None else lengths, initial=self.length)
        next(ends)  # the length before the first text
        int64s.extend(self.frag_end, ends)
        self.length = self.frag_end[-1]

    def _add_chunk(self, chunk: str) -> None:
        self.chunks.append(chunk)
        self._joined = None
        self._unscanned.append(chunk)

    @property
    def scanner(self) -> Scanner:
        """The scanner, caught up with every fragment."""
        return self.catch_up()

    def catch_up(self) -> Scanner:
        """Run the scanner over every fragment it has not read yet."""
        self._scan_to(len(self.frag_end))
        return self._the_scanner()

    def _the_scanner(self) -> Scanner:
        if self._scanner is None:
            self._scanner = Scanner()
        return self._scanner

    def _scan_to(self, k: int) -> None:
        """Feed the scanner fragments until it has read the first ``k``."""
        shapes = self.frag_shape
        if len(shapes) >= k:
            return
        # each fragment is a slice of the first chunk not read to its end
        # (chunks hold whole fragments; an empty one lies in any of them)
        pending, base, ends = self._unscanned, self._unscanned_at, self.frag_end
        scanner = self._the_scanner()
        feed = scanner.feed
        start = ends[len(shapes) - 1] if shapes else 0
        c = 0  # the chunk fragment k lies in
        while len(shapes) < k:
            end = ends[len(shapes)]
            while end - base > len(pending[c]):
                base += len(pending[c])
                c += 1
            _, depth, flags = feed(pending[c][start - base : end - base])
            start = end
            shapes.append(depth << 3 | flags)
            if self.surrogate_split_at is None and scanner.surrogate_split:
                self.surrogate_split_at = len(shapes) - 1
        del pending[:c]  # chunk c may still end with empty fragments
        self._unscanned_at = base

    @property
    def final_text(self) -> str:
        """The arguments text the verdict is about: what streamed, unless the
        adapter restated it whole."""
        return self.text if self.restated is None else self.restated

    def scan_state(self) -> ScanState:
        """The scanner's state after the last fragment (or the restated text)."""
        if self.restated is not None:
            scanner = Scanner()
            scanner.feed(self.restated)
            return scanner.state()
        if self.proved_whole_at == len(self.frag_end) > len(self.frag_shape):
            # what scanning would end with after one whole object or array
            return ScanState(self.length, 0, False, False, True, True, None)
        if not self.frag_shape and self.length:
            # nobody stepped through the call: the state after the whole text
            # is that of one feed of it (the scanner ends in the same state for
            # any split), several times cheaper than a feed per fragment, and
            # no per-fragment record is made that nobody asked for
            ended = self._ended
            if ended is None or ended.offset != self.length:
                scanner = Scanner()
                scanner.feed(self.text)
                ended = self._ended = scanner.state()
            return ended
        return self.scanner.state()

    @property
    def text(self) -> str:
        if self._joined is None:
            self._joined = "".join(self.chunks)
            self.chunks = [self._joined] if self._joined else []
            if self._unscanned:
                # the text from the first chunk not read to its end: held once
                unread = self._unscanned_at
                self._unscanned = [self._joined[unread:]]
        return self._joined

    def is_text(self, text: str) -> bool:
        """Whether ``text`` is the call's text, told without joining its
        chunks; when it is, it becomes the call's text (one copy of a long
        text where joining the chunks would make a second)."""
        if len(text) != self.length:
            return False
        if self._joined is not None:
            return self._joined == text
        at = 0
        for chunk in self.chunks:
            if not text.startswith(chunk, at):
                return False
            at += len(chunk)
        self._joined = text
        self.chunks = [text] if text else []
        if self._unscanned:  # as ``text`` keeps it
            self._unscanned = [text[self._unscanned_at :]]
        return True

    @property
    def complete(self) -> bool:
        """The text so far is one whole JSON value."""
        return self.scanner.complete

    @property
    def result(self) -> Result | None:
        return self.results[-1][1] if self.results else None

    # -- stepping ------------------------------------------------------------
    def fragments_at(self, step: int) -> int:
        """How many fragments had arrived after event ``step``."""
        return bisect_right(self.frag_event, step)

    def length_at(self, step: int) -> int:
        k = self.fragments_at(step)
        return self.frag_end[k - 1] if k else 0

    def scan_at(self, step: int) -> ScanState:
        k = self.fragments_at(step)
        if k == 0:
            return EMPTY_STATE
        self._scan_to(k)
        end = self.frag_end[k - 1]
        shape = self.frag_shape[k - 1]
        # the first impossible character is final once seen: it is either in
        # the part scanned, or the prefix up to here is valid
        bad = self._the_scanner().bad_offset
        valid = bad is None or bad >= end
        return ScanState(
            offset=end,
            depth=shape >> 3,
            in_string=bool(shape & IN_STRING),
            in_escape=bool(shape & IN_ESCAPE),
            valid=valid,
            complete=bool(shape & COMPLETE) and valid,
            bad_offset=None if valid else bad,
        )

    def boundaries_at(self, step: int) -> list[int]:
        """End offsets of the fragments that had arrived after ``step``."""
        return list(self.frag_end[: self.fragments_at(step)])

    def name_at(self, step: int) -> str | None:
        return _latest(self.name_history, step)

    def id_at(self, step: int) -> str | None:
        return _latest(self.id_history, step)

    def result_at(self, step: int) -> Result | None:
        found = None
        for event, result in self.results:
            if event <= step:
                found = result
        # a result is only current if no fragment arrived after it
        if found is not None and self.results:
            last_final = max(e for e, _ in self.results if e <= step)
            k = self.fragments_at(step)
            if k and self.frag_event[k - 1] > last_final:
                return None
        return found


def by_owner(owner: Sequence[int], items: Iterable[T], owners: int) -> list[list[T]]:
    """``items`` shared out among ``owners`` lists, the k-th item to list
    ``owner[k]``, in order: one pass in C (events of several calls in turns,
    read in bulk, put with their calls). Two or three owners: a pass of
    ``compress`` each, over the owners as bytes (half the time for two)."""
    if owners <= len(_MINE):
        marks = owner if type(owner) is bytes else bytes(owner)
        every = items if isinstance(items, (list, range)) else list(items)
        return [list(compress(every, marks.translate(_MINE[k]))) for k in range(owners)]
    lists: list[list[T]] = [[] for _ in range(owners)]
    deque(map(list.append, map(lists.__getitem__, owner), items), maxlen=0)
    return lists


#: for each of the first owners, a translation of owners' bytes that marks its own
_MINE = [bytes(b == k for b in range(256)) for k in range(3)]


def _latest(history: list[tuple[int, str]], step: int) -> str | None:
    value = None
    for event, v in history:
        if event > step:
            break
        value = v
    return value
