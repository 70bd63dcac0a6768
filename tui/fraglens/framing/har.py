"""HAR exports (Chrome DevTools, Firefox, mitmproxy): find the LLM stream, make it a recording.

A HAR keeps each response body whole in ``response.content.text`` (base64 when
``content.encoding`` says so), so the network's chunk boundaries are gone: the
body becomes one chunk, received when the HAR's timings say the body ended.
Nothing is invented to look more precise than the capture was.

Chrome keeps a WebSocket connection's messages in the entry's
``_webSocketMessages``: ``{"type": "send" | "receive", "time": seconds since
the epoch, "opcode": 1 (text) | 2 (binary, base64), "data": ...}``. Such an
entry becomes a WebSocket recording (version 2), each message timed from the
entry's start; Chrome keeps no close, so the recording has none.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..engine.plural import counted
from ..redact import Secrets
from .events import FramingError
from .recording import WEBSOCKET, MemorySink, RecordingWriter, recorded_url

__all__ = ["default_entry", "entry_secrets", "har_entry_to_recording", "list_streams"]

# Request keys that mark an LLM API call across OpenAI, Anthropic, Gemini, Cohere.
_CHAT_REQUEST_KEYS = frozenset({"messages", "contents", "input", "prompt", "tools"})
_CHAT_RESPONSE_KEYS = frozenset({"choices", "candidates", "output", "content"})
# HAR timings before the first response byte; ``ssl`` is already inside ``connect``.
_WAIT_PHASES = ("blocked", "dns", "connect", "send", "wait")


def _entries(har: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    log = har.get("log") if isinstance(har, Mapping) else None
    entries = log.get("entries") if isinstance(log, Mapping) else None
    if not isinstance(entries, list):
        raise FramingError("not a HAR export: there is no log.entries list")
    return [entry if isinstance(entry, Mapping) else {} for entry in entries]


def _section(entry: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = entry.get(key)
    return value if isinstance(value, Mapping) else {}


def _pairs(section: Mapping[str, Any]) -> list[tuple[str, str]]:
    headers = section.get("headers")
    if not isinstance(headers, list):
        return []
    return [
        (str(h.get("name", "")), str(h.get("value", ""))) for h in headers if isinstance(h, Mapping)
    ]


def _content_type(entry: Mapping[str, Any]) -> str:
    response = _section(entry, "response")
    mime = _section(response, "content").get("mimeType")
    if isinstance(mime, str) and mime:
        return mime
    for name, value in _pairs(response):
        if name.lower() == "content-type":
            return value
    return ""


def _body(entry: Mapping[str, Any]) -> bytes | None:
    content = _section(_section(entry, "response"), "content")
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text)
        except (binascii.Error, ValueError):
            return None
    return text.encode("utf-8", "surrogatepass")


def _request_body(entry: Mapping[str, Any]) -> Any:
    text = _section(_section(entry, "request"), "postData").get("text")
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _ws_messages(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The WebSocket messages Chrome kept for the entry (none: not a WebSocket)."""
    messages = entry.get("_webSocketMessages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, Mapping) and m.get("type") in ("send", "receive")]


def _is_event_stream(entry: Mapping[str, Any]) -> bool:
    return "text/event-stream" in _content_type(entry).lower()


def _is_chat_like(entry: Mapping[str, Any], body: bytes) -> bool:
    if "json" not in _content_type(entry).lower():
        return False
    request = _request_body(entry)
    if isinstance(request, Mapping) and _CHAT_REQUEST_KEYS & request.keys():
        return True
    try:
        response = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(response, Mapping) and bool(_CHAT_RESPONSE_KEYS & response.keys())


def _size(entry: Mapping[str, Any], body: bytes | None) -> int | None:
    size = _section(_section(entry, "response"), "content").get("size")
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        return size
    return None if body is None else len(body)


def list_streams(har: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One summary per HAR entry, for a picker: which of these is the stream?"""
    rows = []
    for index, entry in enumerate(_entries(har)):
        request = _section(entry, "request")
        response = _section(entry, "response")
        body = _body(entry)
        rows.append(
            {
                "index": index,
                "method": str(request.get("method", "")),
                "url": recorded_url(str(request.get("url", ""))),
                "status": response.get("status"),
                "content_type": _content_type(entry),
                "size": _size(entry, body),
                "event_stream": _is_event_stream(entry) or bool(_ws_messages(entry)),
                "websocket_messages": len(_ws_messages(entry)),
                "has_body": body is not None,
            }
        )
    return rows


def default_entry(har: Mapping[str, Any]) -> int:
    """The entry to open when the user did not choose: the first saved
    ``text/event-stream`` body, else the first WebSocket connection with
    messages, else the first chat-like JSON body."""
    entries = _entries(har)
    bodies = [_body(entry) for entry in entries]
    for index, entry in enumerate(entries):
        if bodies[index] is not None and _is_event_stream(entry):
            return index
    for index, entry in enumerate(entries):
        if _ws_messages(entry):
            return index
    for index, entry in enumerate(entries):
        body = bodies[index]
        if body is not None and _is_chat_like(entry, body):
            return index
    raise FramingError(
        f"the HAR's {counted(len(entries), 'entry')} {'holds' if len(entries) == 1 else 'hold'} "
        "no saved text/event-stream body, no WebSocket messages and no chat-like JSON response"
    )


def _ms(timings: Mapping[str, Any], phase: str) -> float:
    value = timings.get(phase)
    # HAR spells "not applicable" as -1
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        try:
            ms = float(value)
        except OverflowError:  # a 400-digit integer: no timing at all
            return 0.0
        return ms if math.isfinite(ms) else 0.0
    return 0.0


def entry_secrets(har: Mapping[str, Any], index: int) -> Secrets:
    """The credentials entry ``index``'s request carried (its headers by name, its
    URL): a HAR keeps them whole, and the server may have echoed them anywhere."""
    request = _section(_entries(har)[index], "request")
    return Secrets.of_request(_pairs(request), str(request.get("url", "")))


def har_entry_to_recording(har: Mapping[str, Any], index: int, fingerprints: bool = True) -> bytes:
    """Entry ``index`` as a fraglens recording (HAR timings kept): its credentials
    redacted by name and scrubbed by value everywhere (the request's URL, headers
    and body, the response's headers and body), and their fingerprints in the
    header unless ``fingerprints`` is False (a caller that keeps only the body)."""
    entries = _entries(har)
    if not 0 <= index < len(entries):
        raise FramingError(f"the HAR has no entry {index}: it has {len(entries)}")
    entry = entries[index]
    request = _section(entry, "request")
    response = _section(entry, "response")
    timings = _section(entry, "timings")
    first_byte = sum(_ms(timings, phase) for phase in _WAIT_PHASES) / 1000
    body_end = first_byte + _ms(timings, "receive") / 1000
    if not math.isfinite(body_end):  # finite phases whose sum is not
        first_byte = body_end = 0.0
    secrets = entry_secrets(har, index)
    scrub = secrets.scrub_text

    out = MemorySink()
    writer = RecordingWriter(out)
    started = entry.get("startedDateTime")
    writer.start(
        {
            "method": request.get("method", "GET"),
            "url": scrub(str(request.get("url", ""))),
            "headers": [(name, scrub(value)) for name, value in _pairs(request)],
            "body": secrets.scrub_value(_request_body(entry)),
        },
        created=started if isinstance(started, str) else None,
        secrets=secrets.fingerprints() if fingerprints and secrets else None,
    )
    status = response.get("status")
    messages = _ws_messages(entry)
    if messages:
        return _websocket_recording(entry, messages, first_byte, secrets, fingerprints)
    headers = [(name, scrub(value)) for name, value in _pairs(response)]
    writer.response(status if isinstance(status, int) else 0, headers, t=first_byte)
    body = _body(entry)
    if body:
        writer.chunk(body_end, secrets.scrub(body))
    writer.flush()  # a HAR says nothing of how the stream ended: no end line
    return b"".join(out.parts)


def _epoch(started: Any) -> float | None:
    if not isinstance(started, str):
        return None
    try:
        return datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _websocket_recording(
    entry: Mapping[str, Any], messages: list[Mapping[str, Any]], first_byte: float,
    secrets: Secrets, fingerprints: bool,
) -> bytes:
    """A WebSocket entry as a WebSocket recording: the upgrade, then each
    message, its credentials scrubbed by value as an HTTP entry's are."""
    scrub = secrets.scrub_text
    request = _section(entry, "request")
    response = _section(entry, "response")
    out = MemorySink()
    writer = RecordingWriter(out)
    started = entry.get("startedDateTime")
    writer.start(
        {"method": "GET", "url": scrub(str(request.get("url", ""))),
         "headers": [(name, scrub(value)) for name, value in _pairs(request)]},
        created=started if isinstance(started, str) else None,
        secrets=secrets.fingerprints() if fingerprints and secrets else None,
        transport=WEBSOCKET,
    )
    status = response.get("status")
    headers = [(name, scrub(value)) for name, value in _pairs(response)]
    writer.response(status if isinstance(status, int) else 101, headers, t=first_byte)
    origin = _epoch(started)
    for message in messages:
        when = message.get("time")
        at = first_byte
        if isinstance(when, (int, float)) and origin:
            try:
                at = float(when) - origin
            except OverflowError:  # a time no float holds is no time
                at = first_byte
            if not math.isfinite(at):
                at = first_byte
        sender = "client" if message.get("type") == "send" else "server"
        data = message.get("data")
        data = data if isinstance(data, str) else ""
        if message.get("opcode") == 2:
            try:
                writer.frame(max(at, 0.0), sender, base64.b64decode(data, validate=True))
            except (binascii.Error, ValueError):
                writer.frame(max(at, 0.0), sender, data.encode("utf-8", "surrogatepass"))
        else:
            writer.frame(max(at, 0.0), sender, scrub(data))
    return b"".join(out.parts)
