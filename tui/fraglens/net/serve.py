"""``fraglens serve``: an OpenAI/Anthropic/Responses-compatible upstream replaying captures.

A plain ASGI application (:class:`ReplayApp`) served by uvicorn — HTTP parsing,
chunked encoding and connection handling are uvicorn's and h11's, not ours.
Every POST is answered by replaying one of the loaded captures as a real
stream (``text/event-stream``; ``application/x-ndjson`` for Ollama's native
API; ``application/vnd.amazon.eventstream`` for a Bedrock capture): the
captures of the model the request names, when some were recorded with it (so
one server stands for several backends behind one key, as ``fraglens
compare`` needs); else the captures whose wire format matches the path
(``/chat/completions``, ``/messages``, ``/responses``, ``/api/chat``,
Bedrock's ``/model/{modelId}/converse-stream`` and
``/model/{modelId}/invoke-with-response-stream``); else
all of them, round-robin in each case. A recorded WebSocket connection is
replayed to WebSocket clients on ``/v1/responses`` and ``/v1/realtime``
(``ws_serve.py``), each ``response.create`` answered with the next recorded
response. ``GET /v1/models`` lists the
recorded models. A request to one of those endpoints whose JSON body
says ``"stream": false`` gets HTTP 400 in its provider's error shape rather
than an event stream its client would not parse; a body without ``stream``
(curl, a quick test) is streamed to, as before. What to send and when comes
from :mod:`fraglens.net.replay`; this module sleeps and writes.

:func:`start_server` runs it in a background thread on a socket it binds
itself (port 0: a free one), for tests and for tools that embed it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any

import uvicorn

from ..engine.plural import counted
from .bedrock import format_for_bedrock_path
from .replay import (
    EVENTSTREAM_TYPE,
    JSON_TYPE,
    NDJSON_TYPE,
    NO_CHAOS,
    RECORDED_PACE,
    Chaos,
    Pace,
    Source,
    load_source,
    plan,
)
from .request import EVENTSTREAM_FORMATS
from .request import format_for_path as _format_for_api_path

__all__ = ["ReplayApp", "ServerHandle", "error_body", "make_server", "start_server"]

Log = Callable[[str], None]
_MAX_REQUEST = 32 * 1024 * 1024

# uvicorn's own words for a response that never completed: that is exactly what
# --drop-after asks for, and the server logs its own line about it
_EXPECTED_UVICORN_ERRORS = ("ASGI callable returned without completing response",)


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_EXPECTED_UVICORN_ERRORS)


#: status -> (Anthropic error type, OpenAI error type, OpenAI error code)
_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request_error", None),
    401: ("authentication_error", "invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "invalid_request_error", "permission_denied"),
    404: ("not_found_error", "invalid_request_error", "model_not_found"),
    413: ("request_too_large", "invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_error", "rate_limit_exceeded"),
    500: ("api_error", "server_error", None),
    502: ("api_error", "server_error", None),
    503: ("overloaded_error", "server_error", "service_unavailable"),
    529: ("overloaded_error", "server_error", "overloaded"),
}


def error_body(
    status: int, format: str | None, message: str | None = None, *, param: str | None = None
) -> dict[str, Any]:
    """A JSON error body in the shape the provider of ``format`` uses; ``param`` names
    the offending request field (OpenAI's shape has a place for it, Anthropic's none)."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    message = message or f"fraglens serve: simulated HTTP {status} ({phrase})"
    default = (
        ("api_error", "server_error", None)
        if status >= 500
        else ("invalid_request_error", "invalid_request_error", None)
    )
    anthropic_type, openai_type, code = _ERROR_TYPES.get(status, default)
    if format == "anthropic":
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    if format == "ollama":
        return {"error": message}
    if format in EVENTSTREAM_FORMATS:
        return {"message": message}  # AWS's JSON error body
    return {"error": {"message": message, "type": openai_type, "param": param, "code": code}}


def format_for_path(path: str) -> str | None:
    """The wire format a request's path implies: an API endpoint, or one of
    Bedrock's two streaming operations (``/model/{modelId}/converse-stream``)."""
    return _format_for_api_path(path) or format_for_bedrock_path(path)


_NOT_STREAMED = 'fraglens serve replays recorded streams: the request must set "stream": true'


class ReplayApp:
    """The ASGI application: replays ``sources`` with ``chaos`` at ``pace``."""

    def __init__(
        self,
        sources: Sequence[Source],
        chaos: Chaos = NO_CHAOS,
        pace: Pace = RECORDED_PACE,
        log: Log | None = None,
        answer_nonstream: bool = False,
    ) -> None:
        """``answer_nonstream``: answer ``"stream": false`` with the body the
        provider sends without streaming, made from the capture
        (``net/nonstream.py``), where HTTP 400 is the default."""
        if not sources:
            raise ValueError("nothing to replay: give at least one capture")
        self.sources = list(sources)
        self.chaos = chaos
        self.answer_nonstream = answer_nonstream
        self._odds = random.Random(chaos.odds_seed)
        #: each source's non-streamed answer per endpoint format, made once
        self._answers: dict[tuple[int, str], dict[str, Any] | None] = {}
        self.pace = pace
        self.log = log or (lambda line: None)
        self.requests = 0
        self._rotations: dict[str | None, itertools.cycle[Source]] = {}
        self._lock = threading.Lock()
        # set from the server thread's loop: streams in flight end early on stop
        self._gone_events: set[asyncio.Event] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- choosing ------------------------------------------------------------------------
    def pick(self, path: str, model: str | None = None) -> Source:
        """The capture that answers: one recorded with ``model``, else one in the
        path's wire format, else any, round-robin among them. A recorded
        WebSocket connection answers only WebSocket connections."""
        sources = [s for s in self.sources if s.websocket is None] or self.sources
        by_model = [s for s in sources if s.model == model] if model else []
        fmt = format_for_path(path)
        by_format = [s for s in sources if s.format == fmt] if fmt and not by_model else []
        key = f"model:{model}" if by_model else fmt if by_format else None
        with self._lock:
            if key not in self._rotations:
                self._rotations[key] = itertools.cycle(by_model or by_format or sources)
            return next(self._rotations[key])

    def pick_websocket(self, path: str) -> Source | None:
        """The recorded connection that answers a WebSocket one: one in the
        path's wire format, else any, round-robin; None when none is loaded."""
        from .ws_serve import ws_format_for_path

        sources = [s for s in self.sources if s.websocket is not None]
        fmt = ws_format_for_path(path)
        by_format = [s for s in sources if s.format == fmt]
        key = f"websocket:{fmt if by_format else None}"
        if not sources:
            return None
        with self._lock:
            if key not in self._rotations:
                self._rotations[key] = itertools.cycle(by_format or sources)
            return next(self._rotations[key])

    def abort_all(self) -> None:
        """End every stream in flight (from any thread): the server is stopping."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        for gone in list(self._gone_events):
            loop.call_soon_threadsafe(gone.set)

    # -- ASGI ------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] == "websocket":
            from .ws_serve import serve_websocket

            self.requests += 1
            # the chaos for this connection: all of it, or none when the odds spare it
            await serve_websocket(scope, receive, send, self.pick_websocket,
                                  self._chaos_now(), self.pace, self.log)
            return
        if scope["type"] != "http":
            return
        self._loop = asyncio.get_running_loop()
        method, path = scope["method"], scope["path"]
        if method == "GET" and path.rstrip("/").endswith("/models"):
            await _send_json(send, 200, self._models())
            return
        if method == "GET" and path in ("/", "/v1", "/v1/"):
            await _send_json(send, 200, {"fraglens": "serve", "captures": self._names()})
            return
        if method != "POST":
            body = error_body(405, format_for_path(path), f"{method} {path}: POST a request")
            await _send_json(send, 405, body)
            return
        request = await _read_request(receive)
        if request is None:
            await _send_json(send, 413, error_body(413, format_for_path(path)))
            return
        self.requests += 1
        source = self.pick(path, _requested_model(request))
        if source.websocket is not None:
            message = f"POST {path}: every capture served here is a WebSocket connection"
            self.log(f"{message} -> HTTP 404")
            await _send_json(send, 404, error_body(404, format_for_path(path), message))
            return
        chaos = self._chaos_now()
        if chaos.http_error is not None:
            status = chaos.http_error
            shape = format_for_path(path) or source.format
            self.log(f"POST {path} -> HTTP {status} (chaos), in the shape of {shape}")
            await _send_json(send, status, error_body(status, shape))
            return
        fmt = format_for_path(path)
        if fmt is not None and _is_stream(source) and _asks_no_stream(request):
            answer = self._answer(source, fmt) if self.answer_nonstream else None
            if answer is not None:
                self.log(f"POST {path} -> {source.name}: answered without streaming")
                await _send_json(send, 200, answer)
                return
            # an SDK's non-stream path would get SSE and fail somewhere deep in
            # its JSON parsing: say plainly what to change instead
            self.log(f'POST {path} -> HTTP 400: "stream": false, and {source.name} is a stream')
            await _send_json(send, 400, error_body(400, fmt, _NOT_STREAMED, param="stream"))
            return
        await self._replay(source, path, receive, send, chaos)

    def _chaos_now(self) -> Chaos:
        """The chaos for this request: all of it, or none on the requests the
        odds spare."""
        if self.chaos.odds >= 1.0:
            return self.chaos
        with self._lock:
            hit = self._odds.random() < self.chaos.odds
        return self.chaos if hit else NO_CHAOS

    def _answer(self, source: Source, fmt: str) -> dict[str, Any] | None:
        from .nonstream import answer_body

        key = (id(source), fmt)
        if key not in self._answers:
            self._answers[key] = answer_body(source, fmt)
        return self._answers[key]

    async def _replay(
        self, source: Source, path: str, receive: Any, send: Any, chaos: Chaos
    ) -> None:
        steps = plan(source, chaos, self.pace)
        gone = asyncio.Event()
        self._gone_events.add(gone)
        watcher = asyncio.ensure_future(_watch_disconnect(receive, gone))
        sent = 0
        try:
            headers = [
                (b"content-type", source.content_type.encode("latin-1")),
                (b"cache-control", b"no-cache"),
                (b"x-fraglens-capture", source.name.encode("utf-8", "replace")[:200]),
            ]
            headers += [
                (k.encode("latin-1"), str(v).encode("latin-1", "replace"))
                for k, v in source.headers.items()
            ]
            await send({"type": "http.response.start", "status": source.status, "headers": headers})
            start = time.monotonic()
            for write in steps.writes:
                if await _pause(start + write.at - time.monotonic(), gone):
                    break
                if write.data:
                    await send(
                        {"type": "http.response.body", "body": write.data, "more_body": True}
                    )
                sent = write.events_done
                if write.pause and await _pause(write.pause, gone):
                    break
            if gone.is_set():
                self.log(
                    f"POST {path} -> {source.name}: the client left after {counted(sent, 'event')}"
                )
                return
            if steps.drop:
                # returning without the last body message: uvicorn closes the
                # connection without the chunked terminator, a cut-off stream
                self.log(
                    f"POST {path} -> {source.name}: dropped the connection after "
                    f"{sent} of {counted(source.events, 'event')}"
                )
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            self.log(f"POST {path} -> {source.name}: {counted(sent, 'event')}, {chaos.describe()}")
        except OSError:
            self.log(
                f"POST {path} -> {source.name}: the connection broke after {counted(sent, 'event')}"
            )
        finally:
            watcher.cancel()
            self._gone_events.discard(gone)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _names(self) -> list[dict[str, Any]]:
        return [{"name": s.name, "format": s.format, "events": s.events} for s in self.sources]

    def _models(self) -> dict[str, Any]:
        names = sorted({s.model for s in self.sources if s.model}) or ["fraglens-replay"]
        return {
            "object": "list",
            "data": [
                {"id": n, "object": "model", "created": 0, "owned_by": "fraglens"} for n in names
            ],
        }


async def _read_request(receive: Any) -> bytes | None:
    """Read the request body; None if it is absurdly large."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(parts)
        part = message.get("body", b"")
        size += len(part)
        if size > _MAX_REQUEST:
            return None
        parts.append(part)
        if not message.get("more_body"):
            return b"".join(parts)


def _asks_no_stream(body: bytes) -> bool:
    """Whether the request body is a JSON object with ``"stream": false``.

    Only an explicit false: a body without ``stream``, or one that is not JSON,
    is replayed to as it always was (curl and the tests post ``{}``)."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and doc.get("stream") is False


def _requested_model(body: bytes) -> str | None:
    """The ``model`` a JSON request body names, if any."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return None
    model = doc.get("model") if isinstance(doc, dict) else None
    return model if isinstance(model, str) and model else None


def _is_stream(source: Source) -> bool:
    """Whether replaying ``source`` sends an event stream (not a JSON body or an error)."""
    return 200 <= source.status < 300 and source.content_type.lower().startswith(
        ("text/event-stream", NDJSON_TYPE, EVENTSTREAM_TYPE)
    )


async def _watch_disconnect(receive: Any, gone: asyncio.Event) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


async def _pause(seconds: float, gone: asyncio.Event) -> bool:
    """Sleep, unless the client leaves first; True if it left."""
    if gone.is_set():
        return True
    if seconds <= 0:
        await asyncio.sleep(0)
        return gone.is_set()
    try:
        await asyncio.wait_for(gone.wait(), seconds)
    except asyncio.TimeoutError:
        return False
    return True


async def _send_json(send: Any, status: int, doc: Any) -> None:
    body = json.dumps(doc).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", JSON_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- running ------------------------------------------------------------------------------


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free one. OSError when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def make_server(app: Any) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        access_log=False,
        # a stalled stream must not keep a stopping server waiting long
        timeout_graceful_shutdown=2,
    )
    logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
    return uvicorn.Server(config)


class ServerHandle:
    """A running server in a background thread: ``url``, ``stop()``; a context manager."""

    def __init__(self, app: Any, sock: socket.socket) -> None:
        self.app = app
        self.url = url_of(sock)
        self.port = sock.getsockname()[1]
        self._sock = sock
        self._server = make_server(app)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="fraglens-serve", daemon=True
        )

    def start(self, timeout: float = 10.0) -> ServerHandle:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._sock.close()
                raise RuntimeError("fraglens serve did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        abort = getattr(self.app, "abort_all", None)
        if abort is not None:
            abort()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    captures: Sequence[str | Source],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    chaos: Chaos = NO_CHAOS,
    pace: Pace = RECORDED_PACE,
    log: Log | None = None,
    answer_nonstream: bool = False,
) -> ServerHandle:
    """Serve ``captures`` (paths or loaded sources) in a background thread; returns once
    the server accepts connections. Stop it with ``handle.stop()`` or ``with``."""
    sources = [c if isinstance(c, Source) else load_source(c) for c in captures]
    app = ReplayApp(sources, chaos, pace, log, answer_nonstream=answer_nonstream)
    return ServerHandle(app, bind(host, port)).start()
