"""A batch of captures: ``check --jsonl`` on one process, on two, and on a
local Dask cluster; and the proxy with ``--otlp`` on and off.

    .venv/bin/python bench/batch.py             # the figures in docs/benchmarks.md
    .venv/bin/python bench/batch.py --quick     # fewer captures and rounds
    .venv/bin/python bench/batch.py --before main --no-proxy   # the batch, main beside

The batch: N captures (1,000 by default) made by cycling through the real
captures of ../shared/real_streams and the bundled samples (every provider's
shape, sizes from a few hundred bytes to tens of kilobytes), copied into a
temporary folder. Each figure is the wall time of a whole
``fraglens check --jsonl`` process over that folder, ``--jobs 1`` and
``--jobs 2`` run one after the other in each round (so both see the same
machine), the median of the rounds. The target: ``--jobs 2`` at most 0.65x
``--jobs 1`` on 2 cores. The package is compiled to bytecode first, as an
installed fraglens is (``bench/bytecode.py``). ``--before REV`` runs the
package of another revision (``main``, a commit) in the same rounds, copied
out of git beside this checkout, as ``bench/startup.py --before`` does.

The proxy: 200 streamed chat completions through ``fraglens proxy
--headless`` in front of ``fraglens serve``, 10 clients at a time, with and
without ``--otlp`` to a loopback OTLP receiver, in alternating rounds; the
figure is the clients' total wall time (how long the relay made them wait).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bytecode import compile_package, package_of  # noqa: E402

SHARED = ROOT.parent / "shared" / "real_streams"
SAMPLES = ROOT / "sample_streams"
CAPTURE_SUFFIXES = (".sse", ".jsonl", ".ndjson", ".eventstream")


def _sources() -> list[Path]:
    found = sorted(p for p in SHARED.rglob("*") if p.suffix in CAPTURE_SUFFIXES)
    found += sorted(p for p in SAMPLES.iterdir() if p.suffix in CAPTURE_SUFFIXES)
    return found


def make_folder(n: int) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fraglens-batch-"))
    sources = _sources()
    for i in range(n):
        src = sources[i % len(sources)]
        shutil.copy(src, folder / f"{i:05d}-{src.name}")
    return folder


def _fraglens(env: dict[str, str] | None, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fraglens", *args], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, cwd=ROOT, env=env)
    return time.perf_counter() - start


def batch(n: int, rounds: int, before: str | None) -> None:
    compile_package()
    folder = make_folder(n)
    size = sum(p.stat().st_size for p in folder.iterdir())
    copy = Path(tempfile.mkdtemp(prefix="fraglens-before-"))
    packages: dict[str, dict[str, str] | None] = {"": None}
    if before:
        packages = {
            f" ({before})": {**os.environ, "PYTHONPATH": str(package_of(before, copy))},
            " (this tree)": {**os.environ, "PYTHONPATH": str(ROOT / "tui")},
        }
    try:
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for label, env in packages.items():
                for jobs in ("1", "2"):
                    times.setdefault((label, jobs), []).append(
                        _fraglens(env, "check", "--jsonl", "--jobs", jobs, str(folder)))
        print(f"check --jsonl, {n} captures ({size / 1e6:.1f} MB), median of {rounds}, "
              f"load {os.getloadavg()[0]:.2f}:")
        for label in packages:
            one, two = times[label, "1"], times[label, "2"]
            m1, m2 = statistics.median(one), statistics.median(two)
            print(f"  --jobs 1{label}: {m1:.2f} s  (min {min(one):.2f}, max {max(one):.2f})")
            print(f"  --jobs 2{label}: {m2:.2f} s  (min {min(two):.2f}, max {max(two):.2f})")
            print(f"  ratio --jobs 2 / --jobs 1{label}: {m2 / m1:.2f}x  "
                  "(target <= 0.65x on 2 cores)")
    finally:
        shutil.rmtree(folder)
        shutil.rmtree(copy)


def proxy(flows: int, rounds: int) -> None:
    import asyncio
    import signal

    import httpx

    sys.path.insert(0, str(ROOT))
    from fraglens.net.serve import start_server
    from tests.otlp_receiver import Receiver

    body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    async def clients(base: str) -> float:
        gate = asyncio.Semaphore(10)
        async with httpx.AsyncClient(timeout=60) as client:
            async def one() -> None:
                async with gate, client.stream("POST", base + "/chat/completions",
                                               json=body) as resp:
                    async for _ in resp.aiter_bytes():
                        pass

            start = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(flows)))
            return time.perf_counter() - start

    def through(up: str, extra: list[str]) -> float:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fraglens", "proxy", "--upstream", up, "--port", "0",
             "--headless", *extra],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            base = next(line.rsplit(" ", 1)[1].strip() for line in proc.stderr
                        if "point your client's base URL at" in line)
            return asyncio.run(clients(base))
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)

    sample = str(SAMPLES / "backend_gpt4o_parallel.sse")
    off, on = [], []
    with start_server([sample]) as up, Receiver() as receiver:
        for _ in range(rounds):
            off.append(through(up.url + "/v1", []))
            on.append(through(up.url + "/v1", ["--otlp", receiver.url]))
        spans = len(receiver.spans)
    m_off, m_on = statistics.median(off), statistics.median(on)
    print(f"proxy, {flows} streamed completions, 10 clients at a time, median of {rounds}, "
          f"load {os.getloadavg()[0]:.2f}:")
    print(f"  without --otlp: {m_off:.2f} s;  with --otlp: {m_on:.2f} s  "
          f"({m_on / m_off:.2f}x; {spans} spans received)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, help="of the batch (default 5; 3 with --quick)")
    parser.add_argument("--before", metavar="REV",
                        help="also run the batch with the package of this revision")
    parser.add_argument("--no-proxy", action="store_true", help="the batch only")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} is not here: the batch is made of the real captures")
    batch(200 if args.quick else 1000, args.rounds or (3 if args.quick else 5), args.before)
    if not args.no_proxy:
        proxy(50 if args.quick else 200, 3 if args.quick else 5)


if __name__ == "__main__":
    main()
