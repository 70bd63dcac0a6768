"""Fit and timing cost: does each grow with the input, and not with its square?

    .venv/bin/python bench/fit_timing.py

Builds, in memory, a timed recording of N Chat Completions calls (each opened
by its own chunk, its arguments in ten fragments, one event per read, 5 ms
apart, a 1.5 s stall every 1,000 events) for N and 10 N, and times, in this
process, on the closed stream:

  * timing - ``stream_timing`` (one pass over the events);
  * fit    - ``check_fit`` against four declared tools (one jsonschema
             validator per tool, built once; each call validated once, in
             the validation worker, 256 calls a message);
  * report - ``build_report`` given the fit (it reads the timing itself),
             as ``check --json`` builds it.

CPU seconds, the best of five rounds, except the fit: its work is done in
the validation worker, a process of its own, so it is wall seconds (the
worker started beforehand). The ratio 10N / N is the figure to read: about
10 means linear.
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

from fraglens.fit.tools import read_tools  # noqa: E402
from fraglens.fit.verdicts import check_fit  # noqa: E402
from fraglens.framing.recording import RecordingWriter  # noqa: E402
from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.document import build_report  # noqa: E402
from fraglens.report.timing import stream_timing  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"enum": ["c", "f"]},
        "days": {"type": "integer", "minimum": 1},
    },
    "required": ["city"],
}
TOOLS = read_tools(
    [{"name": f"tool_{n}", "input_schema": SCHEMA, "strict": n == 0} for n in range(4)]
)
ROUNDS = 5


def chunk(delta: dict, finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def recording(calls: int) -> bytes:
    """``calls`` calls, every other one breaking its schema (a string for days)."""
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "http://bench/v1/chat/completions", "body": {}})
    t = 0.0
    events = 0
    for n in range(calls):
        days = '"3"' if n % 2 else "3"
        text = f'{{"city": "City number {n:06d}", "unit": "c", "days": {days}}}'
        pieces = [
            text[i : i + len(text) // 10 + 1] for i in range(0, len(text), len(text) // 10 + 1)
        ]
        head = {"index": n, "id": f"call_{n}", "type": "function"}
        reads = [
            chunk(
                {"tool_calls": [{**head, "function": {"name": f"tool_{n % 4}", "arguments": ""}}]}
            )
        ]
        reads += [
            chunk({"tool_calls": [{"index": n, "function": {"arguments": p}}]}) for p in pieces
        ]
        for data in reads:
            events += 1
            t += 1.5 if events % 1000 == 0 else 0.005
            writer.chunk(t, data)
    writer.chunk(t + 0.005, chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    return out.getvalue()


def best(work, clock=time.process_time) -> float:
    times = []
    for _ in range(ROUNDS):
        gc.collect()
        start = clock()
        work()
        times.append(clock() - start)
    return min(times)


def measure(calls: int) -> dict[str, float]:
    stream, _ = stream_from_bytes(recording(calls))
    fit = check_fit(stream, TOOLS)
    return {
        "events": len(stream.events),
        "timing": best(lambda: stream_timing(stream)),
        "fit": best(lambda: check_fit(stream, TOOLS), time.perf_counter),
        "report": best(lambda: build_report(stream, fit=fit)),
    }


def main() -> None:
    small, large = 1_000, 10_000
    a, b = measure(small), measure(large)
    print(f"{small:,} calls ({a['events']:,} events) vs {large:,} calls ({b['events']:,} events),")
    print(f"CPU seconds (fit: wall seconds, in the validation worker), best of {ROUNDS}")
    print(f"{'':8} {'N':>9} {'10 N':>9} {'ratio':>6}")
    for key in ("timing", "fit", "report"):
        print(f"{key:8} {a[key]:9.4f} {b[key]:9.4f} {b[key] / a[key]:6.1f}")


if __name__ == "__main__":
    main()
