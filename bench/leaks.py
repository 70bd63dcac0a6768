"""Leaked-markup scan benchmark: `fraglens check --json` on text-heavy streams at 1x and 10x.

    .venv/bin/python bench/leaks.py            # ~1 MB and ~10 MB of text per stream
    .venv/bin/python bench/leaks.py --quick    # ~0.1 MB and ~1 MB

The scan for tool calls leaked into the text reads every choice's whole text
once the stream ends (engine/leaks.py). Generated Chat Completions SSE, one
text piece of ~100 characters per event:
  * prose     - text with no markup: the scan's cost on every ordinary answer;
  * leaked    - a DeepSeek V3.1 call every 1 KB of text: the scan stops after
                the 64th call (what it keeps is bounded), so this one costs
                what the first 64 KB cost, at any size;
  * hostile   - every family's opener with its closers missing or far, over
                and over: a block that runs to the end of the text, searched
                once for its closer.
Each is run as a whole `fraglens check --json` process (the best CPU time of
three runs, the child's), and the scan alone in this process (`scan` on the
text, the best of seven): the figure that matters is the scan's 10x/1x ratio,
which stays near 10 when its cost is linear (the process's ratio is lower: it
includes Python's start and the imports).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tui"))
from cpu import cpu_of_check  # noqa: E402

from fraglens.engine.leaks import scan  # noqa: E402

DS_CALL = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>'
           "<｜tool▁calls▁end｜>")
HOSTILE = (
    '<tool_call>{"name": "f", "arguments": {"a": "xx</tool_call><｜tool▁calls▁begin｜>'
    '<｜tool▁call▁begin｜>g<｜tool▁sep｜>{<arg_key>k</arg_key><arg_value>v [TOOL_CALLS]h[ARGS]'
    '{"b": [1, to=functions.k <|message|>{<|python_tag|>{<tool_call>glm\n<arg_key>a</arg_key>'
)
PROSE = "The quick brown fox jumps over the lazy dog while the model explains its plan. "


def text_of(kind: str, chars: int) -> str:
    if kind == "prose":
        unit = PROSE
    elif kind == "leaked":
        unit = PROSE * 12 + DS_CALL
    else:
        unit = HOSTILE
    return (unit * (chars // len(unit) + 1))[:chars]


def capture(text: str) -> bytes:
    out = []
    for at in range(0, len(text), 100):
        chunk = {"choices": [{"index": 0, "delta": {"content": text[at:at + 100]}}]}
        out.append("data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n")
    out.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def cpu_of_scan(text: str) -> float:
    best = float("inf")
    for _ in range(7):
        start = time.process_time()
        scan(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    base = 100_000 if args.quick else 1_000_000
    print(f"{'stream':<9} {'1x chars':>10} {'check 1x':>9} {'10x':>7} {'ratio':>6}"
          f" {'scan 1x':>9} {'10x':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("prose", "leaked", "hostile"):
            process, alone = [], []
            for size in (base, base * 10):
                text = text_of(kind, size)
                path = Path(tmp, f"{kind}-{size}.sse")
                path.write_bytes(capture(text))
                process.append(cpu_of_check(path))
                alone.append(cpu_of_scan(text))
                os.remove(path)
            print(f"{kind:<9} {base:>10,} {process[0]:>8.2f}s {process[1]:>6.2f}s "
                  f"{process[1] / process[0]:>6.1f} {alone[0] * 1000:>7.1f}ms "
                  f"{alone[1] * 1000:>5.0f}ms {alone[1] / alone[0]:>6.1f}")

if __name__ == "__main__":
    main()
