"""What ``fraglens serve`` sends: a capture turned into timed writes, with chaos on request.

Sans-I/O. :func:`load_source` reads any capture fraglens reads (a recording,
a HAR, SSE, NDJSON, a JSON array or body) into a :class:`Source`: the bytes to
send, where each event ends in them, when each event came, and where the
original network reads were cut. :func:`plan` turns a source into a list of
:class:`Write` records — bytes, when to send them, how many events are complete
once they are out — after applying the chaos options: other cut points (every
N bytes, or at random offsets, mid UTF-8 character included), a connection
dropped after N events, a stall. The server only sleeps and writes.

SSE bodies are sent as they were, byte for byte (comments, CRLFs, odd spacing
kept); NDJSON and JSON-array items are re-encoded as ``data:`` events, except
for a format whose own wire is NDJSON (Ollama's ``/api/chat``), which is sent
as ``application/x-ndjson`` lines; a binary event stream (Bedrock) is sent as
it was, message by message; a single JSON body (an error, a non-streamed
answer) is sent as it was.
"""

from __future__ import annotations

import json
import random
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..engine.plural import counted
from ..framing.detect import read_stream
from ..framing.events import Framed, FramingError, RawEvent
from ..framing.har import default_entry, har_entry_to_recording
from ..framing.recording import Recording, parse_recording
from ..reading.capture import LoadError, demo_bytes, read_bytes, stream_from_framed
from ..report.identity import streamed_identity
from .request import NDJSON_FORMATS
from .ws_replay import WSScript, script_from_recording

__all__ = ["Chaos", "Pace", "Plan", "Source", "Write", "load_source", "plan", "source_from_bytes"]

SSE_TYPE = "text/event-stream; charset=utf-8"
JSON_TYPE = "application/json"
NDJSON_TYPE = "application/x-ndjson"
EVENTSTREAM_TYPE = "application/vnd.amazon.eventstream"


@dataclass(frozen=True)
class Source:
    """One capture, ready to replay."""

    name: str
    #: the wire format (recorded, or detected from the events)
    format: str | None
    body: bytes
    #: byte offset in ``body`` where each event ends (ascending, last == len(body))
    event_ends: list[int]
    #: seconds since the first event per event, when the capture has times
    event_times: list[float] | None = None
    #: where the recorded network reads ended, and when they came (recordings only)
    read_ends: list[int] | None = None
    read_times: list[float] | None = None
    status: int = 200
    content_type: str = SSE_TYPE
    #: the model the recorded request asked for, else the one the stream names:
    #: requests for it get this capture, and GET /v1/models lists it
    model: str | None = None
    #: recorded response headers worth replaying (provider request ids and the like)
    headers: dict[str, str] = field(default_factory=dict)
    #: a recorded WebSocket connection: the server's side of it (``ws_replay.py``)
    websocket: WSScript | None = None

    @property
    def events(self) -> int:
        return self.websocket.total if self.websocket is not None else len(self.event_ends)


@dataclass(frozen=True)
class Chaos:
    """What to break. Everything off by default: a faithful replay."""

    #: cut the body every N bytes (ignores the recorded reads)
    split_bytes: int | None = None
    #: cut the body at pseudo-random offsets from this seed (mid character too)
    split_seed: int | None = None
    #: close the connection once N events are out (the write holding the Nth
    #: event's end may carry the start of the next one: a realistic cut)
    drop_after: int | None = None
    #: pause after N events for ``stall_seconds`` (or until the client leaves)
    stall_after: int | None = None
    stall_seconds: float = 30.0
    #: answer every request with this HTTP status and a provider-shaped error body
    http_error: int | None = None
    #: the share of requests the chaos above is applied to (a flaky backend),
    #: drawn per request from a generator seeded with ``odds_seed``
    odds: float = 1.0
    odds_seed: int = 0

    def describe(self) -> str:
        bits = []
        if self.split_bytes:
            bits.append(f"split every {self.split_bytes} B")
        if self.split_seed is not None:
            bits.append(f"split at random (seed {self.split_seed})")
        if self.drop_after is not None:
            bits.append(f"drop after {counted(self.drop_after, 'event')}")
        if self.stall_after is not None:
            bits.append(f"stall {self.stall_seconds:g}s after {counted(self.stall_after, 'event')}")
        if self.http_error is not None:
            bits.append(f"HTTP {self.http_error}")
        if bits and self.odds < 1.0:
            bits.append(f"on {self.odds:.0%} of requests (seed {self.odds_seed})")
        return ", ".join(bits) or "no chaos"


@dataclass(frozen=True)
class Pace:
    """``recorded``: the capture's own timing when it has one, else ``rate``;
    ``fixed``: ``rate`` events per second. A rate of 0 sends without pausing."""

    mode: str = "recorded"
    rate: float = 50.0


NO_CHAOS = Chaos()
RECORDED_PACE = Pace()


@dataclass(frozen=True)
class Write:
    data: bytes
    #: seconds after the response started
    at: float
    #: events complete once this write is out
    events_done: int
    #: seconds to pause after this write (a stall)
    pause: float = 0.0


# -- loading ------------------------------------------------------------------------


def load_source(path: str) -> Source:
    """Read a capture file (``:demo:`` for the bundled demo); LoadError if unreadable."""
    data = demo_bytes() if path == ":demo:" else read_bytes(path)
    return source_from_bytes(data, "demo" if path == ":demo:" else Path(path).name)


def source_from_bytes(data: bytes, name: str) -> Source:
    try:
        framed = read_stream(data)
    except FramingError as exc:
        raise LoadError(f"{name}: {exc}") from None
    if not framed.events:
        raise LoadError(f"{name}: no events to replay")
    fmt = framed.meta.get("format") or stream_from_framed(framed).format
    if framed.meta.get("transport") == "websocket":
        rec = _recording_of(data, framed)
        model = dict(parse_qsl(urlsplit(str(rec.request.get("url", ""))).query)).get("model")
        source = Source(name, fmt, b"", [], model=model, websocket=script_from_recording(rec))
    elif framed.framing in ("recording", "har"):
        source = _from_recording(_recording_of(data, framed), framed, fmt, name)
    elif framed.framing == "sse":
        source = _sse_source(name, fmt, data, framed.events, None)
    elif framed.framing == "ndjson" and fmt in NDJSON_FORMATS:
        source = _lines(name, fmt, framed.events, None)
    elif framed.framing in ("ndjson", "json-array"):
        source = _reencoded(name, fmt, framed.events, None)
    elif framed.framing == "eventstream":
        source = _binary_source(name, fmt, data, framed.events, None)
    else:
        source = Source(name, fmt, data, [len(data)], content_type=JSON_TYPE)
    if source.model is None:
        source = replace(source, model=_streamed_model(framed.events))
    return source


def _streamed_model(events: Sequence[RawEvent]) -> str | None:
    """The model a stream names in its first chunks; None when none does."""
    return streamed_identity(events).model


def _recording_of(data: bytes, framed: Framed) -> Recording:
    if "har" in framed.meta or framed.framing == "har":
        har = json.loads(data)
        return parse_recording(har_entry_to_recording(har, default_entry(har), fingerprints=False))
    return parse_recording(data)


def _from_recording(rec: Recording, framed: Framed, fmt: str | None, name: str) -> Source:
    body = rec.body
    status = rec.response.get("status") if rec.response else None
    status = status if isinstance(status, int) and 100 <= status <= 599 else 200
    headers = {k.lower(): v for k, v in (rec.response or {}).get("headers", {}).items()}
    request_body = rec.request.get("body")
    model = request_body.get("model") if isinstance(request_body, dict) else None
    times = [t for t, _ in rec.chunks]
    first = next((t for t in times if t is not None), None)
    kept = {
        k: v for k, v in headers.items() if k.startswith(("x-request-id", "request-id", "openai-"))
    }
    extra: dict[str, Any] = {"status": status, "model": model, "headers": kept}
    if all(t is not None for t in times) and first is not None:
        ends, total = [], 0
        for _, chunk in rec.chunks:
            total += len(chunk)
            ends.append(total)
        extra["read_ends"] = ends
        extra["read_times"] = [max(0.0, t - first) for t in times]  # type: ignore[operator]
    body_framing = framed.meta.get("body_framing")
    if body_framing == "sse":
        return _sse_source(name, fmt, body, framed.events, first, **extra)
    if body_framing == "eventstream":
        return _binary_source(name, fmt, body, framed.events, first, **extra)
    if body_framing in ("ndjson", "json-array"):
        extra.pop("read_ends", None)
        extra.pop("read_times", None)
        if body_framing == "ndjson" and fmt in NDJSON_FORMATS:
            return _lines(name, fmt, framed.events, first, **extra)
        return _reencoded(name, fmt, framed.events, first, **extra)
    ctype = headers.get("content-type") or JSON_TYPE
    return Source(name, fmt, body, [len(body)], content_type=ctype, **extra)


def _event_times(events: Sequence[RawEvent], first: float | None) -> list[float] | None:
    if first is None or any(ev.time is None for ev in events):
        return None
    return [max(0.0, ev.time - first) for ev in events]  # type: ignore[operator]


def _sse_source(
    name: str, fmt: str | None, body: bytes, events: Sequence[RawEvent], first: float | None,
    **extra,
) -> Source:
    # an event's write runs up to where the next event starts: the blank lines
    # after a comment, and whatever follows the last event, go with it
    ends: list[int] = []
    for following in events[1:]:
        end = following.span[0] if following.span else len(body)
        ends.append(max(end, ends[-1] if ends else 0))
    ends.append(len(body))
    return Source(name, fmt, body, ends, _event_times(events, first), **extra)


def _binary_source(
    name: str, fmt: str | None, body: bytes, events: Sequence[RawEvent], first: float | None,
    **extra: Any,
) -> Source:
    """Bytes as received, each write ending where a message (or damage) ends."""
    ends: list[int] = []
    for ev in events[:-1]:
        end = ev.span[1] if ev.span else len(body)
        ends.append(max(end, ends[-1] if ends else 0))
    ends.append(len(body))
    times = _event_times(events, first)
    return Source(name, fmt, body, ends, times, content_type=EVENTSTREAM_TYPE, **extra)


def _lines(
    name: str, fmt: str | None, events: Sequence[RawEvent], first: float | None, **extra: Any
) -> Source:
    """NDJSON as the format's own wire: one line per event."""
    parts, ends, total = [], [], 0
    for ev in events:
        part = ev.data.encode() + b"\n"
        parts.append(part)
        total += len(part)
        ends.append(total)
    times = _event_times(events, first)
    return Source(name, fmt, b"".join(parts), ends, times, content_type=NDJSON_TYPE, **extra)


def _reencoded(
    name: str, fmt: str | None, events: Sequence[RawEvent], first: float | None, **extra
) -> Source:
    parts, ends, total = [], [], 0
    for ev in events:
        part = f"data: {ev.data}\n\n".encode()
        parts.append(part)
        total += len(part)
        ends.append(total)
    return Source(name, fmt, b"".join(parts), ends, _event_times(events, first), **extra)


# -- planning -----------------------------------------------------------------------


def _cuts(source: Source, chaos: Chaos) -> list[int]:
    size = len(source.body)
    if chaos.split_bytes:
        cuts = list(range(chaos.split_bytes, size, chaos.split_bytes))
    elif chaos.split_seed is not None:
        rng = random.Random(chaos.split_seed)
        # pieces from one byte to about one event long land inside events and
        # strings; half of the multi-byte characters are cut on purpose, since
        # a random offset rarely hits one and that is the split clients get wrong
        longest = max(2, size // max(1, source.events))
        cuts, pos = [], 0
        while True:
            pos += rng.randint(1, longest)
            if pos >= size:
                break
            cuts.append(pos)
        body = source.body
        cuts += [i + 1 for i, byte in enumerate(body) if byte >= 0xC0 and rng.random() < 0.5]
    elif source.read_ends:
        cuts = source.read_ends[:-1]
    else:
        cuts = source.event_ends[:-1]
    return sorted(set(c for c in cuts if 0 < c < size)) + [size]


@dataclass(frozen=True)
class Plan:
    writes: list[Write]
    #: close the connection after the writes instead of ending the body
    drop: bool = False


def plan(source: Source, chaos: Chaos = NO_CHAOS, pace: Pace = RECORDED_PACE) -> Plan:
    """The writes that replay ``source``, cut short when the connection is to drop."""
    ends = source.event_ends
    n = len(ends)
    drop = chaos.drop_after is not None and chaos.drop_after < n
    writes: list[Write] = []
    if chaos.stall_after == 0:
        writes.append(Write(b"", 0.0, 0, chaos.stall_seconds))
    if drop and chaos.drop_after == 0:
        return Plan(writes, drop=True)
    drop_at = ends[chaos.drop_after - 1] if drop and chaos.drop_after else None
    stalls = chaos.stall_after is not None and 1 <= chaos.stall_after <= n
    stall_at = ends[chaos.stall_after - 1] if stalls and chaos.stall_after else None
    start = 0
    for cut in _cuts(source, chaos):
        done = bisect_left(ends, cut + 1)  # events whose end is <= cut
        containing = min(bisect_left(ends, cut), n - 1)
        pause = 0.0
        if stall_at is not None and start < stall_at <= cut:
            pause = chaos.stall_seconds
        writes.append(
            Write(source.body[start:cut], _time(source, pace, cut, containing), done, pause)
        )
        start = cut
        if drop_at is not None and cut >= drop_at:
            break
    return Plan(writes, drop=drop)


def _time(source: Source, pace: Pace, cut: int, event: int) -> float:
    if pace.mode == "recorded":
        if source.read_ends and source.read_times:
            read = min(bisect_left(source.read_ends, cut), len(source.read_times) - 1)
            return source.read_times[read]
        if source.event_times:
            return source.event_times[event]
    return event / pace.rate if pace.rate > 0 else 0.0
