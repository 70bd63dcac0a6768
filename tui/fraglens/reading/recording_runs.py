"""A recording whose body is SSE, read while its lines are parsed.

A recording keeps each network read as a line of JSON (framing/recording.py);
its body is the reads joined. Parsing every line before reading anything made
the app wait for the whole file before its first screen, and held the reads
once as parsed lines and again as the body. Here the lines are parsed a slice
at a time (``RecordingLines``): the claim parses only as many as it takes to
tell that the body is SSE, and the reading parses ahead of the SSE reader
(``sse_runs.py``), which reads the body as far as it is parsed, and gives each
event its time as soon as the reads tell it (``recording_times.py``).

The body grows. The SSE reader and the stream's events index one bytes object
(``EventLog.source``); each time the reader would run short of parsed bytes,
it is handed a new object holding all that is parsed so far, which starts
with the one it had, so every offset read before stays true. The lines are
parsed at twice the pace the body is read, so each new body is a share
larger than the last, and the copies add up to a few times the body, not to
its square; ``check`` (``drain``) parses everything first and hands the body
over once, uncopied. The reads' bytes go straight into that buffer.

Why this is exact. The SSE decoder yields the same events however its input
is split (it is the live decoder), and the run reader takes only whole
events (``sse_runs.py``); the end of the parsed body is no end of the stream
(the decoder is not closed there, see ``GrowingSSEReader``). An event's time
is stamped only once the reads parsed so far decide it. Tests
(tests/test_recording_runs.py, tests/test_loading.py) hold the events,
times, report and metadata to the read-by-read reading, in slices of every
size.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from ..framing.events import Framed, FramingError, FramingProblem
from ..framing.eventstream import PRELUDE, looks_like_eventstream
from ..framing.recording import WEBSOCKET, RecordingLines
from .findings import finish_stream, is_utf8, report_replaced_bytes
from .recording_times import EventTimes
from .sse_runs import SSEReader, incremental_sse
from .stream import Stream

#: bytes of lines parsed at a time when a recording is read whole
_DRAIN = 1 << 20
#: bytes of the body read at a time when it is read whole, between two runs
_READ = 1 << 22
#: bytes of lines parsed first, to learn the body's framing (doubled while it cannot tell)
_HEAD = 1 << 14
#: bytes of lines parsed per byte of body the reader is asked for
_AHEAD = 8
_BOM = b"\xef\xbb\xbf"
_CONTENT = re.compile(rb"[^ \t\r\n]")


class Head:
    """What a claim learned: the recording's lines being parsed, and the reads
    parsed so far (the body's first bytes)."""

    def __init__(self, lines: RecordingLines, times: Sequence[float | None],
                 sizes: Sequence[int], chunks: list[Any], body: bytes) -> None:
        self.lines = lines
        self.times = times
        #: each read's size; ``chunks``: their bytes, in pieces of one read or more
        self.sizes = sizes
        self.chunks = chunks
        #: the chunks joined
        self.body = body


def claim(data: bytes) -> Head | None:
    """A recording whose body is SSE read in runs: its header read and its
    first lines parsed, as many as tell that; None for anything else (a
    WebSocket connection, another body, a damaged header), which is framed
    whole."""
    try:
        lines = RecordingLines(data)
    except FramingError:  # framed whole, which says what is wrong in one line
        return None
    if lines.recording.transport == WEBSOCKET:
        return None
    times: list[float | None] = []
    sizes: list[int] = []
    chunks: list[Any] = []
    size = _HEAD
    while True:
        more_times, more_sizes, more = lines.read_bulk(size)
        times.extend(None if t != t else t for t in more_times)  # NaN: no time
        sizes += more_sizes
        chunks += more
        body = b"".join(chunks)
        verdict = _sse_body(body, lines.done)
        if verdict is not None:
            return Head(lines, times, sizes, chunks, body) if verdict else None
        size *= 2  # the bytes joined to look again add up to twice the body at most


def parsed(lines: RecordingLines, times: Sequence[float | None], sizes: Sequence[int],
           body: bytes) -> Head | None:
    """A recording whose lines were all read elsewhere (``RawReads``: a file
    read a chunk at a time), with its whole body; None when the body is not
    SSE read in runs (the recording is then framed whole)."""
    if not _sse_body(body, True):
        return None
    return Head(lines, times, sizes, [body], body)


def _sse_body(head: bytes, whole: bool) -> bool | None:
    """Whether a body that starts with ``head`` (is ``head``, when ``whole``) is
    SSE read in runs, as ``incremental_sse`` and the lack of an event-stream
    prelude tell of the whole; None while its first bytes cannot tell."""
    if whole:
        return incremental_sse(head) and not looks_like_eventstream(head)
    if len(head) < PRELUDE:
        return None
    if looks_like_eventstream(head):
        return False
    if incremental_sse(head):  # it opens as no JSON and holds a data line
        return True
    found = _CONTENT.search(head, len(_BOM) if head.startswith(_BOM) else 0)
    if found is not None and head[found.start()] in b"{[":
        return False  # it opens as JSON: never SSE
    return None  # no data line yet


class GrowingSSEReader(SSEReader):
    """An SSE reader of a body that is handed over as far as it is parsed
    (``grow``): until it is ``final``, the end of ``data`` is not the end of
    the stream, so the decoder is not closed there and a slice stops at it."""

    def __init__(self, stream: Stream, data: bytes, final: bool) -> None:
        super().__init__(stream, data)
        self.final = final

    def grow(self, data: bytes, final: bool) -> None:
        """More of the body: ``data`` starts with what the reader had."""
        self.data = data
        self.stream.events.source = data
        self.final = final

    def advance(self, budget: int) -> None:
        if self.final:
            super().advance(budget)
        elif self.pos < len(self.data):
            # a slice never reads past the end of data, where the loop would wait
            super().advance(min(budget, len(self.data) - self.pos))

    def _slice_once(self, size: int) -> None:
        if self.final:
            super()._slice_once(size)
            return
        # SSEReader's, less the end of the stream: what the decoder holds at
        # the end of data waits for the rest
        self._feed_slice(size)


class RecordingReading:
    """A recording whose body is SSE (``claim``), read into ``stream`` (made over
    the claim's first bytes of the body, ``head.body``) as its lines are parsed."""

    def __init__(self, stream: Stream, head: Head) -> None:
        self.stream = stream
        self._lines = lines = head.lines
        self._rec = lines.recording
        self.meta: dict[str, Any] = {}
        self._meta()
        stream.secrets = self.meta.get("secrets")
        #: every byte of the body parsed so far; ``_body``: as much of it as the reader has
        self._buf = io.BytesIO()
        self._body = head.body
        self._last: float | None = None  # the last read's time
        self._times = EventTimes()
        if lines.done:  # every line parsed: the head's body is the whole of it, kept as it is
            self._buf = io.BytesIO(head.body)  # shares its bytes (getvalue: the same object)
            self._buf.seek(0, io.SEEK_END)
            self._add(head.times, head.sizes, ())
        else:
            self._add(head.times, head.sizes, head.chunks)
        self._reader = GrowingSSEReader(stream, head.body, final=False)
        self._times.grow(head.body)
        # the events' times are worked out when they are read (a row shown, the
        # report's timing), from the reads parsed by then: see ``EventLog.time_later``
        stream.events.time_later(self._times.of, self._times.wide_gaps)
        self.done = False
        if lines.done:
            self._hand_over()

    @property
    def fraction(self) -> float:
        if self.done:
            return 1.0
        parsed = self._lines.pos / max(1, self._lines.size)
        return min(1.0, self._reader.pos * parsed / max(1, self._buf.tell()))

    @property
    def known_empty(self) -> bool:
        return False

    @property
    def problems(self) -> list[FramingProblem]:
        return self._reader.problems

    def advance(self, budget_bytes: int, budget_events: int) -> None:
        reader = self._reader
        if not self._lines.done:
            self._parse(_AHEAD * budget_bytes)
        # the reader is handed all that is parsed once it would run short
        short = len(self._body) - reader.pos < budget_bytes
        more = self._buf.tell() > len(self._body)
        if not reader.final and (self._lines.done or (short and more)):
            self._hand_over()
        reader.advance(budget_bytes)
        if reader.done and not self._lines.done:  # it stopped short (a line over the limit)
            self._parse_rest()
        self.done = reader.done

    def drain(self) -> None:
        self._parse_rest()
        while not self._reader.done:
            self._reader.advance(_READ)
        self.done = True

    def refusal(self) -> str | None:
        return None

    def finish(self) -> Framed:
        finish_stream(self.stream, self.problems, self.meta)
        # the events a run read were found valid UTF-8 there: not read again
        report_replaced_bytes(self.stream, self._body, self._reader.runs, utf8=self._utf8())
        return Framed(self.stream.framing, self.stream.events, self.meta, self.problems)

    def _utf8(self) -> bool:
        """Whether the body is UTF-8, told by the reads that may not be on their
        own (``RecordingLines.unsure``: base64 lines, lines json read) alone: the
        others are, so each run of unsure reads between two of them, or an end,
        must be (a character cut between two reads makes both unsure)."""
        if not self._lines.done or self._lines.raw:
            return False  # not known (version 3's reads are written raw): the report checks
        body, bounds = self._body, self._times.bounds
        unsure = self._lines.unsure
        first = 0
        for k in range(1, len(unsure) + 1):
            if k == len(unsure) or unsure[k] != unsure[k - 1] + 1:  # the end of a run
                if not is_utf8(body, *bounds(unsure[first], unsure[k - 1])):
                    return False
                first = k
        return True

    # -- the lines ---------------------------------------------------------------

    def _parse(self, size: int) -> None:
        """About ``size`` bytes of lines, a bounded slice at a time."""
        lines = self._lines
        stop = lines.pos + size
        while not lines.done and lines.pos < stop:
            self._add(*lines.read_bulk(min(stop - lines.pos, _DRAIN)))
        self._meta()

    def _parse_rest(self) -> None:
        self._parse(self._lines.size)
        if not self._reader.final:
            self._hand_over()

    def _add(self, times: Sequence[float | None], sizes: Sequence[int],
             chunks: Sequence[Any]) -> None:
        self._buf.writelines(chunks)
        self._times.add(times, sizes)
        if times:
            self._last = times[-1]

    def _meta(self) -> None:
        """What the lines parsed so far say, in the one dict callers were given."""
        self.meta.update(self._rec.meta("sse"), chunks=self._lines.reads)

    def _hand_over(self) -> None:
        """Give the reader the body parsed so far (all of it, once the lines are done)."""
        body = self._body = self._buf.getvalue()  # no copy: the buffer's own bytes
        final = self._lines.done
        self._reader.grow(body, final)
        if final:
            end = self._rec.end
            end_time = end["t"] if end is not None and end.get("t") is not None else self._last
            self._times.finish(body, end_time)
        else:
            self._times.grow(body)
