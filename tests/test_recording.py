"""The fraglens recording format, redaction, and HAR exports turned into recordings."""

from __future__ import annotations

import base64
import io
import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.framing import FramingError, read_stream
from fraglens.framing.har import default_entry, har_entry_to_recording, list_streams
from fraglens.framing.recording import (
    RECORDING_VERSION,
    RecordingWriter,
    parse_recording,
    recording_to_sse,
    redact_headers,
    redact_url,
)

from .conftest import examples

SECRET = "sk-proj-SECRET0123456789"
REQUEST = {
    "method": "POST",
    "url": "https://api.openai.com/v1/chat/completions",
    "headers": {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"},
    "body": {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
}
SSE_HEADERS = {"content-type": "text/event-stream"}


def record(
    chunks: list[tuple[float, bytes]],
    *,
    headers: dict[str, str] | None = None,
    status: int = 200,
    end: tuple[str, str | None] | None = ("eof", None),
    request: dict[str, Any] = REQUEST,
    version: int = 1,
) -> bytes:
    """The reads as a recording: version 1 by default, whose lines these tests
    take apart (version 3 reads back the same: tests/test_recording_v3.py)."""
    out = io.BytesIO()
    writer = RecordingWriter(out, version=version)
    writer.start(request, format="openai-chat", created="2026-01-02T03:04:05.000Z")
    writer.response(status, SSE_HEADERS if headers is None else headers, t=0.25)
    for t, data in chunks:
        writer.chunk(t, data)
    if end is not None:
        writer.end(end[0], error=end[1], t=9.0)
    return out.getvalue()


class FlushCounter(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushed_at: list[int] = []

    def flush(self) -> None:
        self.flushed_at.append(self.getvalue().count(b"\n"))


# -- writing and reading -----------------------------------------------------


def test_recording_lines_are_header_response_chunks_end():
    lines = [json.loads(line) for line in record([(0.5, b"data: {}\n\n")]).splitlines()]
    assert lines[0]["fraglens"] == "recording"
    assert lines[0]["version"] == 1  # an HTTP recording: every fraglens reads it
    assert lines[0]["format"] == "openai-chat"
    assert lines[1] == {"response": {"status": 200, "headers": SSE_HEADERS}, "t": 0.25}
    assert lines[2] == {"t": 0.5, "b": "data: {}\n\n"}
    assert lines[3] == {"end": "eof", "t": 9.0}


def test_every_call_writes_and_flushes_one_line():
    out = FlushCounter()
    writer = RecordingWriter(out, version=1)
    writer.start(REQUEST)
    writer.response(200, SSE_HEADERS)
    writer.chunk(0.1, b"data: a\n\n")
    writer.chunk(0.2, b"data: b\n\n")
    writer.end("eof")
    assert out.flushed_at == [1, 2, 3, 4, 5]


def test_writer_accepts_a_text_file():
    out = io.StringIO()
    writer = RecordingWriter(out)
    writer.start(REQUEST)
    writer.chunk(0.1, "data: é\n\n".encode())
    assert read_stream(out.getvalue().encode()).events[0].data == "é"


def test_writer_refuses_a_chunk_before_start():
    with pytest.raises(ValueError):
        RecordingWriter(io.BytesIO()).chunk(0.1, b"data: a\n\n")


def test_round_trip_gives_events_with_receive_times_and_body_spans():
    body = [(0.5, b'data: {"a": 1}\n\n'), (0.75, b": ping\n\n"), (1.0, b"data: [DONE]\n\n")]
    framed = read_stream(record(body))
    assert framed.framing == "recording"
    assert [(e.kind, e.time, e.span) for e in framed.events] == [
        ("data", 0.5, (0, 16)),
        ("comment", 0.75, (16, 23)),
        ("done", 1.0, (24, 38)),
    ]


def test_event_completed_by_a_later_chunk_gets_that_chunks_time():
    framed = read_stream(record([(0.5, b'data: {"a"'), (0.6, b": 1}\n"), (0.9, b"\n")]))
    assert [(e.data, e.time) for e in framed.events] == [('{"a": 1}', 0.9)]


def test_chunk_boundaries_are_kept():
    chunks = [(0.1, b"da"), (0.2, b"ta: a\r"), (0.3, b"\n\r\n")]
    assert parse_recording(record(chunks)).chunks == chunks


def test_non_utf8_chunk_is_stored_as_base64_and_read_back_exactly():
    raw = b"data: \xff\xfe\n\n"
    data = record([(0.1, raw)])
    assert json.loads(data.splitlines()[2]) == {"t": 0.1, "b64": base64.b64encode(raw).decode()}
    assert parse_recording(data).chunks == [(0.1, raw)]


def test_chunk_cutting_a_utf8_character_reads_back_whole():
    raw = "data: 東京\n\n".encode()
    framed = read_stream(record([(0.1, raw[:8]), (0.2, raw[8:])]))
    assert [(e.data, e.time) for e in framed.events] == [("東京", 0.2)]


def test_meta_holds_request_response_format_and_end():
    meta = read_stream(record([(0.1, b"data: a\n\n")], end=("error", "connection reset"))).meta
    assert meta["request"]["method"] == "POST"
    assert meta["request"]["body"]["model"] == "gpt-4o"
    assert meta["response"] == {"status": 200, "headers": SSE_HEADERS, "t": 0.25}
    assert meta["format"] == "openai-chat"
    assert meta["end"] == {"end": "error", "error": "connection reset", "t": 9.0}
    assert (meta["body_framing"], meta["chunks"], meta["truncated"]) == ("sse", 1, False)


def test_recording_without_end_line_has_no_end():
    assert read_stream(record([(0.1, b"data: a\n\n")], end=None)).meta["end"] is None


def test_recording_cut_off_mid_line_reads_everything_before():
    data = record([(0.1, b"data: a\n\n"), (0.2, b"data: b\n\n"), (0.3, b"data: c\n\n")], end=None)
    crashed = data[: data.rindex(b"data: c") + 3]
    framed = read_stream(crashed)
    assert [e.data for e in framed.events] == ["a", "b"]
    assert framed.meta["truncated"] is True


def test_recording_cut_off_inside_an_event_still_reads_the_partial_event():
    data = record([(0.1, b"data: a\n\n"), (0.2, b'data: {"b":')], end=None)
    assert [e.data for e in read_stream(data).events] == ["a", '{"b":']


def test_final_event_without_blank_line_gets_the_end_time():
    framed = read_stream(record([(0.1, b"data: a\n")]))
    assert [(e.data, e.time) for e in framed.events] == [("a", 9.0)]


def test_damaged_middle_line_is_skipped_and_counted():
    lines = record([(0.1, b"data: a\n\n"), (0.2, b"data: b\n\n")]).split(b"\n")
    lines[2] = b"{not json"
    framed = read_stream(b"\n".join(lines))
    assert [e.data for e in framed.events] == ["b"]
    assert framed.meta["skipped_lines"] == 1


def test_unknown_line_kinds_and_keys_are_ignored():
    lines = record([(0.1, b"data: a\n\n")]).split(b"\n")
    lines.insert(2, b'{"note": "a later version may add lines", "x": 1}')
    assert [e.data for e in read_stream(b"\n".join(lines)).events] == ["a"]


def test_newer_version_is_refused_with_a_framing_error():
    newer = RECORDING_VERSION + 1
    data = record([(0.1, b"data: a\n\n")]).replace(b'"version":1', b'"version":%d' % newer, 1)
    with pytest.raises(FramingError, match=f"version {newer}"):
        read_stream(data)


def test_header_cut_off_raises_framing_error():
    with pytest.raises(FramingError, match="header"):
        read_stream(b'{"fraglens":"recording","vers')


def test_recording_with_no_chunks_has_no_events():
    framed = read_stream(record([], end=("error", "connect timeout")))
    assert (framed.framing, framed.events, framed.meta["body_framing"]) == ("recording", [], None)


def test_recorded_json_error_body_reads_as_json_body():
    body = b'{"error": {"message": "Rate limit reached", "type": "requests"}}'
    framed = read_stream(
        record(
            [(0.3, body[:20]), (0.4, body[20:])],
            status=429,
            headers={"content-type": "application/json"},
        )
    )
    assert framed.meta["body_framing"] == "json-body"
    assert [(e.data, e.time, e.span) for e in framed.events] == [
        (body.decode(), 0.4, (0, len(body)))
    ]


def test_recorded_json_error_body_sent_as_event_stream_is_still_read():
    framed = read_stream(record([(0.3, b'{"error": {"message": "bad"}}')]))
    assert framed.meta["body_framing"] == "json-body"


def test_recorded_ndjson_body_gets_times_per_line():
    framed = read_stream(record([(0.1, b'{"a": 1}\n'), (0.2, b'{"b": 2}\n')], headers={}))
    assert framed.meta["body_framing"] == "ndjson"
    assert [e.time for e in framed.events] == [0.1, 0.2]


def test_recorded_html_error_page_reads_as_text():
    framed = read_stream(
        record([(0.1, b"<html><body>502 Bad Gateway</body></html>")], status=502, headers={})
    )
    assert framed.meta["body_framing"] == "text"
    assert "502 Bad Gateway" in framed.events[0].data


def test_recording_to_sse_is_the_concatenated_body():
    chunks = [(0.1, b'data: {"a"'), (0.2, b": 1}\n\n"), (0.3, b"data: [DONE]\n\n")]
    assert recording_to_sse(record(chunks)) == b'data: {"a": 1}\n\ndata: [DONE]\n\n'


@given(
    events=st.lists(st.text(alphabet="ab{}é東🚀", max_size=6), max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=5),
)
def test_any_chunking_reads_like_the_plain_stream(events: list[str], cuts: list[int]):
    body = "".join(f"data: {text}\r\n\r\n" for text in events).encode()
    points = sorted({min(c, len(body)) for c in cuts})
    chunks = [(i / 10, body[a:b]) for i, (a, b) in enumerate(pairwise([0, *points, len(body)]))]
    recorded = read_stream(record(chunks)).events
    if body:
        assert [e.replace(time=None) for e in recorded] == read_stream(body).events


# -- redaction ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "authorization",
        "Proxy-Authorization",
        "x-api-key",
        "api-key",
        "Cookie",
        "set-cookie",
        "x-goog-api-key",
        "openai-api-key",
        "anthropic-api-key",
        "X-Custom-Key-Id",
        "x-session-token",
        "client-secret",
        "x-auth-whatever",
        "x-amz-security-token",
        "x-auth-token",
        "X-Goog-Api-Key",
        # a rate-limit header is forgiven "token" only, not a name that says key
        "x-ratelimit-api-key",
    ],
)
def test_secret_header_is_redacted(name: str):
    assert redact_headers({name: SECRET}) == {name: "[redacted]"}


def test_rate_limit_headers_of_openai_and_anthropic_are_kept_verbatim():
    headers = {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-remaining-tokens": "29971",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-reset-tokens": "58ms",
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-input-tokens-limit": "40000",
        "anthropic-ratelimit-input-tokens-remaining": "39000",
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-reset": "2026-01-02T03:04:05Z",
        "anthropic-ratelimit-tokens-remaining": "47000",
        "anthropic-ratelimit-tokens-reset": "2026-01-02T03:04:05Z",
        "X-RateLimit-Remaining-Tokens": "12",
        "x-rate-limit-remaining-tokens": "7",
    }
    assert redact_headers(headers) == headers


def test_credentials_beside_rate_limit_headers_are_still_redacted():
    headers = {
        "x-ratelimit-remaining-tokens": "29971",
        "anthropic-ratelimit-tokens-remaining": "47000",
        "authorization": f"Bearer {SECRET}",
        "x-api-key": SECRET,
        "anthropic-api-key": SECRET,
        "x-amz-security-token": SECRET,
        "x-session-token": SECRET,
        "set-cookie": f"session={SECRET}",
    }
    rate_limits = ("x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining")
    expected = {
        name: value if name in rate_limits else "[redacted]" for name, value in headers.items()
    }
    assert redact_headers(headers) == expected


def test_ordinary_headers_are_kept():
    headers = {
        "content-type": "text/event-stream",
        "openai-model": "gpt-4o",
        "x-request-id": "req_1",
    }
    assert redact_headers(headers) == headers


def test_header_pairs_with_repeated_names_are_joined():
    pairs = [("vary", "Origin"), ("vary", "Accept"), ("set-cookie", "a=1"), ("set-cookie", "b=2")]
    assert redact_headers(pairs) == {"vary": "Origin, Accept", "set-cookie": "[redacted]"}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            f"https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key={SECRET}",
            "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=[redacted]",
        ),
        (f"https://x.test/v1?api_key={SECRET}&n=1", "https://x.test/v1?api_key=[redacted]&n=1"),
        (f"https://x.test/v1?access_token={SECRET}", "https://x.test/v1?access_token=[redacted]"),
        (f"https://user:{SECRET}@x.test/v1", "https://%5Bredacted%5D@x.test/v1"),
        ("https://x.test/v1/chat?stream=true", "https://x.test/v1/chat?stream=true"),
    ],
    ids=["key", "api_key", "access_token", "userinfo", "untouched"],
)
def test_redact_url(url: str, expected: str):
    assert redact_url(url) == expected


def test_secret_appears_nowhere_in_the_written_recording():
    request = {
        "method": "POST",
        "url": f"https://x.test/v1beta/models/g:streamGenerateContent?key={SECRET}",
        "headers": {"x-goog-api-key": SECRET, "Authorization": f"Bearer {SECRET}"},
        "body": {"contents": []},
    }
    data = record(
        [(0.1, b"data: {}\n\n")],
        request=request,
        headers={"set-cookie": f"session={SECRET}", "content-type": "text/event-stream"},
    )
    assert SECRET.encode() not in data
    assert SECRET not in json.dumps(read_stream(data).meta)


def test_secret_in_a_hand_written_recording_is_redacted_on_read():
    header = {
        "fraglens": "recording",
        "version": 1,
        "request": {"url": "https://x.test/", "headers": {"api-key": SECRET}},
    }
    meta = read_stream(json.dumps(header).encode() + b"\n").meta
    assert meta["request"]["headers"] == {"api-key": "[redacted]"}


# -- HAR ---------------------------------------------------------------------


def har_entry(
    url: str,
    mime: str,
    text: str | None,
    *,
    encoding: str | None = None,
    post: dict[str, Any] | None = None,
    status: int = 200,
) -> dict[str, Any]:
    content: dict[str, Any] = {"size": len(text or ""), "mimeType": mime}
    if text is not None:
        content["text"] = text
    if encoding:
        content["encoding"] = encoding
    return {
        "startedDateTime": "2026-01-02T03:04:05.000Z",
        "time": 1234,
        "request": {
            "method": "POST" if post else "GET",
            "url": url,
            "headers": [
                {"name": "authorization", "value": f"Bearer {SECRET}"},
                {"name": "content-type", "value": "application/json"},
            ],
            "postData": {"mimeType": "application/json", "text": json.dumps(post)} if post else {},
        },
        "response": {
            "status": status,
            "headers": [
                {"name": "content-type", "value": mime},
                {"name": "set-cookie", "value": f"s={SECRET}"},
            ],
            "content": content,
        },
        "timings": {"blocked": 2, "dns": -1, "connect": -1, "send": 1, "wait": 297, "receive": 700},
    }


SSE_BODY = 'data: {"choices":[]}\n\ndata: [DONE]\n\n'
CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def har(*entries: dict[str, Any]) -> dict[str, Any]:
    return {
        "log": {"version": "1.2", "creator": {"name": "WebInspector"}, "entries": list(entries)}
    }


def test_har_list_streams_summarizes_every_entry():
    rows = list_streams(
        har(
            har_entry(f"https://x.test/app.js?key={SECRET}", "application/javascript", "x"),
            har_entry(
                "https://api.test/v1/chat/completions", "text/event-stream", SSE_BODY, post=CHAT
            ),
        )
    )
    assert rows == [
        {
            "index": 0,
            "method": "GET",
            "url": "https://x.test/app.js?key=[redacted]",
            "status": 200,
            "content_type": "application/javascript",
            "size": 1,
            "event_stream": False,
            "websocket_messages": 0,
            "has_body": True,
        },
        {
            "index": 1,
            "method": "POST",
            "url": "https://api.test/v1/chat/completions",
            "status": 200,
            "content_type": "text/event-stream",
            "size": len(SSE_BODY),
            "event_stream": True,
            "websocket_messages": 0,
            "has_body": True,
        },
    ]


def test_har_entry_to_recording_keeps_body_timings_and_redacts():
    data = har_entry_to_recording(
        har(
            har_entry(
                "https://api.test/v1/chat/completions", "text/event-stream", SSE_BODY, post=CHAT
            )
        ),
        0,
    )
    assert SECRET.encode() not in data
    rec = parse_recording(data)
    assert rec.created == "2026-01-02T03:04:05.000Z"
    assert rec.request["body"] == CHAT
    assert rec.request["headers"]["authorization"] == "[redacted]"
    assert rec.response is not None and rec.response["t"] == 0.3
    assert rec.chunks == [(1.0, SSE_BODY.encode())]


def test_har_base64_body_is_decoded():
    text = base64.b64encode(SSE_BODY.encode()).decode()
    entry = har_entry(
        "https://api.test/v1/chat/completions", "text/event-stream", text, encoding="base64"
    )
    assert recording_to_sse(har_entry_to_recording(har(entry), 0)) == SSE_BODY.encode()


def test_read_stream_opens_the_first_event_stream_of_a_har():
    data = json.dumps(
        har(
            har_entry("https://x.test/", "text/html", "<html></html>"),
            har_entry(
                "https://api.test/v1/chat/completions", "text/event-stream", SSE_BODY, post=CHAT
            ),
        )
    ).encode()
    framed = read_stream(data)
    assert framed.framing == "har"
    assert [e.kind for e in framed.events] == ["data", "done"]
    assert [e.time for e in framed.events] == [1.0, 1.0]
    assert framed.meta["har"] == {"index": 1, "entries": 2}
    assert framed.meta["request"]["url"] == "https://api.test/v1/chat/completions"


def test_har_without_a_stream_falls_back_to_a_chat_like_json_response():
    body = json.dumps({"choices": [{"message": {"tool_calls": []}}]})
    document = har(
        har_entry("https://x.test/config.json", "application/json", '{"theme": "dark"}'),
        har_entry(
            "https://api.test/v1/chat/completions",
            "application/json",
            body,
            post={**CHAT, "stream": False},
        ),
    )
    assert default_entry(document) == 1
    framed = read_stream(json.dumps(document).encode())
    assert (framed.framing, framed.meta["body_framing"]) == ("har", "json-body")


def test_har_event_stream_without_saved_body_is_skipped():
    document = har(
        har_entry("https://api.test/v1/chat/completions", "text/event-stream", None, post=CHAT),
        har_entry("https://api.test/v1/chat/completions", "text/event-stream", SSE_BODY, post=CHAT),
    )
    assert default_entry(document) == 1


def test_har_with_no_llm_response_raises_framing_error():
    document = har(har_entry("https://x.test/", "text/html", "<html></html>"))
    with pytest.raises(FramingError, match="the HAR's 1 entry holds no"):
        read_stream(json.dumps(document).encode())


def test_har_entry_out_of_range_raises_framing_error():
    with pytest.raises(FramingError, match="no entry 3"):
        har_entry_to_recording(har(), 3)


# -- hostile input -------------------------------------------------------------

KEYS = ["b", "b64", "t", "response", "end", "status", "headers", "request", "method", "url"]
HAR_KEYS = ["log", "entries", "request", "response", "content", "text", "encoding", "mimeType"]
HAR_KEYS += ["timings", "headers", "name", "value", "postData", "status", "wait", "receive"]
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
)


def json_values(keys: list[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(keys), inner, max_size=4)
        ),
        max_leaves=12,
    )


@settings(max_examples=examples(300), deadline=None)
@given(lines=st.lists(json_values(KEYS), max_size=5), request=json_values(KEYS))
def test_any_recording_lines_read_or_raise_framing_error(lines: list[Any], request: Any):
    header = {"fraglens": "recording", "version": 1, "request": request}
    data = "\n".join(json.dumps(line) for line in [header, *lines]).encode()
    try:
        read_stream(data)
    except FramingError:
        pass


@settings(max_examples=examples(300), deadline=None)
@given(entries=json_values(HAR_KEYS))
def test_any_har_structure_reads_or_raises_framing_error(entries: Any):
    document = {"log": {"entries": entries}}
    try:
        read_stream(json.dumps(document).encode())
        list_streams(document)
    except FramingError:
        pass


# -- damaged recordings say so -------------------------------------------------

_HEADER = '{"fraglens":"recording","version":1,"request":{"method":"POST","url":"http://h/v1"}}'
_CHUNK = json.dumps({"t": 0.1, "b": 'data: {"choices":[{"index":0,"delta":{"content":"hi"},'
                                    '"finish_reason":"stop"}]}\n\n'})
_DONE = json.dumps({"t": 0.2, "b": "data: [DONE]\n\n"})


def _check(tmp_path, capsys, lines: list[str]) -> tuple[int, dict]:
    from fraglens.cli import main

    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    code = main(["check", "--json", str(path)])
    return code, json.loads(capsys.readouterr().out)


def test_an_intact_recording_has_no_recording_finding(tmp_path, capsys):
    code, doc = _check(tmp_path, capsys, [_HEADER, _CHUNK, _DONE, '{"end":"eof","t":0.3}'])
    assert code == 0 and not [d for d in doc["diagnostics"] if d["code"].startswith("recording")]


def test_unreadable_and_cut_lines_are_reported_and_exit_1(tmp_path, capsys):
    code, doc = _check(tmp_path, capsys, [_HEADER, _CHUNK, "GARBAGE", _DONE, '{"t":0.3,"b":"da'])
    assert code == 1
    [found] = [d for d in doc["diagnostics"] if d["code"] == "recording-damaged"]
    assert "1 line could not be read and was left out" in found["message"]
    assert "cut off" in found["message"]
    assert doc["text"] == {"0": "hi"}  # what could be read is still all there


def test_an_end_line_with_an_error_is_reported_and_exit_1(tmp_path, capsys):
    end = '{"end":"error","error":"connection reset","t":0.3}'
    code, doc = _check(tmp_path, capsys, [_HEADER, _CHUNK, _DONE, end])
    assert code == 1
    [found] = [d for d in doc["diagnostics"] if d["code"] == "recording-error"]
    assert found["message"] == "the recording ends with an error: connection reset"


def test_an_unknown_format_in_the_header_is_one_line_and_exit_2(tmp_path, capsys):
    from fraglens.cli import main

    path = tmp_path / "r.jsonl"
    path.write_text(_HEADER[:-1] + ',"format":"bogus"}\n' + _CHUNK + "\n", encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fraglens: error:") and "'bogus'" in err and len(err.splitlines()) == 1


# -- a URL that cannot be parsed again does not stop a recording being read -------

@pytest.mark.parametrize(
    "url",
    [
        "http://[redacted]@h/v1/chat/completions",
        "https://u:[redacted]@api.example.com/v1?key=sk-live-123",
        "http://[::1/v1",
    ],
    ids=["redacted-userinfo", "password-and-key", "broken-ipv6"],
)
@pytest.mark.parametrize(
    "command", [["check"], ["check", "--json"], ["history", "build"], ["export"]]
)
def test_a_recording_with_an_unparsable_url_is_read(tmp_path, capsys, url, command):
    from fraglens.cli import main
    from fraglens.framing.recording import recorded_url

    kept = recorded_url(url)
    assert recorded_url(kept) == kept and "sk-live-123" not in kept  # redacting twice: same

    header = json.dumps({"fraglens": "recording", "version": 1,
                         "request": {"method": "POST", "url": url}})
    data = "\n".join([header, _CHUNK, _DONE]) + "\n"
    assert parse_recording(data.encode()).request["url"] == kept
    path = tmp_path / "r.jsonl"
    path.write_text(data, encoding="utf-8")
    assert main([*command, str(path)]) == 0
    out = capsys.readouterr()
    assert "sk-live-123" not in out.out + out.err


@pytest.mark.parametrize(
    ("line", "chunk"),
    [
        ('{"t":0.5,"b":"x"}', (0.5, b"x")),  # the writer's line
        ('{"t":1,"b":"x"}', (1.0, b"x")),  # an integer time is a float time
        ('{"t":1e999,"b":"x"}', (None, b"x")),  # no clock reads an infinite time
        ('{"t":-1e999,"b":"x"}', (None, b"x")),
        ('{"t":NaN,"b":"x"}', (None, b"x")),  # json reads NaN; no clock does
        ('{"b":"x","t":0.5,"z":[1]}', (0.5, b"x")),  # keys it does not know, in any order
        ('{"t":"0.5","b":"x"}', (None, b"x")),  # a time that is no number
        ('{"t":0.5,"b":"\\ud83d"}', (0.5, b"\xed\xa0\xbd")),  # a lone surrogate escape
        ('{"t":0.5,"b":"","b64":"eA=="}', (0.5, b"")),  # "b" wins over "b64"
    ],
)
def test_a_read_line_gives_its_time_and_bytes_however_it_is_spelled(line: str, chunk):
    """The writer's own line is read by a shortcut; every spelling around it
    gives what the general reading of a line gives."""
    rec = parse_recording(f"{_HEADER}\n{line}\n".encode())
    assert rec.chunks == [chunk] and rec.skipped_lines == 0
