"""The AWS binary event stream (``application/vnd.amazon.eventstream``): bytes in, messages out.

Bedrock's ``ConverseStream`` and ``InvokeModelWithResponseStream`` answer with
this framing instead of SSE. Each message is

    total length (4) | headers length (4) | prelude CRC32 (4)
    headers | payload | message CRC32 (4)

big-endian, both CRCs the ordinary CRC-32 (``zlib.crc32``): the first over the
eight length bytes, the second over everything before it. A header is a name
(1-byte length, UTF-8), a type byte and a typed value (see ``_read_value``).
The layout follows the Smithy ``aws.protocols`` event-stream description and
botocore's ``eventstream.py``; ``tests/test_eventstream.py`` holds this
decoder to botocore's parser on every sample and on damaged copies of them.

Where botocore raises on the first bad checksum, a debugger has to keep going:
a message whose CRC does not match, or whose prelude is impossible, becomes a
:class:`Damage` record, and decoding goes on at the next offset that holds a
valid prelude (its own CRC must match, so random bytes are not mistaken for
one). Bytes left over at the end, a message cut off, are a :class:`Damage`
too. Sans-I/O, and every buffer has a limit: a prelude announcing a message
longer than :data:`MAX_MESSAGE` is treated as damage, not waited for.
"""

from __future__ import annotations

import json
import struct
import zlib

from ..engine.plural import counted
from ..records import Record
from .events import EventLog, Framed, RawEvent

__all__ = [
    "MAX_MESSAGE",
    "Damage",
    "EventStreamDecoder",
    "HeaderValue",
    "Message",
    "encode_message",
    "log_items",
    "looks_like_eventstream",
    "read_eventstream",
    "read_sound",
    "to_event",
]

PRELUDE = 12  # total length, headers length, prelude CRC
TRAILER = 4  # message CRC
#: the longest message accepted: Bedrock's payloads are small JSON events, and
#: botocore refuses payloads above 16 MiB and headers above 128 KiB
MAX_HEADERS = 128 * 1024
MAX_MESSAGE = PRELUDE + MAX_HEADERS + 16 * 1024 * 1024 + TRAILER

_U32 = struct.Struct(">I")
#: how many distinct header blocks a decoder remembers (a stream uses a few)
_KNOWN_HEADER_BLOCKS = 64
_PRELUDE = struct.Struct(">III")

HeaderValue = bool | int | bytes | str


class Message(Record):
    __slots__ = ("headers", "payload", "span")
    #: shared between the messages with the same header bytes: read, never change
    headers: dict[str, HeaderValue]
    payload: bytes
    #: (start, end) byte offsets in everything fed
    span: tuple[int, int]

    def __init__(self, headers: dict[str, HeaderValue], payload: bytes,
                 span: tuple[int, int]) -> None:
        self.headers = headers
        self.payload = payload
        self.span = span


class Damage(Record):
    """Bytes that are no valid message: ``cut`` (the stream ended inside a
    message) or ``crc`` (a checksum, a length or a header that does not hold)."""

    __slots__ = ("kind", "reason", "span")
    kind: str
    reason: str
    span: tuple[int, int]

    def __init__(self, kind: str, reason: str, span: tuple[int, int]) -> None:
        self.kind = kind
        self.reason = reason
        self.span = span


def _prelude_ok(buf: bytes | bytearray, at: int) -> int:
    """The total length of a message whose prelude starts at ``at``, or 0 if
    the twelve bytes there are no valid prelude."""
    total: int
    headers: int
    total, headers, crc = _PRELUDE.unpack_from(buf, at)
    if zlib.crc32(buf[at : at + 8]) != crc:
        return 0
    if total < PRELUDE + TRAILER or total > MAX_MESSAGE or headers > total - PRELUDE - TRAILER:
        return 0
    if headers > MAX_HEADERS:
        return 0
    return total


def looks_like_eventstream(data: bytes) -> bool:
    """Does ``data`` open with a valid event-stream prelude?"""
    return len(data) >= PRELUDE and _prelude_ok(data, 0) > 0


class EventStreamDecoder:
    """Feed bytes as they arrive; get back the messages (and damage) they complete."""

    def __init__(self, base: int = 0) -> None:
        self._buf = bytearray()
        #: offset of _buf[0] in everything fed (``base``: where the first byte
        #: fed lies in the input, when reading starts past its beginning)
        self._base = base
        #: where unreadable bytes began, while looking for the next prelude
        self._bad_from: int | None = None
        self._bad_reason = ""
        #: header blocks already read, by their bytes: a stream repeats a handful
        #: of them (one per event type), so each is parsed once. Bounded.
        self._known: dict[bytes, dict[str, HeaderValue]] = {}

    def feed(self, data: bytes) -> list[Message | Damage]:
        self._buf += data
        out: list[Message | Damage] = []
        buf = self._buf
        pos = 0
        while len(buf) - pos >= PRELUDE:
            total = _prelude_ok(buf, pos)
            if total == 0:
                if self._bad_from is None:
                    self._bad_from = self._base + pos
                    self._bad_reason = "no valid prelude (its CRC or lengths do not hold)"
                pos += 1
                continue
            self._flush_bad(self._base + pos, out)
            if len(buf) - pos < total:
                break  # wait for the rest of the message
            out.append(self._message(buf, pos, total))
            pos += total
        if pos:
            del buf[:pos]
            self._base += pos
        return out

    @property
    def between_messages(self) -> int | None:
        """The offset of the next message's first byte when nothing unreadable
        is pending: everything fed before it was read as messages or damage,
        and what is held from there on (a message waiting for its end) would be
        read the same by a new decoder started there. None while the decoder is
        looking for a prelude past bad bytes."""
        return None if self._bad_from is not None else self._base

    def close(self) -> list[Message | Damage]:
        """End of stream: whatever is left is a message cut off (or damage)."""
        out: list[Message | Damage] = []
        end = self._base + len(self._buf)
        if self._buf:
            if self._bad_from is not None:
                self._flush_bad(end, out)
            else:
                want = _prelude_ok(self._buf, 0) if len(self._buf) >= PRELUDE else 0
                said = f" of the {want} its prelude announced" if want else ""
                held = counted(len(self._buf), "byte")
                reason = f"the stream ended inside a message: {held}{said}"
                out.append(Damage("cut", reason, (self._base, end)))
        else:
            self._flush_bad(end, out)
        self._base = end
        self._buf.clear()
        return out

    # -- internals ---------------------------------------------------------------------
    def _flush_bad(self, end: int, out: list[Message | Damage]) -> None:
        if self._bad_from is None:
            return
        start, self._bad_from = self._bad_from, None
        skipped = f"{counted(end - start, 'byte')} skipped: {self._bad_reason}"
        out.append(Damage("crc", skipped, (start, end)))

    def _message(self, buf: bytearray, at: int, total: int) -> Message | Damage:
        span = (self._base + at, self._base + at + total)
        message = bytes(buf[at : at + total])  # small: one event's JSON
        body = total - TRAILER
        if zlib.crc32(message[:body]) != _U32.unpack_from(message, body)[0]:
            return Damage("crc", "message CRC mismatch: the bytes changed on the way", span)
        start = PRELUDE + _U32.unpack_from(message, 4)[0]
        raw = message[PRELUDE:start]
        headers = self._known.get(raw)
        if headers is None:
            try:
                headers = _headers(raw)
            except ValueError as exc:
                return Damage("crc", f"unreadable headers: {exc}", span)
            if len(self._known) < _KNOWN_HEADER_BLOCKS:
                self._known[raw] = headers
        return Message(headers, message[start:body], span)


def _headers(data: bytes) -> dict[str, HeaderValue]:
    out: dict[str, HeaderValue] = {}
    pos = 0
    while pos < len(data):
        size = data[pos]
        name = data[pos + 1 : pos + 1 + size]
        if len(name) != size or pos + 1 + size >= len(data):
            raise ValueError("a header name runs past the headers")
        pos += 1 + size
        value, pos = _read_value(data, pos)
        key = name.decode("utf-8")
        if key in out:
            raise ValueError(f"header {key!r} twice")
        out[key] = value
    return out


_FIXED = {2: struct.Struct(">b"), 3: struct.Struct(">h"), 4: struct.Struct(">i"),
          5: struct.Struct(">q"), 8: struct.Struct(">q")}


def _read_value(data: bytes, pos: int) -> tuple[HeaderValue, int]:
    """One typed header value: 0 true, 1 false, 2-5 signed integers of 1, 2, 4
    and 8 bytes, 6 bytes and 7 a UTF-8 string (2-byte length first), 8 a
    timestamp (milliseconds, kept as the integer), 9 a UUID (its 16 bytes), as
    botocore reads them."""
    kind = data[pos]
    pos += 1
    if kind == 0:
        return True, pos
    if kind == 1:
        return False, pos
    fixed = _FIXED.get(kind)
    if fixed is not None:
        if pos + fixed.size > len(data):
            raise ValueError("a header value runs past the headers")
        return fixed.unpack_from(data, pos)[0], pos + fixed.size
    if kind in (6, 7):
        if pos + 2 > len(data):
            raise ValueError("a header value runs past the headers")
        size = int.from_bytes(data[pos : pos + 2], "big")
        raw = data[pos + 2 : pos + 2 + size]
        if len(raw) != size:
            raise ValueError("a header value runs past the headers")
        return (raw if kind == 6 else raw.decode("utf-8")), pos + 2 + size
    if kind == 9:
        raw = data[pos : pos + 16]
        if len(raw) != 16:
            raise ValueError("a header value runs past the headers")
        return raw, pos + 16
    raise ValueError(f"unknown header type {kind}")


def to_event(number: int, item: Message | Damage) -> RawEvent:
    """One decoded message as the event the pipeline reads.

    The event name is what the headers say the message is: ``:event-type``
    for an event (``contentBlockDelta``, ``chunk``), ``:exception-type`` for a
    modelled exception (``throttlingException``), ``:error-code`` for an error
    message (``exception`` and ``error`` when those are missing), whose text
    lives in a header: it becomes a ``{"message": ...}``
    payload so that nothing said is lost. Damage is a ``damaged`` event whose
    ``event`` says which kind (``cut`` or ``crc``)."""
    if isinstance(item, Damage):
        return RawEvent(number, "damaged", item.reason, event=item.kind, span=item.span)
    headers = item.headers
    kind = headers.get(":message-type")
    name = _name(headers)
    data = item.payload.decode("utf-8", "replace")
    # the payload ends where the message's CRC begins
    end = item.span[1] - TRAILER
    at: tuple[int, int] | None = (end - len(item.payload), end)
    if kind == "error" and not item.payload:
        message = headers.get(":error-message")
        data = json.dumps({"message": message if isinstance(message, str) else None})
        at = None
    return RawEvent(number, "data", data, event=name, span=item.span, at=at)


def _name(headers: dict[str, HeaderValue]) -> str | None:
    """The header that names the message, as text. An exception or error
    message whose own name header is missing (or not a string) is named by its
    type, ``exception`` or ``error``, so that it is never taken for an event;
    an event without a usable ``:event-type`` has no name."""
    kind = headers.get(":message-type")
    if kind == "exception" or kind == "error":
        name = headers.get(":exception-type" if kind == "exception" else ":error-code")
        return name if isinstance(name, str) else kind
    name = headers.get(":event-type")
    return name if isinstance(name, str) else None


#: bytes of a whole input decoded at a time (see EventLog)
_STEP = 1 << 20


def read_eventstream(data: bytes) -> Framed:
    events = EventLog(data)
    pos = read_sound(data, events, 0, len(data), {})
    if pos < len(data):  # damage, or a message cut off: the decoder says what, from there
        decoder = EventStreamDecoder(base=pos)
        for i in range(pos, len(data), _STEP):
            log_items(events, decoder.feed(data[i : i + _STEP]))
        log_items(events, decoder.close())
    return Framed("eventstream", events)


def read_sound(
    data: bytes, events: EventLog, pos: int, stop: int, known: dict[bytes, dict[str, HeaderValue]]
) -> int:
    """The messages that hold, one after another from ``pos`` (where one
    starts) while they start before ``stop``, added to ``events`` as the
    decoder would read them, without copying a message or making it an object;
    returns where the first one that does not hold is, or where reading
    stopped. ``known`` caches the header blocks read (kept by the caller from
    one call to the next). At a message boundary the decoder keeps nothing but
    its header cache, so one started there reads the rest as it would."""
    view = memoryview(data)
    unpack, u32, crc32 = _PRELUDE.unpack_from, _U32.unpack_from, zlib.crc32
    add = events.add
    size = len(data)
    while pos < stop and size - pos >= PRELUDE:
        total, length, crc = unpack(data, pos)
        if crc32(view[pos : pos + 8]) != crc or total < PRELUDE + TRAILER:
            break
        if total > MAX_MESSAGE or length > total - PRELUDE - TRAILER or length > MAX_HEADERS:
            break
        end = pos + total
        body = end - TRAILER
        if end > size or crc32(view[pos:body]) != u32(data, body)[0]:
            break
        start = pos + PRELUDE + length
        raw = data[pos + PRELUDE : start]
        headers = known.get(raw)
        if headers is None:
            try:
                headers = _headers(raw)
            except ValueError:
                break
            if len(known) < _KNOWN_HEADER_BLOCKS:
                known[raw] = headers
        if start == body and headers.get(":message-type") == "error":
            events.append(to_event(len(events), Message(headers, b"", (pos, end))))
        else:
            add("data", _name(headers), pos, end, start, body, None)
        pos = end
    return pos


def log_items(events: EventLog, items: list[Message | Damage]) -> None:
    """What the decoder read, added to ``events``: messages as ranges of the
    source, their payloads not decoded here (what ``to_event`` would make of
    them); the rest made as events."""
    add = events.add
    for item in items:
        if type(item) is Message and item.payload and item.headers.get(":message-type") != "error":
            start, end = item.span
            stop = end - TRAILER
            add("data", _name(item.headers), start, end, stop - len(item.payload), stop, None)
        else:
            events.append(to_event(len(events), item))


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One message with string headers: what the sample generator and the
    replay tests write. Not used to read anything."""
    head = b"".join(
        bytes([len(k.encode())]) + k.encode() + b"\x07" + len(v.encode()).to_bytes(2, "big")
        + v.encode()
        for k, v in headers.items()
    )
    total = PRELUDE + len(head) + len(payload) + TRAILER
    lengths = _U32.pack(total) + _U32.pack(len(head))
    prelude = lengths + _U32.pack(zlib.crc32(lengths))
    body = prelude + head + payload
    return body + _U32.pack(zlib.crc32(body))
