"""``fraglens serve`` over WebSocket: a recorded connection replayed to a live client.

uvicorn speaks the protocol (with the ``websockets`` package: the handshake,
framing, masking, ping and close are its); this module only answers the ASGI
``websocket`` scope. A connection on ``/v1/responses`` or ``/v1/realtime``
(any path ending so) gets one of the loaded WebSocket recordings, round-robin
(the Realtime path prefers Realtime recordings and the Responses path
Responses ones); what it sends is planned by ``ws_replay.py``. A subprotocol
the client offers is accepted unless it carries a key (the Realtime API's
``openai-insecure-api-key.…``), so that browsers, which insist on one, connect.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from .replay import Chaos, Pace, Source
from .ws_replay import WSMessage, WSScript, prewarm_answer, request_kind

__all__ = ["WS_PATHS", "serve_websocket", "ws_format_for_path"]

Log = Callable[[str], None]

#: path endings served over WebSocket, and the wire format each one speaks
WS_PATHS = {"/responses": "openai-responses", "/realtime": "openai-realtime"}


def ws_format_for_path(path: str) -> str | None:
    path = path.rstrip("/")
    return next((fmt for end, fmt in WS_PATHS.items() if path.endswith(end)), None)


def _subprotocol(scope: dict[str, Any]) -> str | None:
    for offered in scope.get("subprotocols") or ():
        if "key" not in offered.lower() and "token" not in offered.lower():
            return str(offered)
    return None


async def _deny(send: Any, status: int, message: str) -> None:
    """Refuse the handshake with an HTTP status and a JSON error body, as a
    server without WebSocket support on that path would."""
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
    await send({"type": "websocket.http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "websocket.http.response.body", "body": body})


class _Connection:
    """One client's connection: what was sent, and whether it is still there."""

    def __init__(self, receive: Any, send: Any, chaos: Chaos) -> None:
        self.receive = receive
        self.send = send
        self.chaos = chaos
        self.sent = 0
        self.requests: asyncio.Queue[str | None] = asyncio.Queue()

    async def listen(self) -> None:
        """Every client message: a ``response.create`` is queued, the rest are read
        and let go; None once the client left."""
        try:
            while True:
                message = await self.receive()
                if message["type"] == "websocket.disconnect":
                    return
                kind = request_kind(message.get("text"))
                if kind is not None:
                    await self.requests.put(kind)
        finally:
            await self.requests.put(None)

    async def play(self, messages: list[WSMessage]) -> bool:
        """Send ``messages`` at their times; False once the connection is to drop."""
        start = asyncio.get_running_loop().time()
        for message in messages:
            if self.chaos.drop_after is not None and self.sent >= self.chaos.drop_after:
                return False
            wait = start + message.at - asyncio.get_running_loop().time()
            if wait > 0:
                await asyncio.sleep(wait)
            if isinstance(message.data, str):
                await self.send({"type": "websocket.send", "text": message.data})
            else:
                await self.send({"type": "websocket.send", "bytes": message.data})
            self.sent += 1
            if self.chaos.stall_after is not None and self.sent == self.chaos.stall_after:
                await asyncio.sleep(self.chaos.stall_seconds)
        return True


async def serve_websocket(
    scope: dict[str, Any], receive: Any, send: Any, pick: Callable[[str], Source | None],
    chaos: Chaos, pace: Pace, log: Log,
) -> None:
    """Answer one WebSocket connection from the recording ``pick`` chooses."""
    path = scope.get("path", "")
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    source = pick(path) if ws_format_for_path(path) is not None else None
    if source is None or source.websocket is None:
        what = "no WebSocket recording is loaded" if ws_format_for_path(path) else (
            "WebSocket is served on /v1/responses and /v1/realtime")
        log(f"WebSocket {path} -> HTTP 404: {what}")
        await _deny(send, 404, f"fraglens serve: {what}")
        return
    if chaos.http_error is not None:
        log(f"WebSocket {path} -> HTTP {chaos.http_error} (chaos)")
        await _deny(send, chaos.http_error, f"fraglens serve: simulated HTTP {chaos.http_error}")
        return
    script: WSScript = source.websocket
    await send({"type": "websocket.accept", "subprotocol": _subprotocol(scope)})
    conn = _Connection(receive, send, chaos)
    listener = asyncio.ensure_future(conn.listen())
    answered = 0
    answers = {"generate": 0, "prewarm": 0}
    how = "the client closed"
    try:
        if not await conn.play(script.paced(script.greeting, pace.mode, pace.rate)):
            how = await _drop(conn)
            return
        while True:
            if script.server_close is not None and script.server_close[0] == answered:
                _, code, reason = script.server_close
                await send({"type": "websocket.close", "code": code, "reason": reason})
                how = f"closed with {code} as recorded"
                return
            request = await conn.requests.get()
            if request is None:
                return
            recorded = script.prewarms if request == "prewarm" else script.responses
            n = answers[request]
            answers[request] += 1
            answered += 1
            if recorded:
                messages = recorded[n % len(recorded)]
            elif request == "prewarm":
                messages = prewarm_answer(n + 1)  # what the API answers: no output
            else:
                continue  # a recording with no response: nothing to answer with
            if not await conn.play(script.paced(messages, pace.mode, pace.rate)):
                how = await _drop(conn)
                return
    except OSError:
        how = "the connection broke"
    finally:
        listener.cancel()
        prewarmed = f" and {answers['prewarm']} prewarm(s)" if answers["prewarm"] else ""
        log(f"WebSocket {path} -> {source.name}: {answers['generate']} response(s){prewarmed}, "
            f"{conn.sent} messages, {how}; {chaos.describe()}")


async def _drop(conn: _Connection) -> str:
    await conn.send({"type": "websocket.close", "code": 1011,
                     "reason": "fraglens serve: dropped (chaos)"})
    return f"dropped after {conn.sent} messages (chaos)"
