"""Framing: SSE decoding (every variant of Q25/Q26) and framing detection."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fraglens.framing import (
    DecoderMisuse,
    Framed,
    FrameTooLarge,
    FramingError,
    RawEvent,
    SSEDecoder,
    read_stream,
)

from .conftest import shared_or_skip


def decode(*chunks: bytes) -> list[RawEvent]:
    decoder = SSEDecoder()
    events: list[RawEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events + decoder.close()


def datas(events: list[RawEvent]) -> list[str]:
    return [e.data for e in events if e.kind != "comment"]


# -- SSE: line endings -------------------------------------------------------


def test_sse_lf_line_endings():
    assert datas(decode(b"data: a\n\ndata: b\n\n")) == ["a", "b"]


def test_sse_crlf_line_endings():
    assert datas(decode(b"data: a\r\n\r\ndata: b\r\n\r\n")) == ["a", "b"]


def test_sse_lone_cr_line_endings():
    assert datas(decode(b"data: a\r\rdata: b\r\r")) == ["a", "b"]


def test_sse_mixed_line_endings():
    assert datas(decode(b"data: a\r\n\ndata: b\r\rdata: c\n\r\n")) == ["a", "b", "c"]


def test_sse_crlf_split_across_feeds_is_one_line_end():
    # the LF of a split CRLF must not read as a blank line dispatching early
    events = decode(b"data: a\r", b"\ndata: b\r\n\r", b"\n")
    assert [e.data for e in events] == ["a\nb"]


def test_sse_utf8_character_split_across_feeds():
    raw = 'data: {"city": "Zürich 東京 🚀"}\n\n'.encode()
    cut = raw.index("🚀".encode()) + 2
    assert decode(raw[:cut], raw[cut:])[0].data == '{"city": "Zürich 東京 🚀"}'


def test_sse_invalid_utf8_is_replaced_not_raised():
    assert decode(b"data: a\xffb\n\n")[0].data == "a\ufffdb"


# -- SSE: BOM ----------------------------------------------------------------


def test_sse_bom_at_start_is_skipped():
    events = decode(b"\xef\xbb\xbfdata: a\n\n")
    assert events[0].data == "a"
    assert events[0].span == (3, 12)


def test_sse_bom_split_across_feeds_is_skipped():
    assert datas(decode(b"\xef", b"\xbb", b"\xbfdata: a\n\n")) == ["a"]


def test_sse_bom_later_in_stream_is_data():
    assert decode(b"data: \xef\xbb\xbfa\n\n")[0].data == "\ufeffa"


def test_sse_stream_shorter_than_a_bom_is_still_read():
    assert datas(decode(b"da", b"ta")) == [""]


# -- SSE: fields -------------------------------------------------------------


def test_sse_data_without_space():
    assert decode(b"data:{}\n\n")[0].data == "{}"


def test_sse_only_one_leading_space_is_stripped():
    assert decode(b"data:  x\n\n")[0].data == " x"


def test_sse_several_data_lines_join_with_newline():
    assert decode(b'data: {\ndata: "a": 1\ndata: }\n\n')[0].data == '{\n"a": 1\n}'


def test_sse_empty_data_line_dispatches_empty_data():
    assert decode(b"data:\n\n")[0].data == ""


def test_sse_field_name_without_colon_is_a_field_with_empty_value():
    assert decode(b"data\ndata\n\n")[0].data == "\n"


def test_sse_event_and_id_fields():
    event = decode(b"event: message_start\nid: 42\ndata: {}\n\n")[0]
    assert (event.event, event.id, event.data) == ("message_start", "42", "{}")


def test_sse_data_before_event_field():
    event = decode(b"data: {}\nevent: ping\n\n")[0]
    assert (event.event, event.data) == ("ping", "{}")


def test_sse_fields_in_any_order_with_retry():
    event = decode(b"retry: 3000\ndata: x\nid: 7\nevent: e\n\n")[0]
    assert (event.event, event.id, event.data) == ("e", "7", "x")


def test_sse_unknown_fields_are_ignored():
    assert decode(b"foo: bar\ndata: x\n\n")[0].data == "x"


def test_sse_id_with_nul_is_ignored():
    assert decode(b"id: a\x00b\ndata: x\n\n")[0].id is None


def test_sse_id_belongs_to_its_event_only():
    first, second = decode(b"id: 1\ndata: a\n\ndata: b\n\n")
    assert (first.id, second.id) == ("1", None)


def test_sse_event_field_without_data_dispatches_nothing():
    assert decode(b"event: ping\n\ndata: x\n\n") == [
        RawEvent(0, "data", "x", span=(13, 22)),
    ]


def test_sse_event_type_does_not_leak_into_the_next_event():
    first, second = decode(b"event: a\ndata: 1\n\ndata: 2\n\n")
    assert (first.event, second.event) == ("a", None)


# -- SSE: comments, [DONE], end of stream ------------------------------------


def test_sse_comment_is_an_event():
    event = decode(b": keep-alive\n\n")[0]
    assert (event.kind, event.data, event.span) == ("comment", "keep-alive", (0, 13))


def test_sse_comment_without_space_and_empty_comment():
    assert [e.data for e in decode(b":OPENROUTER PROCESSING\n\n:\n\n")] == [
        "OPENROUTER PROCESSING",
        "",
    ]


def test_sse_consecutive_comment_lines_are_one_comment_event():
    events = decode(b": a sample header\n: second line\n\ndata: {}\n\n: ping\n\n")
    assert [(e.kind, e.data) for e in events] == [
        ("comment", "a sample header\nsecond line"),
        ("data", "{}"),
        ("comment", "ping"),
    ]


def test_sse_comment_inside_an_event_does_not_split_it():
    events = decode(b"data: a\n: ping\ndata: b\n\n")
    assert [(e.kind, e.data) for e in events] == [("comment", "ping"), ("data", "a\nb")]


def test_sse_done_sentinel():
    events = decode(b"data: {}\n\ndata: [DONE]\n\n")
    assert [e.kind for e in events] == ["data", "done"]


def test_sse_done_sentinel_without_space():
    assert decode(b"data:[DONE]\n\n")[0].kind == "done"


def test_sse_done_inside_json_is_data():
    assert decode(b'data: "[DONE]"\n\n')[0].kind == "data"


def test_sse_final_event_without_blank_line_is_read_on_close():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\n") == [RawEvent(0, "data", "a", span=(0, 9))]
    assert decoder.close() == [RawEvent(1, "data", "b", span=(9, 17))]


def test_sse_final_line_without_line_end_is_read_on_close():
    assert datas(decode(b"data: a\n\ndata: b")) == ["a", "b"]


def test_sse_trailing_cr_is_a_line_end_on_close():
    assert decode(b"data: a\r")[0].span == (0, 8)


def test_sse_events_are_numbered_in_order_with_comments():
    events = decode(b": hi\n\ndata: a\n\n: ping\ndata: [DONE]\n\n")
    assert [(e.number, e.kind) for e in events] == [
        (0, "comment"),
        (1, "data"),
        (2, "comment"),
        (3, "done"),
    ]


def test_sse_feed_time_is_stamped_on_the_events_it_completes():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a", time=0.5) == []
    assert [e.time for e in decoder.feed(b"\n\n", time=0.75)] == [0.75]


# -- SSE: spans and splits ---------------------------------------------------

STREAMS = {
    "lf": b': hi\n\nevent: a\ndata: {"x": 1}\n\ndata: [DONE]\n\n',
    "crlf": b'data: {"t": "caf\xc3\xa9"}\r\nid: 1\r\n\r\n: ping\r\ndata: b\r\n\r\n',
    "cr": b"data: a\r\rdata: b\rdata: c\r\r",
    "bom-multibyte": "\ufeffdata: 東京\n\ndata: 🚀\n\n".encode(),
    "no-final-blank-line": b"data: a\n\ndata: b",
}


@pytest.mark.parametrize("raw", STREAMS.values(), ids=STREAMS.keys())
def test_sse_span_covers_the_events_bytes(raw: bytes):
    for event in decode(raw):
        assert event.span is not None
        text = raw[event.span[0] : event.span[1]].decode("utf-8")
        assert event.data.split("\n")[0] in text


@pytest.mark.parametrize("raw", STREAMS.values(), ids=STREAMS.keys())
def test_sse_every_two_way_split_gives_the_same_events(raw: bytes):
    whole = decode(raw)
    for cut in range(len(raw) + 1):
        assert decode(raw[:cut], raw[cut:]) == whole, cut


@pytest.mark.parametrize("raw", STREAMS.values(), ids=STREAMS.keys())
def test_sse_byte_by_byte_feed_gives_the_same_events(raw: bytes):
    assert decode(*(raw[i : i + 1] for i in range(len(raw)))) == decode(raw)


sse_line = st.one_of(
    st.text(alphabet='abé東🚀{}": ', max_size=8).map(lambda s: "data:" + s),
    st.text(alphabet="ab ", max_size=5).map(lambda s: "event: " + s),
    st.text(alphabet="ab1", max_size=5).map(lambda s: "id: " + s),
    st.text(alphabet="ab -", max_size=8).map(lambda s: ":" + s),
    st.just(""),
    st.just("data: [DONE]"),
)


@given(
    lines=st.lists(sse_line, max_size=12),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_sse_any_chunking_gives_the_same_events(lines: list[str], ending: str, cuts: list[int]):
    raw = ending.join(lines).encode()
    points = sorted({min(c, len(raw)) for c in cuts})
    chunks = [raw[a:b] for a, b in pairwise([0, *points, len(raw)])]
    assert decode(*chunks) == decode(raw)


@given(
    lines=st.lists(sse_line, max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_sse_block_fast_path_matches_the_line_by_line_path(lines: list[str], cuts: list[int]):
    # LF-only (and CRLF-only) text is read a blank-line block at a time; CR-only
    # text goes line by line. CR and LF are both one byte, so the two readings
    # must give identical events, spans included.
    lf = "\n".join(lines).encode()
    points = sorted({min(c, len(lf)) for c in cuts})
    chunks = [lf[a:b] for a, b in pairwise([0, *points, len(lf)])]
    assert decode(*chunks) == decode(lf.replace(b"\n", b"\r"))


@given(st.lists(st.text(alphabet="ab{}é\n", max_size=10), min_size=1, max_size=8))
def test_sse_data_lines_round_trip(payloads: list[str]):
    raw = "".join("".join(f"data: {line}\n" for line in p.split("\n")) + "\n" for p in payloads)
    assert datas(decode(raw.encode())) == payloads


def test_sse_reads_a_100k_event_stream():
    chunk = b'data: {"choices":[{"delta":{"content":"x"}}]}\n\n'
    events = decode(chunk * 100_000)
    assert len(events) == 100_000
    assert events[-1].span == (len(chunk) * 99_999, len(chunk) * 100_000)


# -- detection ---------------------------------------------------------------


def test_detect_sse():
    framed = read_stream(b'data: {"a": 1}\n\ndata: [DONE]\n\n')
    assert framed.framing == "sse"
    assert [e.kind for e in framed.events] == ["data", "done"]


def test_detect_sse_starting_with_comment_lines():
    framed = read_stream(b": this sample shows a keep-alive\n: another\n\ndata: {}\n\n")
    assert framed.framing == "sse"
    assert [e.kind for e in framed.events] == ["comment", "data"]


def test_detect_sse_whose_data_is_not_json():
    framed = read_stream(b"data: hello there\n\n")
    assert (framed.framing, framed.events[0].data) == ("sse", "hello there")


def test_detect_sse_of_comments_only():
    assert read_stream(b": ping\n\n: ping\n\n").framing == "sse"


def test_detect_sse_with_bom_and_crlf():
    framed = read_stream(b"\xef\xbb\xbfevent: x\r\ndata: {}\r\n\r\n")
    assert (framed.framing, framed.events[0].event) == ("sse", "x")


def test_detect_ndjson():
    framed = read_stream(b'{"a": 1}\n{"b": 2}\n')
    assert framed.framing == "ndjson"
    assert [(e.data, e.span) for e in framed.events] == [
        ('{"a": 1}', (0, 9)),
        ('{"b": 2}', (9, 18)),
    ]


def test_detect_ndjson_with_crlf_and_blank_lines():
    framed = read_stream(b'{"a": 1}\r\n\r\n{"b": 2}\r\n')
    assert [e.data for e in framed.events] == ['{"a": 1}', '{"b": 2}']


def test_ndjson_cut_off_last_line_is_kept_raw():
    framed = read_stream(b'{"a": 1}\n{"b": ')
    assert (framed.framing, [e.data for e in framed.events]) == ("ndjson", ['{"a": 1}', '{"b":'])


def test_detect_json_array_one_event_per_item():
    framed = read_stream('[{"a": "é"}, {"b": [1, 2]}]'.encode())
    assert framed.framing == "json-array"
    assert [e.data for e in framed.events] == ['{"a": "é"}', '{"b": [1, 2]}']
    assert [e.kind for e in framed.events] == ["data", "data"]


def test_json_array_spans_are_byte_offsets_of_items():
    raw = '[{"a": "é"},\n {"b": 1}]'.encode()
    spans = [e.span for e in read_stream(raw).events]
    assert [json.loads(raw[a:b]) for a, b in spans] == [{"a": "é"}, {"b": 1}]


def test_json_array_cut_off_keeps_complete_items_and_the_raw_tail():
    framed = read_stream(b'[{"a": 1},\n {"b": 2},\n {"c": ')
    assert (framed.framing, [e.data for e in framed.events]) == (
        "json-array",
        ['{"a": 1}', '{"b": 2}', '{"c":'],
    )


def test_ndjson_of_arrays_is_not_one_array():
    framed = read_stream(b"[1, 2]\n[3]\n")
    assert (framed.framing, [e.data for e in framed.events]) == ("ndjson", ["[1, 2]", "[3]"])


def test_text_after_a_json_array_is_kept_raw():
    framed = read_stream(b'[{"a": 1}] trailing')
    assert [e.data for e in framed.events] == ['{"a": 1}', "trailing"]


def test_empty_json_array_has_no_events():
    assert read_stream(b"[]") == Framed("json-array", [])


def test_detect_single_json_body():
    raw = b'{"id": "chatcmpl-1", "choices": [{"message": {"tool_calls": []}}]}\n'
    framed = read_stream(raw)
    assert framed.framing == "json-body"
    assert [(e.data, e.span) for e in framed.events] == [(raw.decode().strip(), (0, len(raw) - 1))]


def test_detect_pretty_printed_json_body():
    assert read_stream(b'{\n  "a": 1\n}\n').framing == "json-body"


def test_detect_error_body():
    framed = read_stream(
        b'{"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}'
    )
    assert framed.framing == "json-body"
    assert json.loads(framed.events[0].data)["error"]["type"] == "invalid_request_error"


def test_json_body_cut_off_is_still_the_body():
    framed = read_stream(b'{"error": {"message": "upstream')
    assert (framed.framing, framed.events[0].data) == (
        "json-body",
        '{"error": {"message": "upstream',
    )


def test_json_body_with_bom():
    framed = read_stream(b'\xef\xbb\xbf{"a": 1}')
    assert (framed.framing, framed.events[0].span) == ("json-body", (3, 11))


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   \n\r\n",
        b"hello world\nthis is prose",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff",
        b"42",
    ],
    ids=["empty", "whitespace", "plain-text", "binary", "json-scalar"],
)
def test_no_recognizable_stream_raises_framing_error(raw: bytes):
    with pytest.raises(FramingError):
        read_stream(raw)


def test_framing_error_is_one_human_line():
    with pytest.raises(FramingError) as info:
        read_stream(b"hello\nworld\n")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("not a stream")


def test_framing_error_names_binary_input():
    with pytest.raises(FramingError, match="binary"):
        read_stream(b"\x00\xff\xfe\x10")


def test_real_streams_all_read_as_sse():
    shared = shared_or_skip()
    for path in sorted((shared / "real_streams").glob("*/*.sse")):
        framed = read_stream(path.read_bytes())
        assert framed.framing == "sse", path.name
        assert any(e.kind == "data" for e in framed.events), path.name


# -- limits and misuse (every buffer is bounded; feeding after close is a bug) ---------------


def test_feeding_after_close_is_misuse():
    decoder = SSEDecoder()
    decoder.feed(b"data: 1\n\n")
    decoder.close()
    with pytest.raises(DecoderMisuse):
        decoder.feed(b"data: 2\n\n")
    assert decoder.close() == []  # closing twice is harmless


def test_an_unterminated_line_stops_at_the_limit_fed_in_small_reads():
    decoder = SSEDecoder(max_line=1000)
    events = decoder.feed(b"data: 1\n\n")
    with pytest.raises(FrameTooLarge) as caught:
        for _ in range(100):  # a server that never sends a newline
            events += decoder.feed(b"x" * 100)
    assert [e.data for e in events] == ["1"]
    assert caught.value.offset == 9  # where the endless line began
    assert caught.value.limit == 1000
    assert "longer than the 1,000-byte limit" in str(caught.value)
    with pytest.raises(FrameTooLarge) as again:  # the decoder stays failed
        decoder.feed(b"\n\n")
    assert again.value.events == []
    assert decoder.close() == []


def test_the_events_completed_before_the_limit_come_with_the_error():
    decoder = SSEDecoder(max_line=50)
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"data: a\n\ndata: b\n\ndata: " + b"y" * 80 + b"\n\ndata: c\n\n")
    assert [e.data for e in caught.value.events] == ["a", "b"]
    assert caught.value.offset == 18


def test_an_event_of_many_short_lines_stops_at_the_event_limit():
    decoder = SSEDecoder(max_line=100, max_event=500)
    with pytest.raises(FrameTooLarge) as caught:
        decoder.feed(b"data: ok\n\n" + b"data: 0123456789\n" * 100)
    assert [e.data for e in caught.value.events] == ["ok"]
    assert caught.value.offset == 10
    assert str(caught.value).startswith("an event starting at byte 10")


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_lines_at_the_limit_are_read(eol):
    line = b"data: " + b"z" * 94  # exactly 100 bytes
    decoder = SSEDecoder(max_line=100)
    events = decoder.feed(line + eol + eol) + decoder.close()
    assert [len(e.data) for e in events] == [94]


def test_endless_keep_alives_become_bounded_comment_events():
    decoder = SSEDecoder(max_line=100, max_event=1000)
    events = decoder.feed(b": ping\n" * 5000 + b"data: 1\n\n") + decoder.close()
    comments = [e for e in events if e.kind == "comment"]
    assert len(comments) > 1 and all(len(e.data) <= 1100 for e in comments)
    assert sum(e.data.count("ping") for e in comments) == 5000  # none lost
    assert events[-1].data == "1"


def test_a_capture_with_an_overlong_line_keeps_what_came_before_and_says_where_it_stopped():
    from fraglens.framing.detect import read_stream
    from fraglens.framing.sse import DEFAULT_MAX_LINE

    good = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    data = good + b"data: " + b"q" * (DEFAULT_MAX_LINE + 10)
    framed = read_stream(data)
    assert len(framed.events) == 1
    [problem] = framed.problems
    assert problem.code == "frame-too-large"
    assert f"starting at byte {len(good)}" in problem.message


def test_check_reports_the_overlong_line_as_an_error(tmp_path, capsys):
    from fraglens.cli import main
    from fraglens.framing.sse import DEFAULT_MAX_LINE

    path = tmp_path / "long.sse"
    good = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    path.write_bytes(good + b"data: " + b"q" * (DEFAULT_MAX_LINE + 10) + b"\n\n")
    assert main(["check", "--json", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in doc["diagnostics"] if d["severity"] == "error"] == [
        "frame-too-large"
    ]


def test_check_on_nothing_but_an_overlong_line_is_one_line_and_exit_2(tmp_path, capsys):
    from fraglens.cli import main
    from fraglens.framing.sse import DEFAULT_MAX_LINE

    path = tmp_path / "long.sse"
    path.write_bytes(b"data: " + b"q" * (DEFAULT_MAX_LINE + 10))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "longer than the 16,777,216-byte limit" in err


def test_event_and_data_blocks_read_whole_and_byte_by_byte_alike():
    """The fast path for an ``event:`` line plus a ``data:`` line agrees with the
    line-by-line reading (one byte per feed never sees a whole block)."""
    from fraglens.framing.sse import SSEDecoder

    text = (
        b"event: content_block_delta\ndata: {\"a\":1}\n\n"
        b"event:ping\ndata:{}\n\n"
        b"event:\ndata: [DONE]\n\n"
        b"event: two\ndata: x\ndata: y\n\n"
        b"event: \xc3\xa9\ndata: \xe2\x82\xac\n\n"
    )
    whole = SSEDecoder()
    fast = whole.feed(text) + whole.close()
    slow_decoder = SSEDecoder()
    slow = [ev for i in range(len(text)) for ev in slow_decoder.feed(text[i : i + 1])]
    slow += slow_decoder.close()
    assert fast == slow
    assert [(e.event, e.kind, e.data) for e in fast] == [
        ("content_block_delta", "data", '{"a":1}'),
        ("ping", "data", "{}"),
        (None, "done", "[DONE]"),
        ("two", "data", "x\ny"),
        ("é", "data", "€"),
    ]


@pytest.mark.parametrize("stray", [b"\x00", b"\xef\xbb\xbf", b"\x00\xef\xbb\xbf"])
def test_stray_bytes_before_a_field_name_are_skipped_and_reported(stray):
    """The spec would read ``\\0data:`` as an unknown field and drop the event;
    a debugger keeps the event and says what it skipped (the stream's own first
    BOM is still just a BOM)."""
    decoder = SSEDecoder()
    data = b"\xef\xbb\xbfdata: 1\n\n" + stray + b"data: 2\n\n" + stray + b"event: x\ndata: 3\n\n"
    events = decoder.feed(data) + decoder.close()
    assert [(e.data, e.event) for e in events] == [("1", None), ("2", None), ("3", "x")]
    assert [(p.code, p.event) for p in decoder.problems] == [("stray-bytes", 1), ("stray-bytes", 2)]
    assert repr(stray) in decoder.problems[0].message
    assert "at byte 12" in decoder.problems[0].message


def test_an_unknown_field_is_still_ignored():
    decoder = SSEDecoder()
    events = decoder.feed(b"xdata: 1\ndata: 2\n\n") + decoder.close()
    assert [e.data for e in events] == ["2"] and decoder.problems == []
