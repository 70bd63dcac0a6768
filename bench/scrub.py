"""Report scrub benchmark: `fraglens check --json` of a recording with and without fingerprints.

    .venv/bin/python bench/scrub.py            # ~2.5 MB and ~25 MB recordings
    .venv/bin/python bench/scrub.py --quick    # ~0.25 MB and ~2.5 MB

A recording that carries its request's fingerprints has its report scrubbed
of the key after the pieces are joined (redact.Fingerprints): each head is
searched for in every string of the report, and each place it occurs costs a
SHA-256 of a window. One call of Chat Completions SSE, its arguments a long
string in pieces of ~120 characters:
  * plain  - text where no head occurs: the search's cost on every report;
  * heads  - the key's head every 30 characters (and the key's first
             characters): the most windows to hash a text can hold.
Each recording is checked as a whole process (the best CPU time of three
runs, the child's), without fingerprints and with them, at 1x and 10x. The
figures that matter are the ratios: with/without at one size (what the scrub
adds), and the scrub's extra time at 10x over 1x (near 10 when linear).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tui"))
from cpu import cpu_of_check  # noqa: E402

from fraglens.framing.recording import RecordingWriter  # noqa: E402
from fraglens.redact import Secrets  # noqa: E402

KEY = "sk-bench-KEY-0123456789abcdef"
PIECES = {"plain": "lorem ipsum dolor sit amet " * 4, "heads": "sk-p ab sk-bench-KEY-01 xyz " * 4}


def _event(delta: dict) -> bytes:
    doc = {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def recording(kind: str, events: int, prints: bool) -> bytes:
    out = io.BytesIO()
    writer = RecordingWriter(out)
    secrets = Secrets([("bench", KEY)]).fingerprints(salt=b"bench-salt-16byt") if prints else None
    writer.start({"method": "POST", "url": "http://h/v1/chat/completions"}, secrets=secrets)
    call = {"index": 0, "id": "c", "type": "function"}
    body = [_event({"tool_calls": [{**call, "function": {"name": "f", "arguments": '{"a": "'}}]})]
    piece = {"tool_calls": [{"index": 0, "function": {"arguments": PIECES[kind]}}]}
    body += [_event(piece)] * events
    body.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    body.append(b"data: [DONE]\n\n")
    writer.chunk(0.1, b"".join(body))
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    events = 1_000 if parser.parse_args().quick else 10_000
    print(f"{'kind':<6} {'size':>9} {'without':>8} {'with':>8} {'with/without':>12}")
    extra: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in PIECES:
            for scale in (1, 10):
                times = []
                for prints in (False, True):
                    path = Path(tmp) / f"{kind}-{scale}-{prints}.fraglens"
                    path.write_bytes(recording(kind, events * scale, prints))
                    times.append(cpu_of_check(path))
                size = f"{path.stat().st_size / 1e6:.1f} MB"
                print(f"{kind:<6} {size:>9} {times[0]:>7.2f}s {times[1]:>7.2f}s "
                      f"{times[1] / times[0]:>11.2f}x")  # fmt: skip
                extra.setdefault(kind, []).append(max(times[1] - times[0], 1e-3))
    for kind, (one, ten) in extra.items():
        print(f"{kind}: the scrub's extra CPU at 10x / at 1x = {ten / one:.1f}")


if __name__ == "__main__":
    main()
