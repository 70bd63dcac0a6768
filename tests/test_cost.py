"""Cost that matches the bill: each format's usage read into one shape
(held to the providers' documented fields and to ``genai_prices``' own
reading), priced at the genai-prices table's rates (held to
``genai_prices.calc_price`` on the same usage), user prices over the
table's, ``--markup``, and the same figure in check, its text, live,
compare and the app.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from fraglens.reading.capture import load_stream, stream_from_bytes
from fraglens.report import cost as cost_module
from fraglens.report.cost import PriceOptions, UserPrices, cost_of, cost_text
from fraglens.report.document import build_report
from fraglens.report.usage import read_usage

from .conftest import PATIENCE, ROOT, SAMPLES

genai_prices = pytest.importorskip("genai_prices")

OPENAI = SAMPLES / "cost_openai_cached_reasoning.sse"
ANTHROPIC = SAMPLES / "cost_anthropic_cache_read_write.sse"
GEMINI = SAMPLES / "cost_gemini_thoughts.sse"


def fraglens(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fraglens", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=PATIENCE,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")))


def table(usage, model: str, provider: str | None) -> Decimal:
    """What genai-prices itself computes for the same usage."""
    counts = {"input_tokens": usage.input, "output_tokens": usage.output}
    if usage.cached:
        counts["cache_read_tokens"] = usage.cached
    if usage.cache_write:
        counts["cache_write_tokens"] = usage.cache_write
    calc = genai_prices.calc_price(genai_prices.Usage(**counts), model_ref=model,
                                   provider_id=provider)
    return calc.total_price


# -- usage, one shape --------------------------------------------------------------


def test_openai_counts_cached_input_and_reasoning_inside_the_totals():
    u = read_usage({"prompt_tokens": 12000, "completion_tokens": 900,
                    "prompt_tokens_details": {"cached_tokens": 8000, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": 640}})
    assert (u.input, u.cached, u.cache_write, u.output, u.reasoning) == (
        12000, 8000, None, 900, 640)


def test_anthropic_counts_the_cache_outside_input_tokens():
    u = read_usage({"input_tokens": 3000, "cache_read_input_tokens": 20000,
                    "cache_creation_input_tokens": 1500, "output_tokens": 420})
    assert (u.input, u.cached, u.cache_write, u.output) == (24500, 20000, 1500, 420)


def test_gemini_counts_thoughts_outside_the_candidates():
    u = read_usage({"promptTokenCount": 2500, "cachedContentTokenCount": 1000,
                    "candidatesTokenCount": 60, "thoughtsTokenCount": 1200})
    assert (u.input, u.cached, u.output, u.reasoning) == (2500, 1000, 1260, 1200)


def test_responses_deepseek_bedrock_ollama_cohere_and_realtime():
    responses = read_usage({"input_tokens": 500, "output_tokens": 80,
                            "input_tokens_details": {"cached_tokens": 300},
                            "output_tokens_details": {"reasoning_tokens": 50}})
    assert (responses.input, responses.cached, responses.output, responses.reasoning) == (
        500, 300, 80, 50)
    deepseek = read_usage({"prompt_tokens": 288, "completion_tokens": 61,
                           "prompt_cache_hit_tokens": 256, "prompt_cache_miss_tokens": 32})
    assert (deepseek.input, deepseek.cached) == (288, 256)
    bedrock = read_usage({"inputTokens": 100, "outputTokens": 20, "cacheReadInputTokens": 900,
                          "cacheWriteInputTokens": 50})
    assert (bedrock.input, bedrock.cached, bedrock.cache_write) == (1050, 900, 50)
    ollama = read_usage({"prompt_eval_count": 26, "eval_count": 298})
    assert (ollama.input, ollama.output) == (26, 298)
    cohere = read_usage({"billed_units": {"input_tokens": 31, "output_tokens": 12},
                         "tokens": {"input_tokens": 700, "output_tokens": 12}})
    assert (cohere.input, cohere.output) == (31, 12)  # what is billed
    realtime = read_usage({"input_tokens": 1000, "output_tokens": 200,
                           "input_token_details": {"cached_tokens": 400, "audio_tokens": 600},
                           "output_token_details": {"audio_tokens": 150}})
    assert (realtime.input, realtime.cached, realtime.audio_input, realtime.audio_output) == (
        1000, 400, 600, 150)


def test_xai_reasoning_beside_the_completion_is_told_by_its_total():
    u = read_usage({"prompt_tokens": 291, "completion_tokens": 31, "total_tokens": 498,
                    "completion_tokens_details": {"reasoning_tokens": 176}})
    assert (u.output, u.reasoning) == (207, 176)
    openai = read_usage({"prompt_tokens": 291, "completion_tokens": 207, "total_tokens": 498,
                         "completion_tokens_details": {"reasoning_tokens": 176}})
    assert (openai.output, openai.reasoning) == (207, 176)


@pytest.mark.parametrize(("provider", "flavor", "body"), [
    ("openai", "chat", {"model": "gpt-4o", "usage": {
        "prompt_tokens": 1200, "completion_tokens": 90,
        "prompt_tokens_details": {"cached_tokens": 1000},
        "completion_tokens_details": {"reasoning_tokens": 40}}}),
    ("openai", "responses", {"model": "gpt-4o", "usage": {
        "input_tokens": 1200, "output_tokens": 90,
        "input_tokens_details": {"cached_tokens": 1000},
        "output_tokens_details": {"reasoning_tokens": 40}}}),
    ("anthropic", "default", {"model": "claude-sonnet-4-5", "usage": {
        "input_tokens": 300, "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 100, "output_tokens": 42}}),
    ("google", "default", {"modelVersion": "gemini-2.5-flash", "usageMetadata": {
        "promptTokenCount": 2500, "cachedContentTokenCount": 1000,
        "candidatesTokenCount": 60, "thoughtsTokenCount": 1200}}),
], ids=["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_the_reading_agrees_with_genai_prices_own(provider, flavor, body):
    usage_key = "usageMetadata" if provider == "google" else "usage"
    ours = read_usage(body[usage_key])
    try:
        theirs = genai_prices.extract_usage(body, provider_id=provider, api_flavor=flavor).usage
    except ValueError as exc:  # an extractor this version of the table does not have
        pytest.skip(str(exc))
    assert ours.input == theirs.input_tokens
    assert ours.output == theirs.output_tokens
    assert (ours.cached or 0) == (theirs.cache_read_tokens or 0)
    assert (ours.cache_write or 0) == (theirs.cache_write_tokens or 0)


# -- the table's prices, to the cent's millionth -----------------------------------------


@pytest.mark.parametrize(("path", "model", "provider"), [
    (OPENAI, "o4-mini-2025-04-16", None),
    (ANTHROPIC, "claude-sonnet-4-5-20250929", "anthropic"),
    (GEMINI, "gemini-2.5-flash", "google"),
], ids=["openai", "anthropic", "gemini"])
def test_check_json_with_markup_is_genai_prices_times_the_markup(path, model, provider):
    doc = json.loads(fraglens("check", "--json", "--markup", "1.3", str(path)).stdout)
    usage = read_usage(doc["usage"]["reported"])
    expected = table(usage, model, provider) * Decimal("1.3")
    assert doc["cost"]["total"] == pytest.approx(float(expected), abs=1e-8)
    assert doc["cost"]["markup"] == 1.3 and doc["cost"]["currency"] == "USD"
    assert doc["cost"]["source"] == f"genai-prices {genai_prices.__version__}"
    assert sum(doc["cost"]["parts"].values()) == pytest.approx(doc["cost"]["total"], abs=1e-8)


def test_the_parts_are_each_count_at_its_rate():
    """Hand-checked against OpenAI's o4-mini price list: $1.10 input, $0.275
    cached input, $4.40 output per million tokens."""
    doc = build_report(load_stream(str(OPENAI))[0])
    parts = doc["cost"]["parts"]
    assert parts["input"] == pytest.approx(4000 * 1.10 / 1e6)
    assert parts["cached"] == pytest.approx(8000 * 0.275 / 1e6)
    assert parts["output"] == pytest.approx(260 * 4.40 / 1e6)
    assert parts["reasoning"] == pytest.approx(640 * 4.40 / 1e6)


def test_a_tiered_price_goes_by_the_whole_input():
    """Gemini 2.5 Pro's price doubles past 200k prompt tokens, for every token."""
    small = read_usage({"promptTokenCount": 100_000, "candidatesTokenCount": 1000})
    large = read_usage({"promptTokenCount": 250_000, "candidatesTokenCount": 1000})
    for usage in (small, large):
        found, _ = cost_of(usage, "gemini-2.5-pro", "gemini", PriceOptions())
        expected = table(usage, "gemini-2.5-pro", "google")
        assert found["total"] == pytest.approx(float(expected), abs=1e-8)


def test_user_prices_override_the_table():
    run = fraglens("check", "--json", "--price-in", "2", "--price-out", "8",
                   "--price-cached-in", "0.5", str(OPENAI))
    cost = json.loads(run.stdout)["cost"]
    assert cost["source"] == "user"
    assert cost["total"] == pytest.approx((4000 * 2 + 8000 * 0.5 + 900 * 8) / 1e6)


def test_a_prices_file_prices_its_models_and_leaves_the_rest_to_the_table(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"claude-sonnet-4-5-20250929": {
        "input": 1, "output": 2, "cached_input": 0.1, "cache_write": 1.25, "currency": "EUR"}}))
    mine = json.loads(fraglens("check", "--json", "--prices", str(prices), str(ANTHROPIC)).stdout)
    assert mine["cost"]["currency"] == "EUR" and mine["cost"]["source"] == "user"
    assert mine["cost"]["total"] == pytest.approx(
        (3000 * 1 + 20000 * 0.1 + 1500 * 1.25 + 420 * 2) / 1e6)
    other = json.loads(fraglens("check", "--json", "--prices", str(prices), str(OPENAI)).stdout)
    assert other["cost"]["source"].startswith("genai-prices")
    bad = fraglens("check", "--price-in", "2", str(OPENAI))
    assert bad.returncode == 2 and "--price-in and --price-out go together" in bad.stderr


def test_an_unknown_model_or_no_usage_is_null_and_says_why():
    usage = read_usage({"prompt_tokens": 10, "completion_tokens": 2})
    found, note = cost_of(usage, "no-such-model-xyz", "openai-chat", PriceOptions())
    assert found is None and "no price for the model 'no-such-model-xyz'" in note
    found, note = cost_of(None, "gpt-4o", "openai-chat", PriceOptions())
    assert found is None and note == "no cost: the stream reported no usage"
    found, note = cost_of(usage, None, "bedrock-converse", PriceOptions())
    assert found is None and "names the model" in note
    found, note = cost_of(usage, "llama3", "ollama", PriceOptions())
    assert found is None and "Ollama" in note
    found, _ = cost_of(usage, "llama3", "ollama", PriceOptions(user={"*": UserPrices(1, 1)}))
    assert found["total"] == pytest.approx(12 / 1e6)


def test_pricing_reaches_no_network(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing cached: the table is read

    def refuse(*args, **kwargs):
        raise AssertionError("pricing tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    usage = read_usage({"prompt_tokens": 1000, "completion_tokens": 100})
    found, _ = cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())
    assert found is not None and found["model"] == "gpt-4o"


def test_a_model_priced_once_is_read_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    usage = read_usage({"prompt_tokens": 1000, "completion_tokens": 100})
    first, _ = cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())
    assert (tmp_path / "fraglens" / "prices.json").exists()

    def no_table(*args, **kwargs):
        raise AssertionError("the table was read again")

    monkeypatch.setattr(genai_prices, "calc_price", no_table)
    cost_module._RESOLVED.clear()  # as in the next process: from the file
    again, _ = cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())
    assert again == first
    # a new day (or a new table) reads the table again
    monkeypatch.setattr(cost_module.time, "strftime", lambda fmt, when=None: "2099-01-01")
    with pytest.raises(AssertionError, match="read again"):
        cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())


# DeepSeek's table prices change with the hour (off-peak from 16:30 to 00:30 UTC)
_PEAK = 1764664568  # 2025-12-02 08:36 UTC: the deepseek sample's chunks' "created"
_OFF_PEAK = _PEAK + 9 * 3600  # 17:36 UTC, the same day


def test_a_price_that_changes_with_the_hour_is_the_one_in_force_when_the_stream_was_made(
        tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    usage = read_usage({"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000})
    expected = {}
    for at in (_PEAK, _OFF_PEAK):
        calc = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=1_000_000, output_tokens=1_000_000),
            model_ref="deepseek-reasoner", provider_id="deepseek",
            genai_request_timestamp=datetime.fromtimestamp(at, timezone.utc))
        expected[at] = float(calc.total_price)
    assert expected[_PEAK] > expected[_OFF_PEAK]  # the table still prices the hours apart
    for _ in range(2):  # the second time from the cache (in memory, then the file)
        for at in (_PEAK, _OFF_PEAK, _PEAK):
            cost, note = cost_of(usage, "deepseek-reasoner", "openai-chat",
                                 PriceOptions(provider="deepseek"), at=at)
            assert note is None and cost is not None
            assert cost["total"] == pytest.approx(expected[at]), at
        cost_module._RESOLVED.clear()


def test_the_report_prices_a_stream_at_its_chunks_created_time(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = (SAMPLES / "backend_deepseek_reasoning_call.sse").read_text(encoding="utf-8")
    assert f'"created":{_PEAK},' in text
    peak = build_report(stream_from_bytes(text.encode(), "peak.sse")[0])["cost"]
    late = text.replace(f'"created":{_PEAK},', f'"created":{_OFF_PEAK},')
    off_peak = build_report(stream_from_bytes(late.encode(), "off_peak.sse")[0])["cost"]
    assert peak["total"] > off_peak["total"] > 0


def test_a_process_reads_the_cache_file_once_per_model(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    usage = read_usage({"prompt_tokens": 1000, "completion_tokens": 100})
    first, _ = cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())

    def no_file(path):
        raise AssertionError("the cache file was read again")

    monkeypatch.setattr(cost_module, "_cache_read", no_file)
    again, _ = cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())
    assert again == first
    with pytest.raises(AssertionError, match="read again"):  # another model: the file
        cost_of(usage, "gpt-4o-mini", "openai-chat", PriceOptions())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))
    with pytest.raises(AssertionError, match="read again"):  # another cache: its file
        cost_of(usage, "gpt-4o", "openai-chat", PriceOptions())


def test_the_table_version_is_the_installed_one_read_without_importlib_metadata(tmp_path):
    from importlib.metadata import version

    cost_module.table_version.cache_clear()
    assert cost_module.table_version() == f"genai-prices {version('genai-prices')}"
    # a folder on the path with a newer dist-info first is the one found, as
    # importlib.metadata would find it
    info = tmp_path / "genai_prices-9.9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: genai-prices\n"
                                   "Version: 9.9.9\n\nVersion: 1.0 in the description\n")
    sys.path.insert(0, str(tmp_path))
    try:
        cost_module.table_version.cache_clear()
        assert cost_module.table_version() == "genai-prices 9.9.9"
    finally:
        sys.path.remove(str(tmp_path))
        cost_module.table_version.cache_clear()


# -- the same figure everywhere -------------------------------------------------------


def test_the_text_report_shows_the_figure_of_the_json(tmp_path):
    doc = json.loads(fraglens("check", "--json", str(ANTHROPIC)).stdout)
    text = fraglens("check", str(ANTHROPIC)).stdout
    assert f"{doc['cost']['total']:.6f} USD" in text
    assert "24,500 in (20,000 cached, 1,500 written to the cache) / 420 out" in text
    assert cost_text(doc["cost"]) in " ".join(text.split())


async def test_the_app_shows_the_figure_of_the_report():
    from fraglens.app.screens.calls import about
    from fraglens.app.steps import StepIndex

    stream, _ = load_stream(str(GEMINI))
    doc = build_report(stream)
    assert f"cost: {cost_text(doc['cost'])}" in about(StepIndex(stream))


async def test_live_and_compare_show_the_figure_of_the_report(tmp_path):
    from fraglens.net.compare import make_backends, run_backends
    from fraglens.net.request import build_spec
    from fraglens.net.serve import start_server

    with start_server([str(OPENAI)]) as up:
        spec, _ = build_spec(f"{up.url}/v1", model="o4-mini-2025-04-16", prompt="hi",
                             environ={})
        backends = make_backends(lambda m: spec, ["o4-mini-2025-04-16"], record_dir=tmp_path,
                                 timeout=PATIENCE, prices=PriceOptions(markup=1.3))
        await run_backends(backends)
    (backend,) = backends
    recorded = json.loads(fraglens("check", "--json", "--markup", "1.3",
                                   str(backend.recording)).stdout)
    assert backend.row["cost"] == recorded["cost"]
    assert backend.call.status.cost == recorded["cost"]["total"]
    assert f"cost {recorded['cost']['total']:.6f} USD" in backend.call.status.line()


def test_compare_ranks_backends_by_cost(tmp_path: Path):
    from fraglens.net.compare import compare_doc

    rows = [{"model": m, "error": None, "calls": [], "worst": None, "diagnostics": [],
             "chunking": None, "timing": None, "usage": None, "ok": True,
             "cost": None if c is None else {"total": c, "currency": "USD", "source": "user",
                                             "markup": 1.0, "parts": {}}}
            for m, c in (("a", 0.02), ("b", None), ("c", 0.01))]
    doc = compare_doc(rows)
    assert doc["by_cost"] == ["c", "a"]


def test_the_app_status_line_shows_the_figure_of_the_report():
    from fraglens.app.steps import StepIndex, verdict_summary

    stream, _ = load_stream(str(ANTHROPIC))
    doc = build_report(stream)
    assert verdict_summary(StepIndex(stream)).endswith(f"{doc['cost']['total']:.6f} USD")
    without, _ = load_stream(str(SAMPLES / "backend_gpt4o_parallel.sse"))  # no usage
    assert "USD" not in verdict_summary(StepIndex(without))
