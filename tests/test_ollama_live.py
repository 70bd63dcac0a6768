"""Ollama's native API end to end: `serve` replays an /api/chat capture as NDJSON,
`live --format ollama` reads it line by line, with no key, into a recording that
`check` reads to the same report. A Bedrock capture is replayed byte for byte."""

from __future__ import annotations

from pathlib import Path

import httpx

from fraglens.framing.recording import parse_recording
from fraglens.net.live import LiveCall, Phase
from fraglens.net.replay import Pace
from fraglens.net.request import build_spec
from fraglens.net.serve import start_server
from fraglens.reading.capture import load_stream
from fraglens.report.document import build_report

from .conftest import PATIENCE, SAMPLES

FAST = Pace("fixed", 0)


def check(path: str) -> dict:
    return build_report(load_stream(path)[0])


def test_a_base_url_goes_to_the_native_endpoint_without_a_key():
    for url in ("http://localhost:11434", "http://localhost:11434/api", "http://h:1/v1"):
        spec, note = build_spec(url, format="ollama", model="qwen3", prompt="hi", environ={})
        assert spec.url.endswith("/api/chat") and "/v1" not in spec.url
        assert note is None and not spec.secrets  # no credential sent
        assert not any(k.lower() in ("authorization", "x-api-key") for k, _ in spec.headers)
        assert spec.body["stream"] is True and "stream_options" not in spec.body
    # a path that says /api/chat is Ollama without --format
    spec, _ = build_spec("http://localhost:11434/api/chat", model="m", prompt="p", environ={})
    assert spec.format == "ollama"


async def test_live_ollama_against_serve_reads_ndjson_as_it_comes(tmp_path):
    capture = str(SAMPLES / "ollama_native_parallel.ndjson")
    record = tmp_path / "ollama.fraglens"
    seen: list[int] = []
    with start_server([capture], pace=FAST) as server:
        spec, _ = build_spec(server.url, format="ollama", model="llama3.1:8b", prompt="hi",
                             environ={})
        call = LiveCall(spec, record=record, timeout=PATIENCE,
                        on_event=lambda ev: seen.append(ev.number))
        status = await call.run()
    assert status.phase is Phase.DONE, status.message
    assert seen == [0, 1, 2]  # one event per line, handed out as read
    rec = parse_recording(record.read_bytes())
    assert rec.response["headers"]["content-type"] == "application/x-ndjson"
    assert rec.body == (SAMPLES / "ollama_native_parallel.ndjson").read_bytes()
    live_doc, recorded = build_report(call.stream), check(str(record))
    assert live_doc == recorded
    assert [c["arguments_raw"] for c in recorded["calls"]] == [
        c["arguments_raw"] for c in check(capture)["calls"]
    ]


def test_serve_answers_ollama_stream_false_with_an_ollama_error():
    capture = str(SAMPLES / "ollama_native_tool_call.ndjson")
    with start_server([capture], pace=FAST) as server:
        r = httpx.post(server.url + "/api/chat", json={"model": "m", "stream": False},
                       timeout=PATIENCE)
    assert r.status_code == 400
    assert set(r.json()) == {"error"}


def test_serve_replays_a_bedrock_capture_byte_for_byte():
    path = SAMPLES / "bedrock_converse_parallel.eventstream"
    with start_server([str(path)], pace=FAST) as server:
        r = httpx.post(server.url + "/model/m/converse-stream", json={}, timeout=PATIENCE)
    assert r.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert r.content == Path(path).read_bytes()
