"""Engine benchmark: fraglens vs the floor vs the official SDK, in one run.

    .venv/bin/python bench/engine.py            # the figures in docs/benchmarks.md
    .venv/bin/python bench/engine.py --quick    # smaller, for a smoke run

Streams are generated here (Chat Completions SSE):
  * one call with ~1 MB of arguments in ~100k fragments (and ~0.1 MB for growth),
  * eight interleaved calls of ~100 KB each.
Measured on the same bytes:
  * floor     - split the SSE text, json.loads per event, append, join: the least
                any reassembler must do;
  * fraglens  - framing + adapter + engine (slots, finalize) + the
                `check --json` document, in process, through the same
                `load.stream_from_bytes` the command uses; `check` scans a
                call only when asked, and a strict parse of a whole value
                proves the scan's end, so a valid call is never scanned;
  * scanned   - the same with every call's scanner run over every fragment,
                as the app does to show each step: the scanner's cost;
  * CLI       - `fraglens check --json` as a subprocess, end to end (Python
                start, imports, reading the file, writing the JSON);
  * openai    - json.loads + ChatCompletionChunk + ChatCompletionStreamState
                (the SDK's own accumulator), when the SDK is installed.
Times are CPU seconds (this process's, or the child's for the CLI): the best
of seven interleaved rounds of floor, fraglens and scanned, of three CLI runs,
of one SDK run. On a shared machine wall time also counts the other tenants,
and interleaving lets every contender see the same machine.
Peak memory of the fraglens pipeline is measured with tracemalloc in a separate
pass (tracing slows it down, so it is not timed).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fraglens.load import stream_from_bytes  # noqa: E402
from fraglens.report import build_report  # noqa: E402


def make_stream(calls: int, arg_bytes: int, frag: int = 10) -> bytes:
    """SSE text: `calls` calls whose arguments (~arg_bytes each) arrive in
    `frag`-character fragments, interleaved round-robin."""
    texts = []
    for c in range(calls):
        items = []
        size = 0
        i = 0
        while size < arg_bytes:
            item = f'{{"line":{i},"text":"word {i} of call {c}, déjà vu \\"quoted\\""}}'
            items.append(item)
            size += len(item) + 1
            i += 1
        texts.append('{"rows":[' + ",".join(items) + "]}")
    head = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench",'
    out = []
    for c in range(calls):
        tc = {"index": c, "id": f"call_{c}", "type": "function",
              "function": {"name": f"tool_{c}", "arguments": ""}}
        delta = {"tool_calls": [tc]}
        out.append(f'data: {head}"choices":[{{"index":0,"delta":{json.dumps(delta)}}}]}}\n\n')
    pos = [0] * calls
    live = list(range(calls))
    while live:
        for c in list(live):
            piece = texts[c][pos[c] : pos[c] + frag]
            pos[c] += frag
            if not piece:
                live.remove(c)
                continue
            delta = {"tool_calls": [{"index": c, "function": {"arguments": piece}}]}
            out.append(
                f'data: {head}"choices":[{{"index":0,"delta":'
                f"{json.dumps(delta, ensure_ascii=False)}}}]}}\n\n"
            )
    finish = '"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'
    out.append(f"data: {head}{finish}\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def floor(data: bytes) -> dict[int, str]:
    bufs: dict[int, list[str]] = {}
    for block in data.decode().split("\n\n"):
        if not block.startswith("data: ") or block == "data: [DONE]":
            continue
        chunk = json.loads(block[6:])
        for choice in chunk["choices"]:
            for tc in choice["delta"].get("tool_calls") or ():
                bufs.setdefault(tc["index"], []).append(tc["function"].get("arguments") or "")
    return {k: "".join(v) for k, v in bufs.items()}


def fraglens(data: bytes) -> dict:
    """What `fraglens check --json` does after reading the file."""
    return build_report(stream_from_bytes(data)[0])


def fraglens_scanned(data: bytes) -> dict:
    """The same, with every call's scanner caught up with every fragment."""
    stream = stream_from_bytes(data)[0]
    for call in stream.reassembler.calls:
        call.catch_up()  # runs the scanner over every fragment
    return build_report(stream)


def openai_sdk(data: bytes):
    from openai._models import construct_type
    from openai.lib.streaming.chat._completions import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    for block in data.decode().split("\n\n"):
        if not block.startswith("data: ") or block == "data: [DONE]":
            continue
        # what the SDK's own Stream does with each event
        chunk = construct_type(type_=ChatCompletionChunk, value=json.loads(block[6:]))
        for _ in state.handle_chunk(chunk):
            pass
    return state.current_completion_snapshot


def timed(fn, data: bytes, repeat: int = 5) -> tuple[float, object]:
    """The best of ``repeat`` runs, in CPU seconds of this process: on a shared
    machine wall time also counts other tenants' work."""
    best, outs = rounds([(fn, data)], repeat)
    return best[0], outs[0]


def rounds(runs, repeat: int = 7) -> tuple[list[float], list[object]]:
    """Each ``(function, data)`` once per round, ``repeat`` rounds, the best time
    of each: interleaved, so that all of them see the same machine when it changes."""
    best = [float("inf")] * len(runs)
    outs: list[object] = [None] * len(runs)
    for _ in range(repeat):
        for i, (fn, data) in enumerate(runs):
            outs[i] = None
            gc.collect()
            t = time.process_time()
            outs[i] = fn(data)
            best[i] = min(best[i], time.process_time() - t)
    return best, outs


def peak_memory(data: bytes) -> int:
    gc.collect()
    tracemalloc.start()
    fraglens(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _children_cpu() -> float:
    """CPU seconds used by finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_seconds(data: bytes, repeat: int = 3) -> float:
    exe = ROOT / ".venv" / "bin" / "fraglens"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "fraglens"]
    with tempfile.NamedTemporaryFile(suffix=".sse", delete=False) as f:
        f.write(data)
    try:
        best = float("inf")
        for _ in range(repeat):
            before = _children_cpu()
            subprocess.run(
                [*cmd, "check", "--json", f.name], stdout=subprocess.DEVNULL, check=False
            )
            best = min(best, _children_cpu() - before)
        return best
    finally:
        os.unlink(f.name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-sdk", action="store_true")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    cases = [
        ("1 call, 0.1 MB", 1, 100_000 // scale),
        ("1 call, 1 MB", 1, 1_000_000 // scale),
        ("8 calls x 100 KB", 8, 100_000 // scale),
    ]
    rows = []
    for label, calls, size in cases:
        data = make_stream(calls, size)
        events = data.count(b"\n\ndata:") + 1
        (t_floor, t_frag, t_scanned), (want, doc, scanned) = rounds(
            [(floor, data), (fraglens, data), (fraglens_scanned, data)]
        )
        got = {c["index"]: c["arguments_raw"] for c in doc["calls"]}
        assert got == want, "fraglens disagrees with the floor"
        assert all(c["status"] == "ok" for c in doc["calls"])
        assert scanned == doc, "scanning every fragment changed the report"
        t_cli = cli_seconds(data)
        t_sdk = None
        if not args.no_sdk:
            try:
                t_sdk, snap = timed(openai_sdk, data, repeat=1)
                sdk_args = {
                    tc.index: tc.function.arguments for tc in snap.choices[0].message.tool_calls
                }
                assert sdk_args == want, "the SDK disagrees with the floor"
            except ImportError:
                t_sdk = None
        peak = peak_memory(data)
        rows.append((label, len(data), events, t_floor, t_frag, t_scanned, t_cli, t_sdk, peak))
    print(f"{'stream':<18}{'input':>7}{'events':>8}{'floor':>8}{'fraglens':>9}{'x floor':>8}"
          f"{'scanned':>9}{'x floor':>8}{'CLI':>7}{'x floor':>8}{'openai SDK':>11}"
          f"{'SDK/frag':>9}{'peak mem':>9}")
    for label, size, events, tf, tg, tsc, tc, ts, peak in rows:
        sdk = f"{ts:.2f}s" if ts is not None else "-"
        ratio = f"{ts / tg:.0f}x" if ts is not None else "-"
        print(
            f"{label:<18}{size / 1e6:>6.1f}M{events:>8}{tf:>7.2f}s{tg:>8.2f}s{tg / tf:>7.2f}x"
            f"{tsc:>8.2f}s{tsc / tf:>7.2f}x{tc:>6.2f}s{tc / tf:>7.2f}x{sdk:>11}{ratio:>9}"
            f"{peak / size:>8.1f}x"
        )
    # growth: both sizes in the same rounds, so a slow spell hits both
    small, big = make_stream(1, 100_000 // scale), make_stream(1, 1_000_000 // scale)
    (fs, fb, gs, gb), _ = rounds(
        [(floor, small), (floor, big), (fraglens, small), (fraglens, big)], repeat=9
    )
    small, big = (fs, gs), (fb, gb)
    print(f"growth 0.1 MB -> 1 MB (10x input): floor {big[0] / small[0]:.1f}x, "
          f"fraglens {big[1] / small[1]:.1f}x")


if __name__ == "__main__":
    main()
