"""The proxy's WebSocket relay: an upgrade on any path, passed on to the upstream.

uvicorn holds the client's side of the connection (the ``websockets``
package speaks the protocol); this module opens the upstream's side with the
same package (``http`` becomes ``ws``, ``https`` becomes ``wss``), with the
client's headers (hop-by-hop ones and the handshake's own keys aside) and the
subprotocols it offered, before it answers the client. Then:

- the upstream accepts: the client is accepted with the subprotocol and the
  headers the upstream chose, and every message goes through as it came,
  text as text, binary as binary, both ways, until one side closes; the
  other side is closed with the same code and reason (a connection that broke
  with no close, 1006, which no close frame may carry, is broken off with
  1011 instead);
- the upstream refuses (an HTTP status): the client gets that status, those
  headers and that body, as it would directly (Codex then falls back to
  HTTPS on its own, as it does without a proxy);
- the upstream cannot be reached: the client gets HTTP 502 and a JSON error.

permessage-deflate is refused on both sides: the client's offer is declined
in the handshake (RFC 7692 lets a server do that; every client then sends
plain frames), and none is made upstream. So each message crosses the proxy
with the same payload bytes on both hops, and no compressed message is ever
inflated here. uvicorn and the upstream connection send no pings of their
own: the client's and the upstream's pings are answered, hop by hop.

The flows see the connection through the sink's WebSocket facts
(``ws_opened``, ``ws_message``, ``ws_close``...), every credential of the
handshake (the ``authorization`` header, a key offered as a subprotocol,
query keys) scrubbed from them here, on the forwarding side. A message over
``--max-line-bytes`` still goes through to its peer; the flows get its size
and the reason instead of its text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, NamedTuple, Protocol

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from ...redact import Secrets, redact_headers, redact_url
from ..limits import Limits
from .sink import FlowSink

__all__ = ["Forwarding", "relay_websocket"]

Pairs = list[tuple[bytes, bytes]]


class Forwarding(NamedTuple):
    """The forwarding rules the HTTP side keeps (``server.py``), handed in."""

    #: where a path goes: ``join_upstream``
    join: Callable[[httpx.URL, bytes, bytes], httpx.URL]
    #: the client's headers that go on: ``forwarded_request_headers``
    request_headers: Callable[[Pairs], Pairs]
    #: the upstream's headers that come back: ``forwarded_response_headers``
    response_headers: Callable[[Pairs], Pairs]
    #: a JSON error body in the shape SDKs read
    error_body: Callable[[str, str], bytes]


class Relaying(Protocol):
    """What the relay needs of the proxy's ASGI app."""

    upstream: httpx.URL
    sink: FlowSink
    limits: Limits

    def next_id(self) -> int: ...

_LOG = logging.getLogger("fraglens.proxy")

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: the handshake's own headers: each hop has its own
_HANDSHAKE = frozenset({
    b"sec-websocket-key", b"sec-websocket-version", b"sec-websocket-extensions",
    b"sec-websocket-protocol", b"sec-websocket-accept",
})
#: "no status": a close frame with no code, which is passed on as one
_NO_STATUS = 1005
#: close codes no close frame may carry (RFC 6455, 7.4.1): a connection that broke
#: off (1006) or failed its TLS (1015) is broken off with 1011
_BROKEN = frozenset({1006, 1015})


def _close_code(code: int | None) -> int | None:
    """The code to close the other side with; None sends a close with no code."""
    if code is None or code == _NO_STATUS:
        return None
    return 1011 if code in _BROKEN else code


def _text_pairs(headers: Pairs) -> list[tuple[str, str]]:
    return [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers]


async def relay_websocket(app: Relaying, rules: Forwarding, scope: MutableMapping[str, Any],
                          receive: Receive, send: Send) -> None:
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
    query: bytes = scope.get("query_string", b"")
    shown_path = raw_path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
    raw_headers: list[tuple[bytes, bytes]] = list(scope["headers"])
    try:
        target = rules.join(app.upstream, raw_path, query)
    except ValueError as exc:
        await _deny(send, 400, [], rules.error_body(f"fraglens proxy: {exc}", "bad_request"))
        return
    url = str(target.copy_with(scheme="wss" if target.scheme == "https" else "ws"))
    secrets = Secrets.of_request(_text_pairs(raw_headers), url)
    scrub = secrets.scrub_text
    headers = [(n.decode("latin-1"), v.decode("latin-1"))
               for n, v in rules.request_headers(raw_headers) if n.lower() not in _HANDSHAKE]
    subprotocols = [str(p) for p in scope.get("subprotocols") or ()]
    xid = app.next_id()
    sink = app.sink
    shown_headers = [(n, scrub(v)) for n, v in redact_headers(_text_pairs(raw_headers)).items()]
    sink.ws_opened(xid, scrub(redact_url(shown_path)), scrub(redact_url(url)), shown_headers,
                   time.time(), time.monotonic(), secrets.unscrubbed)
    try:
        upstream = await connect(
            url, additional_headers=headers, subprotocols=subprotocols or None,  # type: ignore[arg-type]
            compression=None, max_size=None, ping_interval=None, user_agent_header=None,
            proxy=None, open_timeout=30,
        )
    except InvalidStatus as exc:
        response = exc.response
        shown = [(n, scrub(v)) for n, v in response.headers.raw_items()]
        sink.ws_handshake(xid, response.status_code, shown, time.monotonic())
        passed = rules.response_headers(
            [(n.encode("latin-1"), v.encode("latin-1")) for n, v in response.headers.raw_items()])
        await _deny(send, response.status_code, passed, bytes(response.body or b""))
        sink.ended(xid, "eof", scrub(f"the upstream refused the WebSocket handshake: HTTP "
                                     f"{response.status_code}"), time.monotonic())
        return
    except (InvalidHandshake, OSError, TimeoutError) as exc:
        said = scrub(f"fraglens proxy: could not open a WebSocket to the upstream "
                     f"{redact_url(url)}: {type(exc).__name__}: {exc}")
        await _deny(send, 502, [], rules.error_body(said, "upstream_unreachable"))
        sink.ended(xid, "unreachable", said, time.monotonic())
        return
    try:
        await _relay(app, rules, xid, upstream, secrets, receive, send)
    except asyncio.CancelledError:
        sink.ended(xid, "stopped", "the proxy stopped this connection", time.monotonic())
        raise
    except Exception as exc:  # a bug here must cost one connection, not the proxy
        _LOG.exception("fraglens proxy: unexpected error on WebSocket connection %d", xid)
        sink.ended(xid, "proxy-error", scrub(f"proxy error: {type(exc).__name__}: {exc}"),
                   time.monotonic())
    finally:
        with contextlib.suppress(Exception):
            await upstream.close()


async def _deny(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


async def _relay(app: Relaying, rules: Forwarding, xid: int, upstream: ClientConnection,
                 secrets: Secrets, receive: Receive, send: Send) -> None:
    sink = app.sink
    response = upstream.response
    assert response is not None
    raw = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in response.headers.raw_items()]
    passed = [(n, v) for n, v in rules.response_headers(raw) if n.lower() not in _HANDSHAKE]
    sink.ws_handshake(xid, 101, [(n, secrets.scrub_text(v)) for n, v in
                                 response.headers.raw_items()], time.monotonic())
    await send({"type": "websocket.accept", "subprotocol": upstream.subprotocol,
                "headers": passed})
    limit = app.limits.max_line

    def report(sender: str, data: str | bytes) -> None:
        size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8"))
        at = time.monotonic()
        if size > limit:
            sink.ws_refused(xid, sender, size, f"a message over --max-line-bytes ({limit} "
                            "bytes): passed on, not decoded", at)
        elif isinstance(data, str):
            sink.ws_message(xid, sender, secrets.scrub_text(data), at)
        else:
            sink.ws_message(xid, sender, secrets.scrub(data), at)

    async def client_to_upstream() -> tuple[int, str]:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return int(message.get("code") or 1005), str(message.get("reason") or "")
            data = message.get("text")
            if data is None:
                data = message.get("bytes") or b""
            await upstream.send(data)
            report("client", data)

    async def upstream_to_client() -> None:
        async for data in upstream:
            await send({"type": "websocket.send", **(
                {"text": data} if isinstance(data, str) else {"bytes": data})})
            report("server", data)

    to_upstream = asyncio.ensure_future(client_to_upstream())
    to_client = asyncio.ensure_future(upstream_to_client())
    try:
        await asyncio.wait({to_upstream, to_client}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (to_upstream, to_client):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed, OSError):
                    await task
    at = time.monotonic()
    if to_client.done() and not to_client.cancelled():
        to_client.exception()  # a close with an error: said below, from the close frame
    if to_upstream.done() and not to_upstream.cancelled() and to_upstream.exception() is None:
        code, reason = to_upstream.result()
        sink.ws_close(xid, code, secrets.scrub_text(reason), "client", at)
        # websockets sends a close with no code for None, as the client did
        await upstream.close(_close_code(code), reason)  # type: ignore[arg-type]
        sink.ended(xid, "eof", None, at)
        return
    # the upstream closed (or broke off): the client is closed the same way
    rcvd = upstream.protocol.close_rcvd
    code = rcvd.code if rcvd is not None else 1006
    reason = rcvd.reason if rcvd is not None else ""
    sink.ws_close(xid, code, secrets.scrub_text(reason), "server", at)
    with contextlib.suppress(Exception):
        await send({"type": "websocket.close", "code": _close_code(code), "reason": reason})
    error = None if rcvd is not None else "the upstream connection broke with no close"
    sink.ended(xid, "eof" if rcvd is not None else "upstream-error", error, at)
