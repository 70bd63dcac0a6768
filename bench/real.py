"""`fraglens check` on streams shaped as providers send them, against two floors.

    .venv/bin/python bench/real.py                        # 1 MB rows, 1/2/8 calls, 5 rounds
    .venv/bin/python bench/real.py --mb 10 --calls 1      # the 10 MB rows
    .venv/bin/python bench/real.py --formats anthropic,gemini --rounds 7
    .venv/bin/python bench/real.py --before ../main       # another checkout's check beside

Each row is one capture from ``bench/shapes.py`` (real per-event variation,
``--mb`` MB of arguments in all, shared by ``calls`` calls, in 10-character
pieces: about 100k of them per MB), written to a file and read by whole
processes that take turns in every round:

- **floor**: ``bench/floors.py FORMAT FILE``, the least a reader of the
  format does with the standard library alone (cut the events, decode each
  payload with json's C scanner, append the pieces, join, parse);
- **msgspec**: the same with msgspec's decoder, from bytes;
- **check**: ``fraglens check --json FILE``;
- **before** (with ``--before DIR``): the same command from another checkout
  (``DIR/tui`` first on the path), so that a change is measured against what
  it changes in the same rounds.

The figures are the medians of the rounds' CPU seconds (user + system, from
``getrusage`` of the children), so the other tenants of a shared machine
count less; the ratios are check's median over each floor's. **rss/in** is
the check process's peak resident set (as ``/usr/bin/time`` reports it),
less that of ``check`` on a 9-event capture (the interpreter and the
imports), over the input's size; **trace/in** is tracemalloc's peak for the
pipeline in process (framing to report) over the input's size.

After the real shapes come the synthetic rows (``identical``: one
byte-identical envelope around every piece, the shape the bulk readers were
first built on) and a recording: the Chat Completions body as a fraglens
recording of 1-3 events per read, some reads cut inside an event or inside a
character, against the same body as SSE; written as fraglens writes it
(version 3), and as version 1 (JSON lines) for comparison. Every row's report is checked
before it is timed: the format, every call ``ok``, and each call's
arguments equal to what the generator wrote.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tui"))
sys.path.insert(0, str(ROOT / "bench"))

from bytecode import compile_package  # noqa: E402
from cpu import children_cpu  # noqa: E402
from shapes import FORMATS, args_text, identical, real_shape, recording  # noqa: E402

from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.document import build_report  # noqa: E402

#: the formats the synthetic identical-envelope streams exist for
IDENTICAL = ("openai-chat", "anthropic", "openai-responses", "cohere", "bedrock-converse",
             "bedrock-invoke", "ollama", "ai-sdk")


def _child(cmd: list[str], env: dict[str, str] | None = None,
           codes: tuple[int, ...] = (0, 1)) -> tuple[float, int]:
    """Run ``cmd``: its CPU seconds (user + system) and peak RSS in bytes. The
    RSS is what ``/usr/bin/time`` reports of it: the child's own ``ru_maxrss``
    carries this process's peak (the captures it built) over fork and exec.
    ``codes``: the exit statuses that are a run (check exits 1 on findings; a
    floor exits 0, and 1 when it failed, msgspec missing say)."""
    before = children_cpu()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    _, err = proc.communicate()
    if proc.returncode not in codes:
        raise RuntimeError(f"{cmd} exited {proc.returncode}: {err.decode().strip()[-300:]}")
    return children_cpu() - before, int(err.decode().strip().splitlines()[-1]) * 1024


def _verify(label: str, fmt: str, calls: int, total: int, data: bytes) -> None:
    doc = build_report(stream_from_bytes(data)[0])
    want_fmt = "gemini" if fmt == "gemini-long" else fmt
    assert doc["format"] == want_fmt, (label, doc["format"])
    assert [c["status"] for c in doc["calls"]] == ["ok"] * calls, label
    if fmt != "gemini-long":
        got = [json.loads(c["arguments_raw"]) for c in doc["calls"]]
        assert got == [json.loads(args_text(c, total // calls)) for c in range(calls)], label


def _trace(data: bytes) -> int:
    gc.collect()
    tracemalloc.start()
    build_report(stream_from_bytes(data)[0])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1.0, help="MB of arguments per call")
    ap.add_argument("--calls", default="1,2,8", help="calls per stream, comma-separated")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-trace", action="store_true", help="skip the tracemalloc column")
    ap.add_argument("--before", help="a checkout whose check is timed beside (its tui/ first)")
    ap.add_argument("--identical", default=",".join(IDENTICAL),
                    help="the formats of the synthetic identical-envelope rows")
    ap.add_argument("--no-extra", action="store_true",
                    help="only the real shapes (no identical rows, no recording)")
    args = ap.parse_args()
    compile_package()  # the processes below run as an installed fraglens does
    # -m rather than the installed script: a copy of another commit (PYTHONPATH
    # pointing at its tui/) is then timed the same way
    check = [sys.executable, "-m", "fraglens"]
    floor = [sys.executable, str(ROOT / "bench" / "floors.py")]
    total = int(args.mb * 1e6)
    rows: list[tuple[str, str, int, bytes]] = []
    for fmt in args.formats.split(","):
        for calls in (int(c) for c in args.calls.split(",")):
            # 8 calls of 10 MB would be 100M-event captures; the 10 MB rows are 1-2 calls
            wire = "interleaved" if calls > 1 and fmt in {"openai-chat", "dashscope",
                                                          "ai-sdk"} else "in turn"
            label = f"{fmt}, {calls} call{'s' if calls > 1 else ''}" + (
                f" ({wire})" if calls > 1 else "")
            rows.append((label, fmt, calls, real_shape(fmt, calls, total // calls)))
    if not args.no_extra:
        for fmt in IDENTICAL:
            if fmt in args.formats.split(",") and fmt in args.identical.split(","):
                rows.append((f"{fmt}, identical (synthetic)", fmt, 1, identical(fmt, 1, total)))
        body = real_shape("openai-chat", 1, total)
        rows.append(("chat body as SSE", "openai-chat", 1, body))
        rows.append(("the same as a recording", "openai-chat", 1, recording(body)))
        rows.append(("the same, recording version 1", "openai-chat", 1,
                     recording(body, version=1)))
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, (label, fmt, calls, data) in enumerate(rows):
            if "identical" not in label:
                _verify(label, fmt, calls, total, data)
            path = Path(tmp) / f"{i}.bin"
            path.write_bytes(data)
            files.append(path)
        # a recording's floors read the body it recorded (the SSE row before them)
        sse_row = next((i for i, row in enumerate(rows) if row[0] == "chat body as SSE"), 0)
        floor_files = [files[sse_row] if "recording" in rows[i][0] else files[i]
                       for i in range(len(rows))]
        tiny = Path(tmp) / "tiny.sse"
        tiny.write_bytes(real_shape("openai-chat", 1, 100))
        base = statistics.median(_child([*check, "check", "--json", str(tiny)])[1]
                                 for _ in range(3))
        times: list[tuple[list[float], ...]] = [([], [], [], []) for _ in rows]
        rss: list[list[int]] = [[] for _ in rows]
        before_env = None
        if args.before:
            before_env = {**os.environ, "PYTHONPATH": str(Path(args.before).resolve() / "tui")}
            compileall.compile_dir(str(Path(args.before).resolve() / "tui" / "fraglens"), quiet=1)
        for _ in range(args.rounds):
            for i, (_, fmt, _, _) in enumerate(rows):
                times[i][0].append(_child([*floor, fmt, str(floor_files[i])], codes=(0,))[0])
                times[i][1].append(_child([*floor, "--msgspec", fmt, str(floor_files[i])],
                                          codes=(0,))[0])
                cpu, peak = _child([*check, "check", "--json", str(files[i])])
                times[i][2].append(cpu)
                rss[i].append(peak)
                if before_env is not None:
                    times[i][3].append(_child([*check, "check", "--json", str(files[i])],
                                              before_env)[0])
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"check --json vs the floors, whole processes, CPU s, median of {args.rounds} in turns; "
          f"{args.mb:g} MB of arguments per stream; load average at the end {' '.join(load)}")
    before = f"{'before':>7}{'x floor':>8}" if args.before else ""
    print(f"{'stream':<40}{'input':>7}{'floor':>7}{'msgspec':>8}{before}{'check':>7}{'x floor':>8}"
          f"{'x msgspec':>10}{'rss/in':>7}{'trace/in':>9}")
    for i, (label, _, _, data) in enumerate(rows):
        tf, tm, tc = (statistics.median(v) for v in times[i][:3])
        if args.before:
            tb = statistics.median(times[i][3])
            before = f"{tb:>6.2f}s{tb / tf:>7.2f}x"
        trace = "-" if args.no_trace else f"{_trace(data) / len(data):.1f}x"
        print(f"{label:<40}{len(data) / 1e6:>6.1f}M{tf:>6.2f}s{tm:>7.2f}s{before}{tc:>6.2f}s"
              f"{tc / tf:>7.2f}x{tc / tm:>9.2f}x{(max(rss[i]) - base) / len(data):>6.1f}x"
              f"{trace:>9}")
        sys.stdout.flush()
    if not args.no_extra:
        sse = statistics.median(times[-3][2])
        for k, name in ((-2, "the recording"), (-1, "the recording, version 1")):
            rec = statistics.median(times[k][2])
            print(f"{name} / the same body as SSE: {rec / sse:.2f}x the time, "
                  f"{max(rss[k]) / max(rss[-3]):.2f}x the peak RSS")


if __name__ == "__main__":
    main()
