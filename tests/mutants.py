"""Mutated captures of the three kinds users hand fraglens: streams, recordings, HARs.

Every sample stream (SSE, NDJSON, AWS event stream) is the seed of a stream, of
a recording made of it, and of a HAR export holding it; the damaged recording
samples are seeds too. A case is one seed mutated: bytes flipped, the end cut
off, a stretch spliced in from the same seed or another one, or all three; a
HAR is mutated in its bytes or in its shape (the body inside it damaged, a
member of the wrong type, a URL with a lone surrogate, base64 that is not).
Case ``n`` of a seed number depends on nothing but the two, so any case can
be made again alone: ``tests/test_fuzz.py`` runs a few hundred in the suite,
``make fuzz`` (bench/fuzz.py) thousands, each under a watchdog.
"""

from __future__ import annotations

import base64
import io
import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fraglens.framing.recording import RecordingWriter

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SEED = 20261201
KINDS = ("stream", "recording", "har")

_CONTENT_TYPES = {
    ".sse": "text/event-stream",
    ".ndjson": "application/x-ndjson",
    ".eventstream": "application/vnd.amazon.eventstream",
}
_REQUEST = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
                "type": "object", "properties": {"city": {"type": "string"}}}}}]}
#: what a case is run through: every command that reads a capture a user gives
COMMANDS = (("check",), ("check", "--json"), ("history", "build"))


@dataclass(frozen=True)
class Case:
    label: str
    #: "stream", "recording" or "har": the file's suffix follows
    kind: str
    data: bytes

    @property
    def suffix(self) -> str:
        return {"stream": ".sse", "recording": ".jsonl", "har": ".har"}[self.kind]


@cache
def _streams() -> tuple[tuple[str, bytes], ...]:
    paths = sorted(p for p in SAMPLES.iterdir() if p.suffix in _CONTENT_TYPES)
    return tuple((p.name, p.read_bytes()) for p in paths)


@cache
def _damaged_recordings() -> tuple[tuple[str, bytes], ...]:
    return tuple((p.name, p.read_bytes()) for p in sorted(SAMPLES.glob("*.jsonl")))


def recording(name: str, body: bytes, version: int = 3) -> bytes:
    """``body`` as a recording: its bytes in reads of a few hundred bytes;
    ``version`` 3 as fraglens writes it, or 1 (JSON lines)."""
    out = io.BytesIO()
    writer = RecordingWriter(out, version=version)
    writer.start({"method": "POST", "url": "https://api.example.com/v1/chat/completions",
                  "headers": {"authorization": "Bearer sk-never-written"}, "body": _REQUEST},
                 created="2026-12-01T10:00:00.000Z")
    ctype = _CONTENT_TYPES.get(Path(name).suffix, "text/event-stream")
    writer.response(200, {"content-type": ctype}, t=0.1)
    for k in range(0, len(body), 300):
        writer.chunk(0.1 + k / 1e5, body[k : k + 300])
    writer.end("eof", t=1.0)
    return out.getvalue()


def har(name: str, body: bytes, url: str = "https://api.example.com/v1/chat/completions") -> dict:
    """A HAR export holding one exchange whose response body is ``body``."""
    binary = Path(name).suffix == ".eventstream"
    content = {"mimeType": _CONTENT_TYPES.get(Path(name).suffix, "text/event-stream"),
               "size": len(body)}
    if binary:
        content.update(text=base64.b64encode(body).decode(), encoding="base64")
    else:
        content["text"] = body.decode("utf-8", "replace")
    return {"log": {"version": "1.2", "creator": {"name": "fuzz", "version": "1"}, "entries": [{
        "startedDateTime": "2026-12-01T10:00:00.000Z",
        "time": 812.5,
        "request": {"method": "POST", "url": url, "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "Authorization", "value": "Bearer sk-never-written"},
                                {"name": "Content-Type", "value": "application/json"}],
                    "postData": {"mimeType": "application/json", "text": json.dumps(_REQUEST)}},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "Content-Type", "value": content["mimeType"]}],
                     "content": content},
        "timings": {"blocked": 1, "dns": 0, "connect": 20, "send": 1, "wait": 300,
                    "receive": 490.5},
    }]}}


def mutate(rng: random.Random, data: bytes, others: list[bytes]) -> tuple[str, bytes]:
    """``data`` damaged one way or several: what a disk, a proxy or a cut
    connection does to a capture, and what an attacker tries."""
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


#: a HAR's shape broken where a reader trusts it
_HAR_SHAPES = (
    ("entries-object", lambda doc: doc["log"].__setitem__("entries", {"0": 1})),
    ("entry-string", lambda doc: doc["log"]["entries"].insert(0, "entry")),
    ("headers-string", lambda doc: doc["log"]["entries"][0]["request"].__setitem__(
        "headers", "Authorization: x")),
    ("text-number", lambda doc: doc["log"]["entries"][0]["response"]["content"].__setitem__(
        "text", 12)),
    ("bad-base64", lambda doc: doc["log"]["entries"][0]["response"]["content"].update(
        text="not base64 !!", encoding="base64")),
    ("url-surrogate", lambda doc: doc["log"]["entries"][0]["request"].__setitem__(
        "url", "https://api.example.com/v1/\ud800/chat")),
    ("url-odd", lambda doc: doc["log"]["entries"][0]["request"].__setitem__(
        "url", "http://u:p@[127.0.0.1/v1")),
    ("postdata-not-json", lambda doc: doc["log"]["entries"][0]["request"]["postData"].__setitem__(
        "text", '{"tools": [')),
    ("timings-huge", lambda doc: doc["log"]["entries"][0]["timings"].__setitem__("wait", 1e308)),
    ("status-string", lambda doc: doc["log"]["entries"][0]["response"].__setitem__(
        "status", "200")),
    ("no-response", lambda doc: doc["log"]["entries"][0].pop("response")),
)


def case(n: int, seed: int = SEED) -> Case:
    """Case ``n``: the kinds in turn, a seed of that kind, one mutation."""
    rng = random.Random(f"{seed}/{n}")
    streams = _streams()
    others = [data for _, data in streams]
    kind = KINDS[n % len(KINDS)]
    name, body = streams[(n // len(KINDS)) % len(streams)]
    if kind == "stream":
        how, data = mutate(rng, body, others)
    elif kind == "recording":
        damaged = _damaged_recordings()
        if damaged and rng.random() < 0.1:
            name, seed_bytes = rng.choice(damaged)
        else:  # most as fraglens writes them now, some as it wrote them before
            seed_bytes = recording(name, body, 1 if rng.random() < 0.3 else 3)
        how, data = mutate(rng, seed_bytes, others)
    elif rng.random() < 0.5:
        # the bytes of the export damaged: mostly JSON that no longer parses
        how, data = mutate(rng, json.dumps(har(name, body)).encode(), others)
    else:
        # a well-formed export with a damaged body, its shape broken or not
        how, inner = mutate(rng, body, others)
        doc = har(name, inner)
        if rng.random() < 0.5:
            shape, breaks = rng.choice(_HAR_SHAPES)
            breaks(doc)
            how += f"+{shape}"
        data = json.dumps(doc).encode()
    return Case(f"{n}-{kind}-{how}-{name}", kind, data)


def run(item: Case, path: Path) -> list[str]:
    """``item`` written at ``path`` (its suffix added) and read by every command
    (a HAR also imported): what went wrong, as lines. Exit 0, 1 or 2 is
    right; an exception that escapes, or any other exit, is wrong. What the
    commands print goes wherever ``sys.stdout`` and ``sys.stderr`` point."""
    from fraglens.cli import main

    path = path.with_suffix(item.suffix)
    path.write_bytes(item.data)
    commands = [*COMMANDS]
    if item.kind == "har":
        commands.append(("import-har", "-o", str(path.with_suffix(".imported.jsonl"))))
    failures = []
    for command in commands:
        try:
            code = main([*command, str(path)])
        except SystemExit as exc:  # argparse: usage errors only
            code = exc.code
        except Exception as exc:  # noqa: BLE001 - the point: no exception escapes
            failures.append(f"{item.label} {' '.join(command)}: {type(exc).__name__}: {exc}")
            continue
        if code not in (0, 1, 2):
            failures.append(f"{item.label} {' '.join(command)}: exit {code}")
    for written in (path, path.with_suffix(".imported.jsonl")):
        written.unlink(missing_ok=True)
    return failures
