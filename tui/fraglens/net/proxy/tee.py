"""The proxy's tee: the copy of a response body, read the way the app reads it.

What comes in is :class:`~.decoded.DecodedCopy`'s output: the upstream's
bytes with the content-encoding undone and keys scrubbed. This side reads the
body as fraglens reads any capture: an SSE body incrementally, event by event
as the bytes come, and a JSON body (a non-streamed completion, an error) whole
at the end. Which one is sniffed from the first byte, not taken from
Content-Type: servers send JSON errors as ``text/event-stream`` and SSE as
``application/json``.

An SSE line or event longer than ``max_line`` (a server that never ends a
line) stops the reading there: what was read stays in the flow's chunks and
recording, the recording ends with the reason, and the flow says it in a note.
:meth:`BodyTee.stop` does the same for the copy's own reasons (the decoded
cap). The client is not affected either way.

Sans-I/O: bytes and times in, events into the flow's ``Stream``. The caller
holds the flow store's lock around every call.
"""

from __future__ import annotations

import re

from ...framing.detect import read_stream
from ...framing.events import FramingError, RawEvent
from ...framing.sse import SSEDecoder
from ..limits import DEFAULT_LIMITS, Limits, LineGuard
from .flows import Flow

__all__ = ["BodyTee"]
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


_SSE_START = re.compile(rb"(?:data|event|id|retry)(?::|\r|\n|\Z)|:")


def _sniff(head: bytes, final: bool = False) -> str | None:
    """ "sse" or "whole" from the body's first non-blank bytes; None: not sure yet."""
    if head[:1] in (b"{", b"["):
        return "whole"
    if len(head) < 6 and b"\n" not in head and b"\r" not in head and not final:
        return None  # "dat" may become "data:"
    return "sse" if _SSE_START.match(head) else "whole"


class BodyTee:
    """Feed the decoded bytes with :meth:`feed`, then :meth:`close` once."""

    def __init__(self, flow: Flow, limits: Limits = DEFAULT_LIMITS) -> None:
        self.flow = flow
        self._guard = LineGuard(limits.max_line)
        #: "sse", "whole" (read at the end), or None until the first byte says
        self._mode: str | None = None
        self._held = b""
        # a whole body, bounded: the copy stops at max_decoded
        self._body: list[bytes] = []
        self._sse: SSEDecoder | None = None
        #: reading stopped: a cap was reached
        self._stopped = False

    def feed(self, data: bytes, t: float, received: int | None = None) -> None:
        """``data``, decoded; ``received``: the bytes forwarded for it (default its length)."""
        self.flow.received += len(data) if received is None else received
        self._keep(data, t)

    def close(self, t: float) -> None:
        stream = self.flow.stream
        if stream is None or stream.closed:
            return
        if not self._stopped:
            if self._mode is None and self._held.strip(_WHITESPACE):
                held, self._held = self._held, b""
                self._mode = _sniff(held.removeprefix(_BOM).lstrip(_WHITESPACE), final=True)
                if self._mode == "sse":
                    self._sse = SSEDecoder()
                self._read(held, t)
            if self._mode == "sse" and self._sse is not None:
                self._emit(self._sse.close(time=t))
            elif self._mode == "whole":
                self._emit(self._whole(t))
        stream.close()

    def stop(self, reason: str, t: float) -> None:
        """Read no more of this body: say why, in the flow and in its recording."""
        if self._stopped:
            return
        self._stopped = True
        flow = self.flow
        flow.notes.append(reason)
        if flow.writer is not None:
            flow.writer.end("error", reason, t)
            flow.writer = None

    # -- internals ---------------------------------------------------------------
    def _keep(self, data: bytes, t: float) -> None:
        if not data or self._stopped:
            return
        flow = self.flow
        flow.chunks.append((t, data))
        if flow.writer is not None:
            flow.writer.chunk(t, data)
        if flow.stream is not None:
            self._read(data, t)

    def _read(self, data: bytes, t: float) -> None:
        if self._mode is None:
            self._held += data
            head = self._held.removeprefix(_BOM).lstrip(_WHITESPACE)
            if not head:
                return
            data, self._held = self._held, b""
            mode = _sniff(head)
            if mode is None:
                self._held = data
                return
            self._mode = mode
            if mode == "sse":
                self._sse = SSEDecoder()
        if self._mode == "sse":
            assert self._sse is not None
            if not self._guard.feed(data):
                self.stop(f"{self._guard.message()}: not decoded further", t)
                return
            self._emit(self._sse.feed(data, time=t))
        else:
            self._body.append(data)

    def _whole(self, t: float) -> list[RawEvent]:
        body = b"".join(self._body)
        try:
            framed = read_stream(body)
        except FramingError:
            # an HTML error page from a gateway, plain text: what the server said
            text = body.decode("utf-8", "replace").strip()
            return [RawEvent(0, "data", text, time=t, span=(0, len(body)))]
        assert self.flow.stream is not None
        self.flow.stream.framing = framed.framing
        return [RawEvent(e.number, e.kind, e.data, e.event, e.id, t, e.span) for e in framed.events]

    def _emit(self, events: list[RawEvent]) -> None:
        stream = self.flow.stream
        assert stream is not None
        for ev in events:
            stream.feed(ev)
