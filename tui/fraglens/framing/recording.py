"""The fraglens recording format: a capture of one streamed response that a crash cannot lose.

A recording is written while the response arrives, each write flushed, so a
killed process loses no byte it received. It keeps each network read as it
came off the socket, with its receive time: where a real network split an
event, a CRLF or a UTF-8 character can be replayed exactly. Version 1 (what
fraglens wrote before version 3, below, and what ``to_json_lines`` gives
back) is JSON Lines, one JSON object per line:

    {"fraglens":"recording","version":1,"created":"2026-01-02T03:04:05.678Z",
     "request":{"method":"POST","url":"...","headers":{...},"body":{...}},
     "format":"openai-chat","secrets":{...}}           header, first; format, secrets optional
    {"response":{"status":200,"headers":{...}},"t":0.41}  when the headers came
    {"t":0.412,"b":"data: {...}\\n\\n"}                  one line per network read
    {"t":0.430,"b64":"ZGF0YTog4oCm"}                    a read that is not UTF-8 on its own
    {"end":"eof","t":3.2}                               optional; "error" adds "error":"..."

A WebSocket connection is version 2, marked ``"transport":"websocket"`` in its
header: the handshake's request and answer as above, then one line per frame
instead of one per read, and the close::

    {"t":0.50,"from":"client","text":"{\"type\":\"response.create\",...}"}
    {"t":0.61,"from":"server","text":"{\"type\":\"response.created\",...}"}
    {"t":0.62,"from":"server","b64":"AAEC"}             a binary frame, kept as it came
    {"t":0.63,"from":"server","refused":20000000,"reason":"..."}   over the size limit
    {"close":{"code":1000,"reason":"","from":"server"},"t":3.1}

The WebSocket variant is version 2 so that a fraglens that predates it says
"upgrade" instead of showing a recording with nothing in it.

An HTTP recording is written as version 3: the header line as above, then
each read's bytes exactly as they came, flushed as they come, and lines that
open with RS (0x1E) between them: the response and end lines as above, and
after at most a second of reads (or 4,096) the line that times them::

    {"fraglens":"recording","version":3,...}            header, as above
    \x1e{"response":{...},"t":0.41}
    data: {...}\n\ndata: {"cho                         the reads' bytes, raw
    \x1e{"times":"<base64>","sizes":"<base64>"}         their times and sizes (below)
    \x1e{"t":0.44,"b64":"..."}                          a read that holds RS itself
    \x1e{"end":"eof","t":3.2}

The times are little-endian IEEE 754 doubles (NaN: not known), the sizes
unsigned 64-bit integers, each array in base64: read back without a float
object per read. A line written by hand may give JSON arrays of numbers.

Why: a read kept as a JSON string escapes every quote of the JSON inside it,
and undoing that took nearly as long as reading the whole body; raw, the
reads are read back as fast as the body itself (``RecordingLines.read_bulk``
hands them on in pieces of many reads). A killed writer leaves every read's
bytes; what it loses is the times of the reads it had not timed yet, which
are then read as one read with no time. A text sink (``StringIO``) cannot
take raw bytes: it is written version 1, as ``to_json_lines`` gives any
recording back.

``t`` is seconds since the request was sent. Readers ignore keys and line
kinds they do not know, so version 1 can grow; an incompatible change bumps
``version``, and a reader refuses versions newer than it knows. Secrets are
redacted before anything is written (``fraglens.redact``); ``secrets`` holds
the fingerprints of the ones the request carried (``redact.Fingerprints``: never
a value), so that a report can scrub a key the response streamed in pieces.

This module knows the container only; ``detect.read_stream`` turns a recording
into events. It does no I/O of its own: the writer is handed an open file.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..records import FrozenRecord, Record
from ..redact import REDACTED, Fingerprints, Headers, redact_headers, redact_url
from .events import FramingError
from .recording_header import WRITTEN_START, is_recording

if TYPE_CHECKING:  # the writer's clock: a reader has no use for datetime (start-up)
    from datetime import datetime

__all__ = [
    "RECORDING_SUFFIX",
    "RECORDING_VERSION",
    "WEBSOCKET",
    "Frame",
    "MemorySink",
    "Recording",
    "RawReads",
    "RecordingWriter",
    "Sink",
    "is_recording",
    "parse_recording",
    "recording_to_sse",
    "to_json_lines",
]

#: The newest version this module reads.
RECORDING_VERSION = 3
#: What fraglens names the recordings it writes: version 3 is not JSON Lines,
#: and a ``.jsonl`` name would send ``jq`` at it. Readers go by the header
#: line, never by the name, so a recording read back may be named anything.
RECORDING_SUFFIX = ".fraglens"
#: What an HTTP recording is written as: its reads' bytes as they came (below).
HTTP_VERSION = 3
#: An HTTP recording of JSON lines alone, which every fraglens reads, written
#: where the sink takes text (it cannot take raw bytes) or when asked for.
JSON_LINES_VERSION = 1
#: Version 3: what starts each line after the header; every other byte is a read's.
RS = b"\x1e"
#: Version 3: the reads whose times and sizes one line gives at most, and the
#: seconds of the stream they span at most (the first to the last): a process
#: killed before the line is written keeps their bytes, not their times.
_INDEX_READS = 4096
_INDEX_SECONDS = 1.0
#: What a WebSocket connection's recording is written as.
WEBSOCKET_VERSION = 2
#: The header's ``transport`` of a WebSocket connection's recording.
WEBSOCKET = "websocket"

def recorded_url(url: str) -> str:
    """``url`` redacted for a recording, even when it cannot be parsed: a URL
    written by an older fraglens (``http://[redacted]@h``, which reads as an
    IPv6 host) or by hand must not stop the file from being read. Then the
    scheme, host and path are kept, and the userinfo and the query, where
    credentials live, are replaced whole."""
    try:
        return redact_url(url)
    except ValueError:
        pass
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    rest = rest.partition("#")[0]
    rest, question, _ = rest.partition("?")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = f"{REDACTED}@{authority.rpartition('@')[2]}"
    return f"{scheme}{sep}{authority}{slash}{path}" + (f"?{REDACTED}" if question else "")


def _redact_request(request: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "method": str(request.get("method") or "GET").upper(),
        "url": recorded_url(str(request.get("url") or "")),
        "headers": redact_headers(request.get("headers")),
    }
    body = request.get("body")
    if isinstance(request.get("body_b64"), str):
        out["body_b64"] = request["body_b64"]
    elif isinstance(body, (bytes, bytearray)):
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            out["body_b64"] = base64.b64encode(body).decode("ascii")
            return out
        try:
            out["body"] = json.loads(text)
        except (ValueError, RecursionError):
            out["body"] = text
    elif body is not None:
        out["body"] = body
    return out


class Sink(Protocol):
    """Where a writer puts its lines: an open file (binary, or text in UTF-8),
    ``sys.stdout``, an in-memory buffer."""

    def write(self, data: Any, /) -> object: ...

    def flush(self) -> object: ...


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RecordingWriter:
    """Writes one recording line per call and flushes it.

    The caller opens the file (binary, or text with UTF-8) and closes it; calls
    come in order: :meth:`start`, then :meth:`response` once the status is
    known, :meth:`chunk` per network read, and :meth:`end` if the process gets
    the chance.
    """

    def __init__(self, fp: Sink, version: int = HTTP_VERSION) -> None:
        if version not in (JSON_LINES_VERSION, HTTP_VERSION):
            raise ValueError(f"an HTTP recording is written as version 1 or 3, not {version!r}")
        self._fp = fp
        # text streams (files opened "w", StringIO, stdout) have an encoding; binary ones do not
        self._text = hasattr(fp, "encoding")
        #: reads written raw, as version 3 (a text sink takes lines of JSON only)
        self._raw = version == HTTP_VERSION and not self._text
        self._started = False
        self._ended = False
        # version 3: the time and size of each read written since the last index
        # line, and the first such time
        self._times: list[float | None] = []
        self._sizes: list[int] = []
        self._since: float | None = None

    def start(
        self,
        request: Mapping[str, Any],
        *,
        format: str | None = None,
        created: datetime | str | None = None,
        secrets: Fingerprints | None = None,
        transport: str | None = None,
    ) -> None:
        """``request``: method, url, headers and body (a JSON value, text or bytes);
        ``secrets``: the fingerprints of the credentials it carried;
        ``transport="websocket"`` for a WebSocket connection (then :meth:`frame`
        and :meth:`close` instead of :meth:`chunk`)."""
        if self._started:
            raise ValueError("RecordingWriter.start() was already called")
        from datetime import datetime, timezone

        if isinstance(created, datetime):
            created = created.astimezone(timezone.utc).isoformat(timespec="milliseconds")
            created = created.replace("+00:00", "Z")
        if transport == WEBSOCKET:
            self._raw = False  # a connection's messages are whole lines of their own
        header: dict[str, Any] = {
            "fraglens": "recording",
            "version": (WEBSOCKET_VERSION if transport == WEBSOCKET
                        else HTTP_VERSION if self._raw else JSON_LINES_VERSION),
            "created": created or _now(),
            "request": _redact_request(request),
        }
        if transport == WEBSOCKET:
            header["transport"] = WEBSOCKET
        if format:
            header["format"] = format
        if secrets:
            header["secrets"] = secrets.as_json()
        self._started = True
        self._write(header, header=True)

    def response(self, status: int, headers: Headers | None = None, t: float | None = None) -> None:
        line: dict[str, Any] = {"response": {"status": status, "headers": redact_headers(headers)}}
        if t is not None:
            line["t"] = round(t, 6)
        self._write(line)

    def chunk(self, t: float | None, data: bytes) -> None:
        """One network read, exactly as received (``t`` None: a read whose time
        is not known, from a recording that did not keep it)."""
        at = None if t is None else round(t, 6)
        if self._raw and RS not in data:
            self._check_open()
            self._fp.write(data)
            self._fp.flush()
            if not self._times:
                self._since = at
            self._times.append(at)
            self._sizes.append(len(data))
            if len(self._times) >= _INDEX_READS or (
                    at is not None and self._since is not None
                    and not at - self._since < _INDEX_SECONDS):
                self.flush()
            return
        line: dict[str, Any] = {} if at is None else {"t": at}
        try:
            line["b"] = data.decode("utf-8")
        except UnicodeDecodeError:
            # often only a character cut by the read boundary: keep the bytes exact
            line["b64"] = base64.b64encode(data).decode("ascii")
        self._write(line)

    def frame(self, t: float, sender: str, data: str | bytes) -> None:
        """One WebSocket message, whole: text as it came, binary as base64.
        ``sender``: ``client`` or ``server``."""
        line: dict[str, Any] = {"t": round(t, 6), "from": sender}
        if isinstance(data, str):
            line["text"] = data
        else:
            line["b64"] = base64.b64encode(data).decode("ascii")
        self._write(line)

    def refused(self, t: float, sender: str, size: int, reason: str) -> None:
        """A WebSocket message that was not kept (over the size limit): its size and why."""
        self._write({"t": round(t, 6), "from": sender, "refused": size, "reason": reason})

    def close(
        self, t: float, code: int | None, reason: str = "", sender: str | None = None
    ) -> None:
        """How the WebSocket connection closed: the close code (1006 when it
        broke with no close frame), its reason, and who closed it."""
        close: dict[str, Any] = {"code": code, "reason": reason}
        if sender is not None:
            close["from"] = sender
        self._write({"close": close, "t": round(t, 6)})

    def end(self, reason: str, error: str | None = None, t: float | None = None) -> None:
        """How the stream ended: ``eof``, ``error``, ``cancelled``... (free text)."""
        line: dict[str, Any] = {"end": reason}
        if error is not None:
            line["error"] = error
        if t is not None:
            line["t"] = round(t, 6)
        self._write(line)
        self._ended = True

    def flush(self) -> None:
        """Version 3: write the times and sizes of the reads written raw since
        the last such line (at most a second of them are waiting; every other
        line writes them first, and so does the end)."""
        if self._times:
            times, sizes = self._times, self._sizes
            self._times, self._sizes = [], []
            self._write({"times": _packed("d", [_NAN if t is None else t for t in times]),
                         "sizes": _packed("Q", sizes)})

    def _check_open(self) -> None:
        if not self._started:
            raise ValueError("RecordingWriter.start() must come first")
        if self._ended:
            raise ValueError("RecordingWriter.end() was already called")

    def _write(self, obj: dict[str, Any], header: bool = False) -> None:
        self._check_open()
        if self._times and "times" not in obj:
            self.flush()  # the reads before this line are timed before it
        # version 3: a line after the header opens with RS, which no read written raw holds
        mark = "\x1e" if self._raw and not header else ""
        line = mark + json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:
            # a lone surrogate (a HAR's URL, a hand-made body) has no UTF-8: escaped,
            # as JSON allows, the line is still the same value
            line = mark + json.dumps(obj, ensure_ascii=True, separators=(",", ":")) + "\n"
            data = line.encode("ascii")
        self._fp.write(line if self._text else data)
        self._fp.flush()


class Frame(FrozenRecord):
    """One WebSocket message of a recording: ``text``, or binary ``data``, or
    neither when it was ``refused`` (its size, with the ``reason``)."""

    __slots__ = ("t", "sender", "text", "data", "refused", "reason")
    t: Final[float | None]
    #: ``client`` or ``server``
    sender: Final[str]
    text: Final[str | None]
    data: Final[bytes | None]
    refused: Final[int | None]
    reason: Final[str | None]

    def __init__(
        self, t: float | None, sender: str, text: str | None = None, data: bytes | None = None,
        refused: int | None = None, reason: str | None = None,
    ) -> None:
        self.t = t
        self.sender = sender
        self.text = text
        self.data = data
        self.refused = refused
        self.reason = reason


class Recording(Record):
    """A parsed recording: its lines, not yet framed into events."""

    __slots__ = ("version", "created", "request", "format", "response", "chunks", "end",
                 "truncated", "skipped_lines", "secrets", "transport", "frames", "close")
    version: int
    created: str | None
    request: dict[str, Any]
    format: str | None
    #: ``{"status": ..., "headers": ...}`` once the response line was written
    response: dict[str, Any] | None
    #: (receive time, bytes) per network read, in order
    chunks: list[tuple[float | None, bytes]]
    #: ``{"end": ..., "error": ..., "t": ...}`` if the writer got to say how it ended
    end: dict[str, Any] | None
    #: the last line was cut off mid-write (the writer was killed)
    truncated: bool
    #: lines before the last that could not be read (a damaged file)
    skipped_lines: int
    #: the fingerprints of the request's credentials, for scrubbing reports
    secrets: Fingerprints | None
    #: ``http``, or ``websocket`` for a WebSocket connection's frames
    transport: str
    #: the WebSocket messages, in order
    frames: list[Frame]
    #: ``{"code", "reason", "from", "t"}`` once the WebSocket connection closed
    close: dict[str, Any] | None

    def __init__(
        self, version: int, created: str | None, request: dict[str, Any],
        format: str | None = None, response: dict[str, Any] | None = None,
        chunks: list[tuple[float | None, bytes]] | None = None,
        end: dict[str, Any] | None = None, truncated: bool = False, skipped_lines: int = 0,
        secrets: Fingerprints | None = None, transport: str = "http",
        frames: list[Frame] | None = None, close: dict[str, Any] | None = None,
    ) -> None:
        self.version = version
        self.created = created
        self.request = request
        self.format = format
        self.response = response
        # a new list each, as a dataclass's default_factory gives
        self.chunks = [] if chunks is None else chunks
        self.end = end
        self.truncated = truncated
        self.skipped_lines = skipped_lines
        self.secrets = secrets
        self.transport = transport
        self.frames = [] if frames is None else frames
        self.close = close

    @property
    def end_time(self) -> float | None:
        """When the stream ended: the end line's time, else the last read's."""
        if self.end is not None and self.end.get("t") is not None:
            return float(self.end["t"])
        if self.frames:
            return self.frames[-1].t
        return self.chunks[-1][0] if self.chunks else None

    def meta(self, body_framing: str | None) -> dict[str, Any]:
        """What a reader tells of the recording beside its events (``Framed.meta``)."""
        return {
            "version": self.version,
            "created": self.created,
            "request": self.request,
            "response": self.response,
            "format": self.format,
            "end": self.end,
            "body_framing": body_framing,
            "chunks": len(self.chunks),
            "truncated": self.truncated,
            "skipped_lines": self.skipped_lines,
            "secrets": self.secrets,
        } | ({"transport": self.transport, "frames": len(self.frames), "close": self.close}
             if self.transport == WEBSOCKET else {})

    @property
    def body(self) -> bytes:
        return b"".join(data for _, data in self.chunks)


def _time(value: Any) -> float | None:
    """A line's ``t`` as seconds, or None: a hand-made file may hold a 400-digit
    integer or ``1e999``, which no clock reads and no float holds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:
            return None
        return seconds if math.isfinite(seconds) else None
    return None


#: bytes of lines read at a time when a recording is parsed whole
_WHOLE = 1 << 22
#: bytes of lines handed to the bulk decoder at a time: where it declines (the
#: response line, an end line, a damaged line), only so many are read by json
_BULK = 1 << 16
#: the least recording the bulk decoder reads: below it, importing msgspec costs
#: more than json's reading (8 ms, about a megabyte of read lines)
_BULK_FROM = 1 << 20


class RecordingLines:
    """A recording read a slice of lines at a time: its header when made (a
    FramingError when it is no recording fraglens reads), then the reads of
    the next lines at each :meth:`read`, what the other lines say (the
    response, the end, frames, damage) going to :attr:`recording` as they
    come. A reader that shows the body while the rest is parsed (the app's)
    needs the first slice only, and nothing holds the reads twice.

    ``bulk``: the read lines are decoded by msgspec where it vouches for the
    standard library's result (``recording_reads.py``); without it, every line
    by ``json``, which is the definition (the tests hold the one to the other)."""

    def __init__(self, data: bytes, bulk: bool = True) -> None:
        data = data.lstrip()
        first = data.find(b"\n")
        try:
            header = json.loads(data if first < 0 else data[:first])
        except (ValueError, RecursionError):
            raise FramingError(
                "the recording's header line is cut off: nothing was recorded") from None
        if not isinstance(header, dict) or header.get("fraglens") != "recording":
            raise FramingError(
                'not a fraglens recording: the first line lacks "fraglens": "recording"')
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise FramingError(f"the recording has no valid version (got {version!r})")
        if version > RECORDING_VERSION:
            raise FramingError(
                f"the recording is format version {version}; this fraglens reads up to "
                f"version {RECORDING_VERSION}: upgrade fraglens"
            )
        request = header.get("request")
        request = dict(request) if isinstance(request, Mapping) else {}
        # a hand-written file may hold anything; only writers may pass header pairs
        request["headers"] = _mapping(request.get("headers"))
        #: the header's fields, then what each line read so far said (but its reads)
        self.recording = Recording(
            version=version,
            created=header.get("created") if isinstance(header.get("created"), str) else None,
            request=_redact_request(request),
            format=header.get("format") if isinstance(header.get("format"), str) else None,
            secrets=Fingerprints.from_json(header.get("secrets")),
            transport=WEBSOCKET if header.get("transport") == WEBSOCKET else "http",
        )
        self._data = data
        #: where the next line starts
        self.pos = len(data) if first < 0 else first + 1
        #: the reads read so far
        self.reads = 0
        #: the numbers of the reads whose bytes may not be UTF-8 on their own (a
        #: base64 line, a line json read); the others' are (``recording_reads.py``).
        #: Not kept for version 3 (``raw``), whose reads are written as they came
        self.unsure: list[int] = []
        self._bulk = bulk and len(data) >= _BULK_FROM
        self._decode: Callable[[bytes, int, int], Any] | None = None
        #: version 3: reads written raw between lines that open with RS (a
        #: WebSocket connection's messages are lines of their own in any version)
        self.raw = version >= 3 and self.recording.transport != WEBSOCKET

    def read_bulk(self, size: int) -> tuple[Sequence[float | None], Sequence[int], list[Any]]:
        """As :meth:`read`, each read's time (NaN or None: none) and size, with
        its bytes in pieces that may hold several reads each (``bytes`` or
        ``memoryview``), which joined are the reads': a recording of version 3
        is not cut read by read, nor its times made a float object each."""
        if self.raw:
            return self._read_raw(size)
        times, chunks = self.read(size)
        return times, list(map(len, chunks)), chunks

    @property
    def size(self) -> int:
        """The recording's bytes (less any whitespace before its header)."""
        return len(self._data)

    @property
    def done(self) -> bool:
        return self.pos >= len(self._data)

    def read(self, size: int) -> tuple[list[float | None], list[bytes]]:
        """The time and bytes of each read in the next lines: about ``size``
        bytes of them, whole lines (the file's last line, cut off or not, with
        the rest)."""
        if self.raw:
            raw_times, sizes, pieces = self._read_raw(size)
            joined = b"".join(pieces)
            ends = list(accumulate(sizes, initial=0))
            return ([None if t != t else t for t in raw_times],  # NaN: no time
                    list(map(joined.__getitem__, map(slice, ends, ends[1:]))))
        data, start = self._data, self.pos
        times: list[float | None] = []
        chunks: list[bytes] = []
        if start >= len(data):
            return times, chunks
        found = data.find(b"\n", start + max(0, size - 1))
        end = len(data) if found < 0 else found + 1
        # the last line without its line end: cut off by a crash, read by json alone
        whole = end
        if not data.endswith(b"\n", 0, end):
            whole = max(start, data.rfind(b"\n", start, end) + 1)
        if self._bulk and self._decode is None:
            from .recording_reads import decode_reads  # msgspec: for recordings only

            self._decode = decode_reads
        at = start
        while at < whole:
            found = data.find(b"\n", at + _BULK - 1, whole)
            stop = whole if found < 0 else found + 1
            bulk = self._decode(data, at, stop) if self._decode is not None else None
            if bulk is None:
                first = len(chunks)
                self._read_lines(at, stop, times, chunks)
                self.unsure += range(self.reads + first, self.reads + len(chunks))
            else:
                self.unsure += [self.reads + len(chunks) + i for i in bulk[2]]
                times += bulk[0]
                chunks += bulk[1]
            at = stop
        if whole < end:
            first = len(chunks)
            self._read_lines(whole, end, times, chunks)
            self.unsure += range(self.reads + first, self.reads + len(chunks))
        self.pos = end
        self.reads += len(chunks)
        return times, chunks

    def _read_raw(self, size: int) -> tuple[array[float], array[int], list[Any]]:
        """Version 3: about ``size`` bytes of the recording after where the last
        call stopped, to the end of a line. Each line opens with RS; the bytes
        between two lines are reads, whose times and sizes the line after them
        gives (``{"times": ..., "sizes": ...}``, ``_index``). Bytes with no such
        line after them are kept as one read with no time (NaN): at the end of
        the file, a writer killed before it timed them; elsewhere, a damaged
        file."""
        data, pos = self._data, self.pos
        stop = pos + size
        times = array("d")
        sizes = array("Q")
        pieces: list[Any] = []
        view = memoryview(data)
        while pos < len(data) and (pos < stop or not sizes):
            mark = data.find(RS, pos)
            if mark < 0:  # bytes no line times, to the end of the file
                if self._tail(len(data) - pos, partial(_blank, data, pos), times, sizes):
                    pieces.append(view[pos:])
                pos = len(data)
                break
            end = data.find(b"\n", mark)
            after = len(data) if end < 0 else end + 1
            if mark > pos:
                pieces.append(view[pos:mark])
            pieces += self._timed_line(data[mark + 1 : after], end < 0, mark - pos, times, sizes)
            pos = after
        self.pos = pos
        self.reads += len(sizes)
        return times, sizes, pieces

    def _timed_line(self, line: bytes, cut: bool, raw: int, times: array[float],
                    sizes: array[int]) -> list[bytes]:
        """Version 3: one line (after its RS, with its line end unless ``cut``:
        the file's last), after ``raw`` bytes of reads since the line before.
        A times line that fits them gives their times and sizes; else they are
        one read with no time (damage, or a killed writer's when the line is
        cut). Another line says what it says (``_take``); the bytes of a read
        it holds itself (base64) are returned, to follow the raw ones."""
        rec = self.recording
        timed = None
        # the writer's times line, as it spells it, is read without JSON
        if line.startswith(_TIMES_OPEN) and line.endswith(_TIMES_CLOSE):
            mid = line.find(_TIMES_MID)
            if mid >= 0:
                timed = _unpacked_index(line[len(_TIMES_OPEN) : mid],
                                        line[mid + len(_TIMES_MID) : -len(_TIMES_CLOSE)], raw)
        obj: Any = _SOME_TIMES_LINE
        if timed is None:  # any other line, or spelling, as json reads it
            obj = _loads(line)
            timed = _index(obj, raw)
        chunks: list[bytes] = []
        if timed is not None:
            times += timed[0]
            sizes += timed[1]
        else:
            damaged = rec.skipped_lines
            if raw:  # reads no line times: kept, with no time
                times.append(_NAN)
                sizes.append(raw)
            if type(obj) is dict and "times" in obj:
                rec.skipped_lines += 1  # an index that does not fit the bytes before it
            else:
                line_times: list[float | None] = []
                self._take(obj, cut, line_times, chunks)
                times.extend(_NAN if t is None else t for t in line_times)
                sizes.extend(map(len, chunks))
                if raw and rec.skipped_lines == damaged and not rec.truncated:
                    # one damage: bytes before a line of another kind (before a
                    # line cut off at the end, a killed writer's, said as such)
                    rec.skipped_lines += 1
        return chunks

    def _tail(self, raw: int, blank: Callable[[], bool], times: array[float],
              sizes: array[int]) -> bool:
        """Version 3: ``raw`` bytes after the last line, to the end of the file:
        whether they are kept (as one read with no time). ``blank``: whether
        they are whitespace alone, asked only after an end line."""
        rec = self.recording
        if rec.end is None:
            rec.truncated = True  # the writer was killed before it timed them
        elif blank():
            return False  # a blank line after the end (an editor's): nothing
        else:
            rec.skipped_lines += 1  # bytes after the end: no writer wrote them
        times.append(_NAN)
        sizes.append(raw)
        return True

    def _read_lines(self, start: int, end: int, times: list[float | None],
                    chunks: list[bytes]) -> None:
        """The lines of ``data[start:end]`` read by json, one at a time."""
        for cut, obj in _lines(self._data, start, end):
            # the writer's read line, {"t": seconds, "b": text}, nearly every line of a
            # recording: read here without the general checks below, to the same chunk
            if type(obj) is dict and len(obj) == 2:
                b, t = obj.get("b"), obj.get("t")
                if type(b) is str and type(t) is float and t - t == 0.0:  # finite
                    times.append(t)
                    chunks.append(b.encode("utf-8", "surrogatepass"))
                    continue
            self._take(obj, cut, times, chunks)

    def _take(self, obj: Any, cut: bool, times: list[float | None],
              chunks: list[bytes]) -> None:
        """What one line says: a read's time and bytes go to ``times`` and
        ``chunks``, the rest to :attr:`recording`. ``cut``: the line is the
        file's last, with no line end."""
        rec = self.recording
        if obj is _UNREADABLE:
            if cut:  # the last line, with no line end: the writer was killed mid-line
                rec.truncated = True
            else:
                rec.skipped_lines += 1
        elif not isinstance(obj, dict):
            rec.skipped_lines += 1
        elif "from" in obj:
            frame = _frame(obj)
            if frame is None:
                rec.skipped_lines += 1
            else:
                rec.frames.append(frame)
        elif "close" in obj and isinstance(obj["close"], Mapping):
            close = obj["close"]
            rec.close = {
                "code": close.get("code") if isinstance(close.get("code"), int) else None,
                "reason": close.get("reason") if isinstance(close.get("reason"), str) else "",
            }
            if close.get("from") in ("client", "server"):
                rec.close["from"] = close["from"]
            if _time(obj.get("t")) is not None:
                rec.close["t"] = _time(obj.get("t"))
        elif "b" in obj or "b64" in obj:
            chunk = _chunk_bytes(obj)
            if chunk is None:
                rec.skipped_lines += 1
            else:
                times.append(_time(obj.get("t")))
                chunks.append(chunk)
        elif "response" in obj and isinstance(obj["response"], Mapping):
            response = obj["response"]
            rec.response = {
                "status": response.get("status"),
                "headers": redact_headers(_mapping(response.get("headers"))),
            }
            if _time(obj.get("t")) is not None:
                rec.response["t"] = _time(obj.get("t"))
        elif "end" in obj:
            rec.end = {key: obj[key] for key in ("end", "error") if key in obj}
            if _time(obj.get("t")) is not None:
                rec.end["t"] = _time(obj.get("t"))


class RawReads:
    """A recording of version 3 read a chunk of the file at a time (``open``
    with its first bytes, then :meth:`feed` each chunk, then :meth:`close`):
    the reads' bytes written to ``body`` as they come, their times and sizes
    kept (``times``, NaN: none; ``sizes``), what the other lines say in
    ``lines.recording``. It gives what ``RecordingLines.read_bulk`` gives of
    the whole file (each line read by the same method), without the whole
    file in memory: read a mebibyte at a time into one buffer, no fresh page
    is faulted in but the body's (reading/capture.py)."""

    def __init__(self, lines: RecordingLines, body: Sink) -> None:
        #: the recording's header (its lines' reader, made of the header line alone)
        self.lines = lines
        self.times = array("d")
        self.sizes = array("Q")
        self._body = body
        self._raw = 0  # bytes of reads since the last line
        self._line: bytes | None = None  # a line begun in a chunk before (after its RS)
        # bytes after an end line, held until what follows says what they are
        self._held = bytearray()

    @classmethod
    def open(cls, head: bytes, body: Sink) -> tuple[RawReads, int] | None:
        """A reader of the recording whose file starts with ``head``, and
        where its lines start, when it is an HTTP recording of version 3
        whose header line ``head`` holds whole; else None (read it whole)."""
        end = head.find(b"\n")
        if end < 0 or not head.startswith(WRITTEN_START):
            return None
        try:
            lines = RecordingLines(head[: end + 1])
        except FramingError:
            return None
        return (cls(lines, body), end + 1) if lines.raw else None

    def feed(self, chunk: bytes | bytearray, start: int, stop: int) -> None:
        """The file's next bytes: ``chunk[start:stop]``."""
        pos = start
        if self._line is not None:  # a line begun in a chunk before
            end = chunk.find(b"\n", pos, stop)
            if end < 0:
                self._line += chunk[pos:stop]
                return
            line, self._line = self._line + chunk[pos : end + 1], None
            self._take_line(line, cut=False)
            pos = end + 1
        while pos < stop:
            mark = chunk.find(RS, pos, stop)
            self._bytes(chunk, pos, stop if mark < 0 else mark)
            if mark < 0:
                return
            end = chunk.find(b"\n", mark, stop)
            if end < 0:
                self._line = bytes(chunk[mark + 1 : stop])
                return
            self._take_line(bytes(chunk[mark + 1 : end + 1]), cut=False)
            pos = end + 1

    def close(self) -> None:
        """The end of the file."""
        if self._line is not None:  # the last line, with no line end
            line, self._line = self._line, None
            self._take_line(line, cut=True)
        if self._raw:
            held = bytes(self._held)
            if self.lines._tail(self._raw, held.isspace, self.times, self.sizes) and held:
                self._body.write(held)
        self.lines.reads = len(self.sizes)

    def _bytes(self, chunk: bytes | bytearray, start: int, stop: int) -> None:
        if stop > start:
            if self.lines.recording.end is not None:  # no writer writes after its end
                self._held += chunk[start:stop]
            else:
                self._body.write(memoryview(chunk)[start:stop])
            self._raw += stop - start

    def _take_line(self, line: bytes, cut: bool) -> None:
        if self._held:  # reads after the end line, before this one: kept, as the whole file's
            self._body.write(bytes(self._held))
            self._held = bytearray()
        for chunk in self.lines._timed_line(line, cut, self._raw, self.times, self.sizes):
            self._body.write(chunk)
        self._raw = 0


def parse_recording(data: bytes, bulk: bool = True) -> Recording:
    """Read the lines of a recording; tolerate a last line cut off by a crash.
    ``bulk``: as ``RecordingLines``."""
    lines = RecordingLines(data, bulk)
    rec = lines.recording
    while not lines.done:
        times, chunks = lines.read(_WHOLE)
        rec.chunks += zip(times, chunks, strict=True)
    return rec


_UNREADABLE: Any = object()
_scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
#: within a line: what json.loads strips around a value, and what bytes.strip() does
_LINE_SPACE = re.compile(r"[ \t\r]*")
_BLANK_LINE = re.compile(r"[ \t\r\x0b\x0c]*\Z")


def _lines(data: bytes, start: int, end: int) -> Iterator[tuple[bool, Any]]:
    """Each line of ``data[start:end]`` (whole lines) that is not blank,
    decoded as ``json.loads`` would (``_UNREADABLE`` where it raises), and
    whether it is cut (no line end after it: the file's last). The text is
    decoded once and json's C scanner reads each line where it lies in it:
    100k calls of ``json.loads`` on bytes spent twice as long in its layers
    (telling the encoding, decoding, checking the ends) as in reading, and
    the file split into lines, as bytes and as text, held it three times over."""
    try:
        text = data[start:end].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raws = data[start:end].split(b"\n")
        for k, raw in enumerate(raws):
            if raw.strip():
                yield k == len(raws) - 1, _loads(raw)
        return
    blank, space = _BLANK_LINE.match, _LINE_SPACE.match
    start = 0
    while True:
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end
        if start < stop:
            opens = text.startswith("{", start)  # the writer's lines: neither blank nor indented
            if opens or blank(text, start, stop) is None:
                at = start if opens else space(text, start, stop).end()  # type: ignore[union-attr]
                try:
                    value, after = _scan_once(text, at)
                except (StopIteration, ValueError, RecursionError):
                    after = stop + 1
                if after > stop:  # no value in the line: json.loads says (a BOM, say) or refuses
                    value = _loads(text[start:stop].encode("utf-8", "surrogatepass"))
                elif after != stop and space(text, after, stop).end() != stop:  # type: ignore[union-attr]
                    value = _UNREADABLE  # trailing data: json.loads refuses it too
                yield end < 0, value
        if end < 0:
            return
        start = end + 1


def _index(obj: Any, size: int) -> tuple[array[float], array[int]] | None:
    """The times (NaN: none) and sizes of the reads a version 3 times line
    (``obj``) gives, when it is one and the sizes add up to the ``size``
    bytes before it; else None. The writer's are base64 of little-endian IEEE
    754 doubles (NaN: a time it did not know) and unsigned 64-bit sizes; a
    hand-written line may give JSON numbers. A time no float holds is no
    time, as a read line's ``t``."""
    if type(obj) is not dict:
        return None
    times, sizes = obj.get("times"), obj.get("sizes")
    if type(times) is str and type(sizes) is str:
        return _unpacked_index(times.encode("ascii", "replace"),
                               sizes.encode("ascii", "replace"), size)
    if (type(times) is list and type(sizes) is list
          and set(map(type, sizes)) <= {int} and not (sizes and min(sizes) < 0)):
        times = array("d", (_NAN if t is None else t for t in map(_time, times)))
        try:
            sizes = array("Q", sizes)
        except OverflowError:
            return None
    else:
        return None
    if len(times) != len(sizes) or not sizes or sum(sizes) != size:
        return None
    return times, sizes


def _unpacked_index(times_text: bytes, sizes_text: bytes,
                    size: int) -> tuple[array[float], array[int]] | None:
    """``_index`` of the writer's spelling: the times and sizes in base64."""
    unpacked = _unpacked("d", times_text), _unpacked("Q", sizes_text)
    if unpacked[0] is None or unpacked[1] is None:
        return None
    (times, infinite), sizes = unpacked
    if infinite:  # an infinity is no time (NaN, the writer's own, stays)
        times = array("d", (t if math.isfinite(t) else _NAN for t in times))
    if len(times) != len(sizes) or not sizes or sum(sizes) != size:
        return None
    return times, sizes


#: the writer's times line, as it spells it (what lies between is base64)
_TIMES_OPEN, _TIMES_MID, _TIMES_CLOSE = b'{"times":"', b'","sizes":"', b'"}\n'
_SOME_TIMES_LINE = {"times": None}
#: a version 3 time the writer did not know
_NAN = math.nan
#: this machine stores numbers big end first (version 3's arrays are little-endian)
_BIG_ENDIAN = array("H", [1]).tobytes() == b"\x00\x01"


def _packed(code: str, values: list[Any]) -> str:
    """``values`` as an array of ``code`` (``d``, ``Q``), little-endian, in base64."""
    packed = array(code, values)
    if _BIG_ENDIAN:
        packed.byteswap()
    return binascii.b2a_base64(packed.tobytes(), newline=False).decode("ascii")


def _unpacked(code: str, text: bytes) -> Any:
    """What ``_packed`` made ``text`` of (an array), or None when it is not
    that: not base64, or no whole number of items. Of doubles (``d``), with
    whether any may not be finite, told from their sign-and-exponent bytes
    alone (a double is NaN or infinite only when its exponent's bits are all
    set), not a float object each."""
    try:
        raw = binascii.a2b_base64(text)
    except (binascii.Error, ValueError):
        return None
    # the one spelling the writer gives: any other (stray characters, which
    # a2b_base64 passes over) is damage, on every Python
    if binascii.b2a_base64(raw, newline=False) != text:
        return None
    values = array(code)
    if len(raw) % values.itemsize:
        return None
    values.frombytes(raw)
    if _BIG_ENDIAN:
        values.byteswap()
    if code != "d":
        return values
    high = raw[7::8]  # little-endian: the sign and the exponent's top 7 bits
    return values, b"\x7f" in high or b"\xff" in high


def _blank(data: bytes, at: int) -> bool:
    """Whether ``data`` from ``at`` on is whitespace alone."""
    return data[at:].isspace()


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return _UNREADABLE


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _chunk_bytes(obj: Mapping[str, Any]) -> bytes | None:
    if isinstance(obj.get("b"), str):
        # surrogatepass: a hand-edited file may hold lone surrogate escapes
        return str(obj["b"]).encode("utf-8", "surrogatepass")
    if isinstance(obj.get("b64"), str):
        try:
            return base64.b64decode(obj["b64"], validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def _frame(obj: Mapping[str, Any]) -> Frame | None:
    sender = obj.get("from")
    if sender not in ("client", "server"):
        return None
    t = _time(obj.get("t"))
    if isinstance(obj.get("text"), str):
        return Frame(t, sender, text=obj["text"])
    size = obj.get("refused")
    if isinstance(size, int) and not isinstance(size, bool):
        reason = obj.get("reason")
        return Frame(t, sender, refused=size, reason=reason if isinstance(reason, str) else None)
    data = _chunk_bytes({"b64": obj.get("b64")})
    return None if data is None else Frame(t, sender, data=data)


def to_json_lines(data: bytes) -> bytes:
    """An HTTP recording of any version as version 1, a line of JSON per read
    (for ``jq``, or a fraglens before version 3); a WebSocket connection's,
    lines already, as it is. What the lines say is what a reader of the
    recording gets: damaged lines are left out, a read with no time has none."""
    rec = parse_recording(data)
    if rec.transport == WEBSOCKET:
        return data
    out = MemorySink()
    writer = RecordingWriter(out, version=JSON_LINES_VERSION)
    writer.start(rec.request, format=rec.format, created=rec.created, secrets=rec.secrets)
    if rec.response is not None:
        writer.response(rec.response["status"], rec.response["headers"], rec.response.get("t"))
    for t, chunk in rec.chunks:
        writer.chunk(t, chunk)
    if rec.end is not None:
        writer.end(rec.end["end"], rec.end.get("error"), rec.end.get("t"))
    return b"".join(out.parts)


class MemorySink:
    """An in-memory sink for :class:`RecordingWriter`, binary (``io`` is off
    limits in the core): what was written, in ``parts``."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(data)
        return len(data)

    def flush(self) -> None:
        pass


def recording_to_sse(data: bytes) -> bytes:
    """The response body a plain capture (``curl -N``) would have saved."""
    return parse_recording(data).body
