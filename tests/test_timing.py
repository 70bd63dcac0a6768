"""Stream timing: what arrived when, read from the events' receive times."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.framing.recording import RecordingWriter
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.timing import stream_timing

from .conftest import examples
from .test_live_streams import OPENAI_EVENTS, OPENAI_SSE
from .test_recording import SSE_BODY, har, har_entry

#: one read per event of OPENAI_SSE: comment, role, call_a opens, 2 fragments,
#: then a 1.5 s silence before call_b opens (event 5), 2 fragments, finish, usage, [DONE]
TIMES = [0.2, 0.3, 0.4, 0.45, 0.5, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5]


def events_of(body: bytes) -> list[bytes]:
    parts = body.split(b"\n\n")[:-1]
    return [part + b"\n\n" for part in parts]


def recording(reads: list[tuple[float, bytes]], end: float | None = None,
              error: str | None = None) -> bytes:
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "http://h/v1/chat/completions", "body": {}})
    writer.response(200, {"content-type": "text/event-stream"}, t=0.1)
    for t, data in reads:
        writer.chunk(t, data)
    writer.end("error" if error else "eof", error=error,
               t=reads[-1][0] if end is None else end)
    return out.getvalue()


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
