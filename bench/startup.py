"""How long fraglens takes to start, against Python's own start.

    .venv/bin/python bench/startup.py [--rounds 21] [--before main]

Processes take turns in every round: ``python -c pass`` (the interpreter of
the same virtualenv, its ``site`` included), ``fraglens --version``, and
``fraglens check --json`` on a 9-event capture
(``sample_streams/backend_gpt4o_parallel.sse``) and on a 37-line one that
reported usage (``cost_anthropic_cache_read_write.sse``: its cost is priced,
from a price cache warmed first, and its text scanned for leaked markup).
Printed: the median wall time and CPU time (user + system, from ``wait4``)
of each, and each command's ratio to ``python -c pass``.

``--before REV`` times the package of another revision (``main``, a commit)
in the same rounds: its ``tui/fraglens`` is copied out of git beside this
checkout, and the same entry point runs with the copy first on
``PYTHONPATH`` (this checkout's commands get their own ``tui`` there too,
so that both search the same number of folders). Both packages are compiled
to bytecode first, as an installed fraglens is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bytecode import compile_package, package_of  # noqa: E402

TINY = ROOT / "sample_streams" / "backend_gpt4o_parallel.sse"
PRICED = ROOT / "sample_streams" / "cost_anthropic_cache_read_write.sse"


def _run(cmd: list[str], env: dict[str, str] | None) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{cmd} failed")
    return wall, usage.ru_utime + usage.ru_stime


def _commands(exe: str, label: str) -> dict[str, list[str]]:
    return {
        f"fraglens --version{label}": [exe, "--version"],
        f"check --json, 9 events{label}": [exe, "check", "--json", str(TINY)],
        f"check --json, usage priced{label}": [exe, "check", "--json", str(PRICED)],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--before", metavar="REV",
                    help="also time the package of this revision (a branch, a commit)")
    args = ap.parse_args()
    compile_package()
    exe = str(Path(sys.executable).with_name("fraglens"))
    with tempfile.TemporaryDirectory() as tmp:
        # the price cache the priced capture is read with: warmed by the first round
        base = {**os.environ, "XDG_CACHE_HOME": tmp}
        commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None)}
        if args.before:
            here = {**base, "PYTHONPATH": str(ROOT / "tui")}
            there = {**base, "PYTHONPATH": str(package_of(args.before, Path(tmp) / "before"))}
            for name, cmd in _commands(exe, f" ({args.before})").items():
                commands[name] = (cmd, there)
            for name, cmd in _commands(exe, " (this tree)").items():
                commands[name] = (cmd, here)
        else:
            for name, cmd in _commands(exe, "").items():
                commands[name] = (cmd, base)
        for cmd, env in commands.values():  # warm: the price cache, the disk's
            _run(cmd, env)
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.rounds):
            for name, (cmd, env) in commands.items():
                wall, cpu = _run(cmd, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"start-up, median of {args.rounds} in turns (load average at the end {load})")
    width = max(map(len, commands)) + 2
    print(f"{'command':<{width}}{'wall':>8}{'x pass':>8}{'CPU':>8}{'x pass':>8}")
    base_w, base_c = (statistics.median(v["python -c pass"]) for v in (walls, cpus))
    for name in commands:
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:<{width}}{w * 1000:>6.1f}ms{w / base_w:>7.2f}x{c * 1000:>6.1f}ms"
              f"{c / base_c:>7.2f}x")


if __name__ == "__main__":
    main()
