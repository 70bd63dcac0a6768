"""``fraglens proxy``: a reverse proxy that shows the tool calls of the app behind it.

The user points their app's base URL at the proxy and keeps everything else.
Each request is forwarded as it came (method, path, query, headers including
authorization, body) to the upstream with httpx; the response comes back as
the upstream sent it: status, headers, and each network read passed on the
moment it arrives, still compressed if it was (``aiter_raw``). Only
hop-by-hop headers are dropped, and Host names the upstream.

The forwarding side knows nothing of flows: after a read has been passed on,
it reports the fact to a sink (``sink.py``), which tees it into a
``Stream``; the client never waits for the engine. ``fraglens proxy`` runs this
module in a child process of its own (``child.py``) so that the engine
and the app never share its GIL; in process, a ``StoreSink`` does the same.

What the client sees when things go wrong is what a direct connection would
have shown it: the upstream's error status and body unchanged; a 502 with a
JSON error body when the upstream cannot be reached at all; a connection cut
mid-body when the upstream cut it mid-body (never a clean end it did not
send). A client that goes away closes the upstream stream with it. Nothing a
client sends makes the proxy raise: the worst is a 400, a 413 or a 502 for
that request, and one log line. Refused with 400: a request that says both
Content-Length and Transfer-Encoding (the two can disagree on where the body
ends: request smuggling), and a path that, ``.`` and ``..`` resolved (percent-
encoded too), leaves the upstream's prefix. Refused with 413: a body over
``Limits.max_body``, said by Content-Length or counted as it arrives.

The ASGI app runs on uvicorn, on a socket bound before uvicorn starts, so that
"address in use" is one clear error and tests can ask for port 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import httpx
import uvicorn

from ...redact import Fingerprints, Secrets, redact_headers, redact_url
from ..decoded import DecodedCopy
from ..limits import DEFAULT_LIMITS, Limits, mib
from .flows import FlowStore
from .later import Later
from .sink import FlowSink, Opened, StoreSink

__all__ = ["ProxyApp", "ProxyServer", "bind", "is_loopback", "join_upstream", "parse_upstream"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# RFC 9110 section 7.6.1: meaningful for one connection only, never forwarded.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

#: the client's own timeouts govern a slow stream; the proxy adds none of its own
_TIMEOUT = httpx.Timeout(connect=30.0, read=None, write=60.0, pool=None)
_LOG = logging.getLogger("fraglens.proxy")
#: credential sets whose fingerprints are kept (a proxy serves a few clients)
_PRINTS_KEPT = 64
#: httpcore's pool walks every connection it holds, polling each idle one, whenever
#: a request starts or ends: per request, a cost that grows with the streams at once
#: (measured: half the relay's CPU per read at 50 streams). Exchanges take turns
#: among this many pools, each walk an eighth as long.
_POOLS = 8
#: idle upstream connections kept, over all the pools
_KEPT = 256


def _hop_by_hop(headers: list[tuple[bytes, bytes]]) -> set[bytes]:
    names = {name.lower() for name in (n.encode() for n in HOP_BY_HOP)}
    for name, value in headers:
        if name.lower() == b"connection":
            names.update(v.strip().lower() for v in value.split(b",") if v.strip())
    return names


def forwarded_request_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The client's headers, in order, minus hop-by-hop ones, Host, and Expect
    (uvicorn already answered the 100-continue; the body is read whole). A
    Content-Length stays: with Transfer-Encoding refused beside it, the server
    read exactly that many bytes."""
    drop = _hop_by_hop(headers) | {b"host", b"expect"}
    return [(n, v) for n, v in headers if n.lower() not in drop]


_DOT_SEGMENT = re.compile(rb"(?:^|[/\\])\.\.?(?:$|[/\\])")


def _resolve(path: bytes) -> bytes:
    """``path`` with its ``.`` and ``..`` segments resolved; ValueError when it climbs
    above the root, or hides one in a segment (``%2e%2e%2f``)."""
    out: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        plain = unquote_to_bytes(segment)
        if plain == b".":
            continue
        if plain == b"..":
            if not out:
                raise ValueError("the path climbs above the root")
            out.pop()
            continue
        if _DOT_SEGMENT.search(plain):
            raise ValueError("the path hides a '..' in an encoded segment")
        out.append(segment)
    return b"/" + b"/".join(out)


def forwarded_response_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    drop = _hop_by_hop(headers)
    return [(n, v) for n, v in headers if n.lower() not in drop]


def join_upstream(upstream: httpx.URL, raw_path: bytes, query: bytes) -> httpx.URL:
    """Where a request for ``raw_path`` goes.

    The upstream's own path is a prefix that is added unless the request
    already starts with it, so ``--upstream https://host/v1`` serves clients
    whose base URL is ``http://127.0.0.1:8788/v1`` and ``http://127.0.0.1:8788``
    alike.

    The path is resolved (``.`` and ``..``) after the prefix is added, and must
    stay under it: ValueError otherwise, for a 400.
    """
    prefix = upstream.raw_path.split(b"?", 1)[0].rstrip(b"/")
    path = raw_path or b"/"
    if not path.startswith(b"/"):
        raise ValueError("the path must start with '/'")
    if prefix and not (path == prefix or path.startswith(prefix + b"/")):
        path = prefix + path
    path = _resolve(path)
    if prefix and not (path == prefix or path.startswith(prefix + b"/")):
        raise ValueError(f"the path leaves the upstream's {prefix.decode('latin-1')}")
    extra = upstream.query
    if extra:
        query = query + b"&" + extra if query else extra
    return upstream.copy_with(raw_path=path + (b"?" + query if query else b""))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _error_body(message: str, code: str) -> bytes:
    """In the OpenAI error shape, which the common SDKs read into their exceptions."""
    doc = {"error": {"message": message, "type": "fraglens_proxy_error", "code": code}}
    return json.dumps(doc).encode()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _ClientGone(Exception):
    """The client disconnected before it had sent the whole request."""


class _TooLarge(Exception):
    """The request body is over the cap."""


async def _read_body(receive: Receive, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _ClientGone
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise _TooLarge
        parts.append(part)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _wait_disconnect(receive: Receive) -> None:
    """Returns when the client has gone (or, with uvicorn, the response is complete)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def parse_upstream(upstream: str) -> httpx.URL:
    """The upstream as a URL; ValueError with the reason when it is none (its
    credentials redacted)."""
    try:
        # httpx takes "[127.0.0.1" as a host and 99999 as a port: every request would fail
        port = urlsplit(upstream.strip()).port
    except ValueError as exc:
        raise ValueError(
            f"the upstream is not a valid URL ({exc}): {redact_url(upstream)!r}"
        ) from None
    if port == 0:
        raise ValueError(
            f"the upstream's port 0 is no port to connect to: {redact_url(upstream)!r}"
        )
    try:
        url = httpx.URL(upstream)
    except Exception:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ValueError(
            f"the upstream must be an http:// or https:// URL, not {redact_url(upstream)!r}"
        )
    return url


def _text_pairs(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers]


class ProxyApp:
    """The ASGI application: forward, pass back, and report each exchange to a sink.

    The sink is a :class:`StoreSink` over ``store`` (flows in this process)
    unless another is given (``child.py``: over a pipe).
    """

    def __init__(
        self,
        upstream: str,
        store: FlowStore | None = None,
        record_dir: Path | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sink: FlowSink | None = None,
        limits: Limits = DEFAULT_LIMITS,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.upstream = parse_upstream(upstream)
        self.record_dir = record_dir
        self.limits = limits
        self.sink: FlowSink = (
            sink if sink is not None else StoreSink(store or FlowStore(), record_dir, limits)
        )
        #: one line per refused request (the child sends it up the pipe)
        self.log: Callable[[str], None] = log or (lambda line: _LOG.warning("%s", line))
        self._transport = transport
        self._clients: list[httpx.AsyncClient] = []
        #: the sink's facts, reported once the reads of this turn have gone out
        self.later = Later()
        self._ids = itertools.count(1)
        #: exchanges that have not ended yet (each ends once, with its first reason),
        #: and the credentials each carried
        self._live: dict[int, Secrets] = {}
        #: fingerprints by the values they stand for: a client sends the same key with
        #: every request, and each costs a few scrypt hashes to print
        self._prints: dict[tuple[str, ...], Fingerprints] = {}

    # -- ASGI --------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            from .ws_relay import Forwarding, relay_websocket

            rules = Forwarding(join_upstream, forwarded_request_headers,
                               forwarded_response_headers, _error_body)
            await relay_websocket(self, rules, scope, receive, send)

    def next_id(self) -> int:
        """A new exchange's number (a WebSocket connection is one too)."""
        return next(self._ids)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.client()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def client(self, xid: int = 0) -> httpx.AsyncClient:
        """The upstream client of exchange ``xid``: one of ``_POOLS``, each with its own
        connection pool."""
        if not self._clients:
            # one trust store for all the pools: loading it is tens of milliseconds each
            context = httpx.create_ssl_context(trust_env=False)
            for _ in range(_POOLS):
                client = httpx.AsyncClient(
                    transport=self._transport,
                    verify=context,
                    timeout=_TIMEOUT,
                    follow_redirects=False,
                    # the environment's proxy settings are the user's app's business
                    trust_env=False,
                    # as many idle upstream connections as there were streams at once:
                    # with fewer, every burst of concurrent streams pays new connections
                    limits=httpx.Limits(
                        max_connections=None, max_keepalive_connections=_KEPT // _POOLS
                    ),
                )
                # httpx adds Accept, Accept-Encoding, Connection and User-Agent to
                # every request by default: the upstream must see the client's own
                client.headers.clear()
                self._clients.append(client)
        return self._clients[xid % _POOLS]

    async def aclose(self) -> None:
        self.later.run()
        clients, self._clients = self._clients, []
        for client in clients:
            await client.aclose()

    async def _fingerprints(self, secrets: Secrets) -> Fingerprints:
        """What the flows get of the request's credentials: their fingerprints, never
        their values (a report scrubs a key the response streamed in pieces with
        them). Printed off the event loop: the other streams keep flowing."""
        prints = self._prints.get(secrets.values)
        if prints is None:
            prints = await asyncio.to_thread(secrets.fingerprints)
            if len(self._prints) >= _PRINTS_KEPT:
                self._prints.clear()
            self._prints[secrets.values] = prints
        return prints

    # -- one exchange --------------------------------------------------------------
    async def _refuse(self, send: Send, status: int, code: str, what: str, reason: str) -> None:
        """Answer ``status`` with a JSON error, and say so in one log line."""
        self.log(f"refused {what}: {reason} (HTTP {status})")
        await _respond(send, status, _error_body(f"fraglens proxy: {reason}", code))

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
        query: bytes = scope.get("query_string", b"")
        shown_path = raw_path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        raw_headers: list[tuple[bytes, bytes]] = list(scope["headers"])
        names = {n.lower() for n, _ in raw_headers}
        secrets = Secrets.of_request(_text_pairs(raw_headers), shown_path)
        what = secrets.scrub_text(f"{method} {redact_url(shown_path)}")
        if b"content-length" in names and b"transfer-encoding" in names:
            await self._refuse(
                send, 400, "bad_request", what,
                "both Content-Length and Transfer-Encoding: where the body ends is ambiguous",
            )  # fmt: skip
            return
        limit = self.limits.max_body
        declared = _content_length(raw_headers)
        too_large = f"the request body is over {mib(limit)} (--max-body-bytes)"
        if declared is not None and declared > limit:
            await self._refuse(send, 413, "request_too_large", what, too_large)
            return
        try:
            body = await _read_body(receive, limit)
        except _ClientGone:
            return
        except _TooLarge:
            await self._refuse(send, 413, "request_too_large", what, too_large)
            return
        headers = forwarded_request_headers(raw_headers)
        try:
            target = join_upstream(self.upstream, raw_path, query)
            request = self.client().build_request(method, target, headers=headers, content=body)
        except Exception as exc:  # a path or header httpx refuses: the client's request
            reason = secrets.scrub_text(f"cannot forward: {exc}")
            await self._refuse(send, 400, "bad_request", what, reason)
            return
        # the upstream may carry a key of its own (--upstream https://host/v1?key=...)
        secrets = Secrets.of_request(_text_pairs(raw_headers), str(target))
        scrub = secrets.scrub_text
        prints = await self._fingerprints(secrets) if secrets else None
        xid = next(self._ids)
        # redacted by name and scrubbed by value here: keys never leave the forwarding side
        opened = Opened(
            id=xid,
            method=method,
            path=scrub(redact_url(shown_path)),
            url=scrub(redact_url(str(target))),
            headers=[
                (name, scrub(value))
                for name, value in redact_headers(_text_pairs(raw_headers)).items()
            ],
            body=secrets.scrub(body),
            started=time.time(),
            t0=time.monotonic(),
            unscrubbed=secrets.unscrubbed,
            secrets=prints,
        )
        self.later.call(self.sink.opened, opened)
        self._live[xid] = secrets
        try:
            await self._exchange(xid, opened.url, request, secrets, receive, send)
        except Exception as exc:  # a bug here must cost one request, not the proxy
            _LOG.exception("fraglens proxy: unexpected error on exchange %d", xid)
            self._end(xid, "proxy-error", f"proxy error: {_reason(exc)}")
        finally:
            # a no-op when the exchange has ended already (the usual case)
            self._end(xid, "stopped", "the proxy stopped this exchange")

    def _end(self, xid: int, how: str, error: str | None) -> None:
        secrets = self._live.pop(xid, None)
        if secrets is not None:
            said = secrets.scrub_text(error) if error is not None else None
            self.later.call(self.sink.ended, xid, how, said, time.monotonic())

    async def _exchange(
        self,
        xid: int,
        url: str,
        request: httpx.Request,
        secrets: Secrets,
        receive: Receive,
        send: Send,
    ) -> None:
        pump = asyncio.ensure_future(self._pump(xid, url, request, secrets, send))
        gone = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            await asyncio.wait({pump, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not pump.done():
                # the client went away (or the server is stopping): cancelling the
                # pump ends it where it waits, and its ``finally`` closes the
                # upstream response, so the upstream sees the disconnect too
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump
                self._end(xid, "client-gone", None)
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
        if not pump.cancelled():
            pump.result()  # a bug in the pump is re-raised and logged by _http

    def _copy(self, xid: int, copy: DecodedCopy, chunk: bytes | None, at: float) -> None:
        """Report a read (None: the end of the body) as the copy keeps it, and, once,
        why the copy stopped. Put off (``later.py``): ``at`` is when the read came."""
        was = copy.stopped
        data = copy.feed(chunk) if chunk is not None else copy.close()
        if data or chunk:
            self.sink.body(xid, data, len(chunk or b""), at)
        if copy.stopped is not None and was is None:
            self.sink.stopped(xid, copy.stopped, at)

    async def _pump(
        self, xid: int, url: str, request: httpx.Request, secrets: Secrets, send: Send
    ) -> None:
        sink, later = self.sink, self.later
        try:
            response = await self.client(xid).send(request, stream=True)
        except httpx.HTTPError as exc:
            message = f"fraglens proxy: could not reach the upstream {url}: {_reason(exc)}"
            self._end(xid, "unreachable", message)
            await _respond(send, 502, _error_body(message, "upstream_unreachable"))
            return
        # the flows' copy of the body: decoded, capped, scrubbed on this side
        copy = DecodedCopy(
            # the flows keep each body: a plain one is held to the same cap
            response.headers.get("content-encoding"), secrets, self.limits.max_decoded,
            max_plain=self.limits.max_decoded,
        )
        try:
            raw_headers = forwarded_response_headers(list(response.headers.raw))
            # the client gets the headers as they came; the flow, without an echoed key
            shown = [(n, secrets.scrub_text(v)) for n, v in _text_pairs(raw_headers)]
            later.call(sink.response, xid, response.status_code, shown, time.monotonic())
            if copy.stopped is not None:
                later.call(sink.stopped, xid, copy.stopped, time.monotonic())
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": raw_headers,
                }
            )
            try:
                async for chunk in response.aiter_raw():
                    # the client first; the copy for the flow once this turn's reads are out
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    later.call(self._copy, xid, copy, chunk, time.monotonic())
            except httpx.HTTPError as exc:
                later.call(self._copy, xid, copy, None, time.monotonic())
                # leave the response unfinished: uvicorn closes the connection, and
                # the client sees the cut the upstream made, not a clean end
                error = f"the upstream broke off mid-body: {_reason(exc)}"
                self._end(xid, "upstream-error", error)
                return
            # said before the last message: once the response is complete, the
            # disconnect watcher returns too, and must find the exchange ended
            later.call(self._copy, xid, copy, None, time.monotonic())
            self._end(xid, "eof", None)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            # the client went away mid-body: what the copy holds back still goes to the flow
            later.call(self._copy, xid, copy, None, time.monotonic())
            await response.aclose()


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _respond(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


# -- the server -------------------------------------------------------------------


class _QuietAborts(logging.Filter):
    """An unfinished response is how the proxy passes on an upstream's cut; not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "without completing response" not in record.getMessage()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or OSError with the reason (address in use, unknown host)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family = infos[0][0]
    sock = socket.create_server(infos[0][4][:2], family=family, reuse_port=False)
    sock.setblocking(False)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class ProxyServer:
    """uvicorn serving a :class:`ProxyApp`: on this event loop, or on a thread of its own.

    ``log`` receives uvicorn's warnings and errors as lines (the default
    writes them to the ``fraglens.proxy`` logger); the TUI shows them instead
    of letting them scribble over the screen.
    """

    def __init__(
        self,
        app: ProxyApp,
        host: str = "127.0.0.1",
        port: int = 8788,
        log: Callable[[str], None] | None = None,
        sock: socket.socket | None = None,
    ) -> None:
        self.app = app
        self.sock = sock if sock is not None else bind(host, port)
        self.host, self.port = self.sock.getsockname()[:2]
        config = uvicorn.Config(
            app,
            lifespan="on",
            # WebSocket upgrades are relayed (ws_relay.py): no compression and no
            # pings of the proxy's own, and messages as large as a request body
            ws="websockets-sansio",
            ws_per_message_deflate=False,
            ws_ping_interval=None,
            ws_max_size=app.limits.max_body,
            proxy_headers=False,
            log_config=None,
            access_log=False,
            # the upstream's Date and Server headers pass through; none are added
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        self.server = uvicorn.Server(config)
        self._log = log
        self._thread: threading.Thread | None = None
        self._handler: logging.Handler | None = None

    @property
    def url(self) -> str:
        return url_of(self.sock)

    @property
    def upstream(self) -> httpx.URL:
        return self.app.upstream

    @property
    def record_dir(self) -> Path | None:
        return self.app.record_dir

    def _install_logging(self) -> None:
        logger = logging.getLogger("uvicorn.error")
        log = self._log or (lambda line: _LOG.warning("%s", line))

        class _Forward(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                text = record.getMessage()
                if record.exc_info and record.exc_info[1] is not None:
                    text += f": {_reason(record.exc_info[1])}"
                log(text)

        handler = _Forward(logging.WARNING)
        handler.addFilter(_QuietAborts())
        logger.addHandler(handler)
        logger.propagate = False
        self._handler = handler

    def _remove_logging(self) -> None:
        if self._handler is not None:
            logging.getLogger("uvicorn.error").removeHandler(self._handler)
            self._handler = None

    async def serve(self) -> None:
        """Run until stopped (Ctrl-C in the main thread, or :meth:`stop`)."""
        self._install_logging()
        try:
            await self.server.serve(sockets=[self.sock])
        finally:
            self._remove_logging()

    def start(self, timeout: float = 10.0) -> ProxyServer:
        """Serve on a thread; return once the socket accepts connections."""
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.serve()), name="fraglens-proxy", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the proxy server did not start")
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self.server.force_exit = True
                self._thread.join(timeout)
            self._thread = None
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
