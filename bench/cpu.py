"""CPU time of child processes: how the benchmarks measure a whole ``fraglens`` run.

CPU time, not wall-clock time: the machine may be shared, and a run's CPU
seconds (user + system, the child's own) move less with what else runs.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of_check(path: Path, runs: int = 3) -> float:
    """The best CPU seconds of ``runs`` whole ``fraglens check --json`` processes on ``path``."""
    best = float("inf")
    for _ in range(runs):
        before = children_cpu()
        subprocess.run(
            [sys.executable, "-m", "fraglens", "check", "--json", str(path)],
            stdout=subprocess.DEVNULL, check=False, cwd=ROOT,
        )  # fmt: skip
        best = min(best, children_cpu() - before)
    return best
