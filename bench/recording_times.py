"""A recording's events' times, and the report's timing made of them.

    .venv/bin/python bench/recording_times.py [--rounds 7] [--before main]

The bench body of issue #24: one Chat Completions call of 1 MB of arguments
(``shapes.real_shape``, 39 MB of SSE, about 104k events), as plain SSE and
as a version 3 recording of the reads that delivered it (``shapes.recording``:
1-3 events a read, 0.5 to 20 ms apart, one read in five cut inside an
event), and that recording again with three reads 1.5 s late (three stalls).

In this process, the best of ``--rounds``, CPU: every event's time worked out
(``EventLog.time_array``, what the report's timing read before), and the
report's timing (``stream_timing``) with no event's time worked out before
(what ``check`` asks) and once they all are.

Whole processes, in turns: ``fraglens check --json`` on each file, its CPU
(user + system, from ``wait4``), the median of ``--rounds``; with
``--before REV``, the package of that revision in the same rounds (see
bench/startup.py).
"""

from __future__ import annotations

import argparse
import base64
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tui")]

from bytecode import compile_package, package_of  # noqa: E402
from shapes import real_shape, recording  # noqa: E402

from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.timing import stream_timing  # noqa: E402


def _stalled(rec: bytes) -> bytes:
    """``rec`` with three reads, a third, half and two thirds of the way, 1.5 s
    late, and every read after them too (the times lines rewritten)."""
    import json

    # after each record separator: a line of JSON, then the next reads' bytes
    parts = rec.split(b"\x1e")
    timed = [k for k, part in enumerate(parts) if part.startswith(b'{"times"')]
    late = {timed[len(timed) * n // 6] for n in (2, 3, 4)}
    shift = 0.0
    for k, part in enumerate(parts):
        line, _, reads = part.partition(b"\n")
        if k in late:  # its reads' times, the first of them late
            shift += 1.5
        if shift and line.startswith((b'{"times"', b'{"end"')):
            obj = json.loads(line)
            if "times" in obj:  # little-endian doubles, in base64
                times = array("d", base64.b64decode(obj["times"]))
                if sys.byteorder == "big":
                    times.byteswap()
                times = array("d", (round(t + shift, 6) for t in times))
                if sys.byteorder == "big":
                    times.byteswap()
                obj["times"] = base64.b64encode(times.tobytes()).decode("ascii")
            else:
                obj["t"] = round(obj["t"] + shift, 6)
            parts[k] = json.dumps(obj, separators=(",", ":")).encode() + b"\n" + reads
    return b"\x1e".join(parts)


def _cpu(fn, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _in_process(name: str, data: bytes, rounds: int) -> None:
    stream, _ = stream_from_bytes(data)
    log = stream.events
    late, settled = log._late, log._settled
    assert late is not None, "not read in runs"

    def fresh() -> None:  # no event's time worked out yet, as check leaves them
        log.time_later(late)
        log._settled = settled

    def all_times() -> None:
        fresh()
        log.time_array()

    def told() -> None:
        fresh()
        stream_timing(stream)

    def worked() -> None:
        all_times()
        stream_timing(stream)

    fresh()
    quick = stream_timing(stream)
    all_times()
    assert stream_timing(stream) == quick
    stalls = len(quick["stalls"]) if quick else None
    print(f"{name}: {len(log):,} events, {stalls} stalls; in this process, best of {rounds}:")
    for what, fn in (("every event's time (time_array)", all_times),
                     ("timing, told from the reads", told),
                     ("timing, every time worked out first", worked)):
        print(f"  {what:<40}{_cpu(fn, rounds) * 1000:7.1f} ms")


def _run(cmd: list[str], env: dict[str, str]) -> float:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{cmd} failed")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--before", metavar="REV",
                    help="also time the package of this revision (a branch, a commit)")
    args = ap.parse_args()
    compile_package()
    body = real_shape("openai-chat", 1, 1_000_000)
    rec = recording(body)
    files = {"SSE": body, "recording": rec, "recording, 3 stalls": _stalled(rec)}
    for name in ("recording", "recording, 3 stalls"):
        _in_process(name, files[name], args.rounds)
    exe = str(Path(sys.executable).with_name("fraglens"))
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, data in files.items():
            paths[name] = Path(tmp) / f"{len(paths)}.in"
            paths[name].write_bytes(data)
        trees = {"this tree": {**os.environ, "PYTHONPATH": str(ROOT / "tui")}}
        if args.before:
            there = package_of(args.before, Path(tmp) / "before")
            trees = {args.before: {**os.environ, "PYTHONPATH": str(there)}, **trees}
        runs = {(t, f): [exe, "check", "--json", str(p)] for t in trees for f, p in paths.items()}
        for (tree, _), cmd in runs.items():  # warm: the disk's cache
            _run(cmd, trees[tree])
        cpus: dict[tuple[str, str], list[float]] = {k: [] for k in runs}
        for _ in range(args.rounds):
            for key, cmd in runs.items():
                cpus[key].append(_run(cmd, trees[key[0]]))
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"check --json, whole process CPU, median of {args.rounds} in turns "
          f"(load average at the end {load}):")
    for tree in trees:
        sse = statistics.median(cpus[tree, "SSE"])
        for name in files:
            c = statistics.median(cpus[tree, name])
            print(f"  {tree:<12}{name:<22}{c * 1000:7.1f} ms{c / sse:6.2f}x SSE")


if __name__ == "__main__":
    main()
