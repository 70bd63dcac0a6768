"""``fraglens serve`` replays a recorded WebSocket connection to a real WebSocket client."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from fraglens.framing.recording import parse_recording
from fraglens.net.replay import Chaos, Pace
from fraglens.net.serve import start_server

from .conftest import SAMPLES

TWO = SAMPLES / "websocket_responses_two_responses.jsonl"
REALTIME = SAMPLES / "websocket_realtime_function_call.jsonl"
BAD = SAMPLES / "websocket_bad_frames.jsonl"
FAST = Pace("fixed", 0)


def server_frames(path):
    """The server's messages of a recording, in order, as they were recorded."""
    rec = parse_recording(path.read_bytes())
    return [f.text if f.text is not None else f.data for f in rec.frames
            if f.sender == "server" and f.refused is None]


def ws_url(handle, path):
    return handle.url.replace("http://", "ws://") + path


async def _until(ws, end_types, into):
    while True:
        message = await ws.recv()
        into.append(message)
        if isinstance(message, str) and json.loads(message).get("type") in end_types:
            return


def test_two_responses_on_one_socket_are_the_recorded_frames_exactly():
    async def run(url):
        got: list[str | bytes] = []
        async with connect(url) as ws:
            for _ in range(2):
                await ws.send(json.dumps({"type": "response.create", "model": "gpt-5.1"}))
                await _until(ws, {"response.completed"}, got)
        return got

    with start_server([str(TWO)], pace=FAST) as handle:
        got = asyncio.run(run(ws_url(handle, "/v1/responses")))
    assert got == server_frames(TWO)
    assert len(got) == 14


def test_a_realtime_session_gets_its_greeting_then_a_response_per_request():
    async def run(url):
        got: list[str | bytes] = []
        async with connect(url) as ws:
            for _ in range(3):  # session.created, session.updated, conversation.item.added
                got.append(await ws.recv())
            for _ in range(2):
                await ws.send(json.dumps({"type": "response.create"}))
                await _until(ws, {"response.done"}, got)
        return got

    with start_server([str(REALTIME)], pace=FAST) as handle:
        got = asyncio.run(run(ws_url(handle, "/v1/realtime?model=gpt-realtime")))
    assert got == server_frames(REALTIME)


def test_a_close_the_server_sent_is_sent_again_with_its_code_and_binary_stays_binary():
    async def run(url):
        got: list[str | bytes] = []
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "response.create"}))
            with pytest.raises(ConnectionClosed):
                while True:
                    got.append(await ws.recv())
            return got, ws.close_code, ws.close_reason

    with start_server([str(BAD)], pace=FAST) as handle:
        got, code, reason = asyncio.run(run(ws_url(handle, "/v1/responses")))
    assert got == server_frames(BAD)  # the refused message was never kept: not sent
    assert got[-1] == b"\x89PNG\r\n\x1a\n"
    assert (code, reason) == (1011, "upstream reset")


def test_drop_after_closes_the_connection_mid_response():
    async def run(url):
        got = []
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "response.create"}))
            with pytest.raises(ConnectionClosed):
                while True:
                    got.append(await ws.recv())
            return got, ws.close_code

    with start_server([str(TWO)], pace=FAST, chaos=Chaos(drop_after=3)) as handle:
        got, code = asyncio.run(run(ws_url(handle, "/v1/responses")))
    assert got == server_frames(TWO)[:3] and code == 1011


def test_recorded_pacing_is_kept_between_messages():
    async def run(url):
        loop = asyncio.get_running_loop()
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "response.create"}))
            start = loop.time()
            times = []
            for _ in range(7):
                await ws.recv()
                times.append(loop.time() - start)
        return times

    with start_server([str(TWO)]) as handle:
        times = asyncio.run(run(ws_url(handle, "/v1/responses")))
    # recorded: 0.36 s after the request for the first message, 0.47 s for the last;
    # a busy machine only ever adds delay
    assert times[0] >= 0.35 and times[-1] >= 0.46
    assert times == sorted(times)


def test_other_paths_and_post_requests_are_refused_in_words():
    async def handshake(url):
        async with connect(url):
            pass

    with start_server([str(TWO)], pace=FAST) as handle:
        with pytest.raises(InvalidStatus) as refused:
            asyncio.run(handshake(ws_url(handle, "/v1/chat/completions")))
        assert refused.value.response.status_code == 404
        answer = httpx.post(handle.url + "/v1/responses", json={"stream": True})
        assert answer.status_code == 404
        assert "WebSocket" in answer.json()["error"]["message"]


def test_a_prewarm_is_answered_with_no_output_and_uses_up_no_recorded_response():
    """Codex sends ``"generate": false`` first: the API prepares, and answers
    with a response that has no output; the next request gets the first
    recorded response."""
    async def run(url):
        got = []
        async with connect(url) as ws:
            for generate in (False, True):
                await ws.send(json.dumps({"type": "response.create", "generate": generate}))
                await _until(ws, {"response.completed"}, got)
        return got

    with start_server([str(TWO)], pace=FAST) as handle:
        got = asyncio.run(run(ws_url(handle, "/v1/responses")))
    prewarm = [json.loads(m) for m in got[:2]]
    assert [e["type"] for e in prewarm] == ["response.created", "response.completed"]
    assert prewarm[1]["response"]["output"] == [] and prewarm[1]["response"]["status"] == (
        "completed")
    assert got[2:] == server_frames(TWO)[:7]
