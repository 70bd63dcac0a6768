"""fraglens serve: what it plans to send (sans-I/O), and what a real client gets from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from fraglens.cli import main
from fraglens.framing.recording import RecordingWriter
from fraglens.net.replay import Chaos, Pace, load_source, plan
from fraglens.net.serve import error_body, start_server

from .conftest import PATIENCE
from .test_live_streams import ANTHROPIC_SSE, OPENAI_ARGS, OPENAI_ARGS_2, OPENAI_SSE, write

FAST = Pace("fixed", 0)


def _recording(tmp_path: Path, body: bytes, reads: list[int], status: int = 200) -> str:
    """A recording of ``body`` cut into reads at ``reads``, a tenth of a second apart."""
    path = tmp_path / "rec.fraglens"
    with path.open("wb") as fp:
        writer = RecordingWriter(fp)
        writer.start(
            {
                "method": "POST",
                "url": "http://h/v1/chat/completions",
                "body": {"model": "gpt-recorded", "stream": True},
            },
            format="openai-chat",
        )
        writer.response(status, {"content-type": "text/event-stream"}, t=0.5)
        start = 0
        for n, cut in enumerate([*reads, len(body)]):
            writer.chunk(1.0 + n / 10, body[start:cut])
            start = cut
        writer.end("eof", t=9.0)
    return str(path)


# -- the plan ------------------------------------------------------------------------------


def test_a_faithful_replay_sends_each_event_in_its_own_write(tmp_path):
    source = load_source(write(tmp_path, "chat.sse", OPENAI_SSE))
    writes = plan(source, Chaos(), FAST).writes
    assert b"".join(w.data for w in writes) == OPENAI_SSE
    assert [w.events_done for w in writes] == list(range(1, source.events + 1))
    assert all(w.data.endswith(b"\n\n") for w in writes)


def test_split_bytes_cuts_every_n_bytes_across_events():
    source = load_source_bytes(OPENAI_SSE)
    writes = plan(source, Chaos(split_bytes=7), FAST).writes
    assert b"".join(w.data for w in writes) == OPENAI_SSE
    assert {len(w.data) for w in writes[:-1]} == {7}


def test_random_splits_are_reproducible_and_cut_characters_in_half():
    source = load_source_bytes(OPENAI_SSE)
    first = [w.data for w in plan(source, Chaos(split_seed=7), FAST).writes]
    assert first == [w.data for w in plan(source, Chaos(split_seed=7), FAST).writes]
    assert first != [w.data for w in plan(source, Chaos(split_seed=8), FAST).writes]
    assert b"".join(first) == OPENAI_SSE

    def cuts_a_character(data: bytes) -> bool:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    assert any(cuts_a_character(piece) for piece in first)


def test_drop_after_n_stops_once_the_nth_event_is_out():
    source = load_source_bytes(OPENAI_SSE)
    steps = plan(source, Chaos(drop_after=3), FAST)
    assert steps.drop and steps.writes[-1].events_done == 3
    assert b"".join(w.data for w in steps.writes) == OPENAI_SSE[: source.event_ends[2]]
    split = plan(source, Chaos(drop_after=3, split_bytes=64), FAST)
    assert split.writes[-1].events_done == 3
    assert len(b"".join(w.data for w in split.writes)) >= source.event_ends[2]
    assert not plan(source, Chaos(drop_after=source.events), FAST).drop
    assert plan(source, Chaos(drop_after=0), FAST).writes == []


def test_a_stall_pauses_once_after_the_nth_event():
    source = load_source_bytes(OPENAI_SSE)
    writes = plan(source, Chaos(stall_after=4, stall_seconds=2.5), FAST).writes
    assert [w.events_done for w in writes if w.pause] == [4]
    assert [w.pause for w in writes if w.pause] == [2.5]


def test_recorded_pace_keeps_the_recorded_reads_and_their_times(tmp_path):
    path = _recording(tmp_path, OPENAI_SSE, reads=[5, 300, 301])
    source = load_source(path)
    writes = plan(source, Chaos(), Pace("recorded")).writes
    assert [len(w.data) for w in writes] == [5, 295, 1, len(OPENAI_SSE) - 301]
    assert [round(w.at, 6) for w in writes] == [0.0, 0.1, 0.2, 0.3]
    fixed = plan(source, Chaos(), Pace("fixed", 10)).writes
    assert fixed[-1].at == pytest.approx((source.events - 1) / 10)


def test_ndjson_is_re_encoded_as_sse_and_a_json_body_is_sent_as_it_was(tmp_path):
    lines = [json.dumps({"i": i}) for i in range(3)]
    source = load_source(write(tmp_path, "x.ndjson", "\n".join(lines).encode()))
    assert source.body == b"".join(f"data: {line}\n\n".encode() for line in lines)
    body = json.dumps({"error": {"message": "no"}}).encode()
    source = load_source(write(tmp_path, "err.json", body))
    assert (source.body, source.content_type) == (body, "application/json")


def test_unreadable_captures_are_one_line_errors(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "missing.sse"), "--port", "0"]) == 2
    assert main(["serve", write(tmp_path, "prose.txt", b"hello there"), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "not a stream" in err and "Traceback" not in err


def test_provider_error_bodies_have_the_providers_shape():
    anthropic = error_body(529, "anthropic")
    assert anthropic["type"] == "error" and anthropic["error"]["type"] == "overloaded_error"
    openai = error_body(429, "openai-chat")["error"]
    assert openai["code"] == "rate_limit_exceeded" and openai["param"] is None


def load_source_bytes(data: bytes):
    from fraglens.net.replay import source_from_bytes

    return source_from_bytes(data, "inline")


# -- over the wire ----------------------------------------------------------------------------


def test_each_path_gets_a_capture_of_its_format_and_unknown_paths_go_round_robin(tmp_path):
    chat = write(tmp_path, "chat.sse", OPENAI_SSE)
    claude = write(tmp_path, "claude.sse", ANTHROPIC_SSE)
    with start_server([chat, claude], pace=FAST) as server:
        with httpx.Client(base_url=server.url, trust_env=False) as client:
            assert client.post("/v1/messages", json={}).content == ANTHROPIC_SSE
            assert client.post("/v1/chat/completions", json={}).content == OPENAI_SSE
            assert client.post("/v1/chat/completions", json={}).content == OPENAI_SSE
            names = [
                client.post("/anything", json={}).headers["x-fraglens-capture"] for _ in range(3)
            ]
            assert names == ["chat.sse", "claude.sse", "chat.sse"]


def test_models_lists_the_recorded_models_and_other_methods_get_a_json_405(tmp_path):
    with start_server([_recording(tmp_path, OPENAI_SSE, [])], pace=FAST) as server:
        with httpx.Client(base_url=server.url, trust_env=False) as client:
            models = client.get("/v1/models").json()
            assert [m["id"] for m in models["data"]] == ["gpt-recorded"]
            wrong = client.delete("/v1/chat/completions")
            assert wrong.status_code == 405 and "error" in wrong.json()


def test_a_recorded_error_status_is_replayed_with_its_body(tmp_path):
    body = json.dumps({"error": {"message": "quota", "type": "insufficient_quota"}}).encode()
    with start_server([_recording(tmp_path, body, [], status=429)], pace=FAST) as server:
        answer = httpx.post(server.url + "/v1/chat/completions", json={}, trust_env=False)
    assert answer.status_code == 429 and answer.content == body


def test_the_http_error_chaos_answers_in_the_shape_of_the_path(tmp_path):
    with start_server(
        [write(tmp_path, "claude.sse", ANTHROPIC_SSE)], chaos=Chaos(http_error=503)
    ) as server:
        answer = httpx.post(server.url + "/v1/messages", json={}, trust_env=False)
    assert answer.status_code == 503
    assert answer.json()["error"]["type"] == "overloaded_error"


SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
RESPONSES_SAMPLE = SAMPLES / "native_responses_function_calls.sse"
NOT_STREAMED = 'fraglens serve replays recorded streams: the request must set "stream": true'


def test_stream_false_gets_a_400_in_the_shape_of_each_endpoint(tmp_path):
    chat = write(tmp_path, "chat.sse", OPENAI_SSE)
    claude = write(tmp_path, "claude.sse", ANTHROPIC_SSE)
    openai_shaped = {
        "error": {
            "message": NOT_STREAMED,
            "type": "invalid_request_error",
            "param": "stream",
            "code": None,
        }
    }
    expected = {
        "/v1/chat/completions": openai_shaped,
        "/v1/responses": openai_shaped,
        "/v1/messages": {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": NOT_STREAMED},
        },
    }
    logs: list[str] = []
    with start_server([chat, claude, str(RESPONSES_SAMPLE)], pace=FAST, log=logs.append) as server:
        with httpx.Client(base_url=server.url, trust_env=False) as client:
            for path, body in expected.items():
                answer = client.post(path, json={"model": "m", "stream": False})
                assert answer.status_code == 400, path
                assert answer.headers["content-type"] == "application/json"
                assert answer.json() == body, path
    assert sum('"stream": false' in line for line in logs) == 3


def test_streamed_requests_and_requests_without_stream_are_still_replayed(tmp_path):
    chat = write(tmp_path, "chat.sse", OPENAI_SSE)
    claude = write(tmp_path, "claude.sse", ANTHROPIC_SSE)
    with start_server([chat, claude, str(RESPONSES_SAMPLE)], pace=FAST) as server:
        with httpx.Client(base_url=server.url, trust_env=False) as client:
            streamed = client.post("/v1/chat/completions", json={"model": "m", "stream": True})
            assert streamed.status_code == 200 and streamed.content == OPENAI_SSE
            assert "text/event-stream" in streamed.headers["content-type"]
            claude_answer = client.post("/v1/messages", json={"stream": True})
            assert claude_answer.content == ANTHROPIC_SSE
            responses = client.post("/v1/responses", json={"stream": True})
            assert responses.content == RESPONSES_SAMPLE.read_bytes()
            # no "stream" key, or no JSON at all: replayed as it always was
            assert client.post("/v1/messages", json={"model": "m"}).content == ANTHROPIC_SSE
            assert client.post("/v1/chat/completions", content=b"not json").content == OPENAI_SSE


def test_stream_false_still_gets_a_recorded_json_answer_or_error(tmp_path):
    answer_body = json.dumps({"object": "chat.completion", "choices": []}).encode()
    answer = write(tmp_path, "answer.json", answer_body)
    with start_server([answer], pace=FAST) as server:
        got = httpx.post(
            server.url + "/v1/chat/completions", json={"stream": False}, trust_env=False
        )
    assert got.status_code == 200 and got.content == answer_body
    error = json.dumps({"error": {"message": "quota", "type": "insufficient_quota"}}).encode()
    with start_server([_recording(tmp_path, error, [], status=429)], pace=FAST) as server:
        got = httpx.post(
            server.url + "/v1/chat/completions", json={"stream": False}, trust_env=False
        )
    assert got.status_code == 429 and got.content == error


def test_the_openai_sdk_with_stream_false_gets_a_bad_request_that_says_what_to_set(tmp_path):
    openai = pytest.importorskip("openai")
    with start_server([write(tmp_path, "chat.sse", OPENAI_SSE)], pace=FAST) as server:
        client = openai.OpenAI(
            base_url=server.url + "/v1",
            api_key="not-a-real-key",
            http_client=httpx.Client(trust_env=False),
            max_retries=0,
        )
        with pytest.raises(openai.BadRequestError) as refused:
            # stream=False said out loud: left out, the SDK sends no "stream"
            # key at all, and serve streams to a body without one
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=False
            )
    assert refused.value.status_code == 400
    assert refused.value.param == "stream"
    assert '"stream": true' in refused.value.message


def test_the_openai_sdk_streams_the_same_tool_calls_from_serve(tmp_path):
    openai = pytest.importorskip("openai")
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    with start_server([source], pace=FAST, chaos=Chaos(split_seed=3)) as server:
        client = openai.OpenAI(
            base_url=server.url + "/v1",
            api_key="not-a-real-key",
            http_client=httpx.Client(trust_env=False),
        )
        args: dict[int, str] = {}
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        for chunk in stream:
            for choice in chunk.choices:
                for call in choice.delta.tool_calls or []:
                    args[call.index] = args.get(call.index, "") + (call.function.arguments or "")
    assert args == {0: "".join(OPENAI_ARGS), 1: "".join(OPENAI_ARGS_2)}


def test_fraglens_serve_as_a_process_prints_its_url_and_answers(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fraglens",
            "serve",
            source,
            "--port",
            "0",
            "--pace",
            "fixed",
            "--rate",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "listening on" in line:
                break
        url = lines[-1].split("listening on ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        answer = httpx.post(
            url + "/v1/chat/completions", json={}, trust_env=False, timeout=PATIENCE
        )
        assert answer.content == OPENAI_SSE
        assert "text/event-stream" in answer.headers["content-type"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_the_log_and_the_chaos_count_one_event_as_one(tmp_path):
    # a one-event answer (the recorded 429 body) and a chaos that stops after one
    body = json.dumps({"error": {"message": "quota"}}).encode()
    logs: list[str] = []
    with start_server([_recording(tmp_path, body, [], status=429)], pace=FAST,
                      log=logs.append) as server:
        httpx.post(server.url + "/v1/chat/completions", json={}, trust_env=False)
    assert any(line.endswith(": 1 event, no chaos") for line in logs), logs
    assert Chaos(drop_after=1).describe() == "drop after 1 event"
    assert Chaos(stall_after=1, stall_seconds=2).describe() == "stall 2s after 1 event"
