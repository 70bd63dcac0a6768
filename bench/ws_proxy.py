"""WebSocket relay benchmark: messages per second through ``fraglens proxy`` against direct.

    .venv/bin/python bench/ws_proxy.py           # the figures in docs/benchmarks.md
    .venv/bin/python bench/ws_proxy.py --quick   # smaller, for a smoke run

Real processes, as in real use: ``fraglens serve`` replays a made-up Responses
WebSocket recording (one ``write_file`` call whose arguments arrive in many
``response.function_call_arguments.delta`` messages) with no pauses
(``--pace fixed --rate 0``); ``fraglens proxy --headless`` stands in front of
it (forwarding in a child process of its own, the flows and the engine in the
parent); this process is the client (the ``websockets`` package), each
connection sending ``response.create`` and reading until
``response.completed``. For 1 and for 50 connections at once, direct and
through the proxy alternate, a few rounds each, so both see the same machine;
it prints the median messages per second (all connections together, from
the first request to the last message) and the ratio proxy / direct, with the
load average when the run began and ended: the machine is shared, and the
ratio of two figures measured in one run is what to read.
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

ROOT = Path(__file__).resolve().parent.parent
FRAGLENS = [sys.executable, "-m", "fraglens"]


def recording(messages: int) -> bytes:
    """A WebSocket recording of one response whose call streams in ``messages`` deltas."""
    def line(obj: dict) -> str:
        return json.dumps(obj, separators=(",", ":"))

    def server(t: float, event: dict) -> str:
        return line({"t": t, "from": "server", "text": line(event)})

    out = [line({"fraglens": "recording", "version": 2, "transport": "websocket",
                 "request": {"method": "GET", "url": "ws://bench/v1/responses", "headers": {}},
                 "format": "openai-responses"}),
           line({"response": {"status": 101, "headers": {}}, "t": 0.0}),
           line({"t": 0.0, "from": "client", "text": line({"type": "response.create"})}),
           server(0.0, {"type": "response.created", "response": {"id": "resp_bench"}}),
           server(0.0, {"type": "response.output_item.added", "output_index": 0, "item": {
               "id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "write_file",
               "arguments": ""}})]
    for n in range(messages):
        piece = '{"path":"a.txt","content":"' if n == 0 else f"line {n}: some text\\n"
        out.append(server(0.0, {"type": "response.function_call_arguments.delta",
                                "output_index": 0, "item_id": "fc_1", "delta": piece}))
    out.append(server(0.0, {"type": "response.function_call_arguments.delta",
                            "output_index": 0, "item_id": "fc_1", "delta": '"}'}))
    out.append(server(0.0, {"type": "response.completed",
                            "response": {"id": "resp_bench", "status": "completed"}}))
    return ("\n".join(out) + "\n").encode()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(args: list[str], ready: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tui"))
    proc = subprocess.Popen([*FRAGLENS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    stream = proc.stderr if ready == "stderr" else proc.stdout
    assert stream is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = stream.readline().decode()
        if "listening on" in line or " -> " in line:
            return proc
    proc.kill()
    raise SystemExit(f"{args[0]} did not start")


async def one(url: str) -> int:
    from websockets.asyncio.client import connect

    got = 0
    async with connect(url, max_size=None, compression=None) as conn:
        await conn.send('{"type":"response.create"}')
        while True:
            message = await conn.recv()
            got += 1
            if '"response.completed"' in message:
                return got


async def round_trip(url: str, connections: int) -> float:
    """Messages per second, all ``connections`` at once."""
    start = time.perf_counter()
    counts = await asyncio.gather(*(one(url) for _ in range(connections)))
    return sum(counts) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    rounds = 2 if opts.quick else 5
    plans = [(1, 500 if opts.quick else 5000), (50, 50 if opts.quick else 400)]
    load_before = os.getloadavg()
    print(f"load average at start: {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f} ({os.cpu_count()} cores)")
    print(f"{'connections':>11} {'messages each':>13} {'direct msg/s':>13} {'proxy msg/s':>12} "
          f"{'proxy/direct':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for connections, messages in plans:
            rec = Path(tmp) / f"bench-{messages}.fraglens"
            rec.write_bytes(recording(messages))
            up_port, proxy_port = free_port(), free_port()
            upstream = start(["serve", str(rec), "--port", str(up_port), "--pace", "fixed",
                              "--rate", "0"], "stdout")
            proxy = start(["proxy", "--upstream", f"http://127.0.0.1:{up_port}/v1", "--port",
                           str(proxy_port), "--headless"], "stderr")
            try:
                direct_url = f"ws://127.0.0.1:{up_port}/v1/responses"
                proxy_url = f"ws://127.0.0.1:{proxy_port}/v1/responses"
                asyncio.run(round_trip(proxy_url, 1))  # warm both processes up
                direct, proxied = [], []
                for _ in range(rounds):
                    direct.append(asyncio.run(round_trip(direct_url, connections)))
                    proxied.append(asyncio.run(round_trip(proxy_url, connections)))
                d, p = statistics.median(direct), statistics.median(proxied)
                print(f"{connections:>11} {messages + 4:>13} {d:>13,.0f} {p:>12,.0f} "
                      f"{p / d:>12.2f}")
            finally:
                for proc in (proxy, upstream):
                    proc.terminate()
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
    load_after = os.getloadavg()
    print(f"load average at end: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
