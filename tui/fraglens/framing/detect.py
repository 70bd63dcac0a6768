"""Which framing is this? Sniff the bytes and read them with the right reader.

Users hand fraglens whatever they captured: ``curl -N`` output (SSE), an
Ollama-style NDJSON log, a Gemini JSON array, a Bedrock binary event stream,
a single non-streamed body or an error body, a HAR export from the browser,
or a fraglens recording. They should
not have to say which, so :func:`read_stream` decides and reports it in
``Framed.framing``. Everything is read from bytes handed in; nothing here
opens a file.

The order of the checks is what keeps them unambiguous: an AWS binary event
stream (Bedrock) opens with a prelude whose CRC matches, which text never
does by accident; a recording and a HAR are JSON objects with a marker, an
SSE stream never starts with ``{`` or ``[``, and NDJSON is several JSON
lines where a body is one value.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .events import EventLog, Framed, FrameTooLarge, FramingError, FramingProblem, RawEvent
from .eventstream import looks_like_eventstream, read_eventstream
from .recording_header import is_recording
from .sse import SSEDecoder

if TYPE_CHECKING:
    from .recording import Recording

__all__ = ["FramingError", "add_ndjson_lines", "ndjson_start", "read_stream"]

_BOM = b"\xef\xbb\xbf"
_CONTENT = re.compile(rb"[^ \t\r\n]")
# a data line anywhere; a stream may open with comment lines before it
_SSE_DATA_LINE = re.compile(rb"(?:\A(?:\xef\xbb\xbf)?|[\r\n])data:")
_SSE_OTHER_LINE = re.compile(rb":|(?:event|id|retry)(?::|\Z)")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_JSON_WS = re.compile(r"[ \t\r\n]*")
#: a byte ``bytes.strip`` keeps: a line with one is not blank
_NDJSON_CONTENT = re.compile(rb"[^ \t\n\r\x0b\x0c]")
#: a recording's header line: the first line with content
# one encoder for all items: json.dumps(..., ensure_ascii=False) builds one per call
_dumps = json.JSONEncoder(ensure_ascii=False).encode


def read_stream(data: bytes) -> Framed:
    """Detect the framing of ``data`` and read it into events.

    Raises :class:`FramingError` when ``data`` is no stream fraglens can read.
    Spans index ``data``, except for recordings and HAR exports, where they
    index the response body (the concatenated chunks).
    """
    return _read(data, containers=True)


def _read(data: bytes, containers: bool) -> Framed:
    if looks_like_eventstream(data):
        # binary: a prelude whose own CRC matches is no accident of text
        return read_eventstream(data)
    skip = len(_BOM) if data.startswith(_BOM) else 0
    start = _first_content(data, skip)
    if start < 0:
        raise FramingError("the input is empty" if not data else "the input is only whitespace")
    first = data[start : start + 1]
    if containers and first == b"{" and is_recording(data):
        # recordings read URLs and headers (urllib, the redaction): imported
        # only for a recording, not for every capture
        from .recording import parse_recording

        return _read_recording(parse_recording(data))
    if first in (b"{", b"["):
        framed = _read_json(data, start, containers)
        if framed is not None:
            return framed
    if _looks_like_sse(data):
        return _read_sse(data)
    if first == b"{":
        text = _utf8(data[start:])
        if text is not None:
            # a body cut off mid-object (a dropped connection): still the body
            # received; the engine reports it as non-JSON data
            body = text.rstrip()
            end = start + len(body.encode("utf-8"))
            return Framed("json-body", [RawEvent(0, "data", body, span=(start, end))])
    raise FramingError(_not_a_stream(data[skip:]))


def _first_content(data: bytes, skip: int) -> int:
    found = _CONTENT.search(data, skip)
    return found.start() if found else -1


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _not_a_stream(data: bytes) -> str:
    text = _utf8(data)
    if text is None:
        return "not a stream: the input is binary (not UTF-8 text) and has no SSE data: lines"
    return (
        f"not a stream: no SSE data: lines, and not JSON, NDJSON, a HAR or a fraglens recording "
        f"(it starts {json.dumps(text.lstrip()[:30], ensure_ascii=False)})"
    )


def _looks_like_sse(data: bytes) -> bool:
    if _SSE_DATA_LINE.search(data):
        return True
    # a stream of keep-alives and event fields only is still SSE; prose is not
    lines = [line for line in _LINE_END.split(data.removeprefix(_BOM)) if line.strip()]
    return bool(lines) and all(_SSE_OTHER_LINE.match(line) for line in lines)


#: bytes of a whole input decoded at a time: the events of one step are all
#: that exists as objects at once, the rest is kept compactly (EventLog)
_STEP = 1 << 20


def _read_sse(data: bytes) -> Framed:
    steps = ((None, data[i : i + _STEP]) for i in range(0, len(data), _STEP))
    events, problems = _decode_sse(steps, None, EventLog(data))
    return Framed("sse", events, problems=problems)


def _decode_sse(
    chunks: Iterable[tuple[float | None, bytes]], end_time: float | None, events: EventLog
) -> tuple[EventLog, list[FramingProblem]]:
    """Decode SSE reads into ``events``; past the decoder's size limit, the
    events before it and a problem that says where reading stopped."""
    # over the whole input, the decoder adds its events to the log itself
    decoder = SSEDecoder(log=events) if events.source is not None else SSEDecoder()
    add = events.append
    try:
        for t, chunk in chunks:
            for ev in decoder.feed(chunk, time=t):
                add(ev)
        for ev in decoder.close(time=end_time):
            add(ev)
    except FrameTooLarge as exc:
        for ev in exc.events:
            add(ev)
        return events, [*decoder.problems, FramingProblem("frame-too-large", str(exc), None)]
    return events, decoder.problems


def _read_json(data: bytes, start: int, containers: bool) -> Framed | None:
    text = _utf8(data[start:])
    if text is None:
        # NDJSON is read line by line, a bad byte replaced where it is
        # (``bytes-replaced``) as SSE is: one byte does not make it binary
        return _read_ndjson(data, start)
    if text.startswith("["):
        array, whole = _read_json_array(text, start)
        # "[1]\n[2]" is NDJSON of arrays, not an array with trailing text
        return array if whole else _read_ndjson(data, start) or array
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
        return _read_ndjson(data, start)
    if not isinstance(value, dict):
        return None
    if containers and isinstance(value.get("log"), dict) and "entries" in value["log"]:
        return _read_har(value)
    body = text.rstrip()
    end = start + len(body.encode("utf-8"))
    return Framed("json-body", [RawEvent(0, "data", body, span=(start, end))])


def _read_ndjson(data: bytes, start: int) -> Framed | None:
    """One JSON value per line. A line that is not JSON (the last one, cut off)
    is kept as it is: the engine reports it, the reader does not hide it."""
    if not _is_ndjson(data, start):
        return None
    # each line kept as a range of the input, decoded when read
    events = EventLog(data)
    add_ndjson_lines(data, start, len(data), events)
    return Framed("ndjson", events)


def _is_ndjson(data: bytes, start: int) -> bool:
    """At least two lines that are not blank, the first of them (which starts
    at ``start``, the input's first content) one JSON value. Found without
    splitting the whole input: the line after the first that has any byte
    ``bytes.strip`` keeps is the second."""
    newline = data.find(b"\n", start)
    if newline < 0 or _NDJSON_CONTENT.search(data, newline + 1) is None:
        return False
    try:
        # a byte that is not UTF-8 is replaced when the line is read: not here either
        json.loads(data[start:newline].decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False
    return True


def add_ndjson_lines(data: bytes, pos: int, end: int, log: EventLog) -> None:
    """The lines of ``data[pos:end]`` that are not blank, as data events in
    ``log`` (over ``data``): ``pos`` is where a line starts, ``end`` is just
    past a newline or the input's end, so that a capture framed a slice at a
    time is framed as it is whole. Each event spans its line and its newline;
    its payload is the line without the whitespace around it."""
    add = log.add
    size = len(data)
    for line in data[pos:end].split(b"\n"):
        after = pos + len(line) + 1
        body = line.strip()
        if body:
            at = pos + len(line) - len(line.lstrip())
            add("data", None, pos, min(after, size), at, at + len(body), None)
        pos = after


def ndjson_start(data: bytes) -> int | None:
    """Where :func:`read_stream` starts reading ``data`` as NDJSON lines of
    objects (its first content), or None when it would read it any other way
    (or as lines of arrays). The same checks in the same order: not a binary
    event stream, an object first, not a recording, two lines that are not
    blank, the first one JSON (so the whole is not one JSON value; bytes that
    are not UTF-8 are replaced in the line that holds them, as in SSE)."""
    if looks_like_eventstream(data):
        return None
    skip = len(_BOM) if data.startswith(_BOM) else 0
    start = _first_content(data, skip)
    if start < 0 or data[start : start + 1] != b"{" or not _is_ndjson(data, start):
        return None
    if is_recording(data):
        return None
    # read_stream tries the whole input as one JSON value before its lines,
    # and it never is one here (so it is not decoded whole to find out): the
    # first line is one whole value, and JSON allows only whitespace after a
    # value, where a line follows that holds a byte that is none
    return start


def _read_json_array(text: str, start: int) -> tuple[Framed, bool]:
    """Item by item, so that an array cut off mid-stream (Gemini's non-SSE
    ``streamGenerateContent``, killed) keeps every complete item; text that is
    not an item is kept raw as a last event. Also says whether ``text`` was
    exactly one array."""
    scan = json.JSONDecoder().raw_decode
    offsets = _ByteOffsets(text, start)
    events: list[RawEvent] = []
    i = _skip_ws(text, 1)
    closed = text.startswith("]", i)
    while i < len(text) and not closed:
        try:
            item, end = scan(text, i)
        except (ValueError, RecursionError):
            break
        span = (offsets.at(i), offsets.at(end))
        events.append(RawEvent(len(events), "data", _dumps(item), span=span))
        i = _skip_ws(text, end)
        if text.startswith(",", i):
            i = _skip_ws(text, i + 1)
        elif text.startswith("]", i):
            closed = True
        else:
            break
    if closed:
        i = _skip_ws(text, i + 1)
    tail = text[i:].rstrip()
    if tail:
        span = (offsets.at(i), offsets.at(i + len(tail)))
        events.append(RawEvent(len(events), "data", tail, span=span))
    return Framed("json-array", events), closed and not tail


def _skip_ws(text: str, i: int) -> int:
    match = _JSON_WS.match(text, i)
    return match.end() if match else i


class _ByteOffsets:
    """Character index -> byte offset, for increasing indexes in linear time."""

    def __init__(self, text: str, base: int) -> None:
        self._text = text
        self._ascii = text.isascii()
        self._base = base
        self._char = 0
        self._byte = base

    def at(self, char: int) -> int:
        if self._ascii:
            return self._base + char
        if char < self._char:
            return self._base + len(self._text[:char].encode("utf-8"))
        self._byte += len(self._text[self._char : char].encode("utf-8"))
        self._char = char
        return self._byte


def _read_har(har: dict[str, Any]) -> Framed:
    from .har import default_entry, entry_secrets, har_entry_to_recording
    from .recording import parse_recording

    index = default_entry(har)
    recording = har_entry_to_recording(har, index, fingerprints=False)
    framed = _read_recording(parse_recording(recording))
    entries = har["log"]["entries"]
    framed.meta["har"] = {"index": index, "entries": len(entries)}
    # the HAR holds its keys whole: the report scrubs them by value, not by fingerprint
    framed.meta["secrets"] = entry_secrets(har, index)
    # a WebSocket entry stays one: its responses and close are read as a connection's
    framing = "websocket" if framed.framing == "websocket" else "har"
    return Framed(framing, framed.events, framed.meta, framed.problems)


def _read_recording(rec: Recording) -> Framed:
    if rec.transport == "websocket":
        from .websocket import read_websocket

        return read_websocket(rec)
    body_framing, events, problems = _frame_body(rec)
    return Framed("recording", events, rec.meta(body_framing), problems)


def _frame_body(
    rec: Recording,
) -> tuple[str | None, Sequence[RawEvent], list[FramingProblem]]:
    """Frame the recorded body; stamp each event with the time its last byte came."""
    body = rec.body
    skip = len(_BOM) if body.startswith(_BOM) else 0
    start = _first_content(body, skip)
    if start < 0:
        return None, [], []
    # sniffed, not taken from Content-Type: servers send JSON error bodies as
    # text/event-stream and SSE as application/json
    if (
        body[start : start + 1] not in (b"{", b"[")
        and not looks_like_eventstream(body)
        and _looks_like_sse(body)
    ):
        events, problems = _decode_sse(rec.chunks, rec.end_time, EventLog())
        return "sse", events, problems
    try:
        framed = _read(body, containers=False)
    except FramingError:
        # an HTML error page from a gateway, plain text...: what the server said
        text = body.decode("utf-8", "replace").strip()
        framed = Framed("text", [RawEvent(0, "data", text, span=(0, len(body)))])
    ends: list[int] = []
    total = 0
    for _, chunk in rec.chunks:
        total += len(chunk)
        ends.append(total)
    times = [t for t, _ in rec.chunks]
    stamped = []
    for event in framed.events:
        end = event.span[1] if event.span else total
        stamped.append(event.replace(time=times[min(bisect_left(ends, end), len(times) - 1)]))
    return framed.framing, stamped, framed.problems
