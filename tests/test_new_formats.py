"""Bedrock, Ollama native and the AI SDK UI stream: what the samples do not show."""

from __future__ import annotations

import base64
import io
import json

import pytest

from fraglens.adapters import detect
from fraglens.adapters.ai_sdk import AISDKAdapter
from fraglens.adapters.bedrock import BedrockConverseAdapter, BedrockInvokeAdapter
from fraglens.adapters.ollama import OllamaAdapter
from fraglens.cli import main
from fraglens.engine.fragments import (
    ArgsFinal,
    ArgsParsed,
    Finish,
    StreamError,
    ToolDelta,
    ToolOutput,
)
from fraglens.framing.recording import RecordingWriter
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report

from .conftest import SAMPLES


def report(data: bytes) -> dict:
    return build_report(stream_from_bytes(data)[0])


def sse(*parts: dict) -> bytes:
    return b"".join(f"data: {json.dumps(p)}\n\n".encode() for p in parts) + b"data: [DONE]\n\n"


def test_each_format_is_detected_from_its_first_telling_event():
    assert detect({"role": "assistant"}, "messageStart") == "bedrock-converse"
    assert detect({"bytes": "e30="}, "chunk") == "bedrock-invoke"
    assert detect({"model": "m", "message": {"role": "assistant"}, "done": False}) == "ollama"
    assert detect({"type": "tool-input-delta", "toolCallId": "a", "inputTextDelta": ""}) == (
        "ai-sdk"
    )
    # generic names alone prove nothing
    assert detect({"type": "start"}) is None
    assert detect({"usage": {}}, "metadata") is None


def test_ai_sdk_restatement_is_compared_by_value_not_by_spelling():
    start = {"type": "tool-input-start", "toolCallId": "c", "toolName": "f"}
    delta = {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a": 1}'}
    same = {"type": "tool-input-available", "toolCallId": "c", "toolName": "f", "input": {"a": 1}}
    other = dict(same, input={"a": 2})
    assert [d["code"] for d in report(sse(start, delta, same))["diagnostics"]] == []
    doc = report(sse(start, delta, other))
    assert "args-multiple-values" in {d["code"] for d in doc["diagnostics"]}


@pytest.mark.parametrize(("streamed", "value", "restated"), [
    ('{"a":[1,2.5,"é"]}', {"a": [1, 2.5, "é"]}, False),  # the restatement itself: the same
    ('{"a":NaN}', {"a": float("nan")}, True),  # NaN equals nothing, spelled alike or not
    ('{"a":1.0}', {"a": 1}, False),  # spelled otherwise, the same value
])
def test_ai_sdk_streamed_text_that_is_the_restatement(streamed, value, restated):
    a = AISDKAdapter()
    a.feed({"type": "tool-input-start", "toolCallId": "c", "toolName": "f"})
    for piece in (streamed[:4], streamed[4:]):
        a.feed({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": piece})
    ops = a.feed({"type": "tool-input-available", "toolCallId": "c", "input": value})
    assert [type(op) for op in ops if type(op) is not ArgsParsed] == (
        [ArgsFinal] if restated else [])
    # the value the adapter weighed is handed on with the text it is of
    (parsed,) = [op for op in ops if type(op) is ArgsParsed]
    assert parsed.text == streamed and repr(parsed.value) == repr(json.loads(streamed))


def test_ai_sdk_calls_are_keyed_by_tool_call_id_and_outputs_land_on_their_call():
    a = AISDKAdapter()
    a.feed({"type": "tool-input-start", "toolCallId": "x", "toolName": "f"})
    a.feed({"type": "tool-input-start", "toolCallId": "y", "toolName": "g"})
    (op,) = a.feed({"type": "tool-input-delta", "toolCallId": "y", "inputTextDelta": "{}"})
    assert isinstance(op, ToolDelta) and op.index == 1
    (out,) = a.feed({"type": "tool-output-error", "toolCallId": "x", "errorText": "boom"})
    assert out == ToolOutput(0, 0, error="boom")
    assert a.feed({"type": "tool-output-available", "toolCallId": "nobody", "output": 1}) == []


def test_ai_sdk_finish_after_calls_is_tool_calls_and_length_stays_length():
    a = AISDKAdapter()
    a.feed({"type": "tool-input-start", "toolCallId": "x", "toolName": "f"})
    assert a.feed({"type": "finish", "finishReason": "stop"}) == [Finish(0, "tool_calls", "stop")]
    assert a.feed({"type": "finish", "finishReason": "length"}) == [Finish(0, "length", "length")]


def test_ai_sdk_input_without_deltas_is_the_arguments():
    a = AISDKAdapter()
    ops = a.feed({"type": "tool-input-available", "toolCallId": "x", "toolName": "f",
                  "input": {"q": "é"}})
    assert isinstance(ops[0], ToolDelta) and ops[0].name == "f"
    assert ops[1] == ArgsFinal(0, 0, '{"q":"é"}', id="x")


def test_ollama_length_and_object_arguments():
    o = OllamaAdapter()
    (call,) = o.feed({"message": {"tool_calls": [{"function": {"name": "f",
                                                               "arguments": {"b": [1]}}}]}})
    assert isinstance(call, ToolDelta) and call.args == '{"b":[1]}' and call.index == 0
    ops = o.feed({"message": {"content": ""}, "done": True, "done_reason": "length",
                  "eval_count": 3})
    assert Finish(0, "length", "length") in ops


def test_converse_exceptions_guardrails_and_wrapped_events():
    c = BedrockConverseAdapter()
    (err,) = c.feed({"message": "Rate exceeded"}, "throttlingException")
    assert err == StreamError("throttlingException: Rate exceeded")
    assert c.feed({"stopReason": "guardrail_intervened"}, "messageStop")[0] == Finish(
        0, "content_filter", "guardrail_intervened"
    )
    (op,) = c.feed({"contentBlockDelta": {"contentBlockIndex": 2,
                                          "delta": {"toolUse": {"input": "{"}}}})
    assert isinstance(op, ToolDelta) and op.index == 2 and op.args == "{"
    assert c.feed({"newEventType": {}}, "newEventType") == []  # unknown, not an error


def test_invoke_hands_chat_completions_chunks_to_that_adapter():
    inner = {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}]}}]}
    wrapped = {"bytes": base64.b64encode(json.dumps(inner).encode()).decode()}
    (op,) = BedrockInvokeAdapter().feed(wrapped, "chunk")
    assert isinstance(op, ToolDelta) and op.id == "c1"
    (bad,) = BedrockInvokeAdapter().feed({"bytes": "not base64!"}, "chunk")
    assert isinstance(bad, StreamError)


def _recorded(body: bytes) -> bytes:
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "https://bedrock-runtime.example/converse-stream"})
    writer.response(200, [("content-type", "application/vnd.amazon.eventstream")])
    half = len(body) // 2
    writer.chunk(0.5, body[:half])
    writer.chunk(0.9, body[half:])
    return out.getvalue()


def test_export_writes_a_recorded_binary_body_back_as_received(tmp_path, capsys):
    body = (SAMPLES / "bedrock_converse_parallel.eventstream").read_bytes()
    record, out = tmp_path / "rec.fraglens", tmp_path / "body.bin"
    record.write_bytes(_recorded(body))
    assert main(["export", str(record), "-o", str(out)]) == 0
    assert out.read_bytes() == body
    assert "eventstream, not SSE" in capsys.readouterr().err


def test_a_recorded_eventstream_body_is_read_from_the_recording():
    """A recording stores binary reads base64-encoded; the body is framed as the
    event stream it is, with each event timed by the read that completed it."""
    body = (SAMPLES / "bedrock_converse_parallel.eventstream").read_bytes()
    doc = report(_recorded(body))
    assert doc["framing"] == "recording" and doc["format"] == "bedrock-converse"
    assert [c["arguments"] for c in doc["calls"]] == [{"ticker": "AMZN"}, {"ticker": "MSFT"}]
    direct = report(body)
    assert [c["arguments_raw"] for c in doc["calls"]] == [
        c["arguments_raw"] for c in direct["calls"]
    ]


#: the spec of the samples that cannot carry a header comment (binary, NDJSON),
#: as sample_streams/README.md states it: (name, status) per call, and the codes
NO_HEADER_SPEC = {
    "bedrock_converse_text_and_tool.eventstream": ([("get_weather", "ok")],
                                                   {"text-with-tool-calls"}),
    "bedrock_converse_parallel.eventstream": ([("get_stock_price", "ok")] * 2, set()),
    "bedrock_converse_no_args.eventstream": ([("get_current_time", "empty")], {"args-empty"}),
    "bedrock_converse_truncated.eventstream": (
        [("create_issue", "truncated")],
        {"frame-truncated", "args-truncated", "eof-without-finish"},
    ),
    "bedrock_converse_exception.eventstream": ([("search_docs", "aborted")], {"error-event"}),
    "bedrock_converse_crc_damaged.eventstream": (
        [("get_airport_info", "ok")], {"frame-damaged", "text-with-tool-calls"},
    ),
    "bedrock_converse_padded.eventstream": ([("write_file", "ok")], set()),
    "bedrock_invoke_claude_parallel.eventstream": ([("get_weather", "ok")] * 2, set()),
    "bedrock_invoke_padded.eventstream": ([("run_query", "ok")], set()),
    "bedrock_invoke_throttled.eventstream": (
        [("read_file", "ok"), ("read_file", "aborted")], {"error-event"},
    ),
    "ollama_native_tool_call.ndjson": ([("get_weather", "ok")], {"id-missing"}),
    "ollama_native_parallel.ndjson": (
        [("get_weather", "ok"), ("get_weather", "ok"), ("get_time", "ok")], {"id-missing"},
    ),
    "ollama_native_no_args.ndjson": ([("list_open_tabs", "ok")], {"id-missing"}),
    "ollama_native_truncated.ndjson": ([], {"non-json-data", "eof-without-finish"}),
    "ollama_native_error.ndjson": ([("read_file", "ok")], {"error-event", "id-missing"}),
}


def test_every_sample_without_a_header_has_a_spec_here():
    files = {p.name for p in [*SAMPLES.glob("*.eventstream"), *SAMPLES.glob("*.ndjson")]}
    assert files == set(NO_HEADER_SPEC)


@pytest.mark.parametrize("name", sorted(NO_HEADER_SPEC))
def test_a_sample_without_a_header_does_what_the_readme_says(name):
    calls, codes = NO_HEADER_SPEC[name]
    doc = report((SAMPLES / name).read_bytes())
    assert [(c["name"], c["status"]) for c in doc["calls"]] == calls
    assert {d["code"] for d in doc["diagnostics"]} == codes


SHORTCUT_SAMPLES = sorted(
    p for p in SAMPLES.iterdir()
    if p.suffix in (".sse", ".ndjson", ".eventstream") and (
        "anthropic" in p.name or "responses" in p.name or "cohere" in p.name
        or p.suffix != ".sse" or "ai_sdk" in p.name
    )
)


@pytest.mark.parametrize("path", SHORTCUT_SAMPLES, ids=lambda p: p.name)
def test_the_continuation_shortcuts_change_nothing(path):
    """Each adapter's shortcut for its commonest event, and the envelopes on top
    of it (adapters/envelope.py), against the full path (a stream that keeps
    the naive log takes no shortcut)."""
    data = path.read_bytes()
    fast, _ = stream_from_bytes(data)
    slow, _ = stream_from_bytes(data, keep_naive=True)
    assert fast._continuation is not None or fast.adapter.continuation is None
    has_path = getattr(fast.adapter, "continuation_path", None) is not None
    assert (fast._envelopes is not None) == has_path
    assert slow._continuation is None and slow._envelopes is None
    assert build_report(fast) == build_report(slow)


def test_a_declined_shortcut_does_not_keep_an_ai_sdk_piece_twice():
    a = AISDKAdapter()
    a.feed({"type": "tool-input-start", "toolCallId": "c", "toolName": "f"})
    delta = {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": '{"a": 1}'}
    assert a.continuation(delta) == (0, 0, '{"a": 1}')
    a.feed(delta)  # as the stream does when the engine declines the shortcut
    done = {"type": "tool-input-available", "toolCallId": "c", "toolName": "f", "input": {"a": 1}}
    # equal by value: the piece was kept once (the text weighed is it alone)
    assert a.feed(done) == [ArgsParsed(0, 0, '{"a": 1}', {"a": 1}, True)]
