"""Recording version 3 (framing/recording.py): each read's bytes written as
they came, the lines after the header opening with RS, an index line giving
the times and sizes of the reads before it.

What must hold: the same reads read back as version 1 gives them (and so the
same events, times and report), every received byte kept however the file
was cut or damaged, and version 1 given back whole by ``export --jsonl``."""

from __future__ import annotations

import base64
import io
import json
import math
import random
import re
import struct
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.cli import main
from fraglens.framing.events import FramingError
from fraglens.framing.recording import (
    RS,
    RawReads,
    RecordingLines,
    RecordingWriter,
    parse_recording,
    to_json_lines,
)
from fraglens.reading.capture import stream_from_bytes

from .conftest import ROOT, examples, shared_or_skip
from .test_runs import _state

sys.path.insert(0, str(ROOT / "bench"))
from shapes import real_shape  # noqa: E402

REQUEST = {"method": "POST", "url": "https://api.example.com/v1/chat/completions?key=sk-live",
           "headers": {"authorization": "Bearer sk-live", "content-type": "application/json"},
           "body": {"model": "gpt-4o", "stream": True}}


def _write(reads: list[tuple[float | None, bytes]], version: int, end: float | None = 9.0,
           response: bool = True) -> bytes:
    out = io.BytesIO()
    writer = RecordingWriter(out, version=version)
    writer.start(REQUEST, format="openai-chat", created="2026-12-02T08:00:00.000Z")
    if response:
        writer.response(200, {"content-type": "text/event-stream"}, t=0.2)
    for t, data in reads:
        writer.chunk(t, data)
    if end is not None:
        writer.end("eof", t=end)
    else:
        writer.flush()
    return out.getvalue()


def _reads(body: bytes, rng: random.Random, start: float = 0.25) -> list[tuple[float, bytes]]:
    """``body`` cut anywhere (inside events and characters too), each read
    0 to 40 ms after the one before."""
    cuts = sorted({0, len(body), *(rng.randrange(len(body) + 1) for _ in range(len(body) // 300))})
    t, out = start, []
    for a, b in zip(cuts, cuts[1:], strict=False):
        t += rng.uniform(0, 0.04)
        out.append((t, body[a:b]))
    return out


def _parsed(data: bytes) -> tuple:
    rec = parse_recording(data)
    return (rec.request, rec.response, rec.end, rec.chunks, rec.truncated, rec.skipped_lines,
            rec.format, rec.created)


def _json_or_none(raw: bytes):
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _index_lines(data: bytes) -> list[bytes]:
    """The lines after the header (each opens with RS), without their RS."""
    return [seg.split(b"\n", 1)[0] for seg in data.split(RS)[1:]]


def _timed(line: bytes) -> tuple[list[float], list[int]]:
    """A times line's times and sizes: little-endian doubles and 64-bit counts."""
    obj = json.loads(line)
    times, sizes = base64.b64decode(obj["times"]), base64.b64decode(obj["sizes"])
    return (list(struct.unpack(f"<{len(times) // 8}d", times)),
            list(struct.unpack(f"<{len(sizes) // 8}Q", sizes)))


# -- the layout ------------------------------------------------------------------------


def test_the_layout_is_a_header_line_then_raw_reads_and_rs_lines():
    reads = [(0.25, b"data: {\"a\":1}\n\n"), (0.5, b"data: {\"b\":"), (0.75, b"2}\n\n")]
    data = _write(reads, 3)
    header, rest = data.split(b"\n", 1)
    assert json.loads(header)["version"] == 3
    assert b"sk-live" not in data  # the key, redacted from the URL and the header
    response = b'\x1e{"response":{"status":200,"headers":{"content-type":"text/event-stream"}}'
    assert rest.startswith(response + b',"t":0.2}\n')
    rest = rest.split(b"\n", 1)[1]
    # the reads as they came, then the line that times them, then the end
    body = b"".join(r for _, r in reads)
    times = base64.b64encode(struct.pack("<3d", 0.25, 0.5, 0.75))
    sizes = base64.b64encode(struct.pack("<3Q", 15, 11, 4))
    assert rest == (body + b'\x1e{"times":"' + times + b'","sizes":"' + sizes + b'"}\n'
                    + b'\x1e{"end":"eof","t":9.0}\n')


def test_an_index_line_every_second_of_the_stream_or_every_4096_reads():
    reads = [(k / 128, b"x") for k in range(320)]  # 2.5 s of reads, 1/128 s apart
    data = _write(reads, 3, end=None)
    index = [_timed(line) for line in _index_lines(data)[1:]]
    # a line once a read comes a second or more after the first one it has not timed
    assert [len(times) for times, _ in index] == [129, 129, 62]
    assert [t for times, _ in index for t in times] == [round(t, 6) for t, _ in reads]
    assert {n for _, sizes in index for n in sizes} == {1}
    many = _write([(0.5, b"y")] * 5000, 3, end=None)
    assert [len(_timed(line)[1]) for line in _index_lines(many)[1:]] == [4096, 904]


def test_a_text_sink_is_written_version_1():
    out = io.StringIO()
    writer = RecordingWriter(out)
    writer.start(REQUEST)
    writer.chunk(0.5, b"data: 1\n\n")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["version"] == 1 and lines[1] == {"t": 0.5, "b": "data: 1\n\n"}


def test_the_writer_refuses_an_unknown_version_and_reads_out_of_order():
    with pytest.raises(ValueError, match="version 1 or 3"):
        RecordingWriter(io.BytesIO(), version=2)
    writer = RecordingWriter(io.BytesIO())
    with pytest.raises(ValueError, match="start"):
        writer.chunk(0.1, b"data: x\n\n")
    writer.start(REQUEST)
    writer.end("eof")
    with pytest.raises(ValueError, match="end"):
        writer.chunk(0.1, b"data: x\n\n")


def test_a_read_that_holds_rs_is_a_line_of_base64_between_the_raw_ones():
    reads = [(0.3, b"data: a\n\n"), (0.4, b"data: \x1e\n\n"), (0.5, b"data: b\n\n")]
    data = _write(reads, 3)
    assert data.count(RS) == 5  # response, the first read's times, the RS read, the last's, end
    assert parse_recording(data).chunks == reads


# -- read back as version 1 reads ------------------------------------------------------


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(["openai-chat", "anthropic", "openai-responses", "gemini", "cohere",
                            "bedrock-converse", "ollama", "ai-sdk"]),
       seed=st.integers(0, 10**6),
       end=st.one_of(st.none(), st.just(99.0)))
def test_the_same_reads_read_back_as_version_1_does(fmt, seed, end):
    body = real_shape(fmt, 2, 300, seed=seed)  # binary event streams among them
    reads = _reads(body, random.Random(seed))
    old, new = _write(reads, 1, end), _write(reads, 3, end)
    assert _parsed(new) == _parsed(old)
    assert parse_recording(new).body == body
    assert to_json_lines(new) == old
    got, want = stream_from_bytes(new)[0], stream_from_bytes(old)[0]
    assert _state(got) == _state(want)
    assert [e.time for e in got.events] == [e.time for e in want.events]


def test_the_real_captures_recorded_read_back_as_version_1_does():
    streams = sorted((shared_or_skip() / "real_streams").rglob("*.sse"))
    assert len(streams) > 40
    for k, path in enumerate(streams):
        body = path.read_bytes()
        reads = _reads(body, random.Random(k))
        old, new = _write(reads, 1), _write(reads, 3)
        assert _parsed(new) == _parsed(old), path.name
        got, want = stream_from_bytes(new)[0], stream_from_bytes(old)[0]
        assert _state(got) == _state(want), path.name
        assert [e.time for e in got.events] == [e.time for e in want.events], path.name


# -- cut and damaged files --------------------------------------------------------------


def test_a_file_cut_anywhere_keeps_every_byte_it_holds():
    body = real_shape("openai-chat", 1, 200, seed=3)
    reads = _reads(body, random.Random(3))
    data = _write(reads, 3, end=4.0)
    start = data.index(b"\n", data.index(RS)) + 1  # after the response line
    timed = 0
    for cut in range(start, len(data) + 1):
        rec = parse_recording(data[:cut])
        # the body bytes the cut file holds: all but its lines (one cut short included)
        held = re.sub(rb"\x1e[^\n]*(?:\n|\Z)", b"", data[start:cut])
        assert b"".join(chunk for _, chunk in rec.chunks) == held
        times = [t for t, _ in rec.chunks if t is not None]
        assert times == [round(t, 6) for t, _ in reads[: len(times)]]
        timed = max(timed, len(times))
        # a cut file is never damaged; it is cut off where bytes follow its last whole line
        part = data[start:cut]
        whole = max((m.end() for m in re.finditer(rb"\x1e[^\n]*\n", part)), default=0)
        last = part.rfind(RS)
        if last >= whole and _json_or_none(part[last + 1 :]) is not None:
            whole = len(part)  # a last line whole but for its line end: read as any line
        assert rec.skipped_lines == 0 and rec.truncated == (whole < len(part)), cut
        if cut % 97 == 0:
            stream_from_bytes(data[:cut])  # read, never a traceback
    assert timed == len(reads)


def test_reads_after_the_last_index_line_are_kept_untimed_as_a_killed_writer_left_them():
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start(REQUEST)
    writer.chunk(0.1, b"data: 1\n\n")
    writer.flush()
    writer.chunk(0.2, b"data: 2\n\n")
    writer.chunk(0.3, b"data: 3\n")  # killed here: no line times these two
    rec = parse_recording(out.getvalue())
    assert rec.chunks == [(0.1, b"data: 1\n\n"), (None, b"data: 2\n\ndata: 3\n")]
    assert rec.truncated and rec.skipped_lines == 0
    stream, framed = stream_from_bytes(out.getvalue())
    # the last event, cut off with the stream, is read as a cut-off stream's is
    assert [e.data for e in stream.events] == ["1", "2", "3"] and framed.meta["truncated"]


@pytest.mark.parametrize("line", [
    b'{"times":[0.1,0.2],"sizes":[3,3]}',  # sizes that do not add up to the bytes
    b'{"times":[0.1],"sizes":[9,0]}',  # as many times as sizes
    b'{"times":[0.1,0.2],"sizes":[4.5,4.5]}',  # sizes that are no counts
    b'{"times":[0.1,0.2],"sizes":[-1,10]}',
    b'{"times":"0.1","sizes":[9]}',
    b'{"times":[0.1,0.2],"sizes":[9',  # a line cut short, then more lines
    b"[1,2]",
    # the writer's spelling, damaged: base64 that is not, stray characters, an odd
    # byte count, times and sizes that differ in count, sizes that do not add up
    b'{"times":"AAAA!AAAAAA=","sizes":"EAAAAAAAAAA="}',
    b'{"times":"AAAAAAAAAAA=","sizes":"EAAA AAAAAAA="}',
    b'{"times":"AAAAAAAAAAA=","sizes":"EAAAAAAA"}',
    b'{"times":"AAAAAAAAAAAAAAAAAAAAAA==","sizes":"EAAAAAAAAAA="}',
    b'{"times":"AAAAAAAAAAA=","sizes":"DwAAAAAAAAA="}',
])
def test_a_damaged_index_keeps_its_reads_bytes_untimed(line):
    head = _write([], 3, end=None)
    data = head + b"data: 1\ndata: 2\n" + RS + line
    data += b"\n" + b"data: 3\n\n" + RS + b'{"times":[0.5],"sizes":[9]}\n'
    rec = parse_recording(data)
    assert rec.body == b"data: 1\ndata: 2\ndata: 3\n\n"
    assert rec.chunks[0][0] is None and rec.chunks[-1] == (0.5, b"data: 3\n\n")
    assert rec.skipped_lines == 1
    stream_from_bytes(data)


def test_index_times_no_float_holds_are_no_times():
    head = _write([], 3, end=None)
    data = head + b"ab" + RS + b'{"times":[1e999,null],"sizes":[1,1]}\n'
    assert parse_recording(data).chunks == [(None, b"a"), (None, b"b")]
    packed = (base64.b64encode(struct.pack("<3d", float("inf"), float("nan"), 0.5)),
              base64.b64encode(struct.pack("<3Q", 1, 1, 1)))
    data = head + b"abc" + RS + b'{"times":"%s","sizes":"%s"}\n' % packed
    assert parse_recording(data).chunks == [(None, b"a"), (None, b"b"), (0.5, b"c")]
    assert parse_recording(head + b"a" + RS + b'{"times":[],"sizes":[]}\n').skipped_lines == 1


# -- export --jsonl ----------------------------------------------------------------------


def test_export_jsonl_gives_version_1_and_refuses_what_is_no_recording(tmp_path, capsys):
    reads = _reads(real_shape("anthropic", 1, 100, seed=1), random.Random(1))
    new = tmp_path / "rec.fraglens"
    new.write_bytes(_write(reads, 3))
    out = tmp_path / "v1.jsonl"
    assert main(["export", "--jsonl", str(new), "-o", str(out)]) == 0
    assert out.read_bytes() == _write(reads, 1)
    lines = [json.loads(line) for line in out.read_bytes().splitlines()]
    assert lines[0]["version"] == 1 and all("b" in x or "b64" in x for x in lines[2:-1])
    sse = tmp_path / "body.sse"
    sse.write_bytes(b"data: {}\n\n")
    assert main(["export", "--jsonl", str(sse)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jsonl writes a recording" in err


def test_the_documented_example_reads_as_the_docs_say():
    text = (ROOT / "docs" / "recording-format.md").read_text(encoding="utf-8")
    block = text.split("## Version 3")[1].split("```text\n")[1].split("```")[0]
    rec = parse_recording(block.replace("\u241e", "\x1e").encode())
    assert [t for t, _ in rec.chunks] == [0.415, 0.431, 0.447]
    assert rec.response == {"status": 200, "t": 0.412, "headers": {
        "content-type": "text/event-stream", "x-request-id": "req_abc"}}
    assert rec.end == {"end": "eof", "t": 0.448} and not rec.skipped_lines
    assert rec.body.startswith(b"data: {") and rec.body.endswith(b"data: [DONE]\n\n")


@settings(max_examples=examples(200), deadline=None)
@given(times=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30))
def test_packed_times_read_back_as_the_doubles_they_are_and_none_where_not_finite(times):
    head = _write([], 3, end=None)
    packed = (base64.b64encode(struct.pack(f"<{len(times)}d", *times)),
              base64.b64encode(struct.pack(f"<{len(times)}Q", *[1] * len(times))))
    data = head + b"x" * len(times) + RS + b'{"times":"%s","sizes":"%s"}\n' % packed
    got = [t for t, _ in parse_recording(data).chunks]
    assert got == [t if math.isfinite(t) else None for t in times]


def test_every_read_is_flushed_as_it_comes_and_every_line_when_written():
    flushed: list[bytes] = []

    class Sink(io.BytesIO):
        def flush(self) -> None:
            flushed.append(self.getvalue())

    out = Sink()
    writer = RecordingWriter(out)
    writer.start(REQUEST)
    writer.chunk(0.1, b"data: a\n\n")
    assert flushed[-1].endswith(b"\ndata: a\n\n")  # on disk before any line times it
    writer.chunk(0.2, b"data: b\n\n")
    assert flushed[-1].endswith(b"data: a\n\ndata: b\n\n")
    writer.end("eof", t=0.3)
    # the times line, then the end line, each flushed as written
    assert flushed[-2].endswith(b"data: b\n\n" + _index_lines(out.getvalue())[0].join(
        [RS, b"\n"]))
    assert flushed[-1] == out.getvalue() and out.getvalue().endswith(b'\x1e{"end":"eof","t":0.3}\n')
    assert parse_recording(out.getvalue()).chunks == [(0.1, b"data: a\n\n"), (0.2, b"data: b\n\n")]


def test_after_the_end_line_a_blank_line_is_nothing_and_bytes_are_damage():
    data = _write([(0.3, b"data: a\n\n")], 3, end=0.4)
    assert _parsed(data + b"\n\r\n") == _parsed(data)  # an editor's newline
    rec = parse_recording(data + b"data: b\n\n")
    assert rec.chunks[-1] == (None, b"data: b\n\n")  # kept, with no time
    assert (rec.skipped_lines, rec.truncated) == (1, False)


# -- a file read a chunk at a time ------------------------------------------------------


def _damaged(data: bytes, rng: random.Random) -> bytes:
    """``data`` cut, or with bytes put in, taken out or changed, or its times
    lines damaged: what a killed writer, an editor or a disk may leave."""
    how = rng.randrange(6)
    at = rng.randrange(len(data) + 1)
    if how == 0:
        return data[:at]
    if how == 1:
        return data[:at] + rng.choice([b"\x1e", b"\n", b"\x1e{}\n", b"x", b"  \n"]) + data[at:]
    if how == 2:
        return data[:at] + data[at + rng.randrange(1, 40) :]
    if how == 3 and b'"sizes":"' in data:
        k = data.find(b'"sizes":"', at)
        k = data.find(b'"sizes":"') if k < 0 else k
        return data[: k + 9] + b"AAAA" + data[k + 9 :]
    if how == 4:
        return data + rng.choice([b"\n", b"data: more\n\n", b"\x1e{\"end\":\"eof\"}\n"])
    return data


def _chunked(data: bytes, sizes: list[int]):
    """``data`` read by ``RawReads`` in chunks of ``sizes`` (in turn), or None."""
    body = io.BytesIO()
    opened = RawReads.open(data[: sizes[0]], body)
    if opened is None:
        return None
    reads, start = opened
    pos, k = 0, 0
    while pos < len(data):
        chunk = data[pos : pos + sizes[k % len(sizes)]]
        reads.feed(bytearray(chunk), start if pos == 0 else 0, len(chunk))
        pos += len(chunk)
        k += 1
    reads.close()
    return reads, body.getvalue()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), sizes=st.lists(st.integers(1, 3000), min_size=1, max_size=5),
       damage=st.booleans())
def test_a_file_read_a_chunk_at_a_time_reads_as_read_whole(seed, sizes, damage):
    rng = random.Random(seed)
    body = real_shape(rng.choice(["openai-chat", "anthropic", "bedrock-converse"]), 1, 200,
                      seed=seed)
    data = _write(_reads(body, rng), 3, end=rng.choice([None, 9.0]))
    if damage:
        data = _damaged(data, rng)
    sizes[0] = max(sizes[0], data.find(b"\n") + 1)  # the first chunk holds the header line
    got = _chunked(data, sizes)
    if got is None:  # read whole instead: bytes before the header, or a header the damage took
        if data.startswith(b'{"fraglens"'):
            with pytest.raises(FramingError):
                RecordingLines(data)
        return
    reads, chunked_body = got
    whole = RecordingLines(data)
    times, lengths, pieces = whole.read_bulk(len(data))
    assert chunked_body == b"".join(pieces)
    assert reads.sizes == lengths
    assert [None if t != t else t for t in reads.times] == [None if t != t else t for t in times]
    assert _fields(reads.lines.recording) == _fields(whole.recording)
    assert reads.lines.reads == whole.reads


def _fields(rec) -> tuple:
    return (rec.response, rec.end, rec.truncated, rec.skipped_lines, rec.frames, rec.close)


def test_what_is_no_version_3_recording_is_not_read_in_chunks():
    v1 = _write([(0.1, b"data: a\n\n")], 1)
    assert RawReads.open(v1, io.BytesIO()) is None
    assert RawReads.open(b" " + _write([], 3), io.BytesIO()) is None  # read whole, as any
    assert RawReads.open(b'{"fraglens":"recording","version":3', io.BytesIO()) is None
    assert RawReads.open(b"data: {}\n\n", io.BytesIO()) is None


@pytest.mark.parametrize("kind", ["chat", "damaged", "cut", "not-sse", "version-1", "crlf"])
def test_check_of_a_recording_read_in_chunks_is_check_of_it_read_whole(tmp_path, monkeypatch,
                                                                        kind):
    from fraglens.reading import capture

    rng = random.Random(kind)
    body = real_shape("openai-chat", 2, 2000, seed=7)
    if kind == "not-sse":
        body = b'{"error":{"message":"overloaded"}}' * 200
    if kind == "crlf":
        body = body.replace(b"\n", b"\r\n")
    data = _write(_reads(body, rng), 1 if kind == "version-1" else 3)
    if kind == "damaged":
        data = data.replace(b'"sizes":"', b'"sizes":"AAAA', 2)
    if kind == "cut":
        data = data[: len(data) * 2 // 3]
    path = tmp_path / "rec.fraglens"
    path.write_bytes(data)
    monkeypatch.setattr(capture, "_CHUNKED_FROM", 0)
    monkeypatch.setattr(capture, "_CHUNK", 997)  # lines and characters cut across chunks
    read_in_chunks = capture._recording_in_chunks(str(path), str(path), capture.Options())
    assert (read_in_chunks is not None) == (kind not in ("not-sse", "version-1"))
    got, got_framed = capture.load_stream(str(path))
    want, want_framed = stream_from_bytes(data, str(path))
    assert _state(got) == _state(want)
    assert [e.time for e in got.events] == [e.time for e in want.events]
    assert got_framed.meta == want_framed.meta and got_framed.problems == want_framed.problems
