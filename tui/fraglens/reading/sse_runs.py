"""An SSE capture read into a stream a slice at a time, a long call's runs in bulk.

A call streamed in 100k pieces is 100k events that repeat one envelope
(``adapters/envelope.py``) around another piece, byte for byte: the same
``event:`` line, the same JSON before the piece's string and after it, the
same blank line. Read one at a time, each costs a few Python calls in the
decoder, the envelope and the engine, three times what the least reader of
the format spends on it. Here, once the stream has read an event as a
continuation in an envelope, that event's own bytes before and after its
piece become one regular expression, which finds in C how many of the next
events repeat them exactly; the pieces are decoded by one ``json.loads`` of
them all, the event records and the call's records are extended at once
(``Stream.take_run``), and the decoder goes on after the run
(``SSEDecoder.skip``). No Python code runs per event of a run.

Real streams vary each event outside its piece (an ``obfuscation``, a
``sequence_number``, padding): the envelope's holes (``adapters/envelope.py``)
are part of the expression, so such events make runs too. Parallel calls
streamed in turns alternate envelopes and have no run each; the stream's
envelopes then make one expression with an alternative per call, and each
event found says whose it is (``Stream.take_mixed_run``).

Why this is exact. A run is taken only where the decoder holds nothing (it is
between two events), and only events whose lines are exactly the learned
event's, but for the piece: an ``event:`` line or none, one ``data:`` line,
the blank line; no ``id:``, no comment, no other field. The piece must be one
JSON string's contents with nothing the scanner would refuse (no raw control
character, only JSON's escapes), and its bytes valid UTF-8 (else the decoder
reads the event, and the bytes it replaced are reported). Each such event is
what the decoder would have made of it, with the payload the envelope's with
another piece, which the envelope proves is the same continuation
(``adapters/envelope.py``); the engine takes the run's pieces as it takes
continuations, stopping short of the size limit, where the events left go one
by one again. Anything else ends the run there, and the decoder reads on.
Property tests (tests/test_runs.py) hold every read to the event-by-event one.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate, repeat
from operator import attrgetter, sub

from ..adapters.envelope import Envelope
from ..framing.events import FrameTooLarge, FramingProblem
from ..framing.sse import SSEDecoder
from .stream import Stream

#: events taken in one run at most: a bound on the lists a run builds, and so on
#: what a run holds while it is read (a few hundred bytes an event, let go
#: after it); a window holds about so many (next_window)
MAX_RUN = 1 << 12
#: bytes framed one event at a time after a run before the next is looked for
#: (one event: what ends a run is often one event between two runs); doubled
#: after every slice that ends in no run, up to _MAX_SLICE or the caller's budget
_FIRST_SLICE = 1
_MAX_SLICE = 256 * 1024
#: the fewest events taken as a run: fewer cost less read one by one, and a
#: look for so many at the start of a run is cheap where there is none
FEWEST = 32
#: bytes searched for a run's events at once: at first, and the least and the
#: most (next_window)
_FIRST_WINDOW = 64 * 1024
_SHORT_WINDOW = 4096
_MAX_WINDOW = 8 * 1024 * 1024

_CONTENT = re.compile(rb"[^ \t\r\n]")
_SSE_DATA_LINE = re.compile(rb"(?:\A(?:\xef\xbb\xbf)?|[\r\n])data:")
_BOM = b"\xef\xbb\xbf"
#: the end of a blank line: where a slice may end between two events
_BLANK = re.compile(rb"\n\r?\n|\r\r")
#: the lines of a learned event before its payload: an event name or none, the data field
_HEAD = re.compile(rb"(?:event:[^\r\n]*(?:\r\n|\r|\n))?data: ?")
_TAILS = (b"\n\n", b"\r\n\r\n", b"\r\r")
#: a JSON string's contents that json's scanner accepts, at least one character
#: (written as an unrolled loop, which backtracks in linear time where an event
#: does not end as the run's do)
PIECE = rb'(?!")[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'

#: the rest of a search's window, as the last alternative of an expression that
#: finds events end to end: one step, whatever its length (a dot that takes
#: newlines, repeated, skips to the end in C, where a class such as [\s\S]
#: tests every byte: a window that reaches past a run's end cost as much as
#: the events it found)
REST = rb"(?s:.+)"


def _room_for_a_run(data: bytes, pos: int, blank: bytes) -> bool:
    """At least ``FEWEST`` events could follow ``pos``: every event of a run
    ends with the same blank line, so with fewer of them left there is no run
    to find, and its expressions are not compiled (on a capture of a few
    events that cost more than reading it). Looks no further than the
    ``FEWEST``-th blank line, which a run's search reads anyway."""
    for _ in range(FEWEST):
        at = data.find(blank, pos)
        if at < 0:
            return False
        pos = at + len(blank)
    return True


def incremental_sse(data: bytes) -> bool:
    """True when ``read_stream`` would read ``data`` as SSE for sure: it does
    not open as JSON (a recording, a HAR, a body, NDJSON) and has a ``data:``
    line. Anything else takes the whole-capture path, which decides the rest."""
    skip = len(_BOM) if data.startswith(_BOM) else 0
    found = _CONTENT.search(data, skip)
    if found is None or data[found.start() : found.start() + 1] in (b"{", b"["):
        return False
    return _SSE_DATA_LINE.search(data) is not None


class _Run:
    """The learned event's bytes around its piece, as expressions: its lines
    before the payload and after it as they are, the payload's envelope with
    its holes (``Envelope.lead``, ``Envelope.trail``)."""

    __slots__ = ("events", "fewest", "payload_at", "payload_end")

    def __init__(self, head: bytes, tail: bytes, payload_at: int, payload_end: int) -> None:
        #: where the payload starts in a block, and how far before its end it stops
        self.payload_at, self.payload_end = payload_at, payload_end
        #: an event (and its piece), or else the rest: searched from where the
        #: decoder stands, it finds such events end to end and then at most one
        #: rest, where the first other event begins (findall tries the event
        #: first at every place it reaches)
        self.events = re.compile(b"(" + head + b"(" + PIECE + b")" + tail + b")|" + REST)
        self.fewest = re.compile(b"(?:" + head + PIECE + tail + b"){%d}" % FEWEST)


def next_window(window: int, took: int, events: int, room: int, full: bool, least: int,
                most: int) -> int:
    """The bytes to search for the next run, after one of ``events`` events
    that took ``took`` bytes of a search of ``window`` bytes, ``room`` of them
    left after it. A run cut at MAX_RUN (``full``): about as many (events
    found past it are found again, so a window holds about MAX_RUN events, not
    many more). One that ran to the window's end (less than about four of its
    events' room left: its next event cut there): twice the window, up to
    ``most``. One that ended inside the window: twice its bytes, at least
    ``least`` (a capture whose runs are short is not searched far past each
    of them)."""
    if full:
        return max(least, took + took // 8)
    if room * events < 4 * took:
        return min(2 * window, most)
    return max(least, 2 * took)


class SliceReader:
    """A capture read into a stream a slice at a time, the runs that start
    after each slice taken in bulk: what the SSE and NDJSON readers share. A
    subclass reads one slice of about so many bytes one event at a time
    (``_slice_once``), and takes one run where one starts (``_take_run``)."""

    #: the first slice after a run, and the most a slice doubles to
    first_slice = _FIRST_SLICE
    max_slice = _MAX_SLICE

    def __init__(self) -> None:
        #: bytes read so far
        self.pos = 0
        self.done = False
        self._slice = self.first_slice
        self._budget = _MAX_WINDOW

    def advance(self, budget: int) -> None:
        """Read about ``budget`` bytes more (at least one slice)."""
        stop = self.pos + budget
        self._budget = budget
        while not self.done:
            self._slice_once(min(self._slice, budget))
            took = False
            while self.pos < stop and not self.done and self._take_run():
                took = True
            self._slice = self.first_slice if took else min(2 * self._slice, self.max_slice)
            if self.pos >= stop:
                return

    def _slice_once(self, size: int) -> None:
        raise NotImplementedError

    def _take_run(self) -> bool:
        raise NotImplementedError


class SSEReader(SliceReader):
    """``data``, an SSE capture, read into ``stream`` (made over ``data``, with
    ``source=data``, and empty). Call :meth:`advance` until :attr:`done`."""

    def __init__(self, stream: Stream, data: bytes) -> None:
        if stream.events or stream.events.source is not data:
            raise ValueError("the stream must be empty and made over the capture's bytes")
        super().__init__()
        self.stream = stream
        self.data = data
        self._decoder = SSEDecoder(log=stream.events)
        #: what the framing met on the way, once done
        self.problems: list[FramingProblem] = []
        self._window = _FIRST_WINDOW
        self._runs: dict[tuple[bytes, bytes, bytes, bytes], _Run] = {}
        self._mixed: dict[tuple[bytes, ...], re.Pattern[bytes]] = {}

    def _slice_once(self, size: int) -> None:
        data, pos, stream = self.data, self.pos, self.stream
        end = len(data)
        if pos + size < end:
            blank = _BLANK.search(data, pos + size)
            if blank is not None:
                end = blank.end()
        first = len(stream.events)
        try:
            self._decoder.feed(data[pos:end])
        except FrameTooLarge as exc:  # as a whole read stops there (framing/detect.py)
            stream.take_logged(first)
            self.problems = [*self._decoder.problems, FramingProblem("frame-too-large", str(exc))]
            self.pos, self.done = len(data), True
            return
        stream.take_logged(first)
        self.pos = end
        if end == len(data):
            first = len(stream.events)
            self._decoder.close()
            stream.take_logged(first)
            self.problems = self._decoder.problems
            self.done = True

    def _take_run(self) -> bool:
        data, pos, stream = self.data, self.pos, self.stream
        if self._decoder.between_events != pos:
            return False
        env = stream.run_envelope()
        if env is None:
            return False
        run = self._run_of(env)
        if run is None:
            return False
        end = min(len(data), pos + min(self._window, self._budget))
        if run.fewest.match(data, pos) is None:
            # not a run of this call worth taking: several calls in turns, or
            # nothing to take (then read on one by one)
            return self._take_mixed(env, end)
        # the events from here that are the learned one with another piece (and
        # other values in its holes), end to end
        blocks = run.events.findall(data, pos, end)
        if blocks and not blocks[-1][0]:
            blocks.pop()  # the rest, from the first other event on
        if not blocks:
            return False
        full = len(blocks) > MAX_RUN
        del blocks[MAX_RUN:]
        whole, pieces = zip(*blocks, strict=True)
        starts = list(accumulate(map(len, whole), initial=pos))
        stop = starts[-1]
        self._window = next_window(self._window, stop - pos, len(blocks), end - stop, full,
                                   _SHORT_WINDOW, _MAX_WINDOW)
        max_line = min(self._decoder.max_line, self._decoder.max_event)
        if stop - pos > max_line and max(map(len, whole)) > max_line:
            return False  # the decoder says where a line is too long
        try:
            # decoded strictly first: json.loads would let encoded surrogates through
            texts: list[str] = json.loads((b'["' + b'","'.join(pieces) + b'"]').decode("utf-8"))
        except ValueError:
            return False
        taken = stream.take_run(env, texts, stream.events.name(len(stream.events) - 1),
                                starts, run.payload_at, run.payload_end)
        if not taken:
            return False
        self._decoder.skip(starts[taken], taken)
        self.pos = starts[taken]
        if self.pos == len(data):
            self._slice_once(0)  # the end: close the decoder
        return True

    def _take_mixed(self, env: Envelope, end: int) -> bool:
        """Events from here that are each one of the stream's envelopes with
        another piece, several calls' continuations in turns (parallel calls
        streamed interleaved): taken in bulk as a run is, when there are at
        least so many (``FEWEST``)."""
        data, pos, stream = self.data, self.pos, self.stream
        envs = stream.run_envelopes()
        if len(envs) < 2:
            return False
        log = self.stream.events
        span, at = log.span(len(log) - 1), log.at(len(log) - 1)
        if span is None or at is None or any(e.pattern is None for e in envs):
            return False
        lines, blank = re.escape(data[span[0] : at[0]]), re.escape(data[at[1] : span[1]])
        key = (lines, blank, *(e.lead + b"\0" + e.trail for e in envs))
        pattern = self._mixed.get(key)
        if pattern is None:
            if not _room_for_a_run(data, pos, data[at[1] : span[1]]):
                return False
            if len(self._mixed) >= 64:
                self._mixed.clear()
            # the envelopes in a group of their own, so that the expression
            # reads the bytes they share once (the parser takes a prefix
            # common to all the alternatives out of them), then tells them
            # apart, where each one was tried from the event's start in turn
            pattern = self._mixed[key] = re.compile(b"(?:" + b"|".join(
                [lines + e.lead + b"(" + PIECE + b")" + e.trail + blank for e in envs]
            ) + b")|(" + REST + b")")
        found = list(pattern.finditer(data, pos, end))
        if found and found[-1].lastindex == len(envs) + 1:
            found.pop()  # the rest, from the first other event on
        if len(found) < FEWEST:
            return False
        full = len(found) > MAX_RUN
        del found[MAX_RUN:]
        groups = list(map(attrgetter("lastindex"), found))
        pieces = list(map(re.Match.group, found, groups))
        starts = [pos, *map(re.Match.end, found)]
        self._window = next_window(self._window, starts[-1] - pos, len(found), end - starts[-1],
                                   full, _SHORT_WINDOW, _MAX_WINDOW)
        max_line = min(self._decoder.max_line, self._decoder.max_event)
        if starts[-1] - pos > max_line and max(map(sub, starts[1:], starts)) > max_line:
            return False  # the decoder says where a line is too long
        try:
            # decoded strictly first: json.loads would let encoded surrogates through
            texts: list[str] = json.loads((b'["' + b'","'.join(pieces) + b'"]').decode("utf-8"))
        except ValueError:
            return False
        taken = stream.take_mixed_run(
            envs, list(map(sub, groups, repeat(1))), texts, log.name(len(log) - 1), starts,
            at[0] - span[0], span[1] - at[1])
        if not taken:
            return False
        self._decoder.skip(starts[taken], taken)
        self.pos = starts[taken]
        if self.pos == len(data):
            self._slice_once(0)  # the end: close the decoder
        return True

    def _run_of(self, env: Envelope) -> _Run | None:
        """The expressions of the last event's bytes around its piece, when
        its lines are the plain ones a run may repeat."""
        log = self.stream.events
        last = len(log) - 1
        span, at = log.span(last), log.at(last)
        if span is None or at is None or env.pattern is None:
            return None
        data = self.data
        lines, blank = data[span[0] : at[0]], data[at[1] : span[1]]
        if _HEAD.fullmatch(lines) is None or blank not in _TAILS:
            return None
        key = (lines, env.lead, env.trail, blank)
        run = self._runs.get(key)
        if run is None:
            if not _room_for_a_run(data, self.pos, blank):
                return None
            if len(self._runs) >= 64:  # a stream has a few envelopes at a time
                self._runs.clear()
            run = self._runs[key] = _Run(re.escape(lines) + env.lead,
                                         env.trail + re.escape(blank),
                                         at[0] - span[0], span[1] - at[1])
        return run
