"""Live-call benchmark: fraglens serve -> fraglens live on loopback, end to end.

    .venv/bin/python bench/live.py            # the figures in docs/benchmarks.md
    .venv/bin/python bench/live.py --quick    # smaller, for a smoke run

One generated Chat Completions stream (one call, N argument fragments) is
served by ``fraglens serve`` in its own process with no pauses; LiveCall
reads it, feeds the engine event by event and writes a recording flushed per
read. Reported: events and MiB per second through the whole client path
(socket, HTTP, SSE decoder, engine, recording), with and without a recording,
and with the body cut every 64 bytes or at random offsets (more, smaller
reads). The numbers are this machine's; the point is the order of magnitude.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chunks import chat_chunk  # noqa: E402  (bench/ is on sys.path: the script's folder)

from fraglens.net.live import LiveCall, Phase  # noqa: E402
from fraglens.net.replay import source_from_bytes  # noqa: E402
from fraglens.net.request import build_spec  # noqa: E402


def make_stream(fragments: int) -> bytes:
    def chunk(delta: dict, finish: str | None = None) -> str:
        return chat_chunk(delta, finish, id="c", created=0, model="m")  # 9.4 MiB, as benchmarked

    parts = [
        chunk(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "write_file", "arguments": '{"text": "'},
                    }
                ],
            }
        )
    ]
    piece = {"tool_calls": [{"index": 0, "function": {"arguments": "lorem ipsum "}}]}
    parts += [chunk(piece)] * fragments
    parts.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    parts.append(chunk({}, "tool_calls"))
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


async def one_run(url: str, record: Path | None) -> tuple[float, LiveCall]:
    spec, _ = build_spec(url + "/v1", model="m", prompt="p", environ={})
    call = LiveCall(spec, record=record)
    start = time.perf_counter()
    status = await call.run()
    elapsed = time.perf_counter() - start
    assert status.phase is Phase.DONE, status.message
    return elapsed, call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    fragments = 5_000 if args.quick else 50_000
    body = make_stream(fragments)
    source = source_from_bytes(body, "bench")
    print(f"stream: {source.events:,} events, {len(body) / 2**20:.1f} MiB, one call")
    cases = [
        ("event per write, no recording", [], False),
        ("event per write, recording", [], True),
        ("64-byte writes, recording", ["--split-bytes", "64"], True),
        ("random cuts, recording", ["--split-random", "1"], True),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        capture = Path(tmp) / "bench.sse"
        capture.write_bytes(body)
        for name, chaos_args, record in cases:
            with serve(capture, chaos_args) as url:
                path = Path(tmp) / "bench.fraglens" if record else None
                elapsed, call = asyncio.run(one_run(url, path))
            events = len(call.stream.events)
            size = f", recording {path.stat().st_size / 2**20:.1f} MiB" if path else ""
            print(
                f"{name:32} {events / elapsed:>10,.0f} events/s  "
                f"{len(body) / elapsed / 2**20:6.1f} MiB/s  "
                f"({call.status.reads:,} reads, {elapsed:.2f}s{size})"
            )


@contextlib.contextmanager
def serve(capture: Path, chaos: list[str]) -> Iterator[str]:
    command = [
        sys.executable,
        "-m",
        "fraglens",
        "serve",
        str(capture),
        "--port",
        "0",
        "--pace",
        "fixed",
        "--rate",
        "0",
        *chaos,
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "listening on" in line:
                yield line.split("listening on ")[1].split()[0]
                break
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
