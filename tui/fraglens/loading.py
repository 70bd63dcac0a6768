"""Reading a capture a slice at a time, so that the app can show it while it loads.

``load.stream_from_bytes`` reads a whole capture before anything is shown: on a
200 MB recording that is seconds of blank screen. A ``Loading`` reads the same
bytes into the same ``Stream`` in slices the caller asks for (``advance``),
and the stream's events, calls and diagnostics are usable between two slices,
as they are while a live call streams in. Sans-I/O and sans-clock: the caller
hands in the bytes and decides how long a slice may take.

SSE, NDJSON and AWS event-stream captures, the framings of nearly every large
capture, are read by the readers ``check`` reads them with (``runs``,
``ndjson_runs``, ``eventstream_runs``): framed incrementally (the same events
for any split of the input), a long call's runs of identical events in bulk.
Any other framing (a recording, a HAR export, a JSON body) is framed whole
when the ``Loading`` is made, and its events are then fed a slice at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .engine.reassembler import DEFAULT_MAX_ARG_BYTES
from .eventstream_runs import EventStreamReader
from .framing.detect import ndjson_start
from .framing.events import EventLog, FramingProblem, RawEvent
from .framing.eventstream import looks_like_eventstream
from .load import finish_stream, frame, known_format, report_replaced_bytes
from .ndjson_runs import NDJSONReader
from .runs import SSEReader, incremental_sse
from .stream import Stream

#: bytes of SSE read per slice: about 1,000 events of a typical stream (more
#: when a run of a long call's events is read in bulk, see runs.py)
SLICE_BYTES = 256 * 1024
#: events fed per slice when the capture was framed whole
SLICE_EVENTS = 1000


class Loading:
    """A capture being read into ``stream``. Call :meth:`advance` until
    :attr:`done`. ``LoadError`` (from ``load.frame``) is raised here when the
    bytes are no stream at all; an SSE capture cannot fail that way."""

    def __init__(
        self,
        data: bytes,
        name: str = "input",
        format: str | None = None,
        max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    ) -> None:
        self.data = data
        self.name = name
        self._max_arg_bytes = max_arg_bytes
        self._reader: SSEReader | NDJSONReader | EventStreamReader | None = None
        self._events: Sequence[RawEvent] | None = None
        #: a recording's or HAR's metadata (its request, redacted), else empty
        self.meta: dict[str, Any] = {}
        #: what the framing met on the way, added when the read ends
        self._problems: list[FramingProblem] = []
        #: events fed so far (framings other than SSE)
        self._pos = 0
        self.done = False
        # the readers of check's whole read (load.stream_from_bytes), in its order;
        # their offsets index data: the stream keeps payloads as ranges of it
        if looks_like_eventstream(data):
            self.stream = self._new_stream(known_format(format), "eventstream", False, data)
            self._reader = EventStreamReader(self.stream, data)
        elif incremental_sse(data):
            self.stream = self._new_stream(format, "sse", True, data)
            self._reader = SSEReader(self.stream, data)
        elif (ndjson := ndjson_start(data)) is not None:
            self.stream = self._new_stream(known_format(format), "ndjson", False, data)
            self._reader = NDJSONReader(self.stream, data, ndjson)
        else:
            framed = frame(data, name)
            sse_body = (framed.meta.get("body_framing") or framed.framing) == "sse"
            fmt = known_format(format or framed.meta.get("format"))
            source = framed.events.source if isinstance(framed.events, EventLog) else None
            self.stream = self._new_stream(fmt, framed.framing, sse_body, source)
            self._events = framed.events
            self.meta = framed.meta
            self._problems = framed.problems

    def _new_stream(
        self, format: str | None, framing: str, sse_body: bool | None, source: bytes | None
    ) -> Stream:
        return Stream(
            format=format,
            framing=framing,
            max_arg_bytes=self._max_arg_bytes,
            sse_body=sse_body,
            source=source,
        )

    @property
    def fraction(self) -> float:
        """How much of the capture has been read, from 0 to 1."""
        if self.done:
            return 1.0
        if self._reader is not None:
            return self._reader.pos / max(1, len(self.data))
        assert self._events is not None
        return self._pos / max(1, len(self._events))

    @property
    def known_empty(self) -> bool:
        """The capture was framed whole and holds no event (SSE always has one:
        it was recognized by a ``data:`` line)."""
        return self._reader is None and not self.stream.events and not self._events

    def advance(self) -> int:
        """Read one slice; returns the number of events it added."""
        if self.done:
            return 0
        before = len(self.stream.events)
        if self._reader is not None:
            self._reader.advance(SLICE_BYTES)
            if self._reader.done:
                self._problems = getattr(self._reader, "problems", [])
                self._finish()
        else:
            self._advance_framed(self._events)
        return len(self.stream.events) - before

    def _advance_framed(self, events: Sequence[RawEvent] | None) -> None:
        assert events is not None
        end = min(len(events), self._pos + SLICE_EVENTS)
        feed = self.stream.feed
        for ev in events[self._pos : end]:
            feed(ev)
        self._pos = end
        if end == len(events):
            self._finish()

    def _finish(self) -> None:
        finish_stream(self.stream, self._problems, self.meta)
        report_replaced_bytes(self.stream, self.data)
        self.done = True
        self._events = None
        self._reader = None
