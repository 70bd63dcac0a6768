"""Proxy benchmark: what ``fraglens proxy`` adds to each stream and each event, on loopback.

    .venv/bin/python bench/proxy.py            # the figures in docs/benchmarks.md
    .venv/bin/python bench/proxy.py --more     # and --record-dir, the app open
    .venv/bin/python bench/proxy.py --quick    # smaller, for a smoke run

Real processes, as in real use: an upstream (uvicorn, this file with
``--upstream``) that streams Chat Completions chunks carrying tool-call
fragments at a steady pace, each stamped with the monotonic clock when it was
written; ``fraglens proxy --headless`` in front of it (which forwards in a
child process of its own); and this process as the client, reading with httpx
and stamping each event when its last byte arrives. CLOCK_MONOTONIC is one
clock for every process of the machine, so ``received - sent`` is the event's
latency. The same events are read directly from the upstream and through the
proxy, alternating runs, so both see the same machine. Per configuration it
prints the median time per stream (request sent to last byte), direct and
through the proxy side by side, and their ratio; and the latency the proxy
adds per event (the difference of the medians and of the 95th percentiles).
``--more`` adds one client with ``--record-dir`` on, with the app open
(Textual headless, the newest flow open in the three panes while it streams),
and, for comparison, with the app open and the forwarding on a thread of the
app's process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# -- the upstream (a separate process) ----------------------------------------------


def run_upstream(port: int, events: int, interval: float) -> None:
    import uvicorn

    def chunk(i: int) -> bytes:
        if i == 0:
            tool = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "write_file", "arguments": ""}}  # fmt: skip
        else:
            tool = {"index": 0, "function": {"arguments": f'"line {i}: some text", '}}
        doc = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "bench",
            "sent": time.monotonic_ns(),
            "choices": [{"index": 0, "delta": {"tool_calls": [tool]}, "finish_reason": None}],
        }
        return b"data: " + json.dumps(doc).encode() + b"\n\n"

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        start = time.monotonic()
        for i in range(events):
            # a steady pace, not "sleep after each": the schedule does not drift
            delay = start + i * interval - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            await send({"type": "http.response.body", "body": chunk(i), "more_body": True})
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


# -- the proxy with the app open (a separate process) ---------------------------------


def run_proxy_with_app(port: int, upstream: str, same_process: bool) -> None:
    """The proxy as ``fraglens proxy`` runs it with the app: forwarding in a child
    process, the Textual app (headless: rendered, not displayed) in this one, with
    the newest flow opened in the panes while it streams, as a user watching
    would. ``same_process``: forwarding on a thread of this process instead, the
    design the child replaced."""
    from fraglens.app.screens.flows import ProxyFlowsApp
    from fraglens.net.proxy.child import ChildProxy
    from fraglens.net.proxy.flows import FlowStore
    from fraglens.net.proxy.server import ProxyApp, ProxyServer, bind

    store = FlowStore()
    sock = bind("127.0.0.1", port)
    if same_process:
        server: Any = ProxyServer(ProxyApp(upstream, store), sock=sock)
    else:
        server = ChildProxy(upstream, store, sock=sock)
    server.start()
    app = ProxyFlowsApp(store)

    def watch_newest() -> None:
        flow = store.flows[-1] if store.flows else None
        if flow is not None and not flow.finished and app.shown is not flow:
            app.open_flow(flow.number)

    app.call_later(lambda: app.set_interval(0.1, watch_newest))
    try:
        app.run(headless=True, size=(160, 48))
    finally:
        server.stop()


# -- the client ------------------------------------------------------------------------


async def read_stream(client: Any, url: str) -> tuple[list[float], float]:
    """(milliseconds from each event's write upstream to its arrival here, milliseconds
    from the request to the stream's last byte)."""
    out: list[float] = []
    buffer = b""
    body = {"model": "bench", "stream": True, "messages": []}
    start = time.monotonic_ns()
    async with client.stream("POST", url + "/v1/chat/completions", json=body) as response:
        async for part in response.aiter_raw():
            now = time.monotonic_ns()
            buffer += part
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                data = event.removeprefix(b"data: ")
                if data.startswith(b"{"):
                    out.append((now - json.loads(data)["sent"]) / 1e6)
    return out, (time.monotonic_ns() - start) / 1e6


async def run_clients(url: str, clients: int) -> tuple[list[float], list[float]]:
    """Latencies of every event, and the time of each stream, of ``clients`` at once."""
    import httpx

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        results = await asyncio.gather(*(read_stream(client, url) for _ in range(clients)))
    return [x for r, _ in results for x in r], [t for _, t in results]


# -- orchestration ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"a bench process exited early ({proc.args})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def _cpu_ticks(pid: int) -> int:
    """CPU time used so far by ``pid`` and its children (Linux /proc), in clock ticks."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            total += _cpu_ticks(int(child))
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return total + int(fields[11]) + int(fields[12])  # utime, stime


def wait_idle(pid: int, quiet: float = 0.3, limit: float = 60.0) -> None:
    """Until ``pid`` (the proxy, with its forwarding child) has used no CPU for ``quiet``
    seconds: the flows' decoding lags the forwarding, and its tail must not run
    during the next round. Bounded by ``limit``; a no-op where /proc is missing."""
    if not Path(f"/proc/{pid}/stat").exists():
        return
    deadline = time.monotonic() + limit
    last = _cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = _cpu_ticks(pid)
        if now == last:
            return
        last = now


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[-1]


def measure(
    events: int,
    interval: float,
    runs: int,
    clients: int,
    record: bool = False,
    app: str | None = None,
) -> dict:
    """``app``: None (headless), "child" (the app open, forwarding in a child
    process: what the command runs) or "same" (forwarding on a thread of the
    app's process)."""
    up_port, px_port = free_port(), free_port()
    python = sys.executable
    upstream = subprocess.Popen(
        [python, __file__, "--upstream", str(up_port), "--events", str(events),
         "--interval", str(interval)],
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        target = f"http://127.0.0.1:{up_port}/v1"
        if app:
            args = [python, __file__, "--proxy-app", str(px_port), "--target", target]
            if app == "same":
                args.append("--same-process")
        else:
            args = [python, "-m", "fraglens", "proxy", "--upstream", target,
                    "--port", str(px_port), "--headless"]  # fmt: skip
        if record:
            args += ["--record-dir", tmp]
        proxy = subprocess.Popen(
            args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")),
        )  # fmt: skip
        try:
            wait_port(up_port, upstream)
            wait_port(px_port, proxy)
            direct: list[float] = []
            through: list[float] = []
            direct_streams: list[float] = []
            proxy_streams: list[float] = []
            asyncio.run(run_clients(f"http://127.0.0.1:{up_port}", 1))  # warm up both paths
            asyncio.run(run_clients(f"http://127.0.0.1:{px_port}", 1))
            for _ in range(runs):
                events, streams = asyncio.run(run_clients(f"http://127.0.0.1:{up_port}", clients))
                direct += events
                direct_streams += streams
                events, streams = asyncio.run(run_clients(f"http://127.0.0.1:{px_port}", clients))
                through += events
                proxy_streams += streams
                wait_idle(proxy.pid)
        finally:
            for proc in (proxy, upstream):
                proc.terminate()
                proc.wait(10)
    return {
        "clients": clients,
        "record": record,
        "app": app,
        "events": len(through),
        "streams": len(proxy_streams),
        "direct_stream": statistics.median(direct_streams),
        "proxy_stream": statistics.median(proxy_streams),
        "ratio": statistics.median(proxy_streams) / statistics.median(direct_streams),
        "direct_median": statistics.median(direct),
        "direct_p95": p95(direct),
        "proxy_median": statistics.median(through),
        "proxy_p95": p95(through),
        "added_median": statistics.median(through) - statistics.median(direct),
        "added_p95": p95(through) - p95(direct),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer events, for a smoke run")
    parser.add_argument("--more", action="store_true", help="also --record-dir and the app open")
    parser.add_argument("--events", type=int, default=200, help="events per stream")
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between events")
    parser.add_argument("--runs", type=int, default=3, help="rounds per configuration")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--upstream", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--proxy-app", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    parser.add_argument("--same-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.upstream:
        run_upstream(args.upstream, args.events, args.interval)
        return
    if args.proxy_app:
        run_proxy_with_app(args.proxy_app, args.target, args.same_process)
        return
    if args.quick:
        args.events, args.runs = 50, 1
    shape = (args.events, args.interval, args.runs)
    rows = [measure(*shape, clients=n) for n in (1, 10, 50)]
    if args.more:
        rows += [
            measure(*shape, clients=1, record=True),
            measure(*shape, clients=1, app="child"),
            measure(*shape, clients=10, app="child"),
            measure(*shape, clients=1, app="same"),
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"fraglens proxy, loopback, {args.events} events per stream every "
          f"{args.interval * 1000:g} ms, {args.runs} rounds each, direct and proxy "
          "alternating (milliseconds)")  # fmt: skip
    print(f"{'configuration':<30} {'streams':>7} {'stream direct/proxy':>20} {'ratio':>6}"
          f" {'event added p50 / p95':>22}")  # fmt: skip
    for r in rows:
        name = f"{r['clients']} stream{'s' if r['clients'] > 1 else ''} at once"
        name += ", --record-dir" if r["record"] else ""
        name += {"child": ", app open", "same": ", app open, 1 process", None: ""}[r["app"]]
        print(
            f"{name:<30} {r['streams']:>7} "
            f"{r['direct_stream']:>9.0f} /{r['proxy_stream']:>9.0f} {r['ratio']:>5.2f}x "
            f"{r['added_median']:>10.2f} / {r['added_p95']:>9.2f}"
        )


if __name__ == "__main__":
    main()
