"""Thousands of mutated streams, recordings and HARs, each under a watchdog: tracebacks and hangs.

    .venv/bin/python bench/fuzz.py                 # 5,000 cases (make fuzz)
    .venv/bin/python bench/fuzz.py --cases 300     # a smoke run
    .venv/bin/python bench/fuzz.py --case 1234     # one case again, in this process

The cases are tests/mutants.py's (the suite runs its first few hundred in
tests/test_fuzz.py): each is read by ``check``, ``check --json``,
``history build`` and, for a HAR, ``import-har``, in a worker process. A case
whose commands raise, or exit with anything but 0, 1 or 2, is a failure; a
case the worker has not finished after ``--hang`` seconds (default 60, far
beyond any case: this is a watchdog for a hang, not a measure of speed) is a
hang: the worker is killed and a new one goes on from the next case. The
figures are counts, and the run's own whole-process time and the slowest
cases for scale. Exit 1 when anything failed or hung.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cpu import children_cpu  # noqa: E402

from tests.mutants import KINDS, case, run  # noqa: E402


def _worker() -> None:
    """Read case numbers on stdin; answer one JSON line per case on the
    original stdout; everything the commands print goes to /dev/null."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    with tempfile.TemporaryDirectory(prefix="fraglens-fuzz-") as tmp:
        for line in sys.stdin:
            n = int(line)
            started = time.perf_counter()
            item = case(n)
            failures = run(item, Path(tmp) / "case")
            answers.write(json.dumps({"n": n, "kind": item.kind, "label": item.label,
                                      "failures": failures,
                                      "seconds": time.perf_counter() - started}) + "\n")


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, bufsize=1, cwd=ROOT,
        )

    def ask(self, n: int, hang: float) -> dict | None:
        """The answer for case ``n``, or None when none came in ``hang`` seconds."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], hang)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=5000)
    p.add_argument("--hang", type=float, default=60.0, help="seconds before a case is a hang")
    p.add_argument("--case", type=int, help="run one case in this process and print it")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        _worker()
        return 0
    if args.case is not None:
        item = case(args.case)
        print(item.label, file=sys.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            failures = run(item, Path(tmp) / "case")
        print("\n".join(failures) or "no failure", file=sys.stderr)
        return 1 if failures else 0

    started = time.perf_counter()
    worker = _Worker()
    failures: list[str] = []
    hangs: list[str] = []
    kinds = dict.fromkeys(KINDS, 0)
    slowest: list[tuple[float, str]] = []
    try:
        for n in range(args.cases):
            answer = worker.ask(n, args.hang)
            if answer is None:
                hangs.append(case(n).label)
                worker.stop()
                worker = _Worker()
                continue
            kinds[answer["kind"]] += 1
            failures += answer["failures"]
            slowest = sorted([*slowest, (answer["seconds"], answer["label"])], reverse=True)[:3]
            if (n + 1) % 500 == 0:
                print(f"  {n + 1} cases, {len(failures)} failures, {len(hangs)} hangs",
                      file=sys.stderr)
    finally:
        worker.stop()
    wall = time.perf_counter() - started
    done = sum(kinds.values())
    print(f"fuzz: {args.cases} cases ({', '.join(f'{k} {kinds[k]}' for k in KINDS)}), "
          f"{len(failures)} tracebacks or bad exits, {len(hangs)} hangs "
          f"(watchdog {args.hang:g} s)")
    print(f"whole run {wall:.1f} s ({done / wall:.1f} cases/s on this machine; "
          f"the workers {children_cpu():.1f} s CPU)")
    for seconds, label in slowest:
        print(f"  slowest: {seconds:.2f} s  {label}")
    # alike failures together: the command and the error's kind, with one case each
    groups: dict[str, list[str]] = {}
    for line in failures:
        label, _, what = line.partition(" ")
        command, _, error = what.partition(": ")
        command = command.split(" -o ")[0]  # a path of this run's own
        kind = error.split(":")[0] if ":" in error else error
        groups.setdefault(f"{command}: {kind}", []).append(label)
    for key, labels in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(labels)} x {key}  (e.g. case {labels[0].split('-')[0]}: {labels[0]})")
    for label in hangs[:20]:
        print(f"  hang: {label}")
    return 1 if failures or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
