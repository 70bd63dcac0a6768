"""A recording whose body is SSE, read in runs (reading/readers.py,
reading/recording_times.py), against
the read-by-read reading (framing/detect.py): the same events, each with the
same time, the same labels, fragment records and report, the same metadata."""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.framing.detect import read_stream
from fraglens.framing.recording import RecordingWriter
from fraglens.reading.capture import LoadError, stream_from_bytes, stream_from_framed

from .conftest import SAMPLES, examples
from .test_runs import _anthropic, _args_pieces, _sse, _state


def _read_by_read(data: bytes):
    framed = read_stream(data)
    return stream_from_framed(framed), framed


def _agree(data: bytes) -> None:
    new, new_framed = stream_from_bytes(data)
    old, old_framed = _read_by_read(data)
    assert new.events.source is not None, "not read in runs"
    want = [e.time for e in old.events]
    # each event's time asked for alone, last first, before any other is worked out
    assert [new.events[i].time for i in reversed(range(len(want)))] == want[::-1]
    assert _state(new) == _state(old)
    assert [e.time for e in new.events] == want
    assert new_framed.meta == old_framed.meta
    assert new_framed.problems == old_framed.problems


def _recording(reads: list[tuple[float, bytes]], end: float | None = None,
               version: int = 1) -> bytes:
    # a text sink takes lines of JSON alone: version 1; version 3 writes reads raw
    out: io.StringIO | io.BytesIO = io.StringIO() if version == 1 else io.BytesIO()
    writer = RecordingWriter(out, version=version)
    writer.start({"method": "POST", "url": "https://api.example.com/v1/chat/completions",
                  "headers": {}}, format=None)
    writer.response(200, {"content-type": "text/event-stream"}, t=0.05)
    for t, chunk in reads:
        writer.chunk(t, chunk)
    if end is not None:
        writer.end("eof", t=end)
    else:
        writer.flush()  # the reads' times, with no end line
    value = out.getvalue()
    return value.encode() if isinstance(value, str) else value


def _agree_recorded(reads: list[tuple[float, bytes]], end: float | None = None) -> None:
    """The reads recorded as version 1 and as version 3: each read in runs as read by read."""
    for version in (1, 3):
        _agree(_recording(reads, end, version))


def _split(body: bytes, cuts: list[int]) -> list[tuple[float, bytes]]:
    points = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    pairs = zip(points, points[1:], strict=False)
    return [(0.1 + k / 100, body[a:b]) for k, (a, b) in enumerate(pairs)]


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_recording_sample_agrees(path):
    data = path.read_bytes()
    try:
        _read_by_read(data)
    except LoadError as exc:  # refused (its golden is the error): the same way
        with pytest.raises(LoadError) as refused:
            stream_from_bytes(data)
        assert str(refused.value) == str(exc)
        return
    new, _ = stream_from_bytes(data)
    old, _ = _read_by_read(data)
    assert _state(new) == _state(old)
    assert [e.time for e in new.events] == [e.time for e in old.events]


def test_a_long_call_recorded_read_by_read_is_read_in_runs():
    body = _sse(_anthropic(_args_pieces(3000)))
    # one read per event, as a live call records them
    events = body.split(b"\n\n")
    reads = [(0.2 + k / 1000, e + b"\n\n") for k, e in enumerate(events[:-1])]
    _agree_recorded(reads, end=9.5)


EOLS = st.sampled_from([b"\n", b"\r\n", b"\r"])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    eol=EOLS,
    cuts=st.lists(st.integers(min_value=0), max_size=40),
    pieces=st.integers(min_value=1, max_value=120),
    end=st.one_of(st.none(), st.just(7.5)),
    tail=st.sampled_from([b"", b'data: {"type":"ping"}', b": bye", b"data: [DONE]\n"]),
    comment=st.booleans(),
)
def test_any_reads_agree(eol, cuts, pieces, end, tail, comment):
    body = _sse(_anthropic(_args_pieces(pieces)))
    if comment:
        body = body.replace(b"\n\nevent: content_block_stop", b"\n\n: keep-alive\n\nevent: "
                            b"content_block_stop", 1)
    body = body.replace(b"\n", eol) + tail.replace(b"\n", eol)
    _agree_recorded(_split(body, cuts), end)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_a_comment_takes_the_time_of_the_read_whose_line_ends_it(eol):
    # a comment (its lines are one event) is complete once a line that is no
    # comment line ends: its blank line, or the next field, in a later read
    stop = b"\n\nevent: content_block_stop"
    calls = _sse(_anthropic(_args_pieces(3))).replace(stop, b"\n\n: one\n: two" + stop[1:])
    body = (b": keep-alive\n\n" + calls + b": bye\n").replace(b"\n", eol)
    # a read that ends at a line end, or one byte before or after it
    cuts = {c + d for c in range(len(body)) if body[c] in b"\r\n" for d in (0, 1, 2)}
    for cut in sorted(cuts & set(range(1, len(body)))):
        reads = [(0.1, body[:cut]), (0.2, body[cut:])]
        _agree_recorded(reads, end=0.3)


def test_a_held_carriage_return_takes_the_next_reads_time():
    body = _sse(_anthropic(_args_pieces(50))).replace(b"\n", b"\r")
    # every read ends right after an event's last CR
    at = [i + 1 for i in range(len(body)) if body[i : i + 2] == b"\r\r"]
    rng = random.Random(5)
    cuts = [a + 1 for a in at if rng.random() < 0.5]
    reads = _split(body, cuts)
    reads.insert(3, (0.5, b""))  # an empty read holds nothing
    _agree_recorded(reads, end=3.0)


@settings(max_examples=examples(300), deadline=None)
@given(lines=st.lists(st.one_of(
    st.sampled_from([b'{"t":0.5,"b":"data: x\\n\\n"}', b'{"t":1,"b64":"ZGF0YQ=="}', b"",
                     b" ", b"\x0c", b"\xef\xbb\xbf{}", b'{"t":1} {"t":2}', b"[1, 2]", b"{",
                     b'{"b":"\\ud800"}', b'{"b":"\xff"}', b"\r", b'  {"end":"eof"}\r',
                     b'{"t":1e400}', b"null"]),
    st.binary(max_size=12)), max_size=12))
def test_lines_read_as_json_loads_reads_each(lines):
    # the header aside, each line is what json.loads makes of it, or unreadable
    from fraglens.framing.recording import _UNREADABLE, _lines, _loads

    data = b"\n".join([b'{"fraglens":"recording","version":1}', *lines])
    got = list(_lines(data, data.find(b"\n") + 1 or len(data), len(data)))
    raws = data.split(b"\n")[1:]
    # each line, and whether it is the last, with no line end after it (cut off)
    want = [(k == len(raws) - 1, _loads(raw)) for k, raw in enumerate(raws) if raw.strip()]
    assert [cut for cut, _ in got] == [cut for cut, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert (a is _UNREADABLE) == (b is _UNREADABLE)
        assert a is _UNREADABLE or repr(a) == repr(b)
