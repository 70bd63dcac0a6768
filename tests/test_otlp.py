"""``--otlp``: one OpenTelemetry span per exchange, sent to a real OTLP/HTTP
receiver on loopback and decoded there with OpenTelemetry's own protobuf
classes, from ``check``, ``proxy``, ``live`` and ``compare``.

The spans follow the GenAI semantic conventions (an inference span named
``chat MODEL``, ``gen_ai.*`` attributes) and carry what fraglens knows
(``fraglens.*``: each call's status, one event per diagnostic). A dead
collector costs one warning and changes nothing else.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import openai
import pytest

from fraglens.net.otlp import otlp_url

from .conftest import PATIENCE, ROOT, SAMPLES
from .otlp_receiver import Receiver
from .test_proxy import KEY, MESSAGES, wait_for
from .test_proxy_serve import CHAT, run_proxy, serve, stop, url_from

TRUNCATED = SAMPLES / "quirk_q22_finish_length_truncated.sse"
REPAIRED = SAMPLES / "quirk_args_repaired.sse"
OK = SAMPLES / "backend_glm_whole_call.sse"


def fraglens(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fraglens", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env=dict(env if env is not None else os.environ, PYTHONPATH=str(ROOT / "tui")),
    )


def check_json(path) -> dict:
    return json.loads(fraglens("check", "--json", str(path)).stdout)


def only_span(receiver: Receiver) -> dict:
    wait_for(lambda: receiver.spans, "a span at the receiver")
    assert len(receiver.spans) == 1, receiver.spans
    return receiver.spans[0]


@pytest.mark.parametrize("path", [TRUNCATED, REPAIRED, OK], ids=lambda p: p.stem)
def test_check_sends_one_conformant_span_with_each_calls_verdict(path):
    doc = check_json(path)
    with Receiver() as receiver:
        run = fraglens("check", "--json", "--otlp", receiver.url, str(path))
        span = only_span(receiver)
    assert json.loads(run.stdout) == doc  # the report itself is untouched
    attrs = span["attributes"]
    assert receiver.requests[0]["path"] == "/v1/traces"
    assert span["kind"] == 3  # SPAN_KIND_CLIENT
    assert span["resource"]["service.name"] == "fraglens check"
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.provider.name"] == "openai"
    assert span["name"] == f"chat {attrs['gen_ai.request.model']}"
    assert attrs["gen_ai.request.stream"] is True
    assert attrs["fraglens.format"] == doc["format"] and attrs["fraglens.end"] == doc["end"]
    assert attrs["fraglens.calls.status"] == [c["status"] for c in doc["calls"]]
    assert attrs["fraglens.fragments"] == sum(c["fragments"] for c in doc["calls"])
    finishes = [f for f in doc["finish_reasons"].values() if f]
    assert attrs.get("gen_ai.response.finish_reasons", []) == finishes
    # one span event per diagnostic, in the report's order, with its code and severity
    assert [e["attributes"]["fraglens.diagnostic.code"] for e in span["events"]] == [
        d["code"] for d in doc["diagnostics"]
    ]
    assert [e["attributes"]["fraglens.diagnostic.severity"] for e in span["events"]] == [
        d["severity"] for d in doc["diagnostics"]
    ]
    assert "gen_ai.output.messages" not in attrs  # content is opt-in


def test_the_verdicts_differ_as_the_calls_do():
    statuses = {}
    for path in (TRUNCATED, REPAIRED, OK):
        with Receiver() as receiver:
            fraglens("check", "--otlp", receiver.url, str(path))
            statuses[path.stem] = only_span(receiver)["attributes"]
    assert "truncated" in statuses[TRUNCATED.stem]["fraglens.calls.status"]
    assert statuses[REPAIRED.stem]["fraglens.calls.status"] == ["repaired", "repaired"]
    assert statuses[OK.stem]["fraglens.calls.status"] == ["ok"]
    assert statuses[OK.stem]["gen_ai.usage.input_tokens"] == 211
    assert statuses[OK.stem]["gen_ai.usage.output_tokens"] == 31
    assert statuses[OK.stem]["gen_ai.response.model"] == "glm-4"
    assert statuses[TRUNCATED.stem]["fraglens.worst_severity"] == "error"


def test_content_only_with_otlp_content():
    doc = check_json(OK)
    with Receiver() as receiver:
        fraglens("check", "--otlp", receiver.url, "--otlp-content", str(OK))
        span = only_span(receiver)
    messages = json.loads(span["attributes"]["gen_ai.output.messages"])
    (call,) = [p for p in messages[0]["parts"] if p["type"] == "tool_call"]
    assert call == {"type": "tool_call", "id": doc["calls"][0]["id"],
                    "name": doc["calls"][0]["name"], "arguments": doc["calls"][0]["arguments"]}
    assert messages[0]["finish_reason"] == "tool_calls"


def test_the_environment_endpoint_is_honoured():
    with Receiver() as receiver:
        env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url)
        fraglens("check", str(OK), env=env)
        assert only_span(receiver)["attributes"]["fraglens.calls.status"] == ["ok"]
    assert otlp_url("http://c:4318/") == "http://c:4318/v1/traces"
    assert otlp_url("http://c:4318/v1/traces") == "http://c:4318/v1/traces"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing listens there


def test_a_dead_collector_is_one_warning_and_nothing_else():
    plain = fraglens("check", "--json", str(REPAIRED))
    dead = fraglens("check", "--json", "--otlp", f"http://127.0.0.1:{_dead_port()}",
                    str(REPAIRED))
    assert dead.stdout == plain.stdout and dead.returncode == plain.returncode == 1
    warnings = [line for line in dead.stderr.splitlines() if line]
    assert len(warnings) == 1 and "could not be sent to the OTLP collector" in warnings[0]
    assert "Traceback" not in dead.stderr


def test_a_collector_that_never_answers_does_not_hold_the_batch():
    """A listener that accepts and never replies: each capture is still
    printed, and the run ends (the SDK's export is bounded, and after one
    failed batch none waits on the collector again)."""
    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(64)
        url = f"http://127.0.0.1:{hole.getsockname()[1]}"
        run = fraglens("check", "--jsonl", "--jobs", "1", "--otlp", url, str(OK), str(REPAIRED))
    assert len(run.stdout.splitlines()) == 2
    assert run.stderr.count("could not be sent") == 1


def test_the_jsonl_batch_sends_one_span_per_capture():
    with Receiver() as receiver:
        run = fraglens("check", "--jsonl", "--jobs", "2", "--otlp", receiver.url,
                       str(TRUNCATED), str(REPAIRED), str(OK))
        wait_for(lambda: len(receiver.spans) == 3, "three spans")
    files = [json.loads(line)["file"] for line in run.stdout.splitlines()]
    assert files == [str(TRUNCATED), str(REPAIRED), str(OK)]
    assert sorted(s["attributes"]["fraglens.calls.status"][0] for s in receiver.spans) == [
        "ok", "repaired", "truncated"]


def test_without_the_flag_or_the_environment_nothing_is_sent():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with Receiver() as receiver:
        fraglens("check", str(OK), env=env)
    assert receiver.spans == [] and receiver.requests == []


def test_proxy_sends_one_span_per_flow_and_no_secret():
    with Receiver() as receiver, serve(CHAT) as up:
        proc = run_proxy("--upstream", up.url + "/v1", "--port", "0", "--headless",
                         "--otlp", receiver.url, "--otlp-content")
        try:
            base = url_from(proc)
            client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)
            list(client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True))
            list(client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True))
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=PATIENCE)
        finally:
            stop(proc)
        wait_for(lambda: len(receiver.spans) == 2, "a span per flow")
    for span in receiver.spans:
        attrs = span["attributes"]
        assert span["name"] == "chat gpt-4o" and attrs["gen_ai.request.model"] == "gpt-4o"
        assert attrs["fraglens.calls.status"] == ["ok", "ok"]
        assert span["resource"]["service.name"] == "fraglens proxy"
        assert span["end"] >= span["start"] > 0
    everything = json.dumps(receiver.spans) + json.dumps(receiver.requests)
    assert KEY not in everything


def test_live_sends_the_calls_span():
    with Receiver() as receiver, serve(CHAT) as up:
        run = fraglens("live", "--url", up.url + "/v1", "--model", "gpt-4o", "--prompt", "hi",
                       "--json", "--otlp", receiver.url,
                       env=dict(os.environ, OPENAI_API_KEY=KEY))
        span = only_span(receiver)
    doc = json.loads(run.stdout)
    assert span["resource"]["service.name"] == "fraglens live"
    assert span["attributes"]["fraglens.calls.status"] == [c["status"] for c in doc["calls"]]
    assert span["attributes"]["gen_ai.request.model"] == "gpt-4o"
    assert KEY not in json.dumps(receiver.spans) + json.dumps(receiver.requests)


def test_compare_sends_a_span_per_backend():
    with Receiver() as receiver, serve(CHAT) as up:
        run = fraglens("compare", "--url", up.url + "/v1", "--models", "gpt-4o,gpt-4o-mini",
                       "--prompt", "hi", "--json", "--otlp", receiver.url,
                       env=dict(os.environ, OPENAI_API_KEY=KEY))
        wait_for(lambda: len(receiver.spans) == 2, "a span per backend")
    assert run.returncode in (0, 1), run.stderr
    assert sorted(s["attributes"]["gen_ai.request.model"] for s in receiver.spans) == [
        "gpt-4o", "gpt-4o-mini"]


def test_export_does_not_block_the_caller():
    """``export`` only queues: with a collector that accepts connections and
    never answers, fifty exports still return (the SDK's thread sends, and
    waits). PATIENCE only bounds a hang."""
    from fraglens.net.otlp import Exporter

    done = threading.Event()
    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(8)
        exporter = Exporter(f"http://127.0.0.1:{hole.getsockname()[1]}/v1/traces", "t",
                            warn=lambda _: None)

        def produce() -> None:
            for _ in range(50):
                exporter.export({"name": "chat m", "attributes": {"a": 1}, "events": []})
            done.set()

        threading.Thread(target=produce, daemon=True).start()
        assert done.wait(PATIENCE), "export waited on a collector that never answers"
        exporter.close()
    assert exporter.dropped > 0  # nothing was delivered: the spans were dropped, not held
