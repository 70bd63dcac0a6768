"""The proxy's tee: a copy of the response bytes, read the way the app reads them.

The client gets the upstream's bytes untouched (compressed if they were); this
side undoes the content-encoding, then reads the body as fraglens reads any
capture: an SSE body incrementally, event by event as the bytes come, and a
JSON body (a non-streamed completion, an error) whole at the end. Which one is
sniffed from the first byte, not taken from Content-Type: servers send JSON
errors as ``text/event-stream`` and SSE as ``application/json``.

Sans-I/O: bytes and times in, events into the flow's ``Stream``. The caller
holds the flow store's lock around every call.
"""

from __future__ import annotations

import re
import zlib
from typing import Protocol

from ...framing.detect import read_stream
from ...framing.events import FramingError, RawEvent
from ...framing.sse import SSEDecoder
from .flows import Flow

__all__ = ["BodyTee"]

#: a non-SSE body is read whole; past this it is forwarded but not decoded
MAX_BUFFERED_BODY = 64 * 1024 * 1024
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


class _Decoder(Protocol):
    def decode(self, data: bytes) -> bytes: ...
    def flush(self) -> bytes: ...


class _Identity:
    def decode(self, data: bytes) -> bytes:
        return data

    def flush(self) -> bytes:
        return b""


class _Zlib:
    """gzip and deflate, from the standard library."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._first = True
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def decode(self, data: bytes) -> bytes:
        if self._first and data and not self._gzip:
            self._first = False
            # "deflate" is zlib-wrapped by the RFC, raw deflate by some servers
            if data[0] & 0x0F != 8:
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._z.decompress(data)

    def flush(self) -> bytes:
        return self._z.flush()


def _decoder(encoding: str | None) -> _Decoder | None:
    """None when the encoding is one this side cannot undo."""
    names = [e.strip().lower() for e in (encoding or "").split(",") if e.strip()]
    names = [n for n in names if n != "identity"]
    if not names:
        return _Identity()
    if len(names) > 1:
        return None
    name = names[0]
    if name in ("gzip", "x-gzip"):
        return _Zlib(gzip=True)
    if name == "deflate":
        return _Zlib(gzip=False)
    try:  # br and zstd: what httpx can undo with the packages installed
        from httpx._decoders import SUPPORTED_DECODERS  # noqa: PLC0415
    except ImportError:
        return None
    cls = SUPPORTED_DECODERS.get(name)
    if cls is None:
        return None
    try:
        return cls()  # type: ignore[no-any-return]
    except ImportError:
        return None


_SSE_START = re.compile(rb"(?:data|event|id|retry)(?::|\r|\n|\Z)|:")


def _sniff(head: bytes, final: bool = False) -> str | None:
    """ "sse" or "whole" from the body's first non-blank bytes; None: not sure yet."""
    if head[:1] in (b"{", b"["):
        return "whole"
    if len(head) < 6 and b"\n" not in head and b"\r" not in head and not final:
        return None  # "dat" may become "data:"
    return "sse" if _SSE_START.match(head) else "whole"


class BodyTee:
    """Feed the forwarded bytes with :meth:`feed`, then :meth:`close` once."""

    def __init__(self, flow: Flow, content_encoding: str | None) -> None:
        self.flow = flow
        decoder = _decoder(content_encoding)
        if decoder is None:
            flow.notes.append(f"body encoded as {content_encoding!r}: forwarded, not decoded")
        self._decoder = decoder
        #: "sse", "whole" (read at the end), or None until the first byte says
        self._mode: str | None = None
        self._held = b""
        self._body: list[bytes] = []
        self._buffered = 0
        self._sse: SSEDecoder | None = None
        self._broken = False

    def feed(self, raw: bytes, t: float) -> None:
        flow = self.flow
        flow.received += len(raw)
        data = self._decode(raw)
        if not data:
            return
        flow.chunks.append((t, data))
        if flow.writer is not None:
            flow.writer.chunk(t, data)
        if flow.stream is not None:
            self._read(data, t)

    def close(self, t: float) -> None:
        flow = self.flow
        if self._decoder is not None and not self._broken:
            try:
                tail = self._decoder.flush()
            except Exception as exc:  # a body cut off mid-compression
                tail = b""
                flow.notes.append(f"compressed body ended early: {exc}")
            if tail:
                flow.chunks.append((t, tail))
                if flow.writer is not None:
                    flow.writer.chunk(t, tail)
                if flow.stream is not None:
                    self._read(tail, t)
        stream = flow.stream
        if stream is None or stream.closed:
            return
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

    # -- internals ---------------------------------------------------------------
    def _decode(self, raw: bytes) -> bytes:
        if self._decoder is None or self._broken:
            return b""
        try:
            return self._decoder.decode(raw)
        except Exception as exc:
            self._broken = True
            self.flow.notes.append(f"could not undo the content-encoding: {exc}")
            return b""

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
            self._emit(self._sse.feed(data, time=t))
        elif self._buffered <= MAX_BUFFERED_BODY:
            self._body.append(data)
            self._buffered += len(data)
            if self._buffered > MAX_BUFFERED_BODY:
                self.flow.notes.append("the body is too large to decode whole: forwarded only")

    def _whole(self, t: float) -> list[RawEvent]:
        if self._buffered > MAX_BUFFERED_BODY:
            return []
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
