"""``fraglens live --url ws://…``: a WebSocket-mode response shown, recorded, checked, replayed."""

from __future__ import annotations

import asyncio
import json

from websockets.asyncio.client import connect

from fraglens.cli import main
from fraglens.framing.recording import parse_recording
from fraglens.net.replay import Pace
from fraglens.net.serve import ServerHandle, bind, start_server

from .conftest import SAMPLES

FAKE_KEY = "sk-live-ws-0123456789abcdef"
TWO = SAMPLES / "websocket_responses_two_responses.jsonl"
REALTIME = SAMPLES / "websocket_realtime_function_call.jsonl"
FAST = Pace("fixed", 0)


def ws(url):
    return url.replace("http://", "ws://")


def live(url, record, *extra):
    return main(["live", "--url", url, "--model", "gpt-5.1", "--prompt", "Weather in Paris?",
                 "--json", "--record", str(record), *extra])


def test_a_websocket_mode_response_is_shown_recorded_and_checks_the_same(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "ws.fraglens"
    with start_server([str(TWO)], pace=FAST) as server:
        code = live(ws(server.url) + "/v1", record)
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["framing"] == "websocket"
    assert [(c["name"], c["arguments"], c["response_id"]) for c in doc["calls"]] == [
        ("get_weather", {"city": "Paris"}, "resp_ws_01")]
    # check of the recording gives the same report, byte for byte
    assert main(["check", "--json", str(record)]) == 0
    assert capsys.readouterr().out == out.out
    rec = parse_recording(record.read_bytes())
    sent = json.loads(rec.frames[0].text)
    assert rec.frames[0].sender == "client" and sent["type"] == "response.create"
    assert "stream" not in sent and sent["input"] == "Weather in Paris?"
    assert rec.close == {"code": 1000, "reason": "", "from": "client", "t": rec.close["t"]}
    assert FAKE_KEY not in record.read_text() + out.out + out.err


def test_a_live_recording_is_replayed_by_serve_frame_for_frame(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "ws.fraglens"
    with start_server([str(TWO)], pace=FAST) as server:
        assert live(ws(server.url) + "/v1", record) == 0
    capsys.readouterr()
    recorded = [f.text for f in parse_recording(record.read_bytes()).frames
                if f.sender == "server"]

    async def replayed(url):
        got = []
        async with connect(url) as conn:
            await conn.send(json.dumps({"type": "response.create", "model": "gpt-5.1"}))
            for _ in recorded:
                got.append(await conn.recv())
        return got

    with start_server([str(record)], pace=FAST) as server:
        got = asyncio.run(replayed(ws(server.url) + "/v1/responses"))
    assert got == recorded and len(got) == 7


def test_realtime_takes_the_model_in_the_url_and_its_tools_in_the_response(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "rt.fraglens"
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}}, "required": ["city"]}}}]))
    with start_server([str(REALTIME)], pace=FAST) as server:
        code = main(["live", "--url", ws(server.url) + "/v1", "--format", "realtime",
                     "--model", "gpt-realtime", "--prompt", "Weather in Lyon?",
                     "--tools", str(tools), "--json", "--record", str(record)])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["format"] == "openai-realtime"
    assert [(c["id"], c["arguments"], c["fit"]["checked"]) for c in doc["calls"]] == [
        ("call_rt_1", {"city": "Lyon"}, True)]
    rec = parse_recording(record.read_bytes())
    assert rec.request["url"].endswith("/v1/realtime?model=gpt-realtime")
    sent = json.loads(rec.frames[0].text)
    assert sent["response"]["tools"][0]["name"] == "get_weather"
    # the greeting came first: session.created, session.updated, conversation.item.added
    assert [json.loads(f.text)["type"] for f in rec.frames[1:4]] == [
        "session.created", "session.updated", "conversation.item.added"]


class _CutOff:
    """A WebSocket server that starts a call, then closes with 1011 mid-response;
    or, with ``big``, sends a message of that many bytes."""

    def __init__(self, big: int = 0) -> None:
        self.big = big

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept"})
        await receive()  # the response.create
        for event in (
            {"type": "response.created", "response": {"id": "resp_cut"}},
            {"type": "response.output_item.added", "output_index": 0, "item": {
                "id": "fc_1", "type": "function_call", "call_id": "call_1",
                "name": "write_file", "arguments": ""}},
            {"type": "response.function_call_arguments.delta", "output_index": 0,
             "item_id": "fc_1", "delta": '{"path": "a.md", "content": "# Tit'},
        ):
            await send({"type": "websocket.send", "text": json.dumps(event)})
        if self.big:
            await send({"type": "websocket.send", "text": "x" * self.big})
            await receive()
            return
        await send({"type": "websocket.close", "code": 1011, "reason": "upstream reset"})


def test_a_server_closing_mid_response_aborts_it_with_the_close_code(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "cut.fraglens"
    with ServerHandle(_CutOff(), bind("127.0.0.1", 0)).start() as server:
        code = live(ws(server.url) + "/v1", record)
    out = capsys.readouterr()
    assert code == 2
    assert ("the server closed the connection with code 1011 (upstream reset) before the "
            "response ended") in out.err
    assert "Traceback" not in out.err
    doc = json.loads(out.out)
    assert [c["status"] for c in doc["calls"]] == ["aborted"]
    assert doc["responses"][0]["status"] == "aborted"
    rec = parse_recording(record.read_bytes())
    assert rec.close == {"code": 1011, "reason": "upstream reset", "from": "server",
                         "t": rec.close["t"]}
    assert rec.end["end"] == "error"


def test_a_message_over_max_line_bytes_is_refused_with_a_clear_reason(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "big.fraglens"
    with ServerHandle(_CutOff(big=50_000), bind("127.0.0.1", 0)).start() as server:
        code = live(ws(server.url) + "/v1", record, "--max-line-bytes", "10000")
    out = capsys.readouterr()
    assert code == 2 and "Traceback" not in out.err
    assert "over --max-line-bytes (10000): the connection was closed with 1009" in out.err
    rec = parse_recording(record.read_bytes())
    refused = [f for f in rec.frames if f.refused is not None]
    assert len(refused) == 1 and refused[0].refused > 10_000
    assert rec.close is not None and rec.close["code"] == 1009
    # what came before the big message is all there
    assert [f.text is not None for f in rec.frames[:4]] == [True] * 4


def test_a_refused_handshake_is_one_line_with_the_status(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with start_server([str(SAMPLES / "demo.sse")], pace=FAST) as server:
        code = live(ws(server.url) + "/v1", tmp_path / "r.fraglens")
    err = capsys.readouterr().err
    assert code == 2
    assert ("the server refused the WebSocket handshake: HTTP 404: fraglens serve: no "
            "WebSocket recording is loaded") in err
    assert "Traceback" not in err


def test_compare_says_it_speaks_http_when_given_a_websocket_url(capsys):
    code = main(["compare", "--url", "ws://127.0.0.1:9/v1", "--models", "a,b", "--prompt", "hi",
                 "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "compare calls models over HTTP" in err and "Traceback" not in err


async def test_the_live_app_shows_a_websocket_response_and_its_fit(tmp_path):
    from fraglens.app.live import make_live_app
    from fraglens.net.live import Phase
    from fraglens.net.ws_live import WSLiveCall
    from fraglens.net.ws_request import build_ws_spec

    from .test_live_app import SIZE, wait_until

    tools = [{"type": "function", "name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    with start_server([str(TWO)], pace=Pace("fixed", 200)) as server:
        spec, _ = build_ws_spec(ws(server.url) + "/v1", model="gpt-5.1", prompt="hi",
                                tools=tools, environ={"OPENAI_API_KEY": FAKE_KEY})
        call = WSLiveCall(spec, record=tmp_path / "r.fraglens")
        app = make_live_app(call)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: call.status.phase.finished)
            await wait_until(pilot, lambda: app.index.fit is not None)
            assert call.status.phase is Phase.DONE
            assert [c.name for c in app.stream.reassembler.calls] == ["get_weather"]
            assert app.stream.labels[0] == "sent response.create"
            assert "done" in app.live_status and FAKE_KEY not in app.live_status
            assert [v.checked for v in app.index.fit.calls.values()] == [True]


def _split_key_recording(path, key: str) -> None:
    """A connection whose one response streams ``key`` into a call's arguments
    in two deltas (and never whole: no ``.done`` event repeats the text)."""
    def message(n, kind, **fields):
        return {"t": 0.01 * n, "from": "server",
                "text": json.dumps({"type": kind, "sequence_number": n, **fields})}

    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "save",
            "arguments": ""}
    response = {"id": "resp_1", "object": "response", "model": "gpt-5.1", "output": []}
    lines = [
        {"fraglens": "recording", "version": 2, "transport": "websocket",
         "request": {"method": "GET", "url": "ws://h/v1/responses"},
         "format": "openai-responses"},
        {"response": {"status": 101, "headers": {}}, "t": 0.0},
        message(0, "response.created", response={**response, "status": "in_progress"}),
        message(1, "response.output_item.added", output_index=0, item=item),
        message(2, "response.function_call_arguments.delta", item_id="fc_1", output_index=0,
                delta='{"note": "' + key[:12]),
        message(3, "response.function_call_arguments.delta", item_id="fc_1", output_index=0,
                delta=key[12:] + '"}'),
        message(4, "response.completed", response={**response, "status": "completed"}),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_key_streamed_back_in_two_pieces_is_scrubbed_from_the_report_and_the_recording(
    tmp_path, monkeypatch, capsys
):
    """Each message is scrubbed as it comes, but neither piece is the key: the
    joined arguments are scrubbed in the report (the call's own credentials),
    and in check's report of the recording (their fingerprints in its header)."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    served, record = tmp_path / "served.jsonl", tmp_path / "ws.fraglens"
    _split_key_recording(served, FAKE_KEY)
    with start_server([str(served)], pace=FAST) as server:
        code = live(ws(server.url) + "/v1", record)
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert [c["name"] for c in doc["calls"]] == ["save"]
    assert FAKE_KEY not in out.out and FAKE_KEY[:12] in record.read_text()  # split as sent
    assert doc["calls"][0]["arguments"]["note"] != FAKE_KEY
    assert main(["check", "--json", str(record)]) == 0
    checked = capsys.readouterr().out
    assert FAKE_KEY not in checked
    assert checked == out.out  # check of the recording says what live said
