"""Tool data an adapter cannot read is named, in every format, never dropped silently.

Each case feeds a whole small stream through the loader (as ``check`` reads
it) with one part of the wrong shape, or one event of a type the format does
not define carrying tool data, and requires a ``chunk-unreadable`` finding
that quotes the wire value, at the event that carried it, whose raw text is
kept in the stream view. The well-formed parts around it are read as before,
and a part that carries no tool data raises nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report


def _report(events: list[Any], fmt: str | None = None) -> tuple[dict, Any]:
    """``(check --json document, stream)`` for SSE events: payloads, or
    ``(event name, payload)`` pairs."""
    body = ""
    for ev in events:
        name, payload = ev if isinstance(ev, tuple) else (None, ev)
        body += (f"event: {name}\n" if name else "") + f"data: {json.dumps(payload)}\n\n"
    stream, _ = stream_from_bytes(body.encode(), format=fmt)
    return build_report(stream), stream


def _unreadable(doc: dict, stream: Any) -> list[dict]:
    found = [d for d in doc["diagnostics"] if d["code"] == "chunk-unreadable"]
    for d in found:
        # the chunk that carried it is kept whole, in the stream view
        assert stream.events[d["event"]].data
    return found


def _one(doc: dict, stream: Any, *said: str) -> dict:
    found = _unreadable(doc, stream)
    assert len(found) == 1, [d["message"] for d in found]
    for part in said:
        assert part in found[0]["message"], found[0]["message"]
    return found[0]


# -- Gemini and Vertex ---------------------------------------------------------------


def _gemini(*parts: dict, finish: str = "STOP") -> list[dict]:
    chunks: list[dict] = [{"candidates": [{"content": {"role": "model", "parts": [p]}}]}
                          for p in parts]
    chunks.append({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                   "finishReason": finish}]})
    return chunks


def _vertex_open(name: str = "f") -> dict:
    return {"functionCall": {"name": name, "willContinue": True}}


def _vertex(*entries: dict, more: bool = True) -> dict:
    return {"functionCall": {"partialArgs": list(entries), "willContinue": more}}


def _sv(path: str, value: str, more: bool = False) -> dict:
    entry: dict[str, Any] = {"jsonPath": path, "stringValue": value}
    if more:
        entry["willContinue"] = True
    return entry


def test_gemini_a_function_call_that_is_no_object_is_named():
    doc, stream = _report(_gemini({"functionCall": "get_weather(city='Oslo')"}))
    found = _one(doc, stream, "functionCall is not an object", "get_weather(city='Oslo')")
    assert found["event"] == 0
    assert doc["calls"] == []


def test_gemini_a_part_under_an_unknown_key_holding_args_is_named():
    doc, stream = _report(_gemini(
        {"functionCall": {"name": "a", "args": {"x": 1}}},
        {"function_call": {"name": "b", "args": {"city": "Oslo"}}},
    ))
    _one(doc, stream, "'function_call' carries args", '{"city": "Oslo"}')
    assert [c["name"] for c in doc["calls"]] == ["a"]


def test_gemini_parts_that_carry_no_arguments_raise_nothing():
    doc, stream = _report(_gemini(
        {"text": "thinking", "thought": True, "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "c2ln"},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
    ))
    assert _unreadable(doc, stream) == []


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"jsonPath": "city", "stringValue": "x"}, "no readable jsonPath"),
        ({"jsonPath": "$.unit", "colourValue": "red"}, "no readable value"),
        ("$.unit=c", "not an object"),
        ({"jsonPath": "$.city.name", "stringValue": "x"}, "contradicts the paths before it"),
    ],
    ids=["path", "value", "entry", "contradiction"],
)
def test_vertex_a_partial_args_entry_that_cannot_be_placed_is_named(bad, said):
    doc, stream = _report(_gemini(
        _vertex_open(),
        _vertex(_sv("$.city", "Oslo")),
        _vertex(bad),
        {"functionCall": {}},
    ))
    found = _one(doc, stream, "partialArgs[0]", said)
    assert found["event"] == 2
    [call] = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", {"city": "Oslo"})


def test_vertex_args_on_a_part_that_continues_the_stream_are_named():
    doc, stream = _report(_gemini(
        _vertex_open(),
        {"functionCall": {"partialArgs": [_sv("$.city", "Oslo")], "args": {"city": "Bergen"},
                          "willContinue": True}},
        {"functionCall": {}},
    ))
    _one(doc, stream, "functionCall.args on a part that continues", "Bergen")
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


def test_vertex_partial_args_that_is_no_array_is_named():
    doc, stream = _report(_gemini(
        _vertex_open(),
        {"functionCall": {"partialArgs": {"jsonPath": "$.city", "stringValue": "Oslo"},
                          "willContinue": True}},
        {"functionCall": {}},
    ))
    _one(doc, stream, "partialArgs is not an array", "Oslo")


@pytest.mark.parametrize(
    ("second", "first", "kept"),
    [
        (_sv("$.city", "Bergen"), '"Oslo"', "Bergen"),  # a closed string given again
        ({"jsonPath": "$.city", "numberValue": 7}, '"Oslo"', 7),
    ],
    ids=["string", "number"],
)
def test_vertex_a_path_given_a_second_value_is_named_with_the_one_replaced(second, first, kept):
    doc, _ = _report(_gemini(
        _vertex_open(),
        _vertex(_sv("$.city", "Os", more=True)),
        _vertex(_sv("$.city", "lo")),
        _vertex(second),
        {"functionCall": {}},
    ))
    [found] = [d for d in doc["diagnostics"] if d["code"] == "args-multiple-values"]
    assert found["event"] == 3
    assert "$.city was given a second value" in found["message"]
    assert f"the first, {first}, was replaced" in found["message"]
    assert doc["calls"][0]["arguments"] == {"city": kept}


def test_vertex_a_well_formed_streamed_call_raises_nothing():
    doc, stream = _report(_gemini(
        _vertex_open(),
        _vertex(_sv("$.city", "Os", more=True)),
        _vertex(_sv("$.city", "lo", more=True), _sv("$.city", "")),
        {"functionCall": {}},
    ))
    assert _unreadable(doc, stream) == []
    assert not [d for d in doc["diagnostics"] if d["code"] == "args-multiple-values"]
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


# -- Cohere --------------------------------------------------------------------------


def _cohere(*middle: dict) -> list[tuple[str, dict]]:
    start = {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {
        "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}}}}
    delta = {"type": "tool-call-delta", "index": 0, "delta": {"message": {"tool_calls": {
        "function": {"arguments": '{"city":"Oslo"}'}}}}}
    end = {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}}
    return [(e["type"], e) for e in (start, delta, *middle, end)]


def _cohere_delta(tool_calls: Any, index: Any = 0, kind: str = "tool-call-delta") -> dict:
    return {"type": kind, "index": index, "delta": {"message": {"tool_calls": tool_calls}}}


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (_cohere_delta('f({"a":1})'), 'neither an object nor an array: ignored (the wire has "f'),
        (_cohere_delta(["f()"]), 'tool_calls[0] is not an object: ignored (the wire has "f()")'),
        (_cohere_delta({"function": "f()"}), 'function is not an object: ignored (the wire '
                                             'has "f()")'),
        (_cohere_delta({"function": {"arguments": ""}}, index="abc"),
         'index is not a whole number: read as no index (the wire has "abc")'),
        (_cohere_delta({"function": {"arguments": "{}"}}, kind="tool-call-patch"),
         "event 'tool-call-patch' carries tool calls"),
    ],
    ids=["string", "entry-string", "function-string", "index-abc", "unknown-event"],
)
def test_cohere_tool_data_of_the_wrong_shape_is_named(event, said):
    doc, stream = _report(_cohere(event))
    found = _one(doc, stream, said)
    assert found["event"] == 2
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


def test_cohere_a_well_formed_stream_raises_nothing():
    doc, stream = _report(_cohere())
    assert _unreadable(doc, stream) == []


# -- DashScope -----------------------------------------------------------------------


def _dashscope(tool_calls: Any) -> list[dict]:
    def event(calls: Any, finish: str = "null") -> dict:
        return {"output": {"choices": [{"index": 0, "finish_reason": finish, "message": {
            "role": "assistant", "content": "", "tool_calls": calls}}]},
            "usage": {"total_tokens": 1}, "request_id": "r1"}

    good = [{"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "f", "arguments": '{"city":"Oslo"}'}}]
    return [event(good), event(tool_calls), event(good, "tool_calls")]


_DS_CALL = {"id": "call_1", "type": "function",
            "function": {"name": "f", "arguments": '{"city":"Oslo"}'}}


@pytest.mark.parametrize(
    ("tool_calls", "said"),
    [
        (dict(_DS_CALL, index=0), "tool_calls is an object, not an array: read as one entry"),
        ("f()", 'tool_calls is not an array: ignored (the wire has "f()")'),
        (["f()"], 'tool_calls[0] is not an object: ignored (the wire has "f()")'),
        ([dict(_DS_CALL, index="abc")], 'index is not a whole number: read as its position '
                                        '(the wire has "abc")'),
        ([{"index": 0, "id": "call_1", "function": "f()"}],
         'tool_calls[0].function is not an object: ignored (the wire has "f()")'),
    ],
    ids=["dict", "string", "entry-string", "index-abc", "function-string"],
)
def test_dashscope_tool_calls_of_the_wrong_shape_are_named(tool_calls, said):
    doc, stream = _report(_dashscope(tool_calls))
    found = _one(doc, stream, said)
    assert found["event"] == 1
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


# -- Anthropic -----------------------------------------------------------------------


def _anthropic(*middle: dict) -> list[tuple[str, dict]]:
    events = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"city":"Oslo"}'}},
        *middle,
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]
    return [(e["type"], e) for e in events]


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ({"type": "content_block_delta2", "index": 0,
          "delta": {"type": "input_json_delta", "partial_json": '{"x":1}'}},
         "event 'content_block_delta2' carries tool input"),
        ({"type": "content_block_delta", "index": 0,
          "delta": {"type": "input_json_delta", "partial_json": {"x": 1}}},
         "partial_json is not text: ignored"),
        ({"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_call_v2", "id": "toolu_2", "name": "g", "input": {"x": 1}}},
         "content_block of type 'tool_call_v2' carries tool input"),
        ({"type": "tool_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_2", "name": "g"}},
         "event 'tool_block_start' carries a tool block"),
        ({"type": "content_block_delta", "index": "x1",
          "delta": {"type": "input_json_delta", "partial_json": ""}},
         'the block index is not a whole number: read as no index (the wire has "x1")'),
    ],
    ids=["unknown-event", "partial-json-object", "unknown-block", "unknown-event-tool-block",
         "index-string"],
)
def test_anthropic_tool_input_it_cannot_read_is_named(event, said):
    doc, stream = _report(_anthropic(event))
    found = _one(doc, stream, said, "(the wire has ")  # the wire value, quoted
    assert "x" in found["message"] or "tool_use" in found["message"]
    # the piece with an unreadable index was empty: the call is whole either way
    assert found["event"] == 3
    [call] = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", {"city": "Oslo"})


def test_anthropic_events_that_carry_no_tool_input_raise_nothing():
    doc, stream = _report(_anthropic(
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": "c2ln"}},
        {"type": "telemetry", "delta": {"tokens": 3}},
    ))
    assert _unreadable(doc, stream) == []


# -- Responses -----------------------------------------------------------------------


def _responses(*middle: dict) -> list[tuple[str, dict]]:
    events = [
        {"type": "response.created", "response": {"id": "r", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {
            "id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f",
            "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 0,
         "item_id": "fc_1", "delta": '{"city":"Oslo"}'},
        *middle,
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    return [(e["type"], e) for e in events]


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ({"type": "response.tool_input.appended", "item_id": "fc_1", "delta": ',"unit":"c"'},
         "event 'response.tool_input.appended' carries tool-call data"),
        ({"type": "response.function_call.patch", "output_index": 0, "arguments": '{"a":1}'},
         "event 'response.function_call.patch' carries tool-call data"),
        ({"type": "response.function_call_arguments.delta", "output_index": 0,
          "item_id": "fc_1", "delta": {"unit": "c"}},
         "the delta is not text: ignored"),
    ],
    ids=["unknown-by-item-id", "unknown-by-output-index", "delta-object"],
)
def test_responses_tool_data_it_cannot_read_is_named(event, said):
    doc, stream = _report(_responses(event))
    found = _one(doc, stream, said)
    assert found["event"] == 3
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


def test_responses_unknown_events_about_other_items_raise_nothing():
    doc, stream = _report(_responses(
        {"type": "response.audio.delta", "item_id": "msg_9", "delta": "AAAA"},
        {"type": "response.in_progress", "response": {"id": "r"}},
    ))
    assert _unreadable(doc, stream) == []


# -- Bedrock Converse ----------------------------------------------------------------


def _converse(*middle: dict) -> list[dict]:
    """Converse events as SDKs print them, each wrapped in its name."""
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "tooluse_1", "name": "f"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0,
                               "delta": {"toolUse": {"input": '{"city":"Oslo"}'}}}},
        *middle,
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ({"contentBlockDelta": {"contentBlockIndex": 0,
                                "delta": {"toolUse": {"input": {"unit": "c"}}}}},
         "delta.toolUse.input is not text: ignored"),
        ({"contentBlockDeltaV2": {"contentBlockIndex": 0,
                                  "delta": {"toolUse": {"input": ',"unit":"c"'}}}},
         "event 'contentBlockDeltaV2' carries a toolUse"),
    ],
    ids=["input-object", "unknown-event"],
)
def test_bedrock_tool_use_it_cannot_read_is_named(event, said):
    doc, stream = _report(_converse(event), fmt="bedrock-converse")
    found = _one(doc, stream, said, "unit")
    assert found["event"] == 3
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


# -- AI SDK UI message stream --------------------------------------------------------


def _ai_sdk(*middle: dict) -> list[dict]:
    return [
        {"type": "start"},
        {"type": "tool-input-start", "toolCallId": "t1", "toolName": "f"},
        {"type": "tool-input-delta", "toolCallId": "t1", "inputTextDelta": '{"city":"Oslo"}'},
        *middle,
        {"type": "finish"},
    ]


@pytest.mark.parametrize(
    ("part", "said"),
    [
        ({"type": "tool-input-delta", "toolCallId": "t1", "inputTextDelta": {"unit": "c"}},
         "inputTextDelta is not text: ignored"),
        ({"type": "tool-input-patch", "toolCallId": "t1", "delta": ',"unit":"c"'},
         "part 'tool-input-patch' carries tool input"),
        ({"type": "tool-call-v6", "toolCallId": "t9", "input": {"unit": "c"}},
         "part 'tool-call-v6' carries tool input"),
        ({"type": "tool-input-available", "toolName": "f", "input": {"unit": "c"}},
         "tool-input-available has no toolCallId"),
        ({"type": "tool-input-start", "toolName": "unit_convert"},
         "tool-input-start has no toolCallId"),
    ],
    ids=["delta-object", "unknown-part-known-call", "unknown-part-input", "available-no-id",
         "start-no-id"],
)
def test_ai_sdk_tool_input_it_cannot_read_is_named(part, said):
    doc, stream = _report(_ai_sdk(part))
    found = _one(doc, stream, said, "unit")
    assert found["event"] == 3
    assert doc["calls"][0]["arguments"] == {"city": "Oslo"}


def test_ai_sdk_parts_that_carry_no_tool_input_raise_nothing():
    doc, stream = _report(_ai_sdk(
        {"type": "source-url", "sourceId": "s1", "url": "https://example.com"},
        {"type": "data-weather", "data": {"input": "not a call"}},
        {"type": "tool-approval-request", "toolCallId": "t1", "approvalId": "a1"},
    ))
    assert _unreadable(doc, stream) == []


# -- each different unreadable part is named; the same one repeated, once ----------


def test_two_different_unreadable_parts_are_both_named():
    doc, stream = _report(_gemini(
        _vertex_open(),
        _vertex({"jsonPath": "$.a", "colourValue": "red"}),
        _vertex({"jsonPath": "$.b", "colourValue": "blue"}),
        {"functionCall": {}},
    ))
    found = _unreadable(doc, stream)
    assert [d["event"] for d in found] == [1, 2]
    assert "red" in found[0]["message"] and "blue" in found[1]["message"]


def test_a_snapshot_repeating_the_same_unreadable_part_is_named_once():
    # DashScope snapshots re-send the whole output every event
    bad = dict(_DS_CALL, index=0)
    doc, stream = _report(_dashscope(bad)[:2] + _dashscope(bad)[1:])
    found = _unreadable(doc, stream)
    assert len(found) == 1 and found[0]["event"] == 1
