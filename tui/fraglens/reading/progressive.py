"""Reading a capture a slice at a time, so that the app can show it while it loads.

``capture.stream_from_bytes`` reads a whole capture before anything is shown:
on a 200 MB recording that is seconds of blank screen. A ``Loading`` reads the
same bytes into the same ``Stream``, by the reader the same table picks
(``readers.py``), in slices the caller asks for (``advance``); the stream's
events, calls and diagnostics are usable between two slices, as they are
while a live call streams in. Sans-I/O and sans-clock: the caller hands in
the bytes and decides how long a slice may take.

SSE, NDJSON, AWS event-stream captures and recordings of an SSE body, the
framings of nearly every large capture, are read in runs as ``check`` reads
them (a recording's lines parsed as its body is read, so that the first
slice needs only the first lines: ``recording_runs.py``); any other framing
(a HAR export, a JSON body) is framed whole when the ``Loading`` is made,
and its events are then fed a slice at a time.
"""

from __future__ import annotations

from typing import Any

from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from .readers import Options, open_reading

#: bytes read per slice: about 1,000 events of a typical stream (more when a
#: run of a long call's events is read in bulk, see sse_runs.py)
SLICE_BYTES = 256 * 1024
#: events fed per slice when the capture was framed whole
SLICE_EVENTS = 1000


class Loading:
    """A capture being read into ``stream``. Call :meth:`advance` until
    :attr:`done`. ``LoadError`` is raised here when the bytes are no stream
    at all; an SSE capture cannot fail that way."""

    def __init__(
        self,
        data: bytes,
        name: str = "input",
        format: str | None = None,
        max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    ) -> None:
        self.data = data
        self.name = name
        self._reading = open_reading(data, name, Options(format, max_arg_bytes))
        self.stream = self._reading.stream
        #: a recording's or HAR's metadata (its request, redacted), else empty
        self.meta: dict[str, Any] = self._reading.meta
        self.done = False

    @property
    def fraction(self) -> float:
        """How much of the capture has been read, from 0 to 1."""
        return 1.0 if self.done else self._reading.fraction

    @property
    def known_empty(self) -> bool:
        """The capture was framed whole and holds no event (SSE always has one:
        it was recognized by a ``data:`` line)."""
        return self._reading.known_empty and not self.stream.events

    def advance(self) -> int:
        """Read one slice; returns the number of events it added."""
        if self.done:
            return 0
        before = len(self.stream.events)
        self._reading.advance(SLICE_BYTES, SLICE_EVENTS)
        if self._reading.done:
            self._reading.finish()
            self.done = True
        return len(self.stream.events) - before
