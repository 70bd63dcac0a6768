"""Events kept compactly (framing/events.py EventLog): the same events, less memory.

A whole capture's events are kept as ranges of its bytes, decoded when asked;
everything read from them must be what the readers made: every sample's
report, every event's fields, under any split of the input.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fraglens.framing import detect
from fraglens.framing.detect import read_stream
from fraglens.framing.events import EventLog, Framed, FrameTooLarge, RawEvent
from fraglens.framing.eventstream import (
    EventStreamDecoder,
    encode_message,
    read_eventstream,
    to_event,
)
from fraglens.framing.sse import SSEDecoder
from fraglens.reading.capture import LoadError, stream_from_bytes, stream_from_framed
from fraglens.reading.findings import report_replaced_bytes
from fraglens.report.document import build_report

from .conftest import examples

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
CAPTURES = sorted(p for p in SAMPLES.iterdir() if p.suffix != ".md" and p.is_file()
                  and not p.name.endswith(".expected.json"))


def test_a_log_gives_back_the_events_appended():
    source = b'data: {"a": 1}\n\n'
    events = [
        RawEvent(0, "data", '{"a": 1}', span=(0, 16), at=(6, 14)),
        RawEvent(1, "comment", "keep-alive", time=0.5),
        RawEvent(2, "data", "x\ny", "message_delta", "7", 1.25, (16, 30)),
        RawEvent(3, "damaged", "cut", event="cut", span=(30, 31)),
        RawEvent(4, "done", "[DONE]"),
    ]
    log = EventLog(source)
    for ev in events:
        log.append(ev)
    assert log == events and events == log and list(log) == events
    assert len(log) == 5 and log[-1] == events[4] and log[1:3] == events[1:3]
    assert log[0].at == (6, 14) and log[2].at is None  # kept as text: no range
    assert log.times() == [None, 0.5, 1.25, None, None]
    assert [log.kind(i) for i in range(5)] == ["data", "comment", "data", "damaged", "done"]
    assert log._texts.keys() == {1, 2, 3, 4}  # the one-line payload is a range of the source
    with pytest.raises(IndexError):
        log[5]


def test_a_payload_range_its_span_cannot_say_is_kept_as_given():
    # payload ranges are kept as distances from the span's ends: one with no
    # span, or outside its span, is kept as it is
    source = b'data: {"a": 1}\n\n{"b": 2}'
    events = [
        RawEvent(0, "data", '{"b": 2}', at=(16, 24)),
        RawEvent(1, "data", '{"a": 1}', span=(16, 24), at=(6, 14)),
        RawEvent(2, "data", '{"a": 1}', span=(0, 16), at=(6, 14)),
    ]
    log = EventLog(source)
    for ev in events:
        log.append(ev)
    assert log == events and [log.at(i) for i in range(3)] == [(16, 24), (6, 14), (6, 14)]
    assert not log._texts


def test_a_run_added_at_once_is_its_events_one_by_one():
    source = b"".join(b"data: {\"p\": \"%d\"}\n\n" % k for k in range(12))
    starts = [0]
    for k in range(12):
        starts.append(starts[-1] + len(b"data: {\"p\": \"%d\"}\n\n" % k))
    one, bulk = EventLog(source), EventLog(source)
    one.append(RawEvent(0, "comment", "first", time=0.5))
    bulk.append(RawEvent(0, "comment", "first", time=0.5))
    for k in range(10):  # the last two starts are past the run
        one.add("data", "delta", starts[k], starts[k + 1], starts[k] + 6, starts[k + 1] - 2, None)
    bulk.add_run("delta", starts, 10, 6, 2)
    assert bulk == one and len(bulk) == 11 and bulk[10].at == (starts[9] + 6, starts[10] - 2)
    assert [bulk.data(i) for i in range(1, 11)] == [f'{{"p": "{k}"}}' for k in range(10)]
    assert bulk.times() == [0.5] + [None] * 10 and bulk.span_ends(9) == one.span_ends(9)
    bulk.add_run(None, starts[10:], 0, 6, 2)  # nothing
    assert len(bulk) == 11


def test_a_log_says_whether_any_event_has_a_time():
    log = EventLog()
    log.append(RawEvent(0, "data", "{}"))
    assert not log.timed
    log.append(RawEvent(1, "data", "{}", time=0.0))
    log.append(RawEvent(2, "data", "{}"))
    assert log.timed and log.times() == [None, 0.0, None]
    log.stamp([None, None, None])
    assert not log.timed


def test_a_log_without_its_source_keeps_every_payload_as_text():
    log = EventLog()
    log.append(RawEvent(0, "data", "{}", at=(0, 2)))
    assert log[0].data == "{}" and log[0].at is None and log.times() == [None]


def test_an_event_kind_no_reader_makes_is_kept():
    log = EventLog()
    log.append(RawEvent(0, "html", "<p>"))  # type: ignore[arg-type]
    assert log[0].kind == "html"


long_data = st.text(alphabet='abé東🚀{}": \\', min_size=60, max_size=90).map(lambda s: "data: " + s)
sse_line = st.one_of(
    long_data,
    long_data,
    st.text(alphabet='abé東🚀{}": ', max_size=8).map(lambda s: "data:" + s),
    st.text(alphabet="ab ", max_size=5).map(lambda s: "event: " + s),
    st.text(alphabet="ab1", max_size=5).map(lambda s: "id: " + s),
    st.text(alphabet="ab -", max_size=8).map(lambda s: ":" + s),
    st.just(""),
    st.just(""),
    st.just("data: [DONE]"),
    st.just("data: [DONE]" + "\u3000" * 18),  # 66 bytes, stripped to [DONE]
)


def _decode(*chunks: bytes, log: EventLog | None = None) -> list[RawEvent]:
    decoder = SSEDecoder(log=log)
    out: list[RawEvent] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    out += decoder.close()
    return out


LONG = "data: " + "é" * 40  # 86 bytes: a payload the log keeps as a range


@given(
    lines=st.lists(sse_line, max_size=14),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=6),
)
@example([LONG, "", "event: e", LONG, "", LONG], "\n", [])
@example([LONG, "", "event: e", LONG, "", LONG], "\r\n", [50, 100])
@example([": hi", LONG, "", LONG, "data: 2", "", LONG, ""], "\n", [7])
@settings(max_examples=examples(300))
def test_a_decoder_writing_to_a_log_gives_the_events_it_returns(lines, ending, cuts):
    raw = ending.join(lines).encode()
    points = sorted({min(c, len(raw)) for c in cuts})
    chunks = [raw[a:b] for a, b in pairwise([0, *points, len(raw)])]
    returned = _decode(raw)
    log = EventLog(raw)
    assert _decode(*chunks, log=log) == []
    assert list(log) == returned
    for ev, kept in zip(returned, log, strict=True):
        assert kept.span == ev.span
        if ev.at is not None:  # the range is the payload's exact bytes
            assert raw[ev.at[0] : ev.at[1]].decode("utf-8", "replace") == ev.data


def test_one_line_data_events_keep_no_text():
    piece = b'{"piece": "%d 0123456789012345678901234567890123456789"}'
    raw = b"".join(b"event: e\ndata: " + piece % i + b"\n\n" for i in range(100))
    log = EventLog(raw)
    _decode(raw[:777], raw[777:], log=log)
    assert len(log) == 100 and not log._texts


def test_a_decoder_writing_to_a_log_keeps_the_events_before_a_limit():
    raw = b"data: " + b"x" * 70 + b"\n\ndata: " + b"y" * 200 + b"\n\n"
    log = EventLog(raw)
    decoder = SSEDecoder(max_line=100, log=log)
    with pytest.raises(FrameTooLarge) as exc:
        decoder.feed(raw)
    assert exc.value.events == [] and [ev.data for ev in log] == ["x" * 70]


def test_a_log_decoder_needs_an_empty_log_over_its_bytes():
    with pytest.raises(ValueError):
        SSEDecoder(log=EventLog())


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_every_sample_reads_the_same_kept_compactly_or_as_events(path, monkeypatch):
    """The payload each reader made, against the one the log gives back; and the
    report read from the log, against the one read from plain events."""
    data = path.read_bytes()
    made: list[str] = []
    append = EventLog.append

    def spy_append(self, ev):
        if self.source is data:
            made.append(ev.data)
        append(self, ev)

    monkeypatch.setattr(EventLog, "append", spy_append)
    try:
        framed = read_stream(data)
    except detect.FramingError:
        return
    events = list(framed.events)
    if framed.framing == "sse":
        # what a decoder that keeps nothing compact returns, event by event
        assert events == _decode(data)
    elif framed.framing == "eventstream":
        decoder = EventStreamDecoder()
        items = decoder.feed(data) + decoder.close()
        assert events == [to_event(n, item) for n, item in enumerate(items)]
    elif framed.framing == "ndjson":
        lines = [line.strip() for line in data.split(b"\n")]
        assert [ev.data for ev in events] == [ln.decode("utf-8", "replace") for ln in lines if ln]
        for ev in events:  # each span is its line, its newline included
            assert data[ev.span[0] : ev.span[1]].strip() == ev.data.encode()
    elif isinstance(framed.events, EventLog) and framed.events.source is data:
        assert [ev.data for ev in events] == made  # what the reader decoded itself
    plain = Framed(framed.framing, events, framed.meta, framed.problems)
    assert _read_plain(plain, data) == _read_whole(data)


def _read_plain(framed: Framed, data: bytes):
    """What ``stream_from_bytes`` does, from events given as a plain list."""
    try:
        stream = stream_from_framed(framed)
    except LoadError as exc:
        return str(exc)
    report_replaced_bytes(stream, data)
    return build_report(stream)


def _read_whole(data: bytes):
    try:
        return build_report(stream_from_bytes(data)[0])
    except LoadError as exc:
        return str(exc).removeprefix("input: ")


def test_a_log_says_which_payloads_hold_a_replacement_character():
    source = b'data: {"a": "\xff"}\n\ndata: {"a": "b"}\n\ndata: {"a": "\xc3\xa9"}\n\n'
    log = EventLog(source)
    for i, (start, end) in enumerate([(6, 16), (24, 34), (42, 53)]):
        log.append(RawEvent(i, "data", "", at=(start, end)))
    log.append(RawEvent(3, "data", "kept \ufffd"))
    assert [log.replaced(i) for i in range(4)] == [True, False, False, True]


def _message(kind: int, payload: str) -> bytes:
    headers = [
        {":event-type": "contentBlockDelta", ":message-type": "event"},
        {":event-type": "metadata", ":message-type": "event"},
        {":error-code": "Boom", ":error-message": "it broke", ":message-type": "error"},
        {":exception-type": "throttlingException", ":message-type": "exception"},
    ][kind]
    return encode_message(headers, payload.encode())


@given(
    st.lists(st.tuples(st.integers(0, 3), st.text(alphabet='ab{}":é', max_size=20)), max_size=8),
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=3),
    st.integers(0, 400),
)
@example([(0, '{"a":1}'), (2, ""), (1, "{}")], [], 0)
@example([(0, '{"a":1}'), (0, '{"b":2}'), (0, "{}")], [(40, 7)], 5)
def test_a_whole_event_stream_reads_as_the_decoder_reads_it(messages, flips, cut):
    """The whole-input reader runs through the messages that hold and hands
    the rest to the decoder: damaged or cut anywhere, the same events."""
    raw = bytearray(b"".join(_message(k, p) for k, p in messages))
    for at, byte in flips:
        if at < len(raw):
            raw[at] = byte
    data = bytes(raw[: len(raw) - cut if cut < len(raw) else len(raw)])
    decoder = EventStreamDecoder()
    items = decoder.feed(data) + decoder.close()
    assert list(read_eventstream(data).events) == [to_event(n, i) for n, i in enumerate(items)]
