"""The text report's cost: does it grow with the report, and not with its square?

    .venv/bin/python bench/report_text.py

Two inputs, each at N and 10 N, built in memory:

  * enum  - one call whose value is not among a tool's N-entry ``enum``: one
            diagnostic whose message (jsonschema's) lists all N entries, about
            11 bytes each;
  * calls - N/100 calls, each breaking its tool's schema: as many diagnostics.

For each it times, in this process, what ``check`` does after reading the
capture: ``json`` - ``build_report`` and the JSON text ``check --json``
writes; ``text`` - ``build_report`` and the report ``check`` prints, to a
120-column console writing into memory (the garbage collector set as
``check`` sets it). The fit (the validation worker's
answer) is made once beforehand and is no part of either. CPU seconds, the
best of five rounds. The ratio 10 N / N is the figure to read: about 10
means linear (a one-minute text report of a 1M-entry enum was not).
"""

from __future__ import annotations

import gc
import io
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tui"))

from rich.console import Console  # noqa: E402

from fraglens.cli import batch_collector  # noqa: E402
from fraglens.fit.tools import Tool  # noqa: E402
from fraglens.fit.verdicts import check_fit  # noqa: E402
from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.document import build_report, dumps  # noqa: E402
from fraglens.report.text import print_report  # noqa: E402

ROUNDS = 5


def chunk(delta: dict, finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def capture(calls: int) -> bytes:
    out = b""
    for n in range(calls):
        entry = {"index": n, "id": f"call_{n}", "type": "function",
                 "function": {"name": "pick", "arguments": '{"x": "nope"}'}}  # fmt: skip
        out += chunk({"tool_calls": [entry]})
    return out + chunk({}, "tool_calls") + b"data: [DONE]\n\n"


def best(work) -> float:
    times = []
    for _ in range(ROUNDS):
        gc.collect()
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def measure(calls: int, entries: int) -> dict[str, float]:
    stream, _ = stream_from_bytes(capture(calls))
    tool = Tool("pick", {"properties": {"x": {"enum": [f"v{i}" for i in range(entries)]}}})
    fit = check_fit(stream, [tool], budget=None)

    def text() -> None:
        console = Console(file=io.StringIO(), width=120)
        print_report(build_report(stream, fit=fit), "bench.sse", console=console)

    return {
        "json": best(lambda: dumps(build_report(stream, fit=fit))),
        "text": best(text),
    }


def main() -> None:
    batch_collector()  # the collector as check sets it
    rows = [
        ("enum", (1, 100_000), (1, 1_000_000), "1 call, an enum of 100,000 vs 1,000,000"),
        ("calls", (1_000, 3), (10_000, 3), "1,000 vs 10,000 calls, each an error"),
    ]
    print(f"CPU seconds, best of {ROUNDS}, in process")
    print(f"{'':6} {'':5} {'N':>8} {'10 N':>8} {'ratio':>6}")
    for name, small, large, what in rows:
        a, b = measure(*small), measure(*large)
        for key in ("json", "text"):
            print(f"{name:6} {key:5} {a[key]:8.3f} {b[key]:8.3f} {b[key] / a[key]:6.1f}  ({what})")


if __name__ == "__main__":
    main()
