"""A recording's lines decoded in bulk (framing/recording_reads.py, msgspec)
against json's reading of each line (framing/recording.py), and a recording
read while its lines are parsed (reading/recording_runs.py) against the
read-by-read reading.

The bulk decoder may decline any lines (json then reads them); where it does
not, it must give exactly what json gives: the same reads, times and bytes,
the same damage counted, whatever the lines hold (lone surrogates, escapes,
non-ASCII, base64, cut last lines, NaN and 1e999 times, duplicate keys, big
integers, two values on a line, a value over two lines...).
"""

from __future__ import annotations

import base64
import io
import json
import random
import sys
from itertools import islice

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.framing import events as events_module
from fraglens.framing import recording as recording_module
from fraglens.framing.detect import read_stream
from fraglens.framing.recording import RecordingLines, RecordingWriter, parse_recording
from fraglens.framing.recording_reads import decode_reads
from fraglens.reading import progressive
from fraglens.reading.capture import stream_from_bytes, stream_from_framed
from fraglens.reading.findings import report_replaced_bytes
from fraglens.reading.progressive import Loading
from fraglens.reading.readers import open_reading

from .conftest import ROOT, examples
from .test_runs import _state

sys.path.insert(0, str(ROOT / "bench"))
from shapes import FORMATS, real_shape  # noqa: E402
from shapes import recording as shaped_recording  # noqa: E402

HEADER = b'{"fraglens":"recording","version":1,"request":{"method":"POST","url":"http://h/v1"}}'


#: the version ``as_recording`` writes (the ``version`` fixture's)
_VERSION = {"written": 3}


def as_recording(body: bytes, **kwargs) -> bytes:
    return shaped_recording(body, version=_VERSION["written"], **kwargs)


@pytest.fixture(params=[1, 3], ids=["v1", "v3"])
def version(request, monkeypatch):
    """Recordings written as version 1 (JSON lines) and as version 3 (raw reads)."""
    monkeypatch.setitem(_VERSION, "written", request.param)
    return request.param


@pytest.fixture
def bulk(monkeypatch):
    """The bulk decoder on recordings of any size, on short runs of lines (so
    that the runs it takes and those json reads alternate)."""
    monkeypatch.setattr(recording_module, "_BULK_FROM", 0)
    monkeypatch.setattr(recording_module, "_BULK", 97)


# -- lines of every spelling ------------------------------------------------------

TIMES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.sampled_from(["0.5", "1", "-0", "-0.0", "1E5", "0.1e1", "1e-999", "1e308", "1" + "0" * 308,
                     "2" + "0" * 308, "9007199254740993", "18446744073709551616", "NaN",
                     "Infinity", "-Infinity", "1e999", "-1e999", "true", "null", '"0.5"', "01",
                     ".5", "+1"]),
)
#: a JSON string's body, spelled every way json reads (and some it refuses)
TEXTS = st.one_of(
    st.text(max_size=12).map(lambda s: json.dumps(s)[1:-1]),  # lone surrogates escaped
    st.text(max_size=12).map(lambda s: json.dumps(s, ensure_ascii=False)[1:-1]),
    st.sampled_from(["data: {\\\"a\\\":1}\\n\\n", "\\u0041\\/", "\\ud83d\\ude00", "\\ud800",
                     "\\udc00\\ud800", "\\U0041", "\\x41", "a\tb", "a\x7fb", "\u2028",
                     "d\u00e9j\u00e0", "\\u00e9", "\ud800"]),
)
B64 = st.one_of(st.binary(max_size=9).map(lambda b: base64.b64encode(b).decode()),
                st.sampled_from(["!!", "abc", "\u00e9", "", "YQ", "YQ==="]))


@st.composite
def read_lines(draw) -> bytes:
    """One line as a writer or a hand would spell a read: its keys in any
    order, perhaps twice, perhaps another key, spaces around."""
    pairs: list[tuple[str, str]] = [("t", draw(TIMES))]
    kind = draw(st.sampled_from(["b", "b", "b64", "both", "neither"]))
    if kind in ("b", "both"):
        pairs.append(("b", '"' + draw(TEXTS) + '"'))
    if kind in ("b64", "both"):
        pairs.append(("b64", '"' + draw(B64) + '"'))
    if draw(st.integers(0, 9)) == 0:
        pairs.append(draw(st.sampled_from([("t", draw(TIMES)), ("b", '"again"'), ("b", "null"),
                                           ("z", "[1]"), ("from", '"server"'),
                                           ("end", '"eof"'), ("response", '{"status":200}')])))
    pairs = draw(st.permutations(pairs))
    body = ",".join(f'"{k}":{v}' for k, v in pairs)
    if draw(st.booleans()):
        body = body.replace('"t"', '"\\u0074"', 1)
    line = "{" + body + "}"
    pad = draw(st.sampled_from(["", "", "", " ", "\r", "\t", " \r"]))
    return (draw(st.sampled_from(["", "", " "])) + line + pad).encode("utf-8", "surrogatepass")


OTHER_LINES = st.sampled_from([
    b"", b"   ", b"\x0c", b"\xef\xbb\xbf" + b'{"t":1.0,"b":"x"}',
    b'{"t":1.0,"b":"x"} {"t":2.0,"b":"y"}',
    b'{"t":1.0,"b":"x"}{"t":2.0,"b":"y"}', b'{"t":1.0,"b":"x"},', b'[{"t":1.0,"b":"x"}]', b"{",
    b'{"t":1.0,', b'"b":"x"}', b'{"t":1.0,"b":"\xff"}', b'{"t":1.0,"b":"\xed\xa0\x80"}',
    b'{"t":1.0,"b":"\xc3"}', b'{"response":{"status":200,"headers":{}},"t":0.1}',
    b'{"end":"eof","t":9.5}', b'{"end":"error","error":"reset"}', b"null", b"42", b'"x"',
    b'{"t":0.5,"from":"server","text":"hi"}', b'{"close":{"code":1000},"t":1}',
    b'{"t":1.0,"b":"x"}]\n[{"t":2.0,"b":"y"}', b"]", b"[", b"\x00",
    # two values once the line is wrapped in brackets, [..] [..]: json refuses the line
    b'{"t":1.0,"b":"x"}] [{"t":2.0,"b":"y"}', b'{"t":1.0,"b":"x"}]\r[{"t":2.0,"b":"y"}',
])
LINES = st.lists(st.one_of(read_lines(), read_lines(), read_lines(), OTHER_LINES), max_size=14)


def _recording(lines: list[bytes], cut: int | None) -> bytes:
    data = b"\n".join([HEADER, *lines]) + b"\n"
    if cut is not None:
        data = data[: len(HEADER) + 1 + cut % (len(data) - len(HEADER))]
    return data


def _parsed(rec) -> tuple:
    """All a parse says, times by their repr (0.0 and -0.0 differ)."""
    return ([(repr(t), b) for t, b in rec.chunks], rec.meta("sse"), rec.response, rec.end,
            rec.frames, rec.close, rec.truncated, rec.skipped_lines)


# the fixture only sets module constants, the same for every example
FIXED = [HealthCheck.function_scoped_fixture]


@settings(max_examples=examples(600), deadline=None, suppress_health_check=FIXED)
@given(lines=LINES, cut=st.one_of(st.none(), st.integers(min_value=0)))
def test_a_parse_in_bulk_is_jsons_parse(bulk, lines, cut):
    data = _recording(lines, cut)
    assert _parsed(parse_recording(data)) == _parsed(parse_recording(data, bulk=False))


@settings(max_examples=examples(600), deadline=None)
@given(lines=st.lists(st.one_of(read_lines(), OTHER_LINES), min_size=1, max_size=10))
def test_the_bulk_decoder_gives_jsons_reads_or_declines(lines):
    data = b"\n".join([HEADER, *lines]) + b"\n"
    got = decode_reads(data, len(HEADER) + 1, len(data))
    if got is None:
        return
    # it vouched: json reads every line as a read and nothing else
    lines_read = RecordingLines(data, bulk=False)
    times, chunks = lines_read.read(len(data))
    rec = lines_read.recording
    assert ([repr(t) for t in got[0]], got[1]) == ([repr(t) for t in times], chunks)
    assert len(chunks) == len(lines)
    assert (rec.skipped_lines, rec.truncated, rec.response, rec.end) == (0, False, None, None)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=examples(200), deadline=None)
@given(reads=st.lists(st.tuples(st.floats(0, 1e6), st.one_of(
    st.binary(max_size=40), st.text(max_size=20).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from(["d\u00e9j\u00e0 \"vu\"\n\n".encode(), "\u20ac".encode()[:2], b"\r\n"]))),
    min_size=1, max_size=20))
def test_the_writers_read_lines_are_decoded_in_bulk(reads):
    out = io.BytesIO()
    writer = RecordingWriter(out, version=1)
    writer.start({"method": "POST", "url": "http://h/v1"})
    for t, chunk in reads:
        writer.chunk(t, chunk)
    data = out.getvalue()
    # a read that is not UTF-8 (an encoded surrogate, a cut character) is written as base64
    got = decode_reads(data, data.find(b"\n") + 1, len(data))
    assert got is not None
    assert got[:2] == ([round(t, 6) for t, _ in reads], [c for _, c in reads])
    # the others are UTF-8 on their own
    assert [k for k, (_, c) in enumerate(reads) if not _utf8(c)] == [
        k for k in got[2] if not _utf8(reads[k][1])]
    assert all(_utf8(reads[k][1]) for k in range(len(reads)) if k not in got[2])


@settings(max_examples=examples(300), deadline=None, suppress_health_check=FIXED)
@given(lines=LINES, cut=st.one_of(st.none(), st.integers(min_value=0)),
       sizes=st.lists(st.integers(min_value=0, max_value=300), min_size=1, max_size=8))
def test_lines_read_a_slice_at_a_time_are_the_lines_read_whole(bulk, lines, cut, sizes):
    data = _recording(lines, cut)
    whole = parse_recording(data, bulk=False)
    sliced = RecordingLines(data)
    chunks = []
    k = 0
    while not sliced.done:
        times, more = sliced.read(sizes[k % len(sizes)])
        chunks += zip(times, more, strict=True)
        k += 1
    sliced.recording.chunks = chunks
    assert _parsed(sliced.recording) == _parsed(whole)
    assert sliced.reads == len(whole.chunks)


# -- recordings read while their lines are parsed ------------------------------------


def _read_by_read(data: bytes):
    """The recording framed whole, its events read one by one (as ``check`` read every
    recording before runs), the bytes that were not UTF-8 reported."""
    framed = read_stream(data)
    stream = stream_from_framed(framed)
    report_replaced_bytes(stream, data)
    return stream, framed


def _agree_in_slices(data: bytes, slice_bytes: int, monkeypatch) -> None:
    """Read whole and in slices, it is the read-by-read reading: events, times,
    labels, fragments, report, metadata."""
    old, old_framed = _read_by_read(data)
    new, new_framed = stream_from_bytes(data)
    assert _state(new) == _state(old)
    assert [e.time for e in new.events] == [e.time for e in old.events]
    assert new_framed.meta == old_framed.meta
    monkeypatch.setattr(progressive, "SLICE_BYTES", slice_bytes)
    monkeypatch.setattr(events_module, "_SETTLE_AHEAD", 7)  # a loop works them out 7 at a time
    want = [e.time for e in old.events]
    rng = random.Random(slice_bytes)
    job = Loading(data)
    while not job.done:
        job.advance()
        _ask_times(job.stream.events, want, rng)
    assert _state(job.stream) == _state(old)
    events = job.stream.events
    # asked for one at a time, last first, before the rest are worked out: the same times
    assert [events[i].time for i in reversed(range(len(events)))] == want[::-1]
    assert [e.time for e in events] == want
    assert job.meta == old_framed.meta


def _ask_times(events, want: list[float | None], rng: random.Random) -> None:
    """While a recording loads, the times the app may ask for (a few rows, a
    first stretch of the log) are each the final one, or none while the reads
    so far cannot tell it."""
    if not len(events):
        return
    for i in rng.sample(range(len(events)), min(3, len(events))):
        assert events[i].time in (None, want[i])
    if rng.random() < 0.3:
        got = [e.time for e in events[: rng.randrange(len(events) + 1)]]
        assert all(t in (None, w) for t, w in zip(got, want, strict=False))
    if rng.random() < 0.3:  # a loop over the events that stops early, or not
        got = [e.time for e in islice(events, rng.randrange(len(events) + 1))]
        assert all(t in (None, w) for t, w in zip(got, want, strict=False))


@pytest.mark.parametrize("fmt", FORMATS)
def test_real_shapes_recorded_read_in_slices_agree(version, bulk, fmt, monkeypatch):
    # every shape (SSE bodies read in runs; the event-stream and NDJSON ones framed whole)
    data = as_recording(real_shape(fmt, 2, 1500))
    _agree_in_slices(data, 211, monkeypatch)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(fmt=st.sampled_from(["openai-chat", "openai-responses", "anthropic", "gemini", "cohere",
                            "dashscope", "ai-sdk"]),
       seed=st.integers(0, 10**6), slice_bytes=st.integers(1, 4000),
       cut=st.one_of(st.none(), st.integers(min_value=1)))
def test_any_recorded_reads_read_in_slices_agree(version, bulk, monkeypatch, fmt, seed,
                                                 slice_bytes, cut):
    data = as_recording(real_shape(fmt, 1, 400, seed=seed), seed=seed)
    if cut is not None:  # the recorder killed mid-line
        data = data[: len(data) - 1 - cut % (len(data) // 2)]
    _agree_in_slices(data, slice_bytes, monkeypatch)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), slice_bytes=st.integers(50, 4000),
       bad=st.lists(st.tuples(st.integers(min_value=0), st.sampled_from(
           [b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc3\xa9"])),
           max_size=4))
def test_bytes_that_are_not_utf8_are_reported_as_read_by_read(version, bulk, monkeypatch, seed,
                                                              slice_bytes, bad):
    # bytes put in the body's payloads: read in runs, the body is known to be UTF-8 from
    # its base64 reads alone, and else checked whole; either way each is reported as
    # the read-by-read reading reports it
    body = real_shape("openai-chat", 1, 2000, seed=seed)  # 80 kB: more than the first lines
    for at, raw in bad:
        at = body.find(b'"arguments":"', at % len(body))
        if at >= 0:
            at += len(b'"arguments":"')
            body = body[:at] + raw + body[at:]
    _agree_in_slices(as_recording(body, seed=seed), slice_bytes, monkeypatch)


def test_a_body_that_shows_it_is_sse_late_is_still_read_in_runs(version, bulk, monkeypatch):
    # a minute of keep-alives before the first data line: the claim parses on until it comes
    body = b": keep-alive\n\n" * 5000 + real_shape("anthropic", 1, 2000)
    data = as_recording(body)
    assert open_reading(data).stream.framing == "recording"
    _agree_in_slices(data, 997, monkeypatch)


def test_the_first_slice_needs_only_the_first_lines(version, bulk, monkeypatch):
    data = as_recording(real_shape("openai-chat", 1, 200_000))
    monkeypatch.setattr(progressive, "SLICE_BYTES", 4096)
    job = Loading(data)
    lines = job._reading._lines  # type: ignore[attr-defined]
    assert lines.pos < len(data) // 20  # the claim parsed the head alone
    job.advance()
    assert job.stream.events and not lines.done and 0 < job.fraction < 1
    while not job.done:
        job.advance()
    assert lines.done and job.fraction == 1.0


def test_a_recording_of_another_body_is_framed_whole(version, bulk):
    data = as_recording(b'{"error":{"message":"overloaded"}}' * 3000)
    stream, framed = stream_from_bytes(data)
    assert framed.framing == "recording" and framed.meta["body_framing"] != "sse"
    assert framed.meta == _read_by_read(data)[1].meta


def test_a_line_over_the_limit_stops_a_recording_read_in_slices_as_read_whole(monkeypatch):
    """The reader stops at the line as a whole read does, and the lines after
    it are still parsed: the end line and the reads' count say the same."""
    from fraglens.framing.sse import DEFAULT_MAX_LINE

    good = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    # the reader meets the limit 3 MB before the line ends: before the last lines are parsed
    body = good * 50 + b"data: " + b"q" * (DEFAULT_MAX_LINE + (3 << 20)) + b"\n\n" + good * 50
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "http://h/v1"})
    for k in range(0, len(body), 1 << 20):  # the long line comes in many reads
        writer.chunk(k / 1e6, body[k : k + (1 << 20)])
    writer.end("eof", t=99.0)
    data = out.getvalue()
    whole, framed = stream_from_bytes(data)
    assert "frame-too-large" in [d.code for d in whole.reassembler.diagnostics()]
    monkeypatch.setattr(progressive, "SLICE_BYTES", 1 << 18)
    job = Loading(data)
    while not job.done:
        job.advance()
    assert _state(job.stream) == _state(whole)
    assert [e.time for e in job.stream.events] == [e.time for e in whole.events]
    assert job.meta == framed.meta and job.meta["end"] is not None
