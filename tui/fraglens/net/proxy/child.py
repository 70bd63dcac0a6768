"""Forwarding in a process of its own; flows, the engine and the app in this one.

``fraglens proxy`` binds the listening socket itself, then starts this module
as a child process on that socket (``python -m fraglens.net.proxy.child``). The
child runs ``ProxyApp`` on uvicorn and nothing else: it forwards, and writes
what happened to its stdout as JSON lines (:class:`PipeSink`), never blocking
on them (asyncio buffers a pipe the parent reads late). The parent reads them
on a thread (:class:`ChildProxy`) into a ``StoreSink``. So no engine work, no
recording write and no repaint shares a process, or a GIL, with the bytes the
user's app is waiting for: measured, the app in the same process added
10-20 ms per event at the median, and far more at p95 (``bench/proxy.py``).

The lines, one JSON object each (headers already redacted by the child)::

    {"x": 1, "open": {"method", "path", "url", "headers", "body64", "started", "t0",
                      "unscrubbed", "secrets"}}
    {"x": 1, "response": {"status", "headers", "at"}}
    {"x": 1, "at": 12.5, "b64": "...", "n": 512}        the body's copy; n bytes forwarded
    {"x": 1, "at": 12.6, "stopped": "..."}              the copy stopped, and why
    {"x": 1, "end": "eof", "error": null, "at": 13.0}
    {"log": "..."}                                      uvicorn's warnings

and for a WebSocket connection (``ws_relay.py``), the same id throughout::

    {"x": 2, "ws": "open", "path", "url", "headers", "started", "t0", "unscrubbed"}
    {"x": 2, "ws": "handshake", "status": 101, "headers", "at"}
    {"x": 2, "ws": "message", "from": "client", "text": "..." | "b64": "...", "at"}
    {"x": 2, "ws": "refused", "from": "server", "size": 20000000, "reason", "at"}
    {"x": 2, "ws": "close", "code": 1000, "reason": "", "from": "server", "at"}
    {"x": 2, "end": "eof", "error": null, "at": 13.0}

No key crosses the pipe: the child redacts headers and URLs by name and
scrubs every value the request's credentials had out of what it reports (the
request's path, headers and body, the response headers, the body's copy:
``decoded.py``); ``unscrubbed`` names the credentials too short to scrub, for
the flow to say so, and ``secrets`` carries their fingerprints
(``redact.Fingerprints``), with which a report finds and scrubs a key the
response streamed in pieces without ever holding it.

The child stops when its stdin closes (the parent quit or died), or on SIGINT
or SIGTERM (uvicorn's graceful shutdown, then exit 0, as on SIGINT).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ...redact import Fingerprints, redact_headers
from ..limits import DEFAULT_LIMITS, Limits, mib
from .flows import FlowStore
from .sink import Opened, StoreSink

__all__ = ["ChildProxy", "PipeSink"]


# -- the child -------------------------------------------------------------------------


#: where the parent puts the upstream for the child (its argv would show a key to ps)
UPSTREAM_ENV = "FRAGLENS_PROXY_UPSTREAM"


class PipeSink:
    """A FlowSink that writes each fact as a JSON line to a non-blocking writer.

    The writer (an asyncio pipe transport) buffers what the parent has not read
    yet. The parent's flows work runs at a lower priority, so on a busy machine
    it lags; past ``max_backlog`` buffered bytes, the exchanges still streaming
    stop sending their body's copy (each says so once, as a ``stopped`` fact),
    so that memory stays bounded and forwarding is never held up.

    With ``schedule`` (the loop's ``call_soon``), the lines of one turn of the
    loop are joined and written once, on the next turn: one write to the pipe
    for the reads of many streams, not one each.
    """

    def __init__(
        self,
        write: Any,
        backlog: Callable[[], int] = lambda: 0,
        max_backlog: int = DEFAULT_LIMITS.max_backlog,
        schedule: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        self._write = write
        self._backlog = backlog
        self._max_backlog = max_backlog
        self._schedule = schedule
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        #: exchanges whose body is no longer sent: the parent fell behind
        self._behind: set[int] = set()

    def _put(self, line: bytes) -> None:
        if self._schedule is None:
            self._write(line)
            return
        self._pending.append(line)
        self._pending_bytes += len(line)
        if len(self._pending) == 1:
            self._schedule(self.flush)

    def flush(self) -> None:
        """Write the lines held for this turn (also once at the end)."""
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            self._write(data)

    def _line(self, obj: dict[str, Any]) -> None:
        self._put(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def opened(self, x: Opened) -> None:
        self._line(
            {
                "x": x.id,
                "open": {
                    "method": x.method,
                    "path": x.path,
                    "url": x.url,
                    "headers": x.headers,
                    "body64": base64.b64encode(x.body).decode("ascii"),
                    "started": x.started,
                    "t0": x.t0,
                    "unscrubbed": x.unscrubbed,
                    "secrets": x.secrets.as_json() if x.secrets else None,
                },
            }
        )

    def response(self, id: int, status: int, headers: list[tuple[str, str]], at: float) -> None:
        shown = list(redact_headers(headers).items())
        self._line({"x": id, "response": {"status": status, "headers": shown, "at": at}})

    def body(self, id: int, data: bytes, received: int, at: float) -> None:
        if id in self._behind:
            return
        if self._backlog() + self._pending_bytes > self._max_backlog:
            self._behind.add(id)
            behind = mib(self._max_backlog)
            self.stopped(
                id, f"the flows fell {behind} behind the forwarding: not decoded further", at
            )
            return
        # the one line per network read: built by hand, as json.dumps would write it
        # (ints, a float's repr and base64 need no escaping), at a third of its cost
        b64 = base64.b64encode(data)
        self._put(b'{"x":%d,"at":%r,"b64":"%s","n":%d}\n' % (id, at, b64, received))

    def stopped(self, id: int, reason: str, at: float) -> None:
        self._line({"x": id, "at": at, "stopped": reason})

    def ended(self, id: int, how: str, error: str | None, at: float) -> None:
        self._behind.discard(id)
        self._line({"x": id, "end": how, "error": error, "at": at})

    def ws_opened(self, id: int, path: str, url: str, headers: list[tuple[str, str]],
                  started: float, t0: float, unscrubbed: list[str]) -> None:
        self._line({"x": id, "ws": "open", "path": path, "url": url, "headers": headers,
                    "started": started, "t0": t0, "unscrubbed": unscrubbed})

    def ws_handshake(self, id: int, status: int, headers: list[tuple[str, str]],
                     at: float) -> None:
        shown = list(redact_headers(headers).items())
        self._line({"x": id, "ws": "handshake", "status": status, "headers": shown, "at": at})

    def ws_message(self, id: int, sender: str, data: str | bytes, at: float) -> None:
        if self._backlog() + self._pending_bytes > self._max_backlog:
            size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8"))
            behind = mib(self._max_backlog)
            self.ws_refused(id, sender, size, f"the flows fell {behind} behind the "
                            "forwarding: passed on, not decoded", at)
            return
        line: dict[str, Any] = {"x": id, "ws": "message", "from": sender, "at": at}
        if isinstance(data, str):
            line["text"] = data
        else:
            line["b64"] = base64.b64encode(data).decode("ascii")
        self._line(line)

    def ws_refused(self, id: int, sender: str, size: int, reason: str, at: float) -> None:
        self._line({"x": id, "ws": "refused", "from": sender, "size": size, "reason": reason,
                    "at": at})

    def ws_close(self, id: int, code: int, reason: str, sender: str, at: float) -> None:
        self._line({"x": id, "ws": "close", "code": code, "reason": reason, "from": sender,
                    "at": at})


async def _child_main(fd: int, upstream: str, limits: Limits) -> None:
    from .server import ProxyApp, ProxyServer

    loop = asyncio.get_running_loop()
    pipe = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    # stdout is the protocol: nothing else may print there
    sys.stdout = sys.stderr
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, pipe)
    sink = PipeSink(out.write, out.get_write_buffer_size, limits.max_backlog, loop.call_soon)
    sock = socket.socket(fileno=fd)
    sock.setblocking(False)

    def log(line: str) -> None:
        sink._line({"log": line})

    app = ProxyApp(upstream, sink=sink, limits=limits, log=log)
    server = ProxyServer(app, sock=sock, log=log)

    # the parent closing our stdin is the signal to stop
    stdin_closed = asyncio.Event()

    class _Watch(asyncio.Protocol):
        def connection_lost(self, exc: Exception | None) -> None:
            stdin_closed.set()

    await loop.connect_read_pipe(_Watch, os.fdopen(sys.stdin.fileno(), "rb"))

    async def stop_when_told() -> None:
        await stdin_closed.wait()
        server.server.should_exit = True

    watcher = asyncio.ensure_future(stop_when_told())
    try:
        await server.serve()
    finally:
        watcher.cancel()
        sink.flush()
        out.close()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def child_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fraglens.net.proxy.child")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--upstream", default=os.environ.get(UPSTREAM_ENV))
    parser.add_argument("--max-body-bytes", type=int, default=DEFAULT_LIMITS.max_body)
    parser.add_argument("--max-decoded-bytes", type=int, default=DEFAULT_LIMITS.max_decoded)
    parser.add_argument("--max-backlog-bytes", type=int, default=DEFAULT_LIMITS.max_backlog)
    # a WebSocket message past it is passed on but not copied to the flows
    parser.add_argument("--max-line-bytes", type=int, default=DEFAULT_LIMITS.max_line)
    args = parser.parse_args(argv)
    if not args.upstream:
        parser.error(f"--upstream (or ${UPSTREAM_ENV}) is required")
    # uvicorn stops gracefully on SIGTERM as on SIGINT, then raises the signal
    # again once its own handler is gone: here that is a KeyboardInterrupt too,
    # so the pipe is closed and the exit is 0, not death by SIGTERM
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        limits = Limits(
            max_body=args.max_body_bytes,
            max_decoded=args.max_decoded_bytes,
            max_line=args.max_line_bytes,
            max_backlog=args.max_backlog_bytes,
        )
        asyncio.run(_child_main(args.fd, args.upstream, limits))
    except KeyboardInterrupt:
        pass
    return 0


# -- the parent --------------------------------------------------------------------------

#: how much lower than the forwarding the flows' thread runs (0 normal, 19 lowest)
_FLOWS_NICENESS = 10


class ChildProxy:
    """The forwarding process, and the thread that turns its lines into flows.

    Created with the listening socket already bound (so "address in use" is
    the parent's clean error, and port 0 works); the socket accepts
    connections from then on, queued until the child serves them.
    """

    def __init__(
        self,
        upstream: str,
        store: FlowStore,
        *,
        sock: socket.socket,
        record_dir: Path | None = None,
        log: Any = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        from .server import parse_upstream, url_of

        self.upstream = parse_upstream(upstream)
        self.sock = sock
        self.url = url_of(sock)
        self.port: int = sock.getsockname()[1]
        self.store = store
        self.record_dir = record_dir
        self.limits = limits
        self.sink = StoreSink(store, record_dir, limits)
        self.log = log or (lambda line: print(f"fraglens proxy: {line}", file=sys.stderr))
        self.proc: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = False

    def start(self) -> ChildProxy:
        fd = self.sock.fileno()
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        # not on the command line, which every user of the machine can list (ps): the
        # upstream may carry a password or a key
        env[UPSTREAM_ENV] = str(self.upstream)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fraglens.net.proxy.child", "--fd", str(fd),
             "--max-body-bytes", str(self.limits.max_body),
             "--max-decoded-bytes", str(self.limits.max_decoded),
             "--max-line-bytes", str(self.limits.max_line),
             "--max-backlog-bytes", str(self.limits.max_backlog)],
            pass_fds=(fd,),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            # Ctrl-C in the terminal is the parent's to handle: it stops the child
            start_new_session=True,
        )  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for target, stream in ((self._read, self.proc.stdout), (self._errors, self.proc.stderr)):
            thread = threading.Thread(target=target, args=(stream,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def _read(self, stream: IO[bytes]) -> None:
        # The flows' work (the engine, recordings) yields the CPU to the forwarding
        # process: on a busy machine the flows lag, the client's bytes do not. Linux
        # sets niceness per thread; elsewhere this is the whole process, or nothing.
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _FLOWS_NICENESS)
        sink = self.sink
        for line in stream:
            try:
                self._apply(sink, json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                self.log(f"unreadable line from the forwarding process: {exc}")
        sink.abandon_all(time.monotonic())
        if not self._stopping:
            self.log("the forwarding process stopped: requests are no longer served")

    def _apply(self, sink: StoreSink, obj: dict[str, Any]) -> None:
        if "log" in obj:
            self.log(str(obj["log"]))
            return
        xid = obj["x"]
        if "ws" in obj:
            self._apply_ws(sink, xid, obj)
        elif "b64" in obj:
            sink.body(xid, base64.b64decode(obj["b64"]), obj["n"], obj["at"])
        elif "stopped" in obj:
            sink.stopped(xid, str(obj["stopped"]), obj["at"])
        elif "response" in obj:
            r = obj["response"]
            headers = [(str(n), str(v)) for n, v in r["headers"]]
            sink.response(xid, r["status"], headers, r["at"])
        elif "open" in obj:
            o = obj["open"]
            sink.opened(
                Opened(
                    id=xid,
                    method=o["method"],
                    path=o["path"],
                    url=o["url"],
                    headers=[(str(n), str(v)) for n, v in o["headers"]],
                    body=base64.b64decode(o["body64"]),
                    started=o["started"],
                    t0=o["t0"],
                    unscrubbed=[str(w) for w in o.get("unscrubbed", ())],
                    secrets=Fingerprints.from_json(o.get("secrets")),
                )
            )
        elif "end" in obj:
            sink.ended(xid, obj["end"], obj.get("error"), obj["at"])

    @staticmethod
    def _apply_ws(sink: StoreSink, xid: int, obj: dict[str, Any]) -> None:
        kind = obj["ws"]
        if kind == "message":
            data = obj["text"] if "text" in obj else base64.b64decode(obj["b64"])
            sink.ws_message(xid, str(obj["from"]), data, obj["at"])
        elif kind == "open":
            sink.ws_opened(xid, str(obj["path"]), str(obj["url"]),
                           [(str(n), str(v)) for n, v in obj["headers"]], obj["started"],
                           obj["t0"], [str(w) for w in obj.get("unscrubbed", ())])
        elif kind == "handshake":
            sink.ws_handshake(xid, obj["status"], [(str(n), str(v)) for n, v in obj["headers"]],
                              obj["at"])
        elif kind == "refused":
            sink.ws_refused(xid, str(obj["from"]), obj["size"], str(obj["reason"]), obj["at"])
        elif kind == "close":
            sink.ws_close(xid, obj["code"], str(obj["reason"]), str(obj["from"]), obj["at"])

    def _errors(self, stream: IO[bytes]) -> None:
        for line in stream:
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self.log(text)

    def wait(self) -> int:
        """Until the child exits (headless: the main thread waits here)."""
        assert self.proc is not None
        code = self.proc.wait()
        for thread in self._threads:
            thread.join()
        return code

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the child to stop (it finishes what is in flight), then make sure."""
        proc = self.proc
        if proc is None:
            return
        self._stopping = True
        if proc.stdin is not None and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for thread in self._threads:
            thread.join(timeout)
        self.sock.close()
        self.proc = None

    def __enter__(self) -> ChildProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    raise SystemExit(child_main())
