"""A proxied WebSocket connection as flows: one per response, and one recording.

The forwarding side (``ws_relay.py``) reports the handshake, each message
and the close. Here:

- the connection is written as it happens to one WebSocket recording under
  ``--record-dir`` (``framing/recording.py``, version 2), a line per message,
  flushed each time: nothing is held beyond the message being written;
- each response is a flow of its own (``WS`` in the flow list): it opens when
  the client sends ``response.create`` (or the server starts a response
  nobody asked for), shows the request's message and then the server's, live,
  in its own ``Stream``, and ends at the response's terminal event; a
  connection that closes while a response streams ends that flow
  ``failed`` (the upstream closed) or ``cancelled`` (the client did), its
  response ``aborted`` with the close code;
- a connection that never carried a response (a refused handshake, a client
  that left at once) is listed as one flow, so that it is seen.

The caller (``StoreSink``) runs on the thread that reads the forwarding
process; every change to a flow is made under the store's lock.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO
from urllib.parse import parse_qsl, urlsplit

from ...framing.events import RawEvent
from ...framing.recording import WEBSOCKET, Frame, RecordingWriter
from ...framing.websocket import close_event, frame_event, sent_tools
from ...reading.stream import Stream
from ...redact import redact_headers
from ..ws_replay import request_kind
from ..ws_serve import ws_format_for_path
from .flows import Flow, FlowState, FlowStore
from .record import create_exclusive

__all__ = ["WSConnections"]


@dataclass
class _Connection:
    id: int
    path: str
    url: str
    headers: list[tuple[str, str]]
    started: float
    t0: float
    notes: list[str]
    format: str | None
    model: str | None
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    fp: IO[bytes] | None = None
    writer: RecordingWriter | None = None
    saved_to: str | None = None
    #: the response streaming now
    flow: Flow | None = None
    flows: int = 0
    #: how the connection closed, once it did
    close: dict[str, object] | None = None
    #: the last client message that declared tools (a Realtime session.update)
    tools_message: str | None = None


def _asks(data: str | bytes) -> bool:
    return _type(data) == "response.create"


def _type(data: str | bytes) -> str | None:
    if not isinstance(data, str) or '"type"' not in data:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    kind = doc.get("type") if isinstance(doc, dict) else None
    return kind if isinstance(kind, str) else None


def _model(path: str, data: str | bytes | None) -> str | None:
    """The model a response asked for: in its request, else in the connection's URL."""
    if isinstance(data, str):
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict):
            for holder in (doc, doc.get("response")):
                if isinstance(holder, dict) and isinstance(holder.get("model"), str):
                    return str(holder["model"])
    query = dict(parse_qsl(urlsplit(path).query))
    return query.get("model")


class WSConnections:
    """Every WebSocket connection the proxy relays, by exchange id."""

    def __init__(self, store: FlowStore, record_dir: Path | None = None) -> None:
        self.store = store
        self.record_dir = record_dir
        self._open: dict[int, _Connection] = {}

    def open_ids(self) -> list[int]:
        return list(self._open)

    def opened(self, id: int, path: str, url: str, headers: list[tuple[str, str]],
               started: float, t0: float, unscrubbed: list[str]) -> None:
        notes = [f"{where} carried a value too short to scrub safely: redacted by name only"
                 for where in unscrubbed]
        conn = _Connection(id, path, url, headers, started, t0, notes,
                           ws_format_for_path(path.split("?", 1)[0]), _model(path, None))
        self._open[id] = conn
        if self.record_dir is None:
            return
        try:
            self.record_dir.mkdir(parents=True, exist_ok=True)
            named = Flow(number=id, method="WS", path=path, url=url, request_headers={},
                         request_body=b"", format=None, started=started)
            saved, conn.fp = create_exclusive(self.record_dir, named)
            conn.saved_to = str(saved)
            conn.writer = RecordingWriter(conn.fp)
            conn.writer.start({"method": "GET", "url": url, "headers": headers},
                              format=conn.format, transport=WEBSOCKET,
                              created=datetime.fromtimestamp(started, tz=timezone.utc))
        except OSError as exc:
            conn.notes.append(f"could not record: {exc}")
            conn.writer = None

    def handshake(self, id: int, status: int, headers: list[tuple[str, str]], at: float) -> None:
        conn = self._open.get(id)
        if conn is None:
            return
        conn.status = status
        conn.response_headers = redact_headers(headers)
        if conn.writer is not None:
            conn.writer.response(status, headers, at - conn.t0)

    def message(self, id: int, sender: str, data: str | bytes, at: float) -> None:
        conn = self._open.get(id)
        if conn is None:
            return
        if conn.writer is not None:
            conn.writer.frame(at - conn.t0, sender, data)
        if sender == "client" and isinstance(data, str) and sent_tools(data) is not None:
            conn.tools_message = data
        if sender == "client" and _asks(data):
            if conn.flow is not None:
                self._end_flow(conn, FlowState.DONE, "another response.create came before this "
                               "response ended", at)
            self._new_flow(conn, data, at)
        elif sender == "server" and conn.flow is None and _type(data) == "response.created":
            self._new_flow(conn, None, at)  # a response the client did not ask for
        flow = conn.flow
        if flow is None:
            return
        text = data if isinstance(data, str) else None
        blob = data if isinstance(data, bytes) else None
        self._feed(conn, flow, frame_event(0, Frame(at - flow.t0, sender, text, blob)), at,
                   len(data) if sender == "server" else 0)

    def refused(self, id: int, sender: str, size: int, reason: str, at: float) -> None:
        conn = self._open.get(id)
        if conn is None:
            return
        if conn.writer is not None:
            conn.writer.refused(at - conn.t0, sender, size, reason)
        flow = conn.flow
        if flow is not None:
            self._feed(conn, flow, frame_event(0, Frame(at - flow.t0, sender, refused=size,
                                                        reason=reason)), at, size)

    def close(self, id: int, code: int, reason: str, sender: str, at: float) -> None:
        conn = self._open.get(id)
        if conn is None:
            return
        conn.close = {"code": code, "reason": reason, "from": sender}
        if conn.writer is not None:
            conn.writer.close(at - conn.t0, code, reason, sender)
        flow = conn.flow
        if flow is None:
            return
        self._feed(conn, flow, close_event(0, conn.close, at - flow.t0), at, 0, ends=False)
        said = f" ({reason})" if reason else ""
        if sender == "server":
            self._end_flow(conn, FlowState.FAILED, f"the upstream closed the connection with "
                           f"code {code}{said} before the response ended", at)
        else:
            self._end_flow(conn, FlowState.CANCELLED, f"the client closed the connection with "
                           f"code {code}{said} before the response ended", at)

    def ended(self, id: int, how: str, error: str | None, at: float) -> bool:
        """The connection is over; False when ``id`` is no WebSocket connection."""
        conn = self._open.pop(id, None)
        if conn is None:
            return False
        if conn.flow is not None:
            self._end_flow(conn, FlowState.FAILED, error or "the connection ended before the "
                           "response did", at)
        elif not conn.flows:
            # nothing was asked on it (a refused handshake...): listed all the same
            flow = self._new_flow(conn, None, at, listed_only=True)
            state = FlowState.DONE if how == "eof" and error is None else FlowState.FAILED
            self._end_flow(conn, state, error, at, flow)
        if conn.writer is not None:
            reason = "eof" if how == "eof" and error is None else "error"
            conn.writer.end(reason, error if reason == "error" else None, at - conn.t0)
            conn.writer = None
        if conn.fp is not None:
            conn.fp.close()
            conn.fp = None
        return True

    # -- flows ---------------------------------------------------------------------------
    def _new_flow(self, conn: _Connection, request: str | bytes | None, at: float,
                  listed_only: bool = False) -> Flow:
        body = request.encode("utf-8") if isinstance(request, str) else (request or b"")
        fmt = None if listed_only else conn.format or "openai-responses"
        note = None
        if not listed_only and conn.tools_message is not None and (
            not isinstance(request, str) or sent_tools(request) is None
        ):
            # a Realtime session declares its tools once (session.update), not per
            # response: that message is the request the calls are checked against
            body = conn.tools_message.encode("utf-8")
            note = ("the request shown is the session.update that declared the tools; "
                    "the response.create itself declared none")
        flow = self.store.new_flow(
            method="WS",
            path=conn.path,
            url=conn.url,
            request_headers=redact_headers(conn.headers),
            request_body=body,
            format=fmt,
            model=_model(conn.path, request),
            started=conn.started if listed_only else time.time() - (time.monotonic() - at),
            t0=conn.t0 if listed_only else at,
            stream=None if fmt is None else Stream(format=fmt, framing="websocket"),
        )
        conn.flows += 1
        with self.store.lock:
            flow.status = conn.status
            flow.response_headers = dict(conn.response_headers)
            flow.response_t = 0.0
            flow.notes.extend(conn.notes)
            flow.saved_to = conn.saved_to
            if conn.flows > 1:
                flow.notes.append(f"response {conn.flows} on this WebSocket connection")
            if note is not None:
                flow.notes.append(note)
            if isinstance(request, str) and request_kind(request) == "prewarm":
                flow.notes.append('a prewarm ("generate": false): the client asked for no output')
        if not listed_only:
            conn.flow = flow
        self.store.changed(flow, "response")
        return flow

    def _feed(self, conn: _Connection, flow: Flow, ev: RawEvent, at: float, size: int,
              ends: bool = True) -> None:
        """``ev`` into the flow's stream; with ``ends``, the flow ends when its
        response has (a close ends it otherwise: the caller says how)."""
        stream = flow.stream
        assert stream is not None
        ev.number = len(stream.events)
        with self.store.lock:
            if ev.kind != "sent":
                flow.state = FlowState.STREAMING
            flow.received += size
            stream.feed(ev)
        self.store.changed(flow, "body")
        log = stream.ws
        if ends and log is not None and log.responses and log.responses[-1].status is not None:
            self._end_flow(conn, FlowState.DONE, None, at)

    def _end_flow(self, conn: _Connection, state: FlowState, error: str | None, at: float,
                  flow: Flow | None = None) -> None:
        flow = flow or conn.flow
        if flow is None:
            return
        if flow is conn.flow:
            conn.flow = None
        with self.store.lock:
            flow.state = state
            flow.error = error
            flow.ended = at
            stream = flow.stream
            if stream is not None:
                stream.ended_at = round(flow.elapsed(), 6)
                if not stream.closed:
                    stream.close()
        self.store.changed(flow, "end")
