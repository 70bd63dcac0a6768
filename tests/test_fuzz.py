"""Mutated captures never crash: only exit 0, 1 or 2, never a traceback.

Every sample stream, and a recording made of each, is mutated (bytes flipped,
the end cut off, a stretch spliced in from elsewhere in the file or from
another sample) and run through ``check``, ``check --json`` and
``history build`` in process. The mutations are drawn from a fixed seed, so a
failure names a case that can be run again.

CI runs ``FRAGLENS_FUZZ`` mutations (default 300, three commands each); the
issue's acceptance run is ``FRAGLENS_FUZZ=5000 pytest tests/test_fuzz.py``.
"""

from __future__ import annotations

import io
import os
import random

import pytest

from fraglens.cli import main
from fraglens.framing.recording import RecordingWriter

from .conftest import SAMPLES

CASES = int(os.environ.get("FRAGLENS_FUZZ", "300"))
SEED = 20261201
COMMANDS = (["check"], ["check", "--json"], ["history", "build"])


def _recording(data: bytes) -> bytes:
    """The sample as a recording: its bytes in reads of a few hundred bytes."""
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "https://api.example.com/v1/chat/completions",
                  "headers": {"authorization": "Bearer sk-never-written"}, "body": {}})
    writer.response(200, {"content-type": "text/event-stream"}, t=0.1)
    for k in range(0, len(data), 300):
        writer.chunk(0.1 + k / 1e5, data[k : k + 300])
    writer.end("eof", t=1.0)
    return out.getvalue()


def _inputs() -> list[tuple[str, bytes]]:
    streams = [(p.name, p.read_bytes()) for p in sorted(SAMPLES.glob("*.sse"))]
    # the damaged recording samples too, named .rec to be written as recordings
    damaged = [(p.name + ".rec", p.read_bytes()) for p in sorted(SAMPLES.glob("*.jsonl"))]
    return streams + [(name + ".rec", _recording(data)) for name, data in streams] + damaged


def _mutate(rng: random.Random, data: bytes, others: list[bytes]) -> tuple[str, bytes]:
    kind = rng.choice(("flip", "truncate", "splice", "splice-other", "mixed"))
    buf = bytearray(data)
    if kind in ("flip", "mixed"):
        for _ in range(rng.randint(1, 8)):
            if buf:
                buf[rng.randrange(len(buf))] = rng.randrange(256)
    if kind in ("truncate", "mixed"):
        buf = buf[: rng.randrange(len(buf) + 1)]
    if kind in ("splice", "splice-other", "mixed"):
        source = data if kind == "splice" else rng.choice(others)
        a = rng.randrange(len(source) + 1)
        piece = source[a : a + rng.randint(1, 400)]
        at = rng.randrange(len(buf) + 1)
        end = at + rng.randint(0, 40)  # replace a little, or only insert
        buf[at:end] = piece
    return kind, bytes(buf)


def _cases() -> list[tuple[str, str, bytes]]:
    rng = random.Random(SEED)
    inputs = _inputs()
    others = [data for _, data in inputs]
    out = []
    for n in range(CASES):
        name, data = inputs[n % len(inputs)]
        kind, mutated = _mutate(rng, data, others)
        out.append((f"{n}-{kind}-{name}", name, mutated))
    return out


@pytest.mark.parametrize("chunk", range(6))
def test_mutated_captures_exit_0_1_or_2_and_never_raise(tmp_path, capsys, chunk):
    # six slices of the cases, so a run shows progress and a failure is narrower
    failures = []
    for label, name, data in _cases()[chunk::6]:
        path = tmp_path / (label + (".jsonl" if name.endswith(".rec") else ".sse"))
        path.write_bytes(data)
        for command in COMMANDS:
            try:
                code = main([*command, str(path)])
            except SystemExit as exc:  # argparse: usage errors only
                code = exc.code
            except Exception as exc:  # noqa: BLE001 - the point: no exception escapes
                failures.append(f"{label} {' '.join(command)}: {type(exc).__name__}: {exc}")
                continue
            finally:
                capsys.readouterr()
            if code not in (0, 1, 2):
                failures.append(f"{label} {' '.join(command)}: exit {code}")
        path.unlink()
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])
