"""WebSocket through ``fraglens proxy`` in front of ``fraglens serve``: real clients, loopback.

The Responses API's WebSocket mode with a plain ``websockets`` client sending
``response.create`` twice on one socket, and the Realtime API with the openai
SDK's own client: each gets through the proxy exactly the messages it gets
directly; the proxy shows one flow per response, records the connection once,
and no key reaches the disk or its output.
"""

from __future__ import annotations

import asyncio
import json
import time

import openai
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from fraglens.cli import main
from fraglens.framing.recording import parse_recording
from fraglens.net.proxy.flows import FlowState, FlowStore
from fraglens.net.proxy.server import ProxyApp, ProxyServer
from fraglens.net.replay import Pace
from fraglens.net.serve import start_server
from fraglens.report.document import build_report

from .conftest import SAMPLES
from .test_net_hardening import proxy_cli
from .test_proxy import PATIENCE, wait_flows

KEY = "sk-ws-proxy-0123456789abcdef"
TWO = SAMPLES / "websocket_responses_two_responses.jsonl"
REALTIME = SAMPLES / "websocket_realtime_function_call.jsonl"
BAD = SAMPLES / "websocket_bad_frames.jsonl"
FAST = Pace("fixed", 0)


def ws(url: str) -> str:
    return url.replace("http://", "ws://")


async def responses_mode(url: str, **options) -> list[str | bytes]:
    """Two responses on one socket, as Codex asks for them."""
    got: list[str | bytes] = []
    async with connect(url, additional_headers={"authorization": f"Bearer {KEY}",
                                                "openai-beta": "responses_websockets=2026-02-06"},
                       open_timeout=PATIENCE, **options) as conn:
        for n in range(2):
            await conn.send(json.dumps({"type": "response.create", "model": "gpt-5.1",
                                        "input": f"turn {n}", "store": False}))
            while True:
                message = await conn.recv()
                got.append(message)
                if json.loads(message)["type"] == "response.completed":
                    break
    return got


async def realtime_sdk(base: str) -> list[bytes]:
    """The openai SDK's Realtime client: its raw messages, greeting and two responses."""
    client = openai.AsyncOpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
    got: list[bytes] = []
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await conn.session.update(session={"type": "realtime", "tools": [{
            "type": "function", "name": "get_weather", "parameters": {
                "type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"]}}]})
        for _ in range(3):
            got.append(await conn.recv_bytes())
        for _ in range(2):
            await conn.send({"type": "response.create"})
            while True:
                raw = await conn.recv_bytes()
                got.append(raw)
                if json.loads(raw)["type"] == "response.done":
                    break
    return got


def direct_and_proxied(sample, client, tmp_path):
    """``client(base URL)`` against ``fraglens serve`` of ``sample``, directly and
    then through the proxy (recording to ``tmp_path/rec``): what it got each
    time, the proxy's two flows, and the proxy (its output)."""
    with start_server([str(sample)], pace=FAST) as up:
        direct = asyncio.run(client(up.url))
        with proxy_cli(up.url + "/v1", tmp_path / "rec") as proxy:
            proxied = asyncio.run(client(proxy.url))
            flows = proxy.flows(2)
    return direct, proxied, flows, proxy


def response_ids(flows) -> list[list[str]]:
    return [[c["response_id"] for c in f["check"]["calls"]] for f in flows]


def test_responses_mode_through_the_proxy_is_exact_and_recorded_once(tmp_path):
    direct, proxied, flows, proxy = direct_and_proxied(
        TWO, lambda base: responses_mode(ws(base) + "/v1/responses"), tmp_path)
    assert proxied == direct and len(direct) == 14
    # --json: one line per response, each with its check document
    assert [(f["method"], f["path"], f["status"], f["state"], f["calls"]) for f in flows] == [
        ("WS", "/v1/responses", 101, "done", 1)] * 2
    assert response_ids(flows) == [["resp_ws_01"], ["resp_ws_02"]]
    recordings = list((tmp_path / "rec").iterdir())
    assert len(recordings) == 1 and flows[0]["recording"] == str(recordings[0])
    for text in (recordings[0].read_text(), *proxy.out, *proxy.err):
        assert KEY not in text and KEY[8:] not in text
    rec = parse_recording(recordings[0].read_bytes())
    assert [f.text for f in rec.frames if f.sender == "server"] == direct
    assert rec.close is not None and rec.close["code"] == 1000 and rec.close["from"] == "client"


async def responses_sdk(base: str) -> list[bytes]:
    """The openai SDK's own Responses WebSocket client: two responses on one connection."""
    client = openai.AsyncOpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
    got: list[bytes] = []
    async with client.responses.connect(max_retries=0) as conn:
        for n in range(2):
            await conn.response.create(model="gpt-5.1", input=f"turn {n}", store=False)
            while True:
                raw = await conn.recv_bytes()
                got.append(raw)
                if json.loads(raw)["type"] == "response.completed":
                    break
    return got


def test_the_openai_sdk_responses_client_gets_the_same_messages_through_the_proxy(tmp_path):
    direct, proxied, flows, _ = direct_and_proxied(TWO, responses_sdk, tmp_path)
    assert proxied == direct and len(direct) == 14
    assert response_ids(flows) == [["resp_ws_01"], ["resp_ws_02"]]
    (recording,) = (tmp_path / "rec").iterdir()
    sent = [json.loads(f.text) for f in parse_recording(recording.read_bytes()).frames
            if f.sender == "client"]
    assert [(m["type"], m["input"]) for m in sent] == [
        ("response.create", "turn 0"), ("response.create", "turn 1")]


def test_a_proxy_recording_checks_to_the_calls_of_both_responses(tmp_path, capsys):
    record_dir = tmp_path / "rec"
    with start_server([str(TWO)], pace=FAST) as up, proxy_cli(up.url + "/v1", record_dir) as proxy:
        asyncio.run(responses_mode(ws(proxy.url) + "/v1/responses"))
        proxy.flows(2)
    (recording,) = record_dir.iterdir()
    assert main(["check", "--json", str(recording)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["arguments"], c["response_id"]) for c in doc["calls"]] == [
        ("get_weather", {"city": "Paris"}, "resp_ws_01"),
        ("get_time", {"tz": "Europe/Paris"}, "resp_ws_02"),
    ]
    assert [r["status"] for r in doc["responses"]] == ["completed", "completed"]
    # each response begins at the client's response.create, kept in the recording
    assert [r["first_event"] for r in doc["responses"]] == [0, 8]
    assert "tools" not in doc  # this client declared none


def test_the_openai_sdk_realtime_client_gets_the_same_messages_through_the_proxy(tmp_path):
    direct, proxied, flows, _ = direct_and_proxied(REALTIME, realtime_sdk, tmp_path)
    assert proxied == direct and len(direct) == 16
    assert [(f["path"], f["model"], f["calls"]) for f in flows] == [
        ("/v1/realtime?model=gpt-realtime", "gpt-realtime", 1),
        ("/v1/realtime?model=gpt-realtime", "gpt-realtime", 0)]
    assert flows[0]["check"]["format"] == "openai-realtime"
    assert flows[0]["check"]["calls"][0]["arguments"] == {"city": "Lyon"}
    # the tools the session declared (session.update) are the ones the call is held to
    assert flows[0]["check"]["tools"] == ["get_weather"]
    assert flows[0]["check"]["calls"][0]["fit"]["checked"] is True
    assert flows[1]["check"]["text"] == {"0": "It's 21 degrees in Lyon."}
    (recording,) = (tmp_path / "rec").iterdir()
    text = recording.read_text()
    assert KEY not in text
    assert json.loads(text.split("\n", 1)[0])["request"]["headers"]["authorization"] == (
        "[redacted]")


def test_a_key_offered_as_a_subprotocol_reaches_no_disk(tmp_path):
    record_dir = tmp_path / "rec"

    async def run(url):
        async with connect(url, subprotocols=["realtime", f"openai-insecure-api-key.{KEY}"],
                           open_timeout=PATIENCE) as conn:
            chosen = conn.subprotocol
            await conn.send(json.dumps({"type": "response.create"}))
            for _ in range(3 + 7):
                await conn.recv()
        return chosen

    with start_server([str(REALTIME)], pace=FAST) as up, \
            proxy_cli(up.url + "/v1", record_dir) as proxy:
        assert asyncio.run(run(ws(proxy.url) + "/v1/realtime?model=gpt-realtime")) == "realtime"
        proxy.flows(1)
    (recording,) = record_dir.iterdir()
    text = recording.read_text()
    assert KEY not in text and "openai-insecure-api-key.[redacted]" in text


def test_an_upstream_closing_mid_response_is_passed_on_and_the_response_aborted(tmp_path):
    record_dir = tmp_path / "rec"

    async def run(url):
        got = []
        async with connect(url, open_timeout=PATIENCE) as conn:
            await conn.send(json.dumps({"type": "response.create"}))
            with pytest.raises(ConnectionClosed):
                while True:
                    got.append(await conn.recv())
            return got, conn.close_code, conn.close_reason

    with start_server([str(BAD)], pace=FAST) as up:
        direct = asyncio.run(run(ws(up.url) + "/v1/responses"))
        with proxy_cli(up.url + "/v1", record_dir) as proxy:
            proxied = asyncio.run(run(ws(proxy.url) + "/v1/responses"))
            (flow,) = proxy.flows(1)
        small = tmp_path / "small"
        with proxy_cli(up.url + "/v1", small, "--max-line-bytes", "64") as proxy:
            # over the cap: passed on to the client whole, not copied to the flows
            assert asyncio.run(run(ws(proxy.url) + "/v1/responses")) == direct
            proxy.flows(1)
    assert proxied == direct
    assert proxied[1:] == (1011, "upstream reset") and isinstance(proxied[0][-1], bytes)
    assert flow["state"] == "failed"
    assert flow["error"] == ("the upstream closed the connection with code 1011 (upstream "
                             "reset) before the response ended")
    check = flow["check"]
    assert [c["status"] for c in check["calls"]] == ["aborted"]
    assert check["responses"][0]["status"] == "aborted"
    assert {d["code"] for d in check["diagnostics"]} == {
        "non-json-data", "ws-binary-frame", "error-event"}
    (recording,) = small.iterdir()
    refused = [f for f in parse_recording(recording.read_bytes()).frames if f.refused]
    assert len(refused) == 3 and all("--max-line-bytes (64 bytes)" in f.reason for f in refused)


def test_a_refused_handshake_reaches_the_client_as_the_upstream_said_it(tmp_path, capsys):
    async def status(url):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, open_timeout=PATIENCE):
                pass
        response = refused.value.response
        return response.status_code, response.body

    with start_server([str(SAMPLES / "demo.sse")], pace=FAST) as up:
        direct = asyncio.run(status(ws(up.url) + "/v1/responses"))
        with proxy_cli(up.url + "/v1", tmp_path / "rec") as proxy:
            proxied = asyncio.run(status(ws(proxy.url) + "/v1/responses"))
            (flow,) = proxy.flows(1)
    assert proxied == direct and direct[0] == 404
    assert (flow["method"], flow["status"], flow["calls"]) == ("WS", 404, None)
    assert "HTTP 404" in flow["error"]
    # its recording says so, and check says it in one line
    (recording,) = (tmp_path / "rec").iterdir()
    assert main(["check", str(recording)]) == 2
    err = capsys.readouterr().err
    assert "no messages: the WebSocket handshake was answered with HTTP 404" in err


def test_each_response_is_its_own_flow_live_while_it_streams():
    """In process (the Flows screen's store): a flow opens at its response.create
    and streams before its response ends."""
    store = FlowStore()
    seen: list[tuple[int, str, FlowState]] = []
    store.subscribe(lambda flow, change: seen.append((flow.number, change, flow.state)))
    with start_server([str(TWO)], pace=Pace("fixed", 50)) as up:
        app = ProxyApp(up.url + "/v1", store=store)
        with ProxyServer(app, port=0) as proxy:
            asyncio.run(responses_mode(ws(proxy.url) + "/v1/responses"))
            flows = wait_flows(store, 2)
    assert [f.number for f in flows] == [1, 2]
    assert (1, "body", FlowState.STREAMING) in seen
    first_end = seen.index((1, "end", FlowState.DONE))
    assert seen.index((1, "body", FlowState.STREAMING)) < first_end < seen.index(
        (2, "response", FlowState.WAITING))
    assert [build_report(f.stream)["calls"][0]["name"] for f in flows] == [
        "get_weather", "get_time"]


def test_a_websocket_flow_saved_from_the_flows_screen_checks_as_its_response(tmp_path):
    from fraglens.net.proxy.record import save_flow
    from fraglens.reading.capture import stream_from_bytes

    store = FlowStore()
    with start_server([str(TWO)], pace=FAST) as up:
        app = ProxyApp(up.url + "/v1", store=store)
        with ProxyServer(app, port=0) as proxy:
            asyncio.run(responses_mode(ws(proxy.url) + "/v1/responses"))
            flows = wait_flows(store, 2)
    with store.lock:
        saved = save_flow(flows[1], tmp_path / "second.fraglens")
    stream, _ = stream_from_bytes(saved.read_bytes())
    doc = build_report(stream)
    assert [(c["name"], c["response_id"]) for c in doc["calls"]] == [("get_time", "resp_ws_02")]
    assert stream.labels[0] == "sent response.create" and len(stream.events) == 8


async def test_the_flows_screen_lists_each_response_and_opens_it_in_the_panes():
    from fraglens.app.screens.flows import ProxyFlowsApp

    from .test_proxy_ui import SIZE, names, opened, settle

    store = FlowStore()
    with start_server([str(TWO)], pace=FAST) as up:
        app = ProxyApp(up.url + "/v1", store=store)
        with ProxyServer(app, port=0) as proxy:
            await responses_mode(ws(proxy.url) + "/v1/responses")
            wait_flows(store, 2)
    flows_app = ProxyFlowsApp(store)
    async with flows_app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = flows_app.flows.table
        assert table.row_count == 2
        assert [str(c) for c in table.get_row_at(0)][2:6] == ["WS", "/v1/responses", "gpt-5.1",
                                                              "101"]
        await pilot.press("up", "enter")
        await settle(pilot, lambda: opened(flows_app), "the panes")
        assert names(flows_app) == ["get_weather"]
        assert flows_app.stream.labels[0] == "sent response.create"


class _Closes:
    """An upstream that accepts, then waits for the client's close and keeps its code."""

    def __init__(self) -> None:
        self.codes: list[int | None] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                self.codes.append(message.get("code"))
                return


@pytest.mark.parametrize("code", [1000, 4000, None])
def test_the_clients_close_code_reaches_the_upstream_as_it_was(code):
    from fraglens.net.serve import ServerHandle, bind

    upstream = _Closes()

    async def run(url):
        async with connect(url, open_timeout=PATIENCE) as conn:
            if code is None:
                await conn.close(code=None)  # a close frame with no code (1005)
            else:
                await conn.close(code)

    with ServerHandle(upstream, bind("127.0.0.1", 0)).start() as up:
        app = ProxyApp(up.url + "/v1", store=FlowStore())
        with ProxyServer(app, port=0) as proxy:
            asyncio.run(run(ws(proxy.url) + "/v1/responses"))
            for _ in range(int(PATIENCE / 0.02)):
                if upstream.codes:
                    break
                time.sleep(0.02)
    assert upstream.codes == [1005 if code is None else code]


def test_a_prewarm_is_a_flow_of_its_own_that_says_so():
    store = FlowStore()

    async def run(url):
        async with connect(url, open_timeout=PATIENCE) as conn:
            for generate in (False, True):
                await conn.send(json.dumps({"type": "response.create", "generate": generate}))
                while json.loads(await conn.recv())["type"] != "response.completed":
                    pass

    with start_server([str(TWO)], pace=FAST) as up:
        app = ProxyApp(up.url + "/v1", store=store)
        with ProxyServer(app, port=0) as proxy:
            asyncio.run(run(ws(proxy.url) + "/v1/responses"))
            flows = wait_flows(store, 2)
    assert [len(f.stream.reassembler.calls) for f in flows] == [0, 1]
    assert 'a prewarm ("generate": false): the client asked for no output' in flows[0].notes
    assert not any("prewarm" in note for note in flows[1].notes)


class _Echo:
    """An upstream that echoes the key it was sent, as providers do in errors."""

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return
        await receive()
        headers = dict(scope["headers"])
        key = headers[b"authorization"].decode().removeprefix("Bearer ")
        await send({"type": "websocket.accept"})
        await receive()
        await send({"type": "websocket.send", "text": json.dumps({
            "type": "error", "error": {"message": f"Incorrect API key provided: {key}"}})})
        await send({"type": "websocket.close", "code": 1008, "reason": f"bad key {key}"})


def test_a_key_the_upstream_echoes_reaches_the_client_but_no_flow_or_recording(tmp_path):
    from fraglens.net.serve import ServerHandle, bind

    record_dir = tmp_path / "rec"

    async def run(url):
        async with connect(url, additional_headers={"authorization": f"Bearer {KEY}"},
                           open_timeout=PATIENCE) as conn:
            await conn.send(json.dumps({"type": "response.create"}))
            echoed = await conn.recv()
            with pytest.raises(ConnectionClosed):
                await conn.recv()
            return echoed, conn.close_reason

    with ServerHandle(_Echo(), bind("127.0.0.1", 0)).start() as up, \
            proxy_cli(up.url + "/v1", record_dir) as proxy:
        echoed, reason = asyncio.run(run(ws(proxy.url) + "/v1/responses"))
        (flow,) = proxy.flows(1)
    # the client gets what the upstream sent, its own key included
    assert KEY in echoed and reason == f"bad key {KEY}"
    (recording,) = record_dir.iterdir()
    text = recording.read_text()
    assert "Incorrect API key provided: [redacted]" in text and "bad key [redacted]" in text
    for said in (text, *proxy.out, *proxy.err):
        assert KEY not in said
    assert flow["check"]["errors"][0]["message"] == "Incorrect API key provided: [redacted]"
