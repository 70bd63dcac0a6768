"""``compare --repeat N --nonstream`` against a real ``fraglens serve`` on loopback.

The server replays one OpenAI capture (two interleaved get_weather calls,
nine events) and drops the connection after 6 events on a seeded share of
the requests: a flaky backend whose stream-only bug is a cut-off call. The
same server answers ``"stream": false`` with the non-streamed body made from
the capture (``--answer-nonstream``), the answer the streams are held to.
"""

from __future__ import annotations

import json
import random

import httpx
import pytest

from fraglens.cli import main
from fraglens.net.compare import call_shape
from fraglens.net.replay import Chaos, Pace
from fraglens.net.serve import start_server
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report

from .conftest import PATIENCE, SAMPLES

CAPTURE = SAMPLES / "seed_interleaved_two_calls.sse"
WHOLE = [("get_weather", {"city": "深圳"}), ("get_weather", {"city": "上海", "unit": '"u"'})]
SEED, ODDS, RUNS = 3, 0.5, 5


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-repeat-test-0123456789")


def compare(capsys, url: str, *extra: str) -> tuple[int, dict]:
    code = main(["compare", "--url", f"{url}/v1", "--models", "gpt-4o", "--prompt", "Weather?",
                 "--json", *extra])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def test_repeat_and_nonstream_report_the_rates_and_the_mismatch(capsys):
    # the server draws once per request, in arrival order; the five streamed
    # requests come first, so the draws that cut a stream are these
    draws = random.Random(SEED)
    cut = sum(draws.random() < ODDS for _ in range(RUNS))
    assert 0 < cut < RUNS  # the seed gives a flaky backend, not a dead or a sound one
    chaos = Chaos(drop_after=6, odds=ODDS, odds_seed=SEED)
    with start_server([str(CAPTURE)], chaos=chaos, pace=Pace("fixed", 0),
                      answer_nonstream=True) as server:
        code, doc = compare(capsys, server.url, "--repeat", str(RUNS), "--nonstream")
    assert code == 1
    assert len(doc["backends"]) == RUNS
    assert sorted(r["run"] for r in doc["backends"]) == list(range(RUNS))
    (rates,) = doc["repeats"]
    assert (rates["model"], rates["runs"], rates["answered"]) == ("gpt-4o", RUNS, RUNS - cut)
    # a cut after 6 of 9 events leaves both calls open: truncated, with no finish
    assert rates["diagnostics"]["args-truncated"] == cut
    assert rates["diagnostics"]["eof-without-finish"] == cut
    whole = "get_weather(city) ok; get_weather(city,unit) ok"
    assert {s["shape"]: s["runs"] for s in rates["shapes"]} == {
        whole: RUNS - cut,
        "get_weather(city) truncated; get_weather(…) truncated": cut,
    }
    assert [f["runs"] for f in rates["failures"]] == [cut]
    (nonstream,) = doc["nonstream"]
    assert nonstream["error"] is None
    assert [(c["name"], c["arguments"]) for c in nonstream["calls"]] == WHOLE
    cut_runs = sorted(r["run"] for r in doc["backends"] if r["error"] is not None)
    assert [r["run"] for r in nonstream["runs"]] == cut_runs
    for run in nonstream["runs"]:
        first, second = run["calls"]
        assert first["differs"] == ["arguments", "verdict"]
        assert first["changes"] == [
            {"path": "/city", "change": "changed", "a": "深", "b": "深圳"}
        ]
        assert second["status"] == {"a": "truncated", "b": "ok"}


def test_without_chaos_every_run_is_the_non_streamed_answer(capsys):
    with start_server([str(CAPTURE)], pace=Pace("fixed", 0), answer_nonstream=True) as server:
        code, doc = compare(capsys, server.url, "--repeat", "3", "--nonstream")
    assert code == 0
    (rates,) = doc["repeats"]
    assert rates["shapes"] == [{"shape": "get_weather(city) ok; get_weather(city,unit) ok",
                                "runs": 3}]
    assert doc["nonstream"][0]["runs"] == []


def test_the_text_report_says_the_rates_and_names_the_mismatched_call(capsys):
    chaos = Chaos(drop_after=6, odds=ODDS, odds_seed=SEED)
    with start_server([str(CAPTURE)], chaos=chaos, pace=Pace("fixed", 0),
                      answer_nonstream=True) as server:
        code = main(["compare", "--url", f"{server.url}/v1", "--models", "gpt-4o",
                     "--prompt", "Weather?", "--repeat", str(RUNS), "--nonstream"])
    out = capsys.readouterr().out
    assert code == 1
    draws = random.Random(SEED)
    cut = sum(draws.random() < ODDS for _ in range(RUNS))
    assert f"args-truncated: {cut}/{RUNS} runs" in out
    assert "differ from the non-streamed answer" in out
    assert '/city: "深" -> "深圳"' in out


@pytest.mark.parametrize(
    ("path", "fmt"),
    [("/v1/chat/completions", "openai-chat"), ("/v1/messages", "anthropic"),
     ("/v1/responses", "openai-responses")],
)
def test_serve_answers_stream_false_in_each_endpoints_shape_when_asked(path, fmt):
    with start_server([str(CAPTURE)], answer_nonstream=True) as server:
        answer = httpx.post(server.url + path, json={"model": "m", "stream": False},
                            trust_env=False, timeout=PATIENCE)
    assert answer.status_code == 200
    stream, _ = stream_from_bytes(answer.content, "answer")
    doc = build_report(stream)
    assert stream.format == fmt
    assert [(c["name"], c["arguments"], c["status"]) for c in doc["calls"]] == [
        (name, args, "ok") for name, args in WHOLE
    ]
    assert [c["id"] for c in doc["calls"]] == ["call_a1", "call_b2"]


def test_chaos_odds_spare_the_requests_the_draw_spares():
    draws = random.Random(SEED)
    hit = [draws.random() < ODDS for _ in range(6)]
    chaos = Chaos(http_error=503, odds=ODDS, odds_seed=SEED)
    with start_server([str(CAPTURE)], chaos=chaos, pace=Pace("fixed", 0)) as server:
        got = [
            httpx.post(server.url + "/v1/chat/completions", json={"stream": True},
                       trust_env=False, timeout=PATIENCE).status_code
            for _ in hit
        ]
    assert got == [503 if h else 200 for h in hit]


def test_a_call_shape_names_each_calls_keys_and_status():
    calls = [{"name": "f", "arguments": {"b": 1, "a": 2}, "status": "ok"},
             {"name": "g", "arguments": None, "status": "invalid"}]
    assert call_shape(calls) == "f(a,b) ok; g(…) invalid"
    assert call_shape([]) == "(no calls)"


def test_the_non_streamed_answer_carries_the_usage_as_the_capture_spelled_it():
    capture = SAMPLES / "native_anthropic_cumulative.sse"
    with start_server([str(capture)], answer_nonstream=True) as server:
        answer = httpx.post(server.url + "/v1/messages", json={"stream": False},
                            trust_env=False, timeout=PATIENCE).json()
    assert answer["usage"] == {"input_tokens": 310, "output_tokens": 40}
    # the last cumulative piece is the input, as check reads it
    assert answer["content"] == [{"type": "tool_use", "id": "toolu_01Cu", "name": "open_file",
                                  "input": {"path": "src/app.py", "line": 42}}]
