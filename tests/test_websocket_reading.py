"""A WebSocket connection's recording read as a stream: frames, responses, the close."""

from __future__ import annotations

import base64
import io
import json

import pytest

from fraglens.adapters import detect
from fraglens.adapters.realtime import RealtimeAdapter
from fraglens.engine.fragments import Finish, StreamError, Terminal, TextDelta, ToolDelta
from fraglens.framing import FramingError
from fraglens.framing.recording import RecordingWriter, parse_recording
from fraglens.reading.capture import stream_from_bytes
from fraglens.reading.readers import READERS
from fraglens.report.document import build_report

from .conftest import SAMPLES

URL = "wss://api.example/v1/responses?api_key=sk-secret-in-query"
TOOLS = [{"type": "function", "name": "get_weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}}]


def _created(rid):
    return json.dumps({"type": "response.created", "response": {"id": rid}})


def _added(index, item, call, name="get_weather"):
    return json.dumps({"type": "response.output_item.added", "output_index": index,
                       "item": {"id": item, "type": "function_call", "call_id": call,
                                "name": name, "arguments": ""}})


def _delta(index, item, piece):
    return json.dumps({"type": "response.function_call_arguments.delta",
                       "output_index": index, "item_id": item, "delta": piece})


def _completed(rid):
    return json.dumps({"type": "response.completed",
                       "response": {"id": rid, "status": "completed"}})


def record(frames, close=(1000, "", "client"), fmt="openai-responses"):
    """A WebSocket recording written by the writer fraglens records with."""
    out = io.BytesIO()
    w = RecordingWriter(out)
    w.start({"method": "GET", "url": URL,
             "headers": {"authorization": "Bearer sk-secret", "upgrade": "websocket"}},
            format=fmt, transport="websocket")
    w.response(101, {"upgrade": "websocket"}, 0.01)
    for n, (sender, data) in enumerate(frames):
        if isinstance(data, int):
            w.refused(0.02 + n / 100, sender, data, "over --max-line-bytes")
        else:
            w.frame(0.02 + n / 100, sender, data)
    if close is not None:
        w.close(0.9, close[0], close[1], close[2])
    w.end("eof", t=0.9)
    return out.getvalue()


def two_responses():
    create = json.dumps({"type": "response.create", "model": "m", "tools": TOOLS})
    return [
        ("client", create),
        ("server", _created("resp_1")),
        ("server", _added(0, "fc_1", "call_1")),
        ("server", _delta(0, "fc_1", '{"city":')),
        ("server", _delta(0, "fc_1", '"Oslo"}')),
        ("server", _completed("resp_1")),
        ("client", create),
        ("server", _created("resp_2")),
        ("server", _added(0, "fc_2", "call_2")),
        ("server", _delta(0, "fc_2", '{"city":"Rome"}')),
        ("server", _completed("resp_2")),
    ]


def report(data):
    stream, _ = stream_from_bytes(data)
    return build_report(stream)


def test_a_websocket_recording_is_version_2_with_its_transport_and_no_secret():
    data = record(two_responses())
    header = json.loads(data.split(b"\n", 1)[0])
    assert header["version"] == 2 and header["transport"] == "websocket"
    assert b"sk-secret" not in data
    lines = [json.loads(line) for line in data.splitlines()[2:]]
    assert lines[0] == {"t": 0.02, "from": "client", "text": two_responses()[0][1]}
    assert lines[-2] == {"close": {"code": 1000, "reason": "", "from": "client"}, "t": 0.9}


def test_the_reader_table_gives_a_websocket_recording_its_own_reader():
    data = record(two_responses())
    claimed = next(reader.name for reader in READERS if reader.claim(data) is not None)
    assert claimed == "websocket"


def test_frames_are_parsed_back_with_direction_time_and_bytes():
    rec = parse_recording(record([("client", "hi"), ("server", b"\x00\xff"), ("server", 99)]))
    assert rec.transport == "websocket"
    assert [(f.sender, f.text, f.data, f.refused) for f in rec.frames] == [
        ("client", "hi", None, None), ("server", None, b"\x00\xff", None),
        ("server", None, None, 99)]
    assert rec.frames[0].t == 0.02
    assert rec.close == {"code": 1000, "reason": "", "from": "client", "t": 0.9}


def test_two_responses_on_one_socket_each_call_knowing_its_response():
    doc = report(record(two_responses()))
    assert doc["framing"] == "websocket" and doc["format"] == "openai-responses"
    assert [(c["id"], c["response_id"], c["status"], c["arguments"]) for c in doc["calls"]] == [
        ("call_1", "resp_1", "ok", {"city": "Oslo"}),
        ("call_2", "resp_2", "ok", {"city": "Rome"}),
    ]
    # the client's response.create begins each response: events 0 and 6
    assert [(r["id"], r["status"], r["first_event"], r["last_event"], r["calls"])
            for r in doc["responses"]] == [
        ("resp_1", "completed", 0, 5, [0]), ("resp_2", "completed", 6, 10, [1])]
    assert doc["close"] == {"code": 1000, "reason": "", "from": "client"}


def test_client_frames_are_shown_as_sent_and_never_read_as_the_servers():
    stream, _ = stream_from_bytes(record(two_responses()))
    assert stream.labels[0] == "sent response.create"
    assert stream.events[0].kind == "sent"
    assert len(stream.reassembler.calls) == 2  # the create's tools are no call


def test_the_tools_the_client_declared_are_the_requests_for_the_fit():
    from fraglens.fit.verdicts import fit_for_request

    stream, framed = stream_from_bytes(record(two_responses()))
    fit = fit_for_request(stream, framed.meta["request"])
    assert fit is not None and [t.name for t in fit.tools] == ["get_weather"]
    assert [(v.checked, v.tool, v.errors) for v in fit.calls.values()] == [
        (True, "get_weather", []), (True, "get_weather", [])]


def test_a_close_mid_response_aborts_that_response_with_its_code():
    frames = two_responses()[:9] + [("server", _delta(0, "fc_2", '{"ci'))]
    doc = report(record(frames, close=(1011, "upstream gone", "server")))
    assert [c["status"] for c in doc["calls"]] == ["ok", "aborted"]
    assert [r["status"] for r in doc["responses"]] == ["completed", "aborted"]
    errors = [d["message"] for d in doc["diagnostics"] if d["code"] == "error-event"]
    assert errors == ["the server closed the WebSocket connection with code 1011 "
                      "(upstream gone) while a response was still streaming"]
    assert doc["end"] == "error"


def test_a_close_between_responses_is_no_error():
    doc = report(record(two_responses(), close=(1001, "going away", "server")))
    assert doc["end"] == "terminal-event"
    assert not [d for d in doc["diagnostics"] if d["severity"] == "error"]


def test_a_frame_that_is_not_json_is_a_diagnostic_on_that_event_and_nothing_is_lost():
    frames = two_responses()
    frames.insert(4, ("server", "<html>oops</html>"))
    doc = report(record(frames))
    bad = [d for d in doc["diagnostics"] if d["code"] == "non-json-data"]
    assert [d["event"] for d in bad] == [4]
    assert [c["arguments"] for c in doc["calls"]] == [{"city": "Oslo"}, {"city": "Rome"}]


def test_a_client_frame_that_is_not_json_is_named_as_the_clients():
    doc = report(record([("client", "hello?")] + two_responses()))
    bad = [d for d in doc["diagnostics"] if d["code"] == "non-json-data"]
    assert bad and bad[0]["event"] == 0 and "the client sent" in bad[0]["message"]


def test_a_binary_frame_is_kept_and_named():
    stream, _ = stream_from_bytes(record([("server", b"\x89PNG")] + two_responses()))
    event = stream.events[0]
    assert (event.kind, event.event, event.data) == ("binary", "server", "iVBORw==")
    found = [d for d in stream.reassembler.diagnostics() if d.code == "ws-binary-frame"]
    assert len(found) == 1 and "(4 bytes)" in found[0].message


def test_a_refused_frame_says_its_size_and_why():
    doc = report(record(two_responses()[:4] + [("server", 20_000_000)]))
    found = [d for d in doc["diagnostics"] if d["code"] == "frame-too-large"]
    assert len(found) == 1 and "20000000-byte" in found[0]["message"]


def test_a_newer_version_is_refused():
    data = record(two_responses()).replace(b'"version":2', b'"version":4', 1)
    with pytest.raises(FramingError, match="upgrade fraglens"):
        parse_recording(data)


# -- the Realtime adapter ---------------------------------------------------------


def test_realtime_events_are_told_from_responses_ones():
    assert detect({"type": "session.created", "session": {}}) == "openai-realtime"
    assert detect({"type": "response.function_call_arguments.delta", "event_id": "e1",
                   "delta": "{"}) == "openai-realtime"
    assert detect({"type": "response.function_call_arguments.delta", "delta": "{"}) == (
        "openai-responses")


def test_a_realtime_delta_of_an_item_never_opened_is_keyed_by_its_call_id():
    adapter = RealtimeAdapter()
    ops = adapter.feed({"type": "response.function_call_arguments.delta", "response_id": "r",
                        "item_id": "it", "output_index": 0, "call_id": "call_9", "delta": "{}"})
    assert ops == [ToolDelta(0, 0, "call_9", None, "{}", item="it", native_index=True)]


def test_realtime_response_done_ends_each_response_with_its_status():
    adapter = RealtimeAdapter()
    adapter.feed({"type": "response.created", "response": {"id": "r1"}})
    failed = adapter.feed({"type": "response.done", "response": {
        "id": "r1", "status": "failed",
        "status_details": {"type": "failed", "error": {"message": "overloaded"}}}})
    assert failed == [StreamError("overloaded"), Terminal("response.done")]
    assert (adapter.responses, adapter.ends, adapter.response_status) == (1, 1, "failed")
    adapter.feed({"type": "response.created", "response": {"id": "r2"}})
    cut = adapter.feed({"type": "response.done", "response": {
        "id": "r2", "status": "incomplete",
        "status_details": {"type": "incomplete", "reason": "max_output_tokens"}}})
    assert cut[0] == Finish(0, "length", "max_output_tokens")
    assert adapter.response_id == "r2"


def test_realtime_transcripts_are_text_and_errors_do_not_end_the_response():
    adapter = RealtimeAdapter()
    assert adapter.feed({"type": "response.output_audio_transcript.delta", "delta": "Hi"}) == [
        TextDelta(0, "Hi")]
    assert adapter.feed({"type": "response.audio_transcript.delta", "delta": "!"}) == [
        TextDelta(0, "!")]
    assert adapter.feed({"type": "error", "error": {"message": "bad event"}}) == [
        StreamError("bad event")]
    assert adapter.ends == 0


def test_a_key_offered_as_a_subprotocol_is_redacted_and_scrubbed():
    from fraglens.redact import Secrets, redact_headers

    offered = {"Sec-WebSocket-Protocol":
               "realtime, openai-insecure-api-key.sk-live-0123456789, openai-beta.realtime-v1"}
    shown = redact_headers(offered)
    assert shown == {"Sec-WebSocket-Protocol":
                     "realtime, openai-insecure-api-key.[redacted], openai-beta.realtime-v1"}
    assert redact_headers(shown) == shown
    secrets = Secrets.of_request(offered)
    assert secrets.scrub(b'{"echo":"sk-live-0123456789"}') == b'{"echo":"[redacted]"}'


# -- HAR: Chrome's _webSocketMessages ----------------------------------------------------


def chrome_har(frames, started="2026-12-02T06:13:20.000Z", epoch=1796192000.0):
    """A HAR as Chrome writes a WebSocket entry: the upgrade, then its messages."""
    messages = [{"type": "send" if sender == "client" else "receive", "time": epoch + t,
                 "opcode": 2 if isinstance(data, bytes) else 1,
                 "data": base64.b64encode(data).decode() if isinstance(data, bytes) else data}
                for t, sender, data in frames]
    entry = {
        "startedDateTime": started, "_resourceType": "websocket",
        "request": {"method": "GET", "url": "wss://api.example/v1/responses?key=sk-in-query-99",
                    "headers": [{"name": "Authorization", "value": "Bearer sk-har-0123456789"}]},
        "response": {"status": 101, "headers": [{"name": "Upgrade", "value": "websocket"}],
                     "content": {"size": 0, "mimeType": "x-unknown"}},
        "timings": {"send": 0, "wait": 150, "receive": 0},
        "_webSocketMessages": messages,
    }
    other = {"startedDateTime": started, "request": {"method": "GET", "url": "https://x/"},
             "response": {"status": 200, "content": {"mimeType": "text/html", "text": "hi"}}}
    return {"log": {"version": "1.2", "entries": [other, entry]}}


def test_a_chrome_har_websocket_entry_is_read_as_a_connection():
    frames = [(0.2 + n / 10, sender, data) for n, (sender, data) in enumerate(two_responses())]
    frames.insert(3, (0.25, "server", b"\x00\x01"))
    data = json.dumps(chrome_har(frames)).encode()
    doc = report(data)
    assert doc["framing"] == "websocket"
    assert [(c["id"], c["response_id"]) for c in doc["calls"]] == [
        ("call_1", "resp_1"), ("call_2", "resp_2")]
    assert [d["code"] for d in doc["diagnostics"] if d["code"] == "ws-binary-frame"] == [
        "ws-binary-frame"]
    # messages are timed from the entry's start
    stream, _ = stream_from_bytes(data)
    assert stream.events[0].time == pytest.approx(0.2)


def test_import_har_lists_and_converts_a_websocket_entry_without_its_keys(tmp_path, capsys):
    from fraglens.cli import main

    har = tmp_path / "chrome.har"
    har.write_text(json.dumps(chrome_har([(0.1, sender, d) for sender, d in two_responses()])))
    assert main(["import-har", str(har), "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[1].startswith("*   1") and "(11 WebSocket messages)" in listed[1]
    out = tmp_path / "conn.jsonl"
    assert main(["import-har", str(har), "-o", str(out)]) == 0
    text = out.read_text()
    assert "sk-har-0123456789" not in text and "sk-in-query-99" not in text
    rec = parse_recording(out.read_bytes())
    assert rec.transport == "websocket" and len(rec.frames) == 11
    assert rec.frames[0].sender == "client" and rec.frames[1].sender == "server"


async def test_the_stream_pane_names_what_the_client_sent_binary_and_the_close():
    from fraglens.app.app import FraglensApp
    from fraglens.reading.capture import load_stream

    from .test_app import row

    path = SAMPLES / "websocket_bad_frames.jsonl"
    stream, _ = load_stream(str(path))
    app = FraglensApp(stream, source=str(path))
    async with app.run_test(size=(300, 40)) as pilot:
        await pilot.pause()
        assert "sent create" in row(app, 0)
        assert "binary message from the server, 8 bytes: iVBORw0KGgo= (base64)" in row(app, 5)
        assert "connection closed by the server with code 1011 (upstream reset)" in row(app, 7)


def test_export_writes_a_connections_server_messages_as_the_sse_body_they_make(
    tmp_path, capsys
):
    from fraglens.cli import main

    path = SAMPLES / "websocket_responses_two_responses.jsonl"
    out = tmp_path / "two.sse"
    assert main(["export", str(path), "-o", str(out)]) == 0
    sse = out.read_text()
    server = [f.text for f in parse_recording(path.read_bytes()).frames if f.sender == "server"]
    # one event per server message, named by its type; nothing the client sent
    assert sse == "".join(f"event: {json.loads(t)['type']}\ndata: {t}\n\n" for t in server)
    assert "response.create\"" not in sse
    ws_doc = report(path.read_bytes())
    sse_doc = report(out.read_bytes())
    assert [c["arguments"] for c in sse_doc["calls"]] == [c["arguments"] for c in ws_doc["calls"]]


def test_a_realtime_done_that_disagrees_with_the_deltas_is_said():
    from fraglens.framing.events import RawEvent
    from fraglens.reading.stream import Stream

    stream = Stream(format="openai-realtime", framing="websocket")
    events = [
        {"type": "response.created", "event_id": "e1", "response": {"id": "r1"}},
        {"type": "response.output_item.added", "event_id": "e2", "response_id": "r1",
         "output_index": 0, "item": {"id": "it", "type": "function_call", "call_id": "c1",
                                     "name": "f", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "event_id": "e3",
         "response_id": "r1", "item_id": "it", "output_index": 0, "call_id": "c1",
         "delta": '{"a":1}'},
        {"type": "response.function_call_arguments.done", "event_id": "e4",
         "response_id": "r1", "item_id": "it", "output_index": 0, "call_id": "c1",
         "name": "f", "arguments": '{"a":2}'},
        {"type": "response.done", "event_id": "e5", "response": {
            "id": "r1", "status": "completed",
            "usage": {"total_tokens": 9, "input_tokens": 5, "output_tokens": 4}}},
    ]
    for n, event in enumerate(events):
        stream.feed(RawEvent(n, "data", json.dumps(event)))
    stream.close()
    doc = build_report(stream)
    assert [d["code"] for d in doc["diagnostics"]] == ["args-multiple-values"]
    assert doc["calls"][0]["arguments"] == {"a": 1}  # what streamed, the restatement said
    assert doc["responses"][0]["usage"]["reported"]["total_tokens"] == 9


def test_a_capture_that_stops_inside_its_second_response_says_so():
    frames = two_responses()[:9]  # the second response's call opened, then nothing
    doc = report(record(frames, close=None))
    assert [r["status"] for r in doc["responses"]] == ["completed", "open"]
    found = [d for d in doc["diagnostics"] if d["code"] == "eof-without-finish"]
    assert [d["message"] for d in found] == [
        "the capture stopped while response resp_2 was still streaming, with no end event "
        "and no close"]
