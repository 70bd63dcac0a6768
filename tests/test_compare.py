"""fraglens compare: one request to five backends served by one ``fraglens serve`` on loopback.

The captures (tests/data/compare, their README says why each is as it is)
are one ``get_weather`` call as five backends send it: tiny fragments, the
whole call in one chunk, ids and names re-sent, cut off by the token limit,
and an HTTP 429. Expected numbers are counted by hand from the files.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import httpx
import pytest

from fraglens.cli import main
from fraglens.net.compare import agreement, recording_path
from fraglens.net.replay import Chaos, Pace, load_source
from fraglens.net.serve import start_server
from fraglens.reading.capture import load_stream
from fraglens.report.chunking import chunking_profile

from .conftest import PATIENCE, ROOT

DATA = ROOT / "tests" / "data" / "compare"
CAPTURES = [
    DATA / "tiny_fragments.sse",
    DATA / "whole_call.sse",
    DATA / "resent_ids.sse",
    DATA / "truncated.sse",
    DATA / "http_429.jsonl",
]
MODELS = ["claude-sonnet-4-5", "glm-4.6", "deepseek-chat", "qwen3-coder", "kimi-k2"]
WEATHER = {"city": "São Paulo", "query": 'rain "today" \U0001f327'}
KEY = "sk-compare-test-0123456789"


@pytest.fixture(scope="module")
def server():
    with start_server([str(p) for p in CAPTURES], pace=Pace("fixed", 0)) as handle:
        yield handle


def compare(capsys, server, *extra: str) -> tuple[int, str, str]:
    code = main(["compare", "--url", f"{server.url}/v1", "--prompt", "Weather?", *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


# -- the chunking profile ---------------------------------------------------------------


def profile(name: str) -> dict:
    stream, _ = load_stream(str(DATA / name))
    return chunking_profile(stream)


def test_tiny_fragments_profile_counts_every_cut():
    p = profile("tiny_fragments.sse")
    # the empty first fragment (id and name) counts, as check counts it, then 22 pieces
    assert p["fragments"] == 23
    assert p["fragment_chars"] == {"min": 0, "median": 3, "max": 5}
    # 18 of the 22 cuts fall inside a string (keys included); 6 of them inside an
    # escape: after the two backslashes of \" and four times inside \uXXXX
    assert (p["mid_string"], p["mid_escape"]) == (18, 6)
    # one cut between \ud83c and \udf27: the halves of one character
    assert p["mid_utf8"] == 1
    assert (p["whole_in_one_chunk"], p["ids_resent"], p["names_resent"]) == (0, 0, 0)


def test_a_whole_call_in_one_chunk_is_one_fragment_and_counted_whole():
    p = profile("whole_call.sse")
    assert p["fragments"] == 1 and p["fragment_chars"]["median"] == 61
    assert p["whole_in_one_chunk"] == 1
    assert p["mid_string"] == 0


def test_resent_ids_and_names_are_counted_per_call():
    p = profile("resent_ids.sse")
    assert (p["ids_resent"], p["names_resent"]) == (1, 1)
    assert p["fragments"] == 6  # 61 characters, 12 at a time


def test_a_truncated_call_does_not_count_its_last_fragment_as_a_cut():
    p = profile("truncated.sse")
    # 7 fragments, the last one ends inside "query": that is the truncation, not a cut;
    # of the six cuts before it, four fall inside a string
    assert p["fragments"] == 7
    assert p["mid_string"] == 4
    assert p["whole_in_one_chunk"] == 0  # one chunk or not, a truncated call is not whole


def test_a_stream_without_calls_has_an_empty_profile(capsys):
    p = profile("http_429.jsonl")
    assert (p["calls"], p["fragments"]) == (0, 0)
    assert p["fragment_chars"] == {"min": None, "median": None, "max": None}
    main(["check", "--chunking", str(DATA / "http_429.jsonl")])
    assert "chunking: 0 fragments over 0 calls, -/-/- chars" in capsys.readouterr().out


def test_a_raw_surrogate_split_is_a_mid_character_cut(samples):
    stream, _ = load_stream(str(samples / "quirk_q42_surrogate_split_raw.sse"))
    assert chunking_profile(stream)["mid_utf8"] == 1


def test_check_chunking_adds_the_profile_to_json_and_text(capsys):
    path = str(DATA / "tiny_fragments.sse")
    assert main(["check", "--json", "--chunking", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chunking"] == profile("tiny_fragments.sse")
    assert main(["check", "--chunking", path]) == 0
    out = capsys.readouterr().out
    assert "chunking: 23 fragments over 1 call, 0/3/5 chars" in out
    assert main(["check", "--json", path]) == 0
    assert "chunking" not in json.loads(capsys.readouterr().out)


# -- serve by model -------------------------------------------------------------------------


def test_serve_answers_with_the_capture_of_the_requested_model(server):
    with httpx.Client(base_url=server.url, timeout=PATIENCE) as client:
        for _ in range(2):  # every time, not by rotation
            r = client.post("/v1/chat/completions", json={"model": "glm-4.6", "stream": True})
            assert r.headers["x-fraglens-capture"] == "whole_call.sse"
        r = client.post("/v1/chat/completions", json={"model": "kimi-k2"})
        assert r.status_code == 429
        # a model no capture names: round-robin over the chat captures, as before
        names = {
            client.post("/v1/chat/completions", json={"model": "nobody"}).headers[
                "x-fraglens-capture"
            ]
            for _ in range(5)
        }
        assert len(names) == 5
        listed = client.get("/v1/models").json()["data"]
    # the SSE captures name their model in their chunks, the recording in its request
    assert sorted(m["id"] for m in listed) == sorted(MODELS)


@pytest.mark.parametrize(
    ("sample", "model"),
    [
        ("native_anthropic_two_tools.sse", "claude-sonnet-4-5-20250929"),  # message.model
        ("native_responses_function_calls.sse", "gpt-4.1-2025-04-14"),  # response.model
        ("native_gemini_two_calls_crlf.sse", "gemini-2.5-flash"),  # modelVersion
    ],
)
def test_a_capture_without_a_recorded_request_is_known_by_the_model_its_chunks_name(
    samples, sample, model
):
    assert load_source(str(samples / sample)).model == model


# -- compare, end to end ----------------------------------------------------------------------


def test_compare_json_has_a_row_per_backend_and_the_differences(capsys, server, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"claude-sonnet-4-5": {"input": 3, "output": 15}}))
    code, out, _ = compare(
        capsys, server, "--models", ",".join(MODELS), "--json",
        "--record-dir", str(tmp_path / "rec"), "--prices", str(prices),
        "--price-in", "1", "--price-out", "2", "--markup", "1.3",
    )  # fmt: skip
    assert code == 1  # a backend failed, a call is truncated, and they disagree
    doc = json.loads(out)
    rows = {r["model"]: r for r in doc["backends"]}
    assert [r["model"] for r in doc["backends"]] == MODELS  # the order asked, not finished
    for model in MODELS[:3]:
        row = rows[model]
        assert row["error"] is None and row["ok"]
        assert [(c["name"], c["arguments"], c["status"]) for c in row["calls"]] == [
            ("get_weather", WEATHER, "ok")
        ]
    assert rows["qwen3-coder"]["calls"][0]["status"] == "truncated"
    assert {d["code"] for d in rows["qwen3-coder"]["diagnostics"]} >= {"args-truncated"}
    kimi = rows["kimi-k2"]
    assert kimi["error"].startswith("HTTP 429") and "Rate limit reached" in kimi["error"]
    assert kimi["calls"] == [] and not kimi["ok"] and kimi["http_status"] == 429
    # the chunking profile is the one check gives for the same capture
    assert rows["claude-sonnet-4-5"]["chunking"] == profile("tiny_fragments.sse")
    assert rows["glm-4.6"]["chunking"]["whole_in_one_chunk"] == 1
    # usage 812 in / 41 out: at 3 and 15 per million, x1.3 = 0.0039663
    assert rows["claude-sonnet-4-5"]["usage"]["reported"]["prompt_tokens"] == 812
    assert rows["claude-sonnet-4-5"]["usage"]["input"] == 812
    assert rows["claude-sonnet-4-5"]["cost"]["total"] == pytest.approx(
        (812 * 3 + 41 * 15) / 1e6 * 1.3)
    # no entry in --prices: --price-in/--price-out apply
    assert rows["glm-4.6"]["cost"]["total"] == pytest.approx((812 * 1 + 41 * 2) / 1e6 * 1.3)
    assert rows["glm-4.6"]["cost"]["source"] == "user"
    assert kimi["cost"] is None
    # ranked by cost, cheapest first, naming the prices used
    ranked = [m for m in doc["by_cost"]]
    assert ranked.index("glm-4.6") < ranked.index("claude-sonnet-4-5")
    assert doc["prices"] == ["user"]
    # timing from the events' receive times: the tool call opens after the first event
    for model in MODELS[:4]:
        t = rows[model]["timing"]
        assert 0 <= t["first_byte_ms"] <= t["first_event_ms"]
        assert t["first_event_ms"] <= t["first_tool_byte_ms"] <= t["duration_ms"]
        assert [c["call"] for c in t["calls"]] == [0]
    assert kimi["timing"]["first_tool_byte_ms"] is None  # an error body: no tool byte
    # the four that answered disagree on call 0, in "query" only; the failed one is not in it
    assert doc["agree"] is False
    [difference] = doc["differences"]
    assert (difference["call"], difference["what"], difference["keys"]) == (
        0, "arguments", ["query"],
    )  # fmt: skip
    assert set(difference["backends"]) == set(MODELS[:4])
    assert difference["backends"]["qwen3-coder"]["arguments"]["query"] == 'rain "tod'


def test_a_backends_recording_is_named_for_its_model_and_run():
    """``.fraglens``, not ``.jsonl``: a recording is written as version 3, which is
    not JSON Lines."""
    where = Path("runs")
    assert recording_path(where, "qwen/qwen3:8b") == where / "qwen_qwen3_8b.fraglens"
    assert recording_path(where, "glm-4.6", 0) == where / "glm-4.6.1.fraglens"
    assert recording_path(where, "glm-4.6", 1) == where / "glm-4.6.2.fraglens"
    assert recording_path(where, "...") == where / "model.fraglens"


def test_compare_records_each_backend_and_check_reads_the_recording_alike(capsys, server, tmp_path):
    code, out, _ = compare(
        capsys, server, "--models", ",".join(MODELS), "--json", "--record-dir", str(tmp_path)
    )
    rows = json.loads(out)["backends"]
    for row in rows:
        path = Path(row["recording"])
        assert path == recording_path(tmp_path, row["model"]) and path.exists()
        assert KEY not in path.read_text(encoding="utf-8")  # the key never reaches a file
        if row["error"] is None:
            assert main(["check", "--json", str(path)]) in (0, 1)
            checked = json.loads(capsys.readouterr().out)
            assert checked["calls"] == row["calls"]
            assert checked["diagnostics"] == row["diagnostics"]


def test_backends_that_agree_and_are_ok_exit_0(capsys, server):
    code, out, _ = compare(capsys, server, "--models", "glm-4.6,deepseek-chat,claude-sonnet-4-5")
    assert code == 0
    assert "the 3 backends that answered agree" in out


def test_the_text_report_is_one_table_then_the_differences(capsys, server):
    code, out, err = compare(capsys, server, "--models", ",".join(MODELS))
    assert code == 1
    lines = out.splitlines()
    table_end = next(i for i, line in enumerate(lines) if line.startswith("└"))
    rows = [line for line in lines[:table_end] if line.startswith("│")]
    first = {line.split("│")[1].strip(): line for line in rows if line.split("│")[1].strip()}
    assert list(first) == MODELS
    cells = [c.strip() for c in first["glm-4.6"].split("│")[1:-1]]
    assert cells[:3] == ["glm-4.6", "1", "ok"]
    assert cells[4:6] == ["1", "61"]  # one fragment of 61 characters
    assert "failed" in first["kimi-k2"]
    after = "\n".join(lines[table_end:])
    assert "kimi-k2 failed: HTTP 429" in after
    assert "call 0: arguments differ (keys: query)" in after
    assert 'qwen3-coder: get_weather {"city": "São Paulo", "query": "rain \\"tod"} (truncated)' in (
        after
    )
    assert "fraglens: compare: kimi-k2: HTTP 429" in err  # progress, as each one finishes


def test_a_dropped_connection_is_a_row_with_its_error(capsys):
    # the server closes every connection after 3 events: the 2-event GLM answer is
    # whole, the 27-event one is cut off mid-call, and the run goes on
    captures = [str(DATA / "whole_call.sse"), str(DATA / "tiny_fragments.sse")]
    with start_server(captures, pace=Pace("fixed", 0), chaos=Chaos(drop_after=3)) as handle:
        code, out, _ = compare(capsys, handle, "--models", "glm-4.6,claude-sonnet-4-5", "--json")
    assert code == 1
    glm, claude = json.loads(out)["backends"]
    assert glm["error"] is None and glm["ok"]
    assert "closed the connection mid-stream" in claude["error"]
    # what arrived before the cut is still reported: the call, cut off
    assert [c["status"] for c in claude["calls"]] == ["truncated"]


def test_the_help_example_against_serve_runs(capsys, server):
    """The last example of `fraglens compare --help`, against the test server."""
    from fraglens.cli.compare import EXAMPLES

    line = next(x for x in EXAMPLES.splitlines() if "compare --url http://127.0.0.1:8765" in x)
    argv = shlex.split(line)[1:]
    argv[argv.index("--url") + 1] = f"{server.url}/v1"
    code = main(argv)
    doc = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in doc["backends"]] == ["glm-4.6", "qwen3-coder"]
    assert code == 1  # qwen3-coder's call is truncated


def test_no_backend_reachable_is_exit_2(capsys):
    with start_server([str(CAPTURES[1])]) as handle:
        url = handle.url
    code = main(["compare", "--url", f"{url}/v1", "--models", "a,b", "--prompt", "hi", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2
    assert all("connection refused" in r["error"] for r in doc["backends"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--models", "a,a"], "'a' is listed twice"),
        (["--models", " , "], "at least one model"),
        (["--models", "a", "--prompt", "hi", "--concurrency", "0"], "--concurrency"),
        (["--models", "a"], "say what to send"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(capsys, extra, message):
    code = main(["compare", "--url", "http://127.0.0.1:9/v1", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_an_unwritable_record_dir_is_one_line_and_exit_2(capsys, tmp_path):
    taken = tmp_path / "a-file"
    taken.write_text("")
    code = main(["compare", "--url", "http://127.0.0.1:9/v1", "--models", "m", "--prompt", "hi",
                 "--record-dir", str(taken)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"fraglens: error: --record-dir {taken}")


def test_a_bad_prices_file_is_one_line_and_exit_2(capsys, tmp_path):
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"m": {"input": "cheap", "output": 1}}))
    code = main(["compare", "--url", "http://127.0.0.1:9/v1", "--models", "m", "--prompt", "hi",
                 "--prices", str(prices)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "a price must be a number" in err and "Traceback" not in err


# -- agreement --------------------------------------------------------------------------------


def row(model: str, *calls: tuple[str, object, str], error: str | None = None) -> dict:
    return {
        "model": model,
        "error": error,
        "calls": [{"name": n, "arguments": a, "status": s} for n, a, s in calls],
    }


def test_equal_arguments_agree_whatever_their_key_order():
    agree, differences = agreement(
        [row("a", ("f", {"x": 1, "y": 2}, "ok")), row("b", ("f", {"y": 2, "x": 1}, "ok"))]
    )
    assert agree and differences == []


def test_a_call_one_backend_did_not_make_is_missing():
    agree, [d] = agreement([row("a", ("f", {}, "ok"), ("g", {}, "ok")), row("b", ("f", {}, "ok"))])
    assert not agree
    assert (d["call"], d["what"], d["backends"]["b"]) == (1, "missing", None)


def test_another_tool_name_is_a_name_difference():
    _, [d] = agreement([row("a", ("f", {}, "ok")), row("b", ("g", {}, "ok"))])
    assert d["what"] == "name"


def test_the_same_value_not_ok_everywhere_is_a_status_difference():
    _, [d] = agreement([row("a", ("f", {"x": 1}, "ok")), row("b", ("f", {"x": 1}, "repaired"))])
    assert d["what"] == "status"


def test_a_failed_backend_is_left_out_of_the_agreement():
    agree, differences = agreement(
        [row("a", ("f", {}, "ok")), row("b", ("f", {}, "ok")), row("c", error="HTTP 500")]
    )
    assert agree and differences == []


def test_a_key_only_one_backend_sends_is_a_differing_key():
    _, [d] = agreement(
        [row("a", ("f", {"x": 1}, "ok")), row("b", ("f", {"x": 1, "z": None}, "ok"))]
    )
    assert d["keys"] == ["z"]
