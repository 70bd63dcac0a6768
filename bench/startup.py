"""How long fraglens takes to start, against Python's own start.

    .venv/bin/python bench/startup.py [--rounds 21]

Three whole processes take turns in every round: ``python -c pass`` (the
interpreter of the same virtualenv, its ``site`` included), ``fraglens
--version``, and ``fraglens check --json`` on a 9-event capture
(``sample_streams/backend_gpt4o_parallel.sse``). Printed: the median wall
time and CPU time (user + system, from ``wait4``) of each, and each
fraglens command's ratio to ``python -c pass``. The package is compiled to
bytecode first, as an installed fraglens is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bytecode import compile_package  # noqa: E402

TINY = ROOT / "sample_streams" / "backend_gpt4o_parallel.sse"


def _run(cmd: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{cmd} failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()
    compile_package()
    exe = str(Path(sys.executable).with_name("fraglens"))
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "fraglens --version": [exe, "--version"],
        "fraglens check --json (9 events)": [exe, "check", "--json", str(TINY)],
    }
    walls: dict[str, list[float]] = {k: [] for k in commands}
    cpus: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.rounds):
        for name, cmd in commands.items():
            wall, cpu = _run(cmd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"start-up, median of {args.rounds} in turns (load average at the end {load})")
    print(f"{'command':<36}{'wall':>8}{'x pass':>8}{'CPU':>8}{'x pass':>8}")
    base_w, base_c = (statistics.median(v["python -c pass"]) for v in (walls, cpus))
    for name in commands:
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:<36}{w * 1000:>6.1f}ms{w / base_w:>7.2f}x{c * 1000:>6.1f}ms"
              f"{c / base_c:>7.2f}x")


if __name__ == "__main__":
    main()
