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

Beside fraglens, mitmproxy (``mitmdump --mode reverse:...`` with
``stream_large_bodies=1``, so that it passes each read on as it comes) when
its ``mitmdump`` is found (``--mitmdump``, beside this Python, or on PATH;
the ``bench`` extra on Python 3.12+, a venv of its own on 3.11). The three
paths run in the same rounds, in a rotating order. Besides provider pacing,
the stress shape: short streams whose bytes arrive in 64-byte reads 2 ms
apart (``--stress-*``), as a fast gateway or a replaying test server sends
them, from a bare asyncio upstream that writes one HTTP chunk per read with
Nagle off. For the stress rows the
bench also reads the CPU time each proxy process used and divides it by the
reads forwarded: the relay's cost per read alone (the forwarding child of
``fraglens proxy``), the flows' (its parent: decoding, the engine), and
mitmdump's. ``/proc/loadavg`` is printed beside every row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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


# -- the stress upstream (a separate process) ---------------------------------------


def stress_body(size: int) -> bytes:
    """Chat Completions chunks of one tool call's arguments, about ``size`` bytes, each
    chunk with an ``obfuscation`` field of varying length as OpenAI sends them."""
    out = []
    i = 0
    total = 0
    while total < size:
        tool: dict[str, Any] = {"index": 0, "function": {"arguments": f'"k{i}": "v{i}", '}}
        if i == 0:
            tool = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "write_file", "arguments": "{"}}  # fmt: skip
        doc = {
            "id": "chatcmpl-stress", "object": "chat.completion.chunk", "created": 1,
            "model": "bench", "obfuscation": "x" * (3 + i * 7 % 13),
            "choices": [{"index": 0, "delta": {"tool_calls": [tool]}, "finish_reason": None}],
        }  # fmt: skip
        line = b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\n\n"
        out.append(line)
        total += len(line)
        i += 1
    return b"".join(out) + b"data: [DONE]\n\n"


def run_stress_upstream(port: int, size: int, read: int, gap: float) -> None:
    """Each response's body written ``read`` bytes at a time, ``gap`` seconds apart, one
    HTTP/1.1 chunk per write with Nagle off, so that each arrives as a read of its own."""
    body = stress_body(size)
    pieces = [body[i : i + read] for i in range(0, len(body), read)]
    head = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n")  # fmt: skip

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                request = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in request.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                await reader.readexactly(length)
                writer.write(head)
                start = loop.time()
                for i, piece in enumerate(pieces):
                    delay = start + i * gap - loop.time()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def serve() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=512)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


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


async def read_raw(client: Any, url: str) -> float:
    """Milliseconds from the request to the stream's last byte, sending a key as a
    real client does (the proxy scrubs it out of every read)."""
    body = {"model": "bench", "stream": True, "messages": []}
    headers = {"authorization": "Bearer sk-bench-0123456789abcdefghijklmnop"}
    start = time.monotonic_ns()
    async with client.stream(
        "POST", url + "/v1/chat/completions", json=body, headers=headers
    ) as response:
        async for _ in response.aiter_raw():
            pass
    return (time.monotonic_ns() - start) / 1e6


async def run_raw_clients(url: str, clients: int) -> list[float]:
    import httpx

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        return list(await asyncio.gather(*(read_raw(client, url) for _ in range(clients))))


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


def _own_ticks(pid: int) -> int:
    """CPU time of ``pid`` alone, its children not counted, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def _children(pid: int) -> list[int]:
    return [
        int(c)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for c in (task / "children").read_text().split()
    ]


def loadavg() -> str:
    """The 1-, 5- and 15-minute load averages, as /proc/loadavg says them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[-1]


def find_mitmdump(given: str | None) -> str | None:
    if given:
        return given
    beside = Path(sys.executable).parent / "mitmdump"
    return str(beside) if beside.exists() else shutil.which("mitmdump")


def start_mitmdump(mitmdump: str, port: int, upstream_port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [mitmdump, "--mode", f"reverse:http://127.0.0.1:{upstream_port}",
         "--listen-host", "127.0.0.1", "--listen-port", str(port),
         # pass each read on as it comes instead of buffering the body
         "--set", "stream_large_bodies=1", "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def measure(
    events: int,
    interval: float,
    runs: int,
    clients: int,
    record: bool = False,
    app: str | None = None,
    mitmdump: str | None = None,
    stress: tuple[int, int, float] | None = None,
) -> dict:
    """``app``: None (headless), "child" (the app open, forwarding in a child
    process: what the command runs) or "same" (forwarding on a thread of the
    app's process). ``mitmdump``: also through mitmproxy, in the same rounds.
    ``stress``: (body bytes, read size, seconds between reads) from the stress
    upstream instead of the paced events."""
    up_port, px_port, mp_port = free_port(), free_port(), free_port()
    python = sys.executable
    if stress:
        size, read, gap = stress
        up_args = ["--stress-upstream", str(up_port), "--stress-bytes", str(size),
                   "--stress-read", str(read), "--stress-gap", str(gap)]  # fmt: skip
    else:
        up_args = ["--upstream", str(up_port), "--events", str(events),
                   "--interval", str(interval)]  # fmt: skip
    upstream = subprocess.Popen([python, __file__, *up_args])
    procs: list[subprocess.Popen] = [upstream]
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
        procs.append(proxy)
        paths = {"direct": up_port, "fraglens": px_port}
        if mitmdump:
            procs.append(start_mitmdump(mitmdump, mp_port, up_port))
            paths["mitmproxy"] = mp_port
        times: dict[str, list[float]] = {name: [] for name in paths}
        latencies: dict[str, list[float]] = {name: [] for name in paths}
        ticks: dict[str, int] = {}
        try:
            wait_port(up_port, upstream)
            for port, proc in zip(list(paths.values())[1:], procs[1:], strict=True):
                wait_port(port, proc)
            for port in paths.values():  # warm up every path
                asyncio.run(run_raw_clients(f"http://127.0.0.1:{port}", 1))
            wait_idle(proxy.pid)
            relay = _children(proxy.pid)
            cpu = {"relay": relay, "flows": [proxy.pid]}
            if mitmdump:
                cpu["mitmproxy"] = [procs[2].pid]
            before = {k: sum(_own_ticks(q) for q in v) for k, v in cpu.items()}
            names = list(paths)
            for round_ in range(runs):
                # rotated, so that no path always runs right after another
                turn = names[round_ % len(names) :] + names[: round_ % len(names)]
                for name in turn:
                    url = f"http://127.0.0.1:{paths[name]}"
                    if stress:
                        times[name] += asyncio.run(run_raw_clients(url, clients))
                    else:
                        events_, streams = asyncio.run(run_clients(url, clients))
                        latencies[name] += events_
                        times[name] += streams
                    if name == "fraglens":
                        wait_idle(proxy.pid)
            # the flows may lag the relay: their tail belongs to these rounds
            wait_idle(proxy.pid)
            ticks = {k: sum(_own_ticks(q) for q in v) - before[k] for k, v in cpu.items()}
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait(10)
    direct = statistics.median(times["direct"])
    row: dict[str, Any] = {
        "clients": clients,
        "record": record,
        "app": app,
        "stress": stress,
        "load": loadavg(),
        "streams": len(times["fraglens"]),
        "median_ms": {name: statistics.median(t) for name, t in times.items()},
        "ratio": {name: statistics.median(t) / direct for name, t in times.items()},
    }
    if stress:
        size, read, _ = stress
        reads = runs * clients * -(-len(stress_body(size)) // read)
        row["reads"] = reads
        hz = os.sysconf("SC_CLK_TCK")
        row["cpu_us_per_read"] = {k: t / hz / reads * 1e6 for k, t in ticks.items()}
    else:
        lat = {name: (statistics.median(x), p95(x)) for name, x in latencies.items()}
        row["added_median"] = {n: m - lat["direct"][0] for n, (m, _) in lat.items()}
        row["added_p95"] = {n: q - lat["direct"][1] for n, (_, q) in lat.items()}
    return row


def show(rows: list[dict]) -> None:
    paths = [n for n in ("fraglens", "mitmproxy") if any(n in r["ratio"] for r in rows)]
    print(f"{'configuration':<34} {'streams':>7} {'direct ms':>9}"
          + "".join(f" {n + ' ms':>13} {'ratio':>6}" for n in paths)
          + "  load average")  # fmt: skip
    for r in rows:
        if r["stress"]:
            size, read, gap = r["stress"]
            name = f"stress {r['clients']} x {size // 1024} KB, {read} B/{gap * 1000:g} ms"
        else:
            name = f"{r['clients']} stream{'s' if r['clients'] > 1 else ''} at once"
        name += ", --record-dir" if r["record"] else ""
        name += {"child": ", app open", "same": ", app open, 1 process", None: ""}[r["app"]]
        cells = "".join(
            f" {r['median_ms'][n]:>13.0f} {r['ratio'][n]:>5.2f}x" if n in r["ratio"] else " " * 21
            for n in paths
        )
        print(f"{name:<34} {r['streams']:>7} {r['median_ms']['direct']:>9.0f}{cells}  {r['load']}")
    for r in rows:
        if not r["stress"]:
            added = ", ".join(
                f"{n} {r['added_median'][n]:.2f} / {r['added_p95'][n]:.2f}"
                for n in paths
                if n in r["added_median"]
            )
            print(f"  {r['clients']} at once: event latency added p50 / p95 (ms): {added}")
        else:
            cost = ", ".join(f"{k} {v:.0f}" for k, v in r["cpu_us_per_read"].items())
            print(f"  stress {r['clients']} at once: CPU per read forwarded (us): {cost}"
                  f" ({r['reads']} reads)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer events, for a smoke run")
    parser.add_argument("--more", action="store_true", help="also --record-dir and the app open")
    parser.add_argument("--events", type=int, default=200, help="events per stream")
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between events")
    parser.add_argument("--runs", type=int, default=5, help="rounds per configuration")
    parser.add_argument("--stress-bytes", type=int, default=4096, help="stress body size")
    parser.add_argument("--stress-read", type=int, default=64, help="stress bytes per read")
    parser.add_argument("--stress-gap", type=float, default=0.002, help="seconds between reads")
    parser.add_argument("--only", choices=("provider", "stress"), help="one shape only")
    parser.add_argument("--mitmdump", help="mitmproxy's mitmdump (default: found)")
    parser.add_argument("--no-mitmproxy", action="store_true", help="fraglens and direct only")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--upstream", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--stress-upstream", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--proxy-app", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    parser.add_argument("--same-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.upstream:
        run_upstream(args.upstream, args.events, args.interval)
        return
    if args.stress_upstream:
        run_stress_upstream(args.stress_upstream, args.stress_bytes, args.stress_read,
                            args.stress_gap)  # fmt: skip
        return
    if args.proxy_app:
        run_proxy_with_app(args.proxy_app, args.target, args.same_process)
        return
    if args.quick:
        args.events, args.runs = 50, 1
    mitmdump = None if args.no_mitmproxy else find_mitmdump(args.mitmdump)
    if mitmdump is None and not args.no_mitmproxy:
        print("mitmdump not found (the bench extra on Python 3.12+, or --mitmdump PATH): "
              "fraglens and direct only", file=sys.stderr)  # fmt: skip
    shape = (args.events, args.interval, args.runs)
    stress = (args.stress_bytes, args.stress_read, args.stress_gap)
    rows = []
    if args.only != "stress":
        rows += [measure(*shape, clients=n, mitmdump=mitmdump) for n in (1, 10, 50)]
    if args.only != "provider":
        rows += [measure(*shape, clients=n, mitmdump=mitmdump, stress=stress) for n in (1, 50)]
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
    print(f"loopback; provider pacing: {args.events} events per stream every "
          f"{args.interval * 1000:g} ms; stress: {args.stress_bytes} bytes in "
          f"{args.stress_read}-byte reads {args.stress_gap * 1000:g} ms apart; "
          f"{args.runs} rounds each, paths in rotating order; median stream time "
          "(request to last byte, ms) and its ratio to direct")  # fmt: skip
    show(rows)


if __name__ == "__main__":
    main()
