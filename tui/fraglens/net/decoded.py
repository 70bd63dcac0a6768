"""A response body as fraglens keeps it: content-encoding undone, capped, keys scrubbed.

``live`` reads every response through one; the proxy's forwarding side
(``proxy/server.py``) makes this copy of each read for the flows, after the
read went to the client untouched, and it is all the flows ever see. So a key
the server echoes back (in an error body, a JSON escape, cut across two reads)
is scrubbed before anything keeps it, and a compressed body that inflates
without end (a gzip bomb) stops at ``max_decoded`` bytes, decoded at most that
many at a time so that it never sits in memory whole. A body sent as it is has
nothing to inflate: it is capped only where the caller says (the proxy's flows).

When the copy stops (an encoding it cannot undo, a broken one, the cap) it
says why once, in :attr:`DecodedCopy.stopped`, and yields nothing more.
Sans-I/O.
"""

from __future__ import annotations

import zlib
from typing import Any, Protocol

from ..redact import Scrubber, Secrets
from .limits import DEFAULT_LIMITS, mib

__all__ = ["DecodedCopy"]


class _Decoder(Protocol):
    def decode(self, data: bytes, limit: int) -> bytes: ...
    def flush(self) -> bytes: ...


class _Identity:
    def decode(self, data: bytes, limit: int) -> bytes:
        return data

    def flush(self) -> bytes:
        return b""


class _Zlib:
    """gzip and deflate, from the standard library."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._first = True
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def decode(self, data: bytes, limit: int) -> bytes:
        """At most ``limit`` bytes (at least 1): a bomb never inflates past the cap in memory."""
        if self._first and data and not self._gzip:
            self._first = False
            # "deflate" is zlib-wrapped by the RFC, raw deflate by some servers
            if data[0] & 0x0F != 8:
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._z.decompress(data, max(limit, 1))

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
        return _Unbounded(cls())
    except ImportError:
        return None


class _Unbounded:
    """httpx's br and zstd decoders: no output limit per call, so the cap is checked
    after each read (a read can still inflate past it once)."""

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder

    def decode(self, data: bytes, limit: int) -> bytes:
        return bytes(self._decoder.decode(data))

    def flush(self) -> bytes:
        return bytes(self._decoder.flush())


class DecodedCopy:
    """Feed each read as forwarded; get back the bytes the flow keeps."""

    def __init__(
        self,
        content_encoding: str | None,
        secrets: Secrets | None = None,
        max_decoded: int = DEFAULT_LIMITS.max_decoded,
        max_plain: int | None = None,
    ) -> None:
        self._decoder = _decoder(content_encoding)
        self._scrubber = Scrubber(secrets or Secrets())
        #: the cap: what a content-encoding may inflate to, and for a body sent
        #: as it is, ``max_plain`` (None: none; ``live`` caps what it keeps itself)
        self._cap = max_plain if isinstance(self._decoder, _Identity) else max_decoded
        #: bytes decoded so far
        self.decoded = 0
        #: why the copy stopped, once it has
        self.stopped: str | None = None
        self._closed = False
        if self._decoder is None:
            self.stopped = (
                f"the body is encoded as {content_encoding!r}, which cannot be undone here"
            )

    def feed(self, raw: bytes) -> bytes:
        if self._decoder is None or self.stopped is not None or self._closed:
            return b""
        cap = self._cap
        room = len(raw) if cap is None else cap - self.decoded
        try:
            data = self._decoder.decode(raw, room + 1)
        except Exception as exc:
            self.stopped = f"could not undo the content-encoding: {exc}"
            return self._scrubber.close()
        self.decoded += len(data)
        if cap is not None and self.decoded > cap:
            self.stopped = (
                f"the body ran past {mib(cap)} decoded"
                " (--max-decoded-bytes): not decoded further"
            )
            return self._scrubber.feed(data[:room]) + self._scrubber.close()
        return self._scrubber.feed(data)

    def close(self) -> bytes:
        """The body ended: the last decoded bytes, and any held back by the scrubber.
        Once: a second call returns nothing."""
        if self._decoder is None or self.stopped is not None or self._closed:
            return b""
        self._closed = True
        try:
            tail = self._scrubber.feed(self._decoder.flush())
        except Exception as exc:  # a body cut off mid-compression
            self.stopped = f"compressed body ended early: {exc}"
            tail = b""
        return tail + self._scrubber.close()
