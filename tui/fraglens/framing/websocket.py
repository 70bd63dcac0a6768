"""A WebSocket connection's messages as a stream: one event per message.

A WebSocket carries whole messages, so there is nothing to split or join
here: each text message the server sent is one ``data`` event, read by the
wire-format adapter as an SSE event's payload would be. The rest is kept in
the stream and named for what it is:

- a text message the client sent is a ``sent`` event (``response.create``,
  ``session.update``...): shown as what the client said, never read as the
  server's;
- a binary message is a ``binary`` event: its bytes kept (base64 in ``data``),
  named by its sender (``event``), not decoded;
- a message that was refused for its size is a ``damaged`` event named
  ``too-large``: its size and the reason, nothing else was kept;
- the close is a ``close`` event whose ``data`` is ``{"code", "reason", "from"}``.

Sans-I/O: a parsed recording (``recording.py``) in, events out.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .events import Framed, RawEvent
from .recording import Frame, Recording

__all__ = [
    "TOO_LARGE",
    "close_event",
    "declared_tools",
    "frame_event",
    "read_websocket",
    "sent_tools",
    "websocket_to_sse",
]

#: the ``event`` of a ``damaged`` event for a message refused for its size
TOO_LARGE = "too-large"


def frame_event(number: int, frame: Frame) -> RawEvent:
    """The event one message is, numbered ``number``."""
    if frame.text is not None:
        if frame.sender == "server":
            return RawEvent(number, "data", frame.text, time=frame.t)
        return RawEvent(number, "sent", frame.text, time=frame.t)
    if frame.data is not None:
        shown = base64.b64encode(frame.data).decode("ascii")
        return RawEvent(number, "binary", shown, frame.sender, time=frame.t)
    reason = frame.reason or "over the size limit"
    said = f"a {frame.refused}-byte message from the {frame.sender} was not kept: {reason}"
    return RawEvent(number, "damaged", said, TOO_LARGE, time=frame.t)


def close_event(number: int, close: Mapping[str, Any], t: float | None) -> RawEvent:
    """The event the connection's close is."""
    said = {key: close[key] for key in ("code", "reason", "from") if key in close}
    return RawEvent(number, "close", json.dumps(said, separators=(",", ":")), time=t)


def read_websocket(rec: Recording) -> Framed:
    """A WebSocket recording's messages, then its close, as events."""
    events = [frame_event(n, frame) for n, frame in enumerate(rec.frames)]
    if rec.close is not None:
        events.append(close_event(len(events), rec.close, rec.close.get("t")))
    meta = rec.meta("websocket")
    sent = [frame.text for frame in rec.frames if frame.sender == "client"]
    # a connection's request has no body: what its checks read of one (the tools
    # the calls are held to, the model that prices the usage) the client said in
    # its messages, or, for the Realtime API's model, in the URL's query
    asked: dict[str, Any] = {}
    model = _sent_model(sent) or _query_model(str(meta["request"].get("url") or ""))
    if model is not None:
        asked["model"] = model
    tools = declared_tools(sent)
    if tools is not None:
        asked["tools"] = tools
    if asked:
        meta["request"] = dict(meta["request"], body=asked)
    return Framed("websocket", events, meta, [])


def _sent_model(sent: list[str | None]) -> str | None:
    """The model the client's last ``response.create`` named."""
    found = None
    for text in sent:
        if not text or '"model"' not in text:
            continue
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            for holder in (doc, doc.get("response")):
                if isinstance(holder, dict) and isinstance(holder.get("model"), str):
                    found = holder["model"]
    return found


def _query_model(url: str) -> str | None:
    model = dict(parse_qsl(urlsplit(url).query)).get("model")
    return model or None


def declared_tools(sent: Iterable[str | None]) -> list[Any] | None:
    """The tools the client's last message that declared any declared: a
    Responses ``response.create`` (its own ``tools``, or its ``response``'s),
    a Realtime ``session.update`` (``session.tools``) or ``response.create``
    (``response.tools``). None when no message declared tools."""
    found: list[Any] | None = None
    for text in sent:
        tools = sent_tools(text)
        if tools is not None:
            found = tools
    return found


def sent_tools(text: str | None) -> list[Any] | None:
    """The tools one client message declares, if it declares any."""
    if not text or '"tools"' not in text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    for holder in (doc, doc.get("response"), doc.get("session")):
        if isinstance(holder, dict) and isinstance(holder.get("tools"), list):
            return list(holder["tools"])
    return None


def websocket_to_sse(rec: Recording) -> bytes:
    """The server's text messages as the SSE body the same events make over HTTP:
    ``event: TYPE`` (when the message names its type) and ``data: TEXT`` per
    message, as the Responses API streams them. What the client sent and
    binary messages are no part of a response body, and are left out."""
    parts: list[str] = []
    for frame in rec.frames:
        if frame.sender != "server" or frame.text is None:
            continue
        kind = _type(frame.text)
        head = f"event: {kind}\n" if kind is not None and "\n" not in kind else ""
        lines = frame.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        parts.append(head + "".join(f"data: {line}\n" for line in lines) + "\n")
    return "".join(parts).encode("utf-8", "surrogatepass")


def _type(text: str) -> str | None:
    if '"type"' not in text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    kind = doc.get("type") if isinstance(doc, dict) else None
    return kind if isinstance(kind, str) else None
