"""The one table of readers: which reader reads a capture, and how.

A capture's first bytes pick its reader once, from ``READERS``, in order;
that reader builds the ``Stream`` and reads the capture into it, whole
(``check``: ``capture.py``) or a slice at a time (the app: ``progressive.py``).
The bulk readers it hands the bytes to (``sse_runs``, ``ndjson_runs``,
``eventstream_runs``) only read into the stream they are given; nothing here
calls back into the module that called it.

Adding a framing or a transport is one entry: a ``claim`` that says, from the
bytes alone, whether the capture is its (and hands on what it learned while
looking), and an ``open`` that returns a ``Reading``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from ..framing.detect import FramingError, is_recording, ndjson_start, read_stream
from ..framing.events import EventLog, Framed, FramingProblem, RawEvent
from ..framing.eventstream import looks_like_eventstream
from ..records import FrozenRecord
from .findings import finish_stream, report_replaced_bytes
from .sse_runs import SSEReader, incremental_sse
from .stream import FORMATS, Stream

if TYPE_CHECKING:  # each loads with the first capture that needs it (start-up)
    from typing import Final

    from .eventstream_runs import EventStreamReader
    from .ndjson_runs import NDJSONReader

#: bytes of an SSE, NDJSON or event-stream capture read at a time when one is
#: read whole, between two runs
DRAIN_BUDGET = 1 << 22


class LoadError(Exception):
    """The input could not be read as a stream: a one-line reason."""


class Options(FrozenRecord):
    """How the caller wants the capture read (``--format``, ``--max-arg-bytes``)."""

    __slots__ = ("format", "max_arg_bytes", "keep_naive")
    format: Final[str | None]
    max_arg_bytes: Final[int]
    keep_naive: Final[bool]

    def __init__(
        self, format: str | None = None, max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
        keep_naive: bool = False,
    ) -> None:
        self.format = format
        self.max_arg_bytes = max_arg_bytes
        self.keep_naive = keep_naive


#: the capture read as it is: its own format, the default limits
_AS_IS = Options()


class Reading(Protocol):
    """A capture being read into ``stream`` by one reader of the table."""

    stream: Stream
    #: a recording's or HAR's metadata (its request, redacted), else empty
    meta: dict[str, Any]
    done: bool

    @property
    def fraction(self) -> float:
        """How much of the capture has been read, from 0 to 1."""
        ...

    @property
    def known_empty(self) -> bool:
        """The capture holds no event, known before it is read."""
        ...

    def advance(self, budget_bytes: int, budget_events: int) -> None:
        """Read one slice: about so many bytes, or so many events of a capture
        framed whole."""
        ...

    def drain(self) -> None:
        """Read the rest at once."""
        ...

    def refusal(self) -> str | None:
        """Once drained: why a whole read has nothing to show, if it has not."""
        ...

    def finish(self) -> Framed:
        """Close the stream with what the framing met on the way and report
        bytes that were not UTF-8; what was framed, for the caller."""
        ...


class Reader(FrozenRecord):
    __slots__ = ("name", "claim", "open")
    #: the framing it reads, for people and tests
    name: Final[str]
    #: from the bytes alone: None when the capture is not this reader's, else
    #: what the look learned, handed to ``open``
    claim: Final[Callable[[bytes], Any]]
    open: Final[Callable[[bytes, Any, str, Options], Reading]]

    def __init__(
        self, name: str, claim: Callable[[bytes], Any],
        open: Callable[[bytes, Any, str, Options], Reading],
    ) -> None:
        self.name = name
        self.claim = claim
        self.open = open


def known_format(fmt: str | None) -> str | None:
    """``fmt`` when fraglens reads it (or None); else a one-line LoadError.
    Only a recording's header can name one here: ``--format`` is checked
    by the command line."""
    if fmt is not None and fmt not in FORMATS:
        known = ", ".join(FORMATS)
        raise LoadError(f"the recording's header names the format {fmt!r}, which is not one "
                        f"fraglens reads ({known})")
    return fmt


def frame(data: bytes, name: str = "input") -> Framed:
    """``data`` framed whole, or a one-line LoadError: no framing reads it,
    or it holds nothing to show but why."""
    try:
        framed = read_stream(data)
    except FramingError as exc:
        raise LoadError(f"{name}: {exc}") from None
    if not framed.events and framed.problems:
        raise LoadError(f"{name}: {framed.problems[0].message}")
    return framed


# -- readers that read the bytes in runs -------------------------------------------


class _RunReading:
    """A bulk reader (``SSEReader``, ``NDJSONReader``, ``EventStreamReader``)
    reading ``data`` into the stream it was given."""

    def __init__(
        self,
        stream: Stream,
        reader: SSEReader | NDJSONReader | EventStreamReader,
        data: bytes,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.stream = stream
        self.meta: dict[str, Any] = meta or {}
        stream.secrets = self.meta.get("secrets")
        self._reader = reader
        self._data = data
        self.done = False

    @property
    def fraction(self) -> float:
        return 1.0 if self.done else self._reader.pos / max(1, len(self._data))

    @property
    def known_empty(self) -> bool:
        return False

    @property
    def problems(self) -> list[FramingProblem]:
        return getattr(self._reader, "problems", [])

    def advance(self, budget_bytes: int, budget_events: int) -> None:
        self._reader.advance(budget_bytes)
        self.done = self._reader.done

    def drain(self) -> None:
        while not self._reader.done:
            self._reader.advance(DRAIN_BUDGET)
        self.done = True

    def refusal(self) -> str | None:
        return None

    def _close(self) -> None:
        finish_stream(self.stream, self.problems, self.meta)

    def finish(self) -> Framed:
        self._close()
        report_replaced_bytes(self.stream, self._data)
        return Framed(self.stream.framing, self.stream.events, self.meta, self.problems)


class _SSEReading(_RunReading):
    def refusal(self) -> str | None:
        # nothing to show but why, as ``frame`` says of a capture framed whole
        if not self.stream.events and self.problems:
            return self.problems[0].message
        return None

    def finish(self) -> Framed:
        self._close()
        # the events a run read were found valid UTF-8 there: not read again
        assert isinstance(self._reader, SSEReader)
        report_replaced_bytes(self.stream, self._data, self._reader.runs)
        return Framed(self.stream.framing, self.stream.events, self.meta, self.problems)


class _EventStreamReading(_RunReading):
    def finish(self) -> Framed:
        self._close()
        from .eventstream_runs import EventStreamReader

        # the frames a run read were found valid UTF-8 there: not looked at again
        assert isinstance(self._reader, EventStreamReader)
        report_replaced_bytes(self.stream, self._data, self._reader.runs)
        return Framed("eventstream", self.stream.events, self.meta, self.problems)


def _claim_eventstream(data: bytes) -> bool | None:
    return True if looks_like_eventstream(data) else None


def _open_eventstream(data: bytes, _: Any, name: str, opts: Options) -> Reading:
    from .eventstream_runs import EventStreamReader

    stream = Stream(format=known_format(opts.format), framing="eventstream",
                    max_arg_bytes=opts.max_arg_bytes, keep_naive=opts.keep_naive, source=data)
    return _EventStreamReading(stream, EventStreamReader(stream, data), data)


def _claim_recording(data: bytes) -> Any:
    """A recording whose body is SSE, its header read and its first lines
    parsed (recording_runs.py); None for anything else (another body, a
    damaged header, no recording at all), which is framed whole."""
    if data[:1] != b"{" or not is_recording(data):
        return None
    from .recording_runs import claim

    return claim(data)


def _open_recording(data: bytes, head: Any, name: str, opts: Options) -> Reading:
    from .recording_runs import RecordingReading

    rec = head.lines.recording
    stream = Stream(format=known_format(opts.format or rec.format), framing="recording",
                    max_arg_bytes=opts.max_arg_bytes, keep_naive=opts.keep_naive,
                    sse_body=True, source=head.body)
    return RecordingReading(stream, head)


def open_recording(head: Any, name: str, opts: Options) -> Reading:
    """A recording whose lines were all read elsewhere (``recording_runs.parsed``),
    opened as the table opens one it claimed."""
    return _open_recording(head.body, head, name, opts)


def _claim_websocket(data: bytes) -> Any:
    """A recording of a WebSocket connection, parsed; None for anything else."""
    if data[:1] != b"{" or not is_recording(data) or b'"transport":"websocket"' not in data[:65536]:
        return None
    from ..framing.recording import WEBSOCKET, RecordingLines, parse_recording

    try:
        if RecordingLines(data).recording.transport != WEBSOCKET:
            return None  # its header alone says so: the lines are parsed once, by the next
        return parse_recording(data)
    except FramingError:
        return None  # framed whole, which says what is wrong in one line


def _open_websocket(data: bytes, rec: Any, name: str, opts: Options) -> Reading:
    from ..framing.websocket import read_websocket

    return FramedReading(read_websocket(rec), None, opts)


def _claim_sse(data: bytes) -> bool | None:
    return True if incremental_sse(data) else None


def _open_sse(data: bytes, _: Any, name: str, opts: Options) -> Reading:
    # --format is checked by the command line; an SSE capture names none itself
    stream = Stream(format=opts.format, max_arg_bytes=opts.max_arg_bytes,
                    keep_naive=opts.keep_naive, source=data)
    return _SSEReading(stream, SSEReader(stream, data), data)


def _open_ndjson(data: bytes, start: int, name: str, opts: Options) -> Reading:
    from .ndjson_runs import NDJSONReader

    stream = Stream(format=known_format(opts.format), framing="ndjson",
                    max_arg_bytes=opts.max_arg_bytes, keep_naive=opts.keep_naive,
                    sse_body=False, source=data)
    return _RunReading(stream, NDJSONReader(stream, data, start), data)


# -- the rest: framed whole, then fed --------------------------------------------


class FramedReading:
    """Any other capture (a HAR export, a JSON body, a recording of another
    body), framed whole when it is opened; its events are then read into the
    stream at once or a slice at a time. ``data``: the bytes it was framed
    from, where they are at hand (for the bytes that were not UTF-8)."""

    def __init__(self, framed: Framed, data: bytes | None, opts: Options) -> None:
        self._framed = framed
        self._data = data
        self.meta = framed.meta
        self.stream = Stream(
            format=known_format(opts.format or framed.meta.get("format")),
            framing=framed.framing,
            max_arg_bytes=opts.max_arg_bytes,
            keep_naive=opts.keep_naive,
            sse_body=(framed.meta.get("body_framing") or framed.framing) == "sse",
            source=framed.events.source if isinstance(framed.events, EventLog) else None,
        )
        self.stream.secrets = framed.meta.get("secrets")
        self._events: Sequence[RawEvent] = framed.events
        self._pos = 0
        self.done = False

    @property
    def fraction(self) -> float:
        return 1.0 if self.done else self._pos / max(1, len(self._events))

    @property
    def known_empty(self) -> bool:
        return not self._events

    def advance(self, budget_bytes: int, budget_events: int) -> None:
        events = self._events
        end = min(len(events), self._pos + budget_events)
        feed = self.stream.feed
        for ev in events[self._pos : end]:
            feed(ev)
        self._pos = end
        self.done = end == len(events)

    def drain(self) -> None:
        events = self._events
        if self._pos == 0 and isinstance(events, EventLog):
            self.stream.read_log(events)  # the stream keeps the compact log itself
        else:
            feed = self.stream.feed
            for ev in events[self._pos :]:
                feed(ev)
        self._pos = len(events)
        self.done = True

    def refusal(self) -> str | None:
        return None  # ``frame`` has refused an empty capture already

    def finish(self) -> Framed:
        finish_stream(self.stream, self._framed.problems, self.meta)
        if self._data is not None:
            report_replaced_bytes(self.stream, self._data)
        self._events = ()  # the stream holds what it read; the framed copies may go
        return self._framed


def _claim_anything(data: bytes) -> bool:
    return True


def _open_framed(data: bytes, _: Any, name: str, opts: Options) -> Reading:
    return FramedReading(frame(data, name), data, opts)


#: every reader, in the order a capture's bytes are offered to them: the
#: event-stream's binary prelude first (framing/detect.py tells it so), a
#: recording (of a WebSocket connection's messages, or of an HTTP body) before
#: SSE (its lines are JSON), and what is left framed whole
READERS: tuple[Reader, ...] = (
    Reader("eventstream", _claim_eventstream, _open_eventstream),
    Reader("websocket", _claim_websocket, _open_websocket),
    Reader("recording", _claim_recording, _open_recording),
    Reader("sse", _claim_sse, _open_sse),
    Reader("ndjson", ndjson_start, _open_ndjson),
    Reader("framed", _claim_anything, _open_framed),
)


def open_reading(data: bytes, name: str = "input", opts: Options = _AS_IS) -> Reading:
    """The capture ``data`` opened by the first reader that claims it: its
    stream is made, nothing is read yet. LoadError when it cannot be read."""
    for reader in READERS:
        claim = reader.claim(data)
        if claim is not None:
            return reader.open(data, claim, name, opts)
    raise AssertionError("the last reader claims every capture")
