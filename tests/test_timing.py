"""Stream timing: what arrived when, read from the events' receive times."""

from __future__ import annotations

import io
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.framing.detect import read_stream
from fraglens.framing.recording import RecordingWriter
from fraglens.reading.capture import stream_from_bytes, stream_from_framed
from fraglens.report.timing import stream_timing

from .conftest import ROOT, examples
from .test_live_streams import OPENAI_EVENTS, OPENAI_SSE
from .test_recording import SSE_BODY, har, har_entry
from .test_runs import _anthropic, _args_pieces, _sse

sys.path.insert(0, str(ROOT / "bench"))
from shapes import FORMATS, real_shape  # noqa: E402
from shapes import recording as as_recording  # noqa: E402

#: one read per event of OPENAI_SSE: comment, role, call_a opens, 2 fragments,
#: then a 1.5 s silence before call_b opens (event 5), 2 fragments, finish, usage, [DONE]
TIMES = [0.2, 0.3, 0.4, 0.45, 0.5, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5]


def events_of(body: bytes) -> list[bytes]:
    parts = body.split(b"\n\n")[:-1]
    return [part + b"\n\n" for part in parts]


def recording(reads: list[tuple[float, bytes]], end: float | None = None,
              error: str | None = None) -> bytes:
    out = io.BytesIO()
    _recorder(out, reads).end("error" if error else "eof", error=error,
                              t=reads[-1][0] if end is None else end)
    return out.getvalue()


def _recorder(out: io.BytesIO, reads: list[tuple[float | None, bytes]]) -> RecordingWriter:
    """A writer that has written the request, the response and ``reads``."""
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "http://h/v1/chat/completions", "body": {}})
    writer.response(200, {"content-type": "text/event-stream"}, t=0.1)
    for t, data in reads:
        writer.chunk(t, data)
    return writer


def timing_of(data: bytes, **kwargs):
    stream, _ = stream_from_bytes(data)
    return stream_timing(stream, **kwargs)


def paced() -> bytes:
    pieces = events_of(OPENAI_SSE)
    assert len(pieces) == OPENAI_EVENTS == len(TIMES)
    return recording(list(zip(TIMES, pieces, strict=True)))


def test_a_capture_without_times_has_no_timing():
    assert timing_of(OPENAI_SSE) is None


def test_times_of_first_event_first_tool_byte_calls_and_duration():
    timing = timing_of(paced())
    assert timing["first_event_ms"] == 200.0  # the keep-alive comment is the first event
    assert timing["first_tool_byte_ms"] == 400.0  # call_a's id and name, event 2
    assert timing["duration_ms"] == 2500.0
    assert timing["calls"] == [
        {"call": 0, "first_ms": 400.0, "last_ms": 500.0},
        {"call": 1, "first_ms": 2000.0, "last_ms": 2200.0},
    ]


def test_output_tokens_per_second_over_the_events_span():
    # usage says 48 completion tokens; the events span 2.5 - 0.2 = 2.3 s
    assert timing_of(paced())["output_tokens_per_s"] == round(48 / 2.3, 1)


def test_without_usage_there_is_no_token_rate():
    pieces = [p for p in events_of(OPENAI_SSE) if b'"usage"' not in p]
    timing = timing_of(recording(list(zip(TIMES[:-1], pieces, strict=True))))
    assert timing["output_tokens_per_s"] is None


def test_a_gap_longer_than_the_threshold_is_a_stall_named_by_the_event_after_it():
    assert timing_of(paced())["stalls"] == [{"gap_ms": 1500.0, "event": 5}]


def test_the_threshold_is_a_parameter_and_a_gap_equal_to_it_is_no_stall():
    assert timing_of(paced(), stall_ms=1500.0)["stalls"] == []
    # at 90 ms the 100 ms steps count too; the 50 ms ones (events 3, 4) do not
    low = timing_of(paced(), stall_ms=90.0)["stalls"]
    assert [s["event"] for s in low] == [1, 2, 5, 6, 7, 8, 9, 10]
    assert low[1] == {"gap_ms": 100.0, "event": 2}


def test_a_wait_after_the_last_event_until_the_end_is_a_stall_and_counts_in_the_duration():
    # the model went quiet after call_a's fragments and the client gave up 60 s later
    pieces = events_of(OPENAI_SSE)[:5]
    reads = list(zip(TIMES[:5], pieces, strict=True))
    timing = timing_of(recording(reads, end=60.5, error="ReadTimeout: no bytes for 60.0 s"))
    assert timing["duration_ms"] == 60500.0
    # 60.5 - 0.5 s, after the last event (4): no event ended it
    assert timing["stalls"] == [{"gap_ms": 60000.0, "event": None}]
    # ended soon after the last event: no stall, and the duration is still the end's
    timing = timing_of(recording(reads, end=0.9))
    assert (timing["duration_ms"], timing["stalls"]) == (900.0, [])


def test_the_text_report_names_a_stall_before_the_end():
    from fraglens.report.document import build_report
    from fraglens.report.text import timing_lines

    pieces = events_of(OPENAI_SSE)[:5]
    stream, _ = stream_from_bytes(recording(list(zip(TIMES[:5], pieces, strict=True)), end=3.5))
    lines = timing_lines(build_report(stream))
    assert lines[-1] == "  stall: 3,000.0 ms with nothing, before the end"


def test_a_keep_alive_during_the_silence_breaks_the_stall():
    pieces = events_of(OPENAI_SSE)
    reads = list(zip(TIMES, pieces, strict=True))
    reads.insert(5, (1.2, b": still here\n\n"))
    stalls = timing_of(recording(reads))["stalls"]
    assert stalls == []


def test_events_completed_by_one_read_share_its_time():
    pieces = events_of(OPENAI_SSE)
    # everything up to call_b in one read at 0.5 s, the rest in one read 3 s later
    reads = [(0.5, b"".join(pieces[:5])), (3.5, b"".join(pieces[5:]))]
    timing = timing_of(recording(reads))
    assert timing["first_event_ms"] == 500.0
    assert timing["calls"][0] == {"call": 0, "first_ms": 500.0, "last_ms": 500.0}
    assert timing["stalls"] == [{"gap_ms": 3000.0, "event": 5}]


def test_a_stream_without_calls_has_no_first_tool_byte():
    body = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    timing = timing_of(recording([(0.3, body), (0.4, b"data: [DONE]\n\n")]))
    assert timing["first_tool_byte_ms"] is None
    assert timing["calls"] == []
    assert timing["first_event_ms"] == 300.0


def test_a_har_knows_only_when_the_body_ended():
    # wait ends at 2 + 1 + 297 ms, the body 700 ms later: its events all carry 1000 ms
    doc = har(
        har_entry(
            "https://api.openai.com/v1/chat/completions",
            "text/event-stream",
            SSE_BODY,
            post={"model": "m", "messages": [], "stream": True},
        )
    )
    timing = timing_of(json.dumps(doc).encode())
    assert timing["duration_ms"] == 1000.0
    assert timing["first_event_ms"] is None
    assert timing["stalls"] is None
    assert "HAR" in timing["note"]


def _stalls_one_by_one(times: list[float | None], stall_ms: float) -> list[dict]:
    """The stalls between the timed events, found one event at a time."""
    out: list[dict] = []
    previous = None
    for number, t in enumerate(times):
        if t is None:
            continue
        if previous is not None and (t - previous) * 1000 > stall_ms:
            out.append({"gap_ms": round((t - previous) * 1000, 1), "event": number})
        previous = t
    return out


@settings(max_examples=examples(100), deadline=None)
@given(steps=st.lists(st.one_of(st.none(), st.floats(-0.5, 3.0),
                                 st.sampled_from([0.0, 0.09, 0.0905, 1.0, 1.0005, 1.5])),
                       min_size=1, max_size=40),
       stall_ms=st.sampled_from([0.0, 90.0, 1000.0, 1500.0]))
def test_the_stalls_found_in_bulk_are_those_found_one_event_at_a_time(steps, stall_ms):
    # one read per event, each some time after the one before (or before it: a
    # hand-made file), some with no time at all: the gaps are measured in C
    # when every event has a time, one by one when not
    pieces = (events_of(OPENAI_SSE) * 4)[: len(steps)]
    lines, t = [], 0.0
    for step, piece in zip(steps, pieces, strict=True):
        line: dict = {"b": piece.decode()}
        if step is not None:
            t += step
            line["t"] = t
        lines.append(json.dumps(line))
    data = recording([], end=0.0).replace(b'{"end"', "\n".join(lines).encode() + b'\n{"end"')
    stream, _ = stream_from_bytes(data)
    times = [e.time for e in stream.events]
    timing = stream_timing(stream, stall_ms=stall_ms)
    if all(t is None for t in times):
        assert timing is None
        return
    stalls = [s for s in timing["stalls"] if s["event"] is not None]
    assert stalls == _stalls_one_by_one(times, stall_ms)
    timed = [t for t in times if t is not None]
    assert timing["first_event_ms"] == round(timed[0] * 1000, 1)


# -- a recording's timing told from its reads ------------------------------------------


def _three_timings(data: bytes, stall_ms: float) -> tuple:
    """The timing of a recording read in runs, asked for first (told from the
    reads), and again once every event's time is worked out, and the timing
    of the read-by-read reading."""
    fresh, _ = stream_from_bytes(data)
    told = stream_timing(fresh, stall_ms=stall_ms)
    worked, _ = stream_from_bytes(data)
    worked.events.time_array()
    assert worked.events.wide_gaps(stall_ms) is None  # the times are read now
    one_by_one = stream_from_framed(read_stream(data))
    return told, stream_timing(worked, stall_ms=stall_ms), stream_timing(one_by_one, stall_ms)


def _told(data: bytes, stall_ms: float = 1000.0):
    """What a recording's reads tell of its times: the first, the last, the wide gaps."""
    stream, _ = stream_from_bytes(data)
    return stream.events.wide_gaps(stall_ms)


def _body(eol: bytes, pieces: int, comment: bool, tail: bytes) -> bytes:
    body = _sse(_anthropic(_args_pieces(pieces)))
    if comment:
        body = body.replace(b"\n\nevent: content_block_stop", b"\n\n: keep-alive\n\nevent: "
                            b"content_block_stop", 1)
    return body.replace(b"\n", eol) + tail.replace(b"\n", eol)


#: a read's time after the one before, as a share of the stall: a stall itself
#: (1.0001: by a hair), the same time, or one that is no stall but where it
#: adds up with the next over reads with no event's end
SHARES = st.sampled_from([0.0, 0.05, 0.3, 0.44, 0.5, 0.9, 1.0, 1.0001, 1.6, 3.0])
#: a hand-made file's: earlier than the one before, or no time
ODD = st.one_of(st.floats(-1.0, 0.0), st.none())


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    eol=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(min_value=0), max_size=60),
    steps=st.lists(SHARES, min_size=1, max_size=8),
    odd=st.one_of(st.none(), st.tuples(st.integers(0, 60), ODD)),
    pieces=st.integers(min_value=1, max_value=60),
    end=st.sampled_from([None, -1.0, 0.0, 0.3, 5.0]),
    tail=st.sampled_from([b"", b'data: {"type":"ping"}', b": bye", b"data: [DONE]\n"]),
    comment=st.booleans(),
    stall_ms=st.sampled_from([1.0, 45.0, 1000.0]),
)
def test_the_timing_told_from_the_reads_is_that_of_every_events_time(
        eol, cuts, steps, odd, pieces, end, tail, comment, stall_ms):
    # reads cut anywhere (in a CRLF, a character, a comment's next line; some
    # with no event's end), each some time after the one before (or one of
    # them earlier, or with no time: a hand-made file), the end some time after
    # the last read, or before it
    body = _body(eol, pieces, comment, tail)
    points = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    reads: list[tuple[float | None, bytes]] = []
    t = 0.2
    for k, (a, b) in enumerate(zip(points, points[1:], strict=False)):
        share = odd[1] if odd is not None and odd[0] == k else steps[k % len(steps)]
        if share is not None:
            t += share * stall_ms / 1000
        reads.append((None if share is None else t, body[a:b]))
    end_time = None if end is None else t + end * stall_ms / 1000
    told, worked, one_by_one = _three_timings(recording_v(reads, end_time), stall_ms)
    assert told == worked == one_by_one


def recording_v(reads: list[tuple[float | None, bytes]], end: float | None) -> bytes:
    """``reads`` recorded, with the end's time (None: no end line, the reads'
    times written all the same)."""
    out = io.BytesIO()
    writer = _recorder(out, reads)
    if end is not None:
        writer.end("eof", t=end)
    else:
        writer.flush()
    return out.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stall_ms", [1.0, 12.0, 1000.0])
def test_real_shapes_timing_told_from_the_reads_agrees(fmt, stall_ms):
    # 1-3 events a read, 0.5 to 20 ms apart, one read in five cut in an event
    # (some in a character): at 12 ms a few gaps are stalls, at 1 s none is
    told, worked, one_by_one = _three_timings(as_recording(real_shape(fmt, 2, 3000)), stall_ms)
    assert told == worked == one_by_one


def test_a_long_calls_stalls_are_told_from_its_reads():
    body = real_shape("openai-chat", 1, 20_000)
    # reads of 300 bytes (cut anywhere) 5 ms apart, three of them after a 1.2 s silence
    reads = [(0.2 + k * 0.005 + sum(1.2 for j in (70, 90, 200) if j <= k), body[a : a + 300])
             for k, a in enumerate(range(0, len(body), 300))]
    data = recording_v(reads, end=reads[-1][0])
    stream, _ = stream_from_bytes(data)
    told = stream.events.wide_gaps(1000.0)
    assert stream.events._settled == 0  # no event's time was kept to tell it
    times = stream.events.times()
    pairs = enumerate(zip(times, times[1:], strict=False), 1)
    wide = [(k, a, b) for k, (a, b) in pairs if b - a > 1]
    assert len(wide) == 3
    assert told == (times[0], times[-1], wide)
    assert _told(data, stall_ms=1210.0) == (times[0], times[-1], [])  # 1.205 s apart


def test_reads_that_do_not_show_a_stream_timed_throughout_tell_nothing():
    pieces = events_of(OPENAI_SSE)
    steady = [(0.2 + k / 100, p) for k, p in enumerate(pieces)]
    assert _told(recording(steady)) == (0.2, 0.3, [])  # the times written to the microsecond
    stalled = steady[:5] + [(t + 1.5, p) for t, p in steady[5:]]
    assert _told(recording(stalled)) == (0.2, 1.8, [(5, 0.24, 1.75)])
    back = steady[:5] + [(t - 0.03, p) for t, p in steady[5:]]  # a read before the one before
    assert _told(recording(back)) is None
    untimed = steady[:5] + [(None, steady[5][1])] + steady[6:]
    assert _told(recording_v(untimed, end=1.0)) is None
    assert _told(recording_v(steady, end=0.2)) is None  # the end before the last read
    # a comment's time is its next line's read's, here 1.3 s after its own: no stall
    comment = [(0.2, pieces[0][:-1]), (1.5, b"\n" + pieces[1])]
    comment += [(t + 1.3, p) for t, p in steady[2:]]
    assert pieces[0].startswith(b":")
    assert _told(recording(comment)) == (1.5, 1.6, [])


def test_a_comment_whose_next_line_came_a_stall_later_ends_the_stall_then():
    # the comment's bytes came at 0.7 s, 0.5 s after the event before it, but
    # the line that ended it at 1.5 s: its time, 1.3 s after that event's
    pieces = events_of(OPENAI_SSE)
    assert pieces[0].startswith(b":")
    reads = [(0.2, pieces[1]), (0.7, pieces[0][:-1]), (1.5, b"\n" + pieces[2])]
    reads += [(1.5 + k / 100, p) for k, p in enumerate(pieces[3:])]
    assert _told(recording(reads)) == (0.2, 1.57, [(1, 0.2, 1.5)])
    assert timing_of(recording(reads))["stalls"] == [{"gap_ms": 1300.0, "event": 1}]
