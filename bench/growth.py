"""Growth: 10x the pieces of one value must cost about 10x the time.

    .venv/bin/python bench/growth.py [--rounds 7]

Vertex streams a string argument in pieces (``partialArgs`` entries with
``willContinue``). Two measures, each at n and 10n pieces of one string value,
in the same interleaved rounds (CPU time, the best of the rounds):

- **builder**: ``PartialArgs.add`` for every entry, then its text: the
  builder alone;
- **check**: the same value as a Vertex stream (``bench/shapes.py``'s
  ``gemini-long``), read and reported in process.

The target is at most 12x the time for 10x the pieces (a quadratic builder
took about 100x).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tui"))
sys.path.insert(0, str(ROOT / "bench"))

from shapes import real_shape  # noqa: E402

from fraglens.adapters.partial_args import PartialArgs  # noqa: E402
from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.document import build_report  # noqa: E402


def builder(pieces: int) -> None:
    b = PartialArgs()
    entry = {"jsonPath": "$.text", "stringValue": "0123456789", "willContinue": True}
    for _ in range(pieces):
        b.add(entry)
    b.add({"jsonPath": "$.text", "stringValue": ""})
    b.close()
    b.text()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pieces", type=int, default=20_000)
    args = ap.parse_args()
    n = args.pieces
    small, big = real_shape("gemini-long", 1, n * 10), real_shape("gemini-long", 1, n * 100)
    runs = {
        "builder": (lambda: builder(n), lambda: builder(10 * n)),
        "check": (lambda: build_report(stream_from_bytes(small)[0]),
                  lambda: build_report(stream_from_bytes(big)[0])),
    }
    best = {(name, k): float("inf") for name in runs for k in (0, 1)}
    for _ in range(args.rounds):
        for name, pair in runs.items():
            for k, fn in enumerate(pair):
                gc.collect()
                t = time.process_time()
                fn()
                best[name, k] = min(best[name, k], time.process_time() - t)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"one string value in n and 10n pieces, CPU s, best of {args.rounds} in turns "
          f"(load average {load})")
    for name in runs:
        a, b = best[name, 0], best[name, 1]
        print(f"{name:<8} {n:>7} pieces {a:7.3f}s  {10 * n:>8} pieces {b:7.3f}s  "
              f"growth {b / a:5.1f}x (target <= 12x)")


if __name__ == "__main__":
    main()
