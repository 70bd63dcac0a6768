"""What a verdict costs when the arguments are broken, and with many calls.

    .venv/bin/python bench/verdicts.py            # the figures in docs/benchmarks.md
    .venv/bin/python bench/verdicts.py --quick    # smaller, for a smoke run

Two ratios, each from streams generated here (Chat Completions SSE, 10-character
argument fragments) and read in process as `fraglens check --json` reads them
(framing, adapter, engine, the JSON document):

  * repaired / ok  - one call of ~64 KB of arguments with a defect, against the
                     same call without it (a strict parse); target: at most 3x.
                     Three defects: a trailing comma before the last brace and
                     a missing comma between two rows (each read exactly by
                     the strict parser once the comma is dropped or put in, no
                     json-repair), and a key without quotes or a value in
                     single quotes in the middle row (json-repair reads the
                     damaged member, the strict parser the rest, and every
                     change is listed by walking both texts);
  * 10x text       - the key without quotes in a call of 24 KB, then 240 KB:
                     the repair's cost grows with the text, not its square;
  * 10x calls      - N calls of ~100 bytes each, then 10 N: finding a call by id
                     is a lookup, so the time grows with the calls; target: at
                     most 15x the time for 10x the calls;
  * history check  - a conversation of N calls answered in reverse order, then
                     10 N, through `fraglens history check`'s validator: pairing
                     a result with its call is a lookup too; the same target,
                     and beside it the growth of a plain linear pass over the
                     same messages (ten times the objects in memory cost more
                     than ten times the time, whatever the code).

Times are CPU seconds of the process, the best of five rounds in which the two
streams of a pair run one after the other, so both see the same machine; each
of the four sections runs in a fresh process of its own. The
garbage collector runs with the thresholds the command line sets for its
batch commands (``fraglens.cli.batch_collector``).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from chunks import chat_chunk  # noqa: E402

from fraglens.cli import batch_collector  # noqa: E402
from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.document import build_report  # noqa: E402

#: the defects of the repaired / ok pairs: the commas have an exact reading,
#: an unquoted key and a single-quoted value only json-repair mends (and the
#: walk lists its changes)
DEFECTS = ("trailing-comma", "missing-comma", "unquoted-key", "single-quoted")


def one_call(arg_bytes: int, defect: str | None) -> bytes:
    """``defect``: None, ``"trailing-comma"`` (at the end), ``"missing-comma"``,
    ``"unquoted-key"`` or ``"single-quoted"`` (mid-call)."""
    rows = []
    size = 0
    while size < arg_bytes:
        rows.append(f'{{"line":{len(rows)},"text":"word {len(rows)} of the call"}}')
        size += len(rows[-1]) + 1
    half = len(rows) // 2
    if defect == "unquoted-key":
        rows[half] = rows[half].replace('"line"', "line")
    if defect == "single-quoted":
        rows[half] = rows[half].replace(f'"word {half} of the call"', f"'word {half} of the call'")
    joined = ",".join(rows[:half]) + ("" if defect == "missing-comma" else ",")
    joined += ",".join(rows[half:])
    text = '{"rows":[' + joined + "]" + ("," if defect == "trailing-comma" else "") + "}"
    out = [chat_chunk({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                                       "function": {"name": "tool", "arguments": ""}}]})]
    for k in range(0, len(text), 10):
        out.append(chat_chunk({"tool_calls": [{"index": 0,
                                               "function": {"arguments": text[k : k + 10]}}]}))
    out.append(chat_chunk({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def many_calls(calls: int) -> bytes:
    """Each call whole in one chunk, with its own id, as Groq or Mistral send them."""
    out = []
    for c in range(calls):
        args = json.dumps({"city": f"city {c}", "unit": "celsius", "days": c % 7})
        out.append(chat_chunk({"tool_calls": [{"index": c, "id": f"call_{c}", "type": "function",
                                               "function": {"name": "get_weather",
                                                            "arguments": args}}]}))
    out.append(chat_chunk({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def conversation(calls: int) -> dict:
    msgs: list[dict] = [{"role": "user", "content": "weather?"}]
    msgs.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{c}", "type": "function",
         "function": {"name": "get_weather", "arguments": "{}"}} for c in range(calls)]})
    msgs += [{"role": "tool", "tool_call_id": f"call_{c}", "content": "sunny"}
             for c in reversed(range(calls))]
    return {"messages": msgs}


def best_of(fn: Callable[[Any], Any], a: Any, b: Any, rounds: int) -> tuple[float, float, Any, Any]:
    """``fn`` on ``a`` and on ``b`` in turns, ``rounds`` times: the best CPU
    time of each, and what each returned."""
    best = [float("inf"), float("inf")]
    out: list[Any] = [None, None]
    for _ in range(rounds):
        for k, arg in enumerate((a, b)):
            gc.collect()
            start = time.process_time()
            out[k] = fn(arg)
            best[k] = min(best[k], time.process_time() - start)
    return best[0], best[1], out[0], out[1]


def best_history(a: dict, b: dict, rounds: int) -> tuple[float, float]:
    from fraglens.history.validate import check_conversation

    few, many, found, more = best_of(check_conversation, a, b, rounds)
    for problems in (found, more):
        assert [p.code for p in problems] == ["tool-results-out-of-order"]
    return few, many


def check(data: bytes) -> dict:
    return build_report(stream_from_bytes(data)[0])


def best_pair(a: bytes, b: bytes, rounds: int) -> tuple[float, float, dict, dict]:
    return best_of(check, a, b, rounds)


SECTIONS = ("repaired", "text", "calls", "history")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller streams, fewer rounds")
    ap.add_argument("--only", choices=SECTIONS, help="one section, in this process")
    opts = ap.parse_args()
    if opts.only is None:
        # each section in a fresh process: a section's heap (a 50,000-call
        # report) would otherwise slow the next one down, the larger of its
        # pair the more
        for name in SECTIONS:
            argv = [sys.executable, __file__, "--only", name] + (["--quick"] if opts.quick else [])
            sys.stdout.flush()
            subprocess.run(argv, check=True)
        return
    batch_collector()  # the garbage collector's thresholds `fraglens check` and `history` run with
    rounds = 2 if opts.quick else 5
    size = 16 * 1024 if opts.quick else 64 * 1024
    calls = 500 if opts.quick else 5000
    {"repaired": repaired_rows, "text": text_rows, "calls": calls_rows,
     "history": history_rows}[opts.only](rounds, size, calls)


def repaired_rows(rounds: int, size: int, calls: int) -> None:
    print(f"one call of {size // 1024} KB in 10-character fragments, check in process "
          f"(CPU s, best of {rounds}):")
    for defect in DEFECTS:
        ok, repaired, ok_doc, rep_doc = best_pair(one_call(size, None), one_call(size, defect),
                                                  rounds)
        assert ok_doc["calls"][0]["status"] == "ok", ok_doc["calls"][0]["status"]
        assert rep_doc["calls"][0]["status"] == "repaired", rep_doc["calls"][0]["status"]
        # the path measured: one comma dropped or put in, or json-repair's two quotes
        assert len(rep_doc["calls"][0]["repairs"]) == (1 if "comma" in defect else 2)
        print(f"  ok        {ok:.4f}")
        print(f"  repaired  {repaired:.4f}   ratio {repaired / ok:.2f}x (target <= 3x), "
              f"{defect}")


def text_rows(rounds: int, size: int, calls: int) -> None:
    small = size * 3 // 8  # 24 KB and 240 KB: ten times as much, under the repair limit
    lo, hi, lo_doc, hi_doc = best_pair(one_call(small, "unquoted-key"),
                                       one_call(10 * small, "unquoted-key"), rounds)
    assert lo_doc["calls"][0]["status"] == hi_doc["calls"][0]["status"] == "repaired"
    print(f"a key without quotes mid-call, ten times the text (CPU s, best of {rounds}):")
    print(f"  {small // 1024:>4} KB  {lo:.4f}")
    print(f"  {10 * small // 1024:>4} KB  {hi:.4f}   ratio {hi / lo:.2f}x (linear: about 10x)")


def calls_rows(rounds: int, size: int, calls: int) -> None:
    few, many, few_doc, many_doc = best_pair(many_calls(calls), many_calls(10 * calls), rounds)
    assert len(many_doc["calls"]) == 10 * len(few_doc["calls"]) == 10 * calls
    print(f"calls with ids, each whole in one chunk, check in process (CPU s, best of {rounds}):")
    print(f"  {calls:>6} calls  {few:.4f}")
    print(f"  {10 * calls:>6} calls  {many:.4f}   ratio {many / few:.2f}x (target <= 15x)")


def history_rows(rounds: int, size: int, calls: int) -> None:
    small, large = conversation(calls), conversation(10 * calls)
    few, many = best_history(small, large, rounds)
    print(f"history check, one turn of calls answered in reverse (CPU s, best of {rounds}):")
    print(f"  {calls:>6} calls  {few:.4f}")
    print(f"  {10 * calls:>6} calls  {many:.4f}   ratio {many / few:.2f}x (target <= 15x)")
    few, many = best_floor(small, large, rounds)
    print("  the floor: one plain pass that parses each call's arguments and keeps a tuple")
    print("  per message; how a linear pass grows here, ten times the messages in memory:")
    print(f"  {calls:>6} calls  {few:.4f}")
    print(f"  {10 * calls:>6} calls  {many:.4f}   ratio {many / few:.2f}x")


def history_floor(doc: dict) -> list:
    out = []
    for i, m in enumerate(doc["messages"]):
        for j, call in enumerate(m.get("tool_calls") or ()):
            json.loads(call["function"]["arguments"])
            out.append((call.get("id"), f"messages[{i}].tool_calls[{j}]"))
        out.append((m.get("role"), f"messages[{i}]", m.get("tool_call_id")))
    return out


def best_floor(a: dict, b: dict, rounds: int) -> tuple[float, float]:
    return best_of(history_floor, a, b, rounds)[:2]


if __name__ == "__main__":
    main()
