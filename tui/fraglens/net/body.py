"""A response body read as it arrives, framed exactly as its recording will be.

``fraglens live`` promises that its report equals ``fraglens check`` on the
recording it wrote. So the body is framed here by the same rule
``fraglens.framing.detect`` applies to a recording's body: a body whose first
character is not ``{`` or ``[`` and that has an SSE ``data:`` line is SSE, fed
to :class:`SSEDecoder` read by read, with the same receive times; anything
else (a JSON error body, a 200 that is not a stream, an HTML page from a
gateway) is framed whole when it ends, by ``read_stream`` over the very
recording bytes.

A call that asked for NDJSON (Ollama's native ``/api/chat``, ``lines=True``)
is read line by line as it arrives instead: each complete non-blank line is
one event, as ``read_stream`` frames an NDJSON body (a body of one line, an
error object, is that same one event).

A call that asked for Bedrock's binary event stream (``binary=True``) is
decoded message by message as it arrives, by the same
:class:`EventStreamDecoder` ``read_stream`` uses on the recording, each event
stamped with the time of the read that holds its last byte, as a recording's
reader stamps it; a body that does not open with a valid prelude (a JSON
error) is framed whole when it ends. Past ``max_line`` bytes without a whole
message, the decoding stops as for an SSE line.

Events are handed out in order and never taken back. Until a ``data:`` line
shows the body is SSE, events the decoder completed (keep-alive comments) are
held, not handed out. An SSE line or event longer than ``max_line`` (a server
that never ends a line) stops the decoding: ``overflow`` says so, the bytes
stay in ``chunks``, and the caller ends the call. Sans-I/O: the caller reads
the socket.
"""

from __future__ import annotations

import io
import re
from bisect import bisect_left

from ..framing.detect import read_stream
from ..framing.events import FramingError, RawEvent
from ..framing.eventstream import (
    PRELUDE,
    Damage,
    EventStreamDecoder,
    Message,
    looks_like_eventstream,
    to_event,
)
from ..framing.recording import RecordingWriter
from ..framing.sse import SSEDecoder
from .limits import DEFAULT_LIMITS, LineGuard, mib

__all__ = ["LiveBody"]

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"
# the rule of fraglens/framing/detect.py: a data: field at the start of the body or of a line
_BODY_STARTS_DATA = re.compile(rb"(?:\xef\xbb\xbf)?data:")
_LINE_DATA = re.compile(rb"[\r\n]data:")


class LiveBody:
    """Feed ``(t, bytes)`` per network read; get back the events it completes."""

    def __init__(
        self, lines: bool = False, max_line: int = DEFAULT_LIMITS.max_line, binary: bool = False
    ) -> None:
        #: read NDJSON line by line (the request asked for it)
        self.lines = lines
        #: read an AWS event stream message by message (the request asked for it)
        self.binary = binary
        self._max_line = max_line
        self._messages: EventStreamDecoder | None = None
        self._events = 0
        #: where the last message read ends, in body bytes
        self._message_end = 0
        # each read's end offset and time: an event is stamped with its last byte's read
        self._ends: list[int] = []
        self._times: list[float] = []
        self._line: list[bytes] = []  # the line not terminated yet
        self._line_events = 0
        self.chunks: list[tuple[float, bytes]] = []
        self.size = 0
        #: "sse" once the body is known to be SSE, "whole" once known not to stream
        self.mode: str | None = None
        #: how the body was framed, once closed: sse, json-body, ndjson, text...
        self.framing: str | None = None
        self._decoder = SSEDecoder()
        # NDJSON has no events (blank lines): only its lines are capped
        self._guard = LineGuard(max_line, events=not lines)
        #: why the decoding stopped (a line or an event past max_line), once it has
        self.overflow: str | None = None
        self._held: list[RawEvent] = []
        self._seen_data = False
        # the first bytes and the last few bytes of the body so far: a data:
        # line split across two reads is still seen
        self._head = b""
        self._tail = b""

    @property
    def streamed(self) -> bool:
        """Was the body read as SSE or NDJSON, event by event (not framed whole at the end)?"""
        if self.lines:
            return self._line_events > 0
        if self.binary:
            return self.mode == "eventstream"
        return self.mode == "sse" and self._seen_data

    @property
    def body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.chunks)

    def feed(self, t: float, chunk: bytes) -> list[RawEvent]:
        if not chunk:
            return []
        t = round(t, 6)  # as the recording writes it
        self.chunks.append((t, chunk))
        self.size += len(chunk)
        if self.overflow is not None:
            return []
        if self.lines:
            if not self._guard.feed(chunk):
                self.overflow = self._guard.message()
                return []
            return self._feed_lines(t, chunk)
        if self.binary:
            return self._feed_messages(t, chunk)
        if self.mode is None:
            self._decide()
        if self.mode != "sse":
            return []
        if not self._guard.feed(chunk):
            self.overflow = self._guard.message()
            return []
        events = self._decoder.feed(chunk, time=t)
        if self._seen_data:
            return events
        self._held += events
        self._seen_data = self._has_data_line(chunk)
        if not self._seen_data:
            return []
        held, self._held = self._held, []
        return held

    def close(self, t: float | None = None) -> list[RawEvent]:
        """The body ended (cleanly or not): the events still to come."""
        end = round(t, 6) if t is not None else (self.chunks[-1][0] if self.chunks else None)
        if self.overflow is not None:
            # the line held is cut at a read: dispatching it would invent an event
            self.framing = "ndjson" if self.lines else "eventstream" if self.binary else "sse"
            return []
        if self.lines:
            tail, self._line = b"".join(self._line), []
            out = self._line_events_of([tail], end)
            if self._line_events:
                self.framing = "ndjson" if self._line_events > 1 else "json-body"
            return out
        if self.binary and self._messages is not None:
            self.framing = "eventstream"
            return self._events_of(self._messages.close())
        if self.streamed:
            self.framing = "sse"
            return self._decoder.close(time=end)
        return self._whole(end)

    # -- internals --------------------------------------------------------------------
    def _feed_messages(self, t: float, chunk: bytes) -> list[RawEvent]:
        self._ends.append(self.size)
        self._times.append(t)
        if self.mode is None:
            if self.size < PRELUDE:
                return []
            body = self.body
            if not looks_like_eventstream(body):
                self.mode = "whole"  # framed when it ends, as read_stream frames it
                return []
            self.mode = "eventstream"
            self._messages = EventStreamDecoder()
            chunk = body  # the reads before the decision: all of the body so far
        if self._messages is None:
            return []
        out = self._events_of(self._messages.feed(chunk))
        if self.size - self._message_end > self._max_line:
            self.overflow = (
                f"an event-stream message ran past {mib(self._max_line)} (--max-line-bytes)"
            )
        return out

    def _events_of(self, items: list[Message | Damage]) -> list[RawEvent]:
        """Decoded messages (and damage) as events, stamped as a recording's reader does."""
        out = []
        ends, times = self._ends, self._times
        for item in items:
            event = to_event(self._events, item)
            self._events += 1
            end = item.span[1]
            self._message_end = max(self._message_end, end)
            # set on the event just made, before anyone holds it (a copy per event costs)
            event.time = times[min(bisect_left(ends, end), len(times) - 1)] if times else None
            out.append(event)
        return out

    def _feed_lines(self, t: float, chunk: bytes) -> list[RawEvent]:
        if b"\n" not in chunk:
            self._line.append(chunk)
            return []
        *done, rest = chunk.split(b"\n")
        done[0] = b"".join([*self._line, done[0]])
        self._line = [rest] if rest else []
        return self._line_events_of(done, t)

    def _line_events_of(self, lines: list[bytes], t: float | None) -> list[RawEvent]:
        out = []
        for line in lines:
            body = line.strip()
            if body:
                text = body.decode("utf-8", "replace")
                out.append(RawEvent(self._line_events, "data", text, time=t))
                self._line_events += 1
        return out

    def _decide(self) -> None:
        body = self.body
        skip = len(_BOM) if body.startswith(_BOM) else 0
        content = body[skip:].lstrip(_WHITESPACE)
        if not content:
            return
        self.mode = "whole" if content[:1] in (b"{", b"[") else "sse"
        if self.mode == "sse":
            # the reads before the decision were only whitespace: feed them now,
            # except the one being fed, which the caller feeds
            for t, chunk in self.chunks[:-1]:
                self._held += self._decoder.feed(chunk, time=t)
                self._has_data_line(chunk)

    def _has_data_line(self, chunk: bytes) -> bool:
        if len(self._head) < len(_BOM) + 5:
            self._head = (self._head + chunk)[: len(_BOM) + 5]
            if _BODY_STARTS_DATA.match(self._head):
                return True
        window = self._tail + chunk
        self._tail = window[-5:]
        return _LINE_DATA.search(window) is not None

    def _whole(self, end: float | None) -> list[RawEvent]:
        if not self.chunks:
            return []
        out = io.BytesIO()
        writer = RecordingWriter(out)
        writer.start({"method": "POST", "url": ""})
        writer.response(200)
        for t, chunk in self.chunks:
            writer.chunk(t, chunk)
        if end is not None:
            writer.end("eof", t=end)
        try:
            framed = read_stream(out.getvalue())
        except FramingError:
            return []
        self.framing = framed.meta.get("body_framing")
        return list(framed.events)
