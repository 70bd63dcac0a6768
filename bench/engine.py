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
import base64
import gc
import json
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bytecode import compile_package  # noqa: E402
from cpu import children_cpu  # noqa: E402

from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.document import build_report  # noqa: E402


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


# -- one stream per wire format ---------------------------------------------------------


def _args_text(arg_bytes: int) -> str:
    items, size, i = [], 0, 0
    while size < arg_bytes:
        item = f'{{"line":{i},"text":"word {i} of call 0, déjà vu \\"quoted\\""}}'
        items.append(item)
        size += len(item) + 1
        i += 1
    return '{"rows":[' + ",".join(items) + "]}"


def _pieces(arg_bytes: int, frag: int) -> list[str]:
    text = _args_text(arg_bytes)
    return [text[i : i + frag] for i in range(0, len(text), frag)]


def _sse(events: list[tuple[str | None, dict]]) -> bytes:
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out = []
    for name, payload in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {dumps(payload)}\n\n")
    return "".join(out).encode()


def _anthropic_events(pieces: list[str]) -> list[dict]:
    return [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message",
         "role": "assistant", "content": [], "usage": {"input_tokens": 10}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "tool_0", "input": {}}},
        *({"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": p}} for p in pieces),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 99}},
        {"type": "message_stop"},
    ]


#: what Bedrock pads each event-stream payload with: a ``"p"`` field holding a
#: prefix of this, of a length that varies from message to message (so that a
#: message's size does not tell its content's)
_PAD = string.ascii_lowercase + string.ascii_uppercase + string.digits


def _padding() -> Callable[[], str]:
    """A source of ``"p"`` values as real Bedrock captures carry them: a
    prefix of _PAD of a random length, seeded so every run times the same bytes."""
    lengths = random.Random(14).randint
    return lambda: _PAD[: lengths(1, len(_PAD))]


def format_stream(fmt: str, arg_bytes: int = 1_000_000, frag: int = 10) -> bytes:
    """One call whose ~arg_bytes of arguments arrive in frag-character pieces,
    as ``fmt`` streams it (Ollama, whose calls come whole: the same number of
    text lines, then the call)."""
    from fraglens.framing.eventstream import encode_message

    pieces = _pieces(arg_bytes, frag)
    if fmt == "openai-chat":
        return make_stream(1, arg_bytes, frag)
    if fmt == "anthropic":
        return _sse([(e["type"], e) for e in _anthropic_events(pieces)])
    if fmt == "openai-responses":
        item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "tool_0",
                "arguments": ""}
        return _sse([
            ("response.created", {"type": "response.created", "response": {"id": "resp_1"}}),
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": item}),
            *(("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "item_id": "fc_1",
                "output_index": 0, "delta": p}) for p in pieces),
            ("response.completed", {"type": "response.completed",
                                    "response": {"id": "resp_1", "status": "completed"}}),
        ])
    if fmt == "cohere":
        return _sse([
            ("message-start", {"type": "message-start", "id": "m1"}),
            ("tool-call-start", {"type": "tool-call-start", "index": 0, "delta": {"message": {
                "tool_calls": {"id": "c1", "type": "function",
                               "function": {"name": "tool_0", "arguments": ""}}}}}),
            *(("tool-call-delta", {"type": "tool-call-delta", "index": 0, "delta": {"message": {
                "tool_calls": {"function": {"arguments": p}}}}}) for p in pieces),
            ("tool-call-end", {"type": "tool-call-end", "index": 0}),
            ("message-end", {"type": "message-end",
                             "delta": {"finish_reason": "TOOL_CALL"}}),
        ])
    if fmt == "ai-sdk":
        return _sse([
            (None, {"type": "start"}),
            (None, {"type": "tool-input-start", "toolCallId": "c1", "toolName": "tool_0"}),
            *((None, {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": p})
              for p in pieces),
            (None, {"type": "finish"}),
        ]) + b"data: [DONE]\n\n"
    if fmt == "bedrock-converse":
        pad = _padding()

        def ev(name: str, payload: dict) -> bytes:
            body = json.dumps({**payload, "p": pad()}, ensure_ascii=False,
                              separators=(",", ":")).encode()
            return encode_message({":event-type": name, ":message-type": "event"}, body)
        return b"".join([
            ev("messageStart", {"role": "assistant"}),
            ev("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
                "toolUseId": "tooluse_1", "name": "tool_0"}}}),
            *(ev("contentBlockDelta", {"contentBlockIndex": 0,
                                       "delta": {"toolUse": {"input": p}}}) for p in pieces),
            ev("contentBlockStop", {"contentBlockIndex": 0}),
            ev("messageStop", {"stopReason": "tool_use"}),
        ])
    if fmt == "bedrock-invoke":
        pad = _padding()

        def chunk(inner: dict) -> bytes:
            raw = json.dumps(inner, ensure_ascii=False, separators=(",", ":")).encode()
            body = json.dumps({"bytes": base64.b64encode(raw).decode(), "p": pad()},
                              separators=(",", ":")).encode()
            return encode_message({":event-type": "chunk", ":message-type": "event"}, body)
        return b"".join(chunk(e) for e in _anthropic_events(pieces))
    if fmt == "ollama":
        head = '{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant",'
        dumps = json.JSONEncoder(ensure_ascii=False).encode
        lines = [f'{head}"content":{dumps(p)}}},"done":false}}' for p in pieces]
        call = {"function": {"name": "tool_0", "arguments": json.loads(_args_text(arg_bytes))}}
        lines.append(f'{head}"content":"","tool_calls":[{dumps(call)}]}},"done":false}}')
        lines.append(f'{head}"content":""}},"done":true,"done_reason":"stop","eval_count":9}}')
        return ("\n".join(lines) + "\n").encode()
    raise ValueError(fmt)


#: the formats with a per-format row (Gemini and DashScope send whole values or
#: cumulative snapshots: there is no 100k-fragment argument stream to time)
FORMAT_ROWS = ("openai-chat", "anthropic", "openai-responses", "cohere", "bedrock-converse",
               "bedrock-invoke", "ollama", "ai-sdk")


def _child(cmd: list[str]) -> float:
    """Run ``cmd``; its CPU seconds (user + system), its own (wait4)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def format_rows(rounds_: int, arg_bytes: int) -> None:
    """Whole processes, floor and fraglens in turns, per format: medians."""
    exe = ROOT / ".venv" / "bin" / "fraglens"
    check = [str(exe)] if exe.exists() else [sys.executable, "-m", "fraglens"]
    floors = [sys.executable, str(ROOT / "bench" / "floors.py")]
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in FORMAT_ROWS:
            path = Path(tmp) / f"{fmt}.bin"
            path.write_bytes(format_stream(fmt, arg_bytes))
            files[fmt] = path
            doc = fraglens(path.read_bytes())
            assert doc["format"] == fmt, (fmt, doc["format"])
            assert [c["status"] for c in doc["calls"]] == ["ok"], fmt
        times: dict[str, tuple[list[float], list[float]]] = {f: ([], []) for f in FORMAT_ROWS}
        for _ in range(rounds_):
            for fmt in FORMAT_ROWS:
                times[fmt][0].append(_child([*floors, fmt, str(files[fmt])]))
                times[fmt][1].append(_child([*check, "check", "--json", str(files[fmt])]))
        print(f"\nper format, whole processes (CPU s, median of {rounds_} in turns): "
              f"fraglens check --json vs the stdlib floor; memory: tracemalloc peak "
              f"of the pipeline in process / input")
        print(f"{'format':<18}{'input':>7}{'events':>8}{'floor':>8}{'check':>8}{'x floor':>8}"
              f"{'mem/input':>10}")
        for fmt in FORMAT_ROWS:
            data = files[fmt].read_bytes()
            events = len(stream_from_bytes(data)[0].events)
            tf, tg = (statistics.median(v) for v in times[fmt])
            mem = peak_memory(data)
            print(f"{fmt:<18}{len(data) / 1e6:>6.1f}M{events:>8}{tf:>7.2f}s{tg:>7.2f}s"
                  f"{tg / tf:>7.2f}x{mem / len(data):>9.1f}x")


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


def cli_seconds(data: bytes, repeat: int = 3) -> float:
    exe = ROOT / ".venv" / "bin" / "fraglens"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "fraglens"]
    with tempfile.NamedTemporaryFile(suffix=".sse", delete=False) as f:
        f.write(data)
    try:
        best = float("inf")
        for _ in range(repeat):
            before = children_cpu()
            subprocess.run(
                [*cmd, "check", "--json", f.name], stdout=subprocess.DEVNULL, check=False
            )
            best = min(best, children_cpu() - before)
        return best
    finally:
        os.unlink(f.name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-sdk", action="store_true")
    ap.add_argument("--formats-only", action="store_true", help="only the per-format rows")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the per-format rows")
    args = ap.parse_args()
    compile_package()  # the CLI processes below run as an installed fraglens does
    if args.formats_only:
        format_rows(args.rounds, 1_000_000 // (10 if args.quick else 1))
        return
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
    format_rows(args.rounds, 1_000_000 // scale)


if __name__ == "__main__":
    main()
