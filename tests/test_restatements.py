"""A value restated when a call ends, weighed against what streamed, in every format that restates.

The rule (issue 11, item 3), the same whichever format restates: the same
value, however spelled, says nothing; streamed pieces that are not JSON give
way to a restatement that is (status ok, ``args-restated``, both texts kept:
``arguments_raw`` the restatement, ``arguments_streamed`` the pieces); two
valid values that differ are ``args-multiple-values``. No piece at all is no
disagreement: the restatement is the arguments, with nothing to say
(Anthropic's own programmatic tool calls put the input in the block start
and stream nothing, and the real captures show it).

Responses' ``.done`` is covered by ``verdict_restated_args_used.sse`` and the
engine's own tests; here: an Anthropic-compatible gateway's
``content_block_start.input``, the same wrapped by Bedrock InvokeModel or
copied into a Converse block start, the AI SDK's ``tool-input-available``
and Vertex's closing ``args``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report

OSLO = {"city": "Oslo", "days": 3}


def _report(events: list[dict], fmt: str | None = None, named: bool = True,
            done: bool = False) -> dict:
    body = ""
    for ev in events:
        name = ev.get("type") if named else None
        body += (f"event: {name}\n" if name else "") + f"data: {json.dumps(ev)}\n\n"
    body += "data: [DONE]\n\n" if done else ""  # how the AI SDK stream ends
    return build_report(stream_from_bytes(body.encode(), format=fmt)[0])


def _codes(doc: dict) -> set[str]:
    return {d["code"] for d in doc["diagnostics"]} - {"sse-comment"}


# -- Anthropic-compatible gateways: the whole input in content_block_start -----------


def _anthropic(input_: Any, *pieces: str) -> list[dict]:
    return [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": input_}},
        *({"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": p}} for p in pieces),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]


def test_anthropic_obfuscated_deltas_give_way_to_the_block_start_input():
    doc = _report(_anthropic(OSLO, "x9Qk", "Lm0Zp"))
    [call] = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", OSLO)
    assert call["arguments_raw"] == '{"city":"Oslo","days":3}'  # the restatement
    assert call["arguments_streamed"] == "x9QkLm0Zp"  # what the pieces said, kept
    assert _codes(doc) == {"args-restated"}
    [said] = [d for d in doc["diagnostics"] if d["code"] == "args-restated"]
    assert said["event"] == 4  # the block stop, where the input was restated


def test_anthropic_only_empty_deltas_after_a_whole_input_is_that_input_with_nothing_to_say():
    doc = _report(_anthropic(OSLO, "", "", ""))
    [call] = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", OSLO)
    assert _codes(doc) == set()


def test_anthropic_deltas_of_the_same_value_spelled_otherwise_say_nothing():
    doc = _report(_anthropic(OSLO, '{"days": 3, ', '"city": "Oslo"}'))
    [call] = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", OSLO)
    assert _codes(doc) == set()


def test_anthropic_two_valid_values_that_differ_stay_multiple_values():
    doc = _report(_anthropic(OSLO, '{"city":"Bergen"}'))
    [call] = doc["calls"]
    assert "args-multiple-values" in _codes(doc) and "args-restated" not in _codes(doc)
    # the streamed value is what the call holds; the other is named, not chosen
    assert call["arguments_raw"] == '{"city":"Bergen"}'


def test_the_empty_placeholder_input_says_nothing_against_the_deltas():
    doc = _report(_anthropic({}, '{"city":"Bergen"}'))
    assert doc["calls"][0]["arguments"] == {"city": "Bergen"}
    assert _codes(doc) == set()


def test_bedrock_invoke_wrapping_such_a_gateway_reads_the_same():
    def chunk(ev: dict) -> dict:
        return {"bytes": base64.b64encode(json.dumps(ev).encode()).decode()}

    doc = _report([chunk(e) for e in _anthropic(OSLO, "x9Qk", "Lm0Zp")],
                  fmt="bedrock-invoke", named=False)
    [call] = doc["calls"]
    assert (call["status"], call["arguments"], call["arguments_streamed"]) == (
        "ok", OSLO, "x9QkLm0Zp")
    assert _codes(doc) == {"args-restated"}


def test_bedrock_converse_with_a_whole_input_in_its_block_start_reads_the_same():
    def wrapped(name: str, body: dict) -> dict:
        return {name: body}

    start = {"contentBlockIndex": 0, "start": {"toolUse": {
        "toolUseId": "tooluse_1", "name": "get_weather", "input": OSLO}}}
    events = [wrapped("messageStart", {"role": "assistant"}), wrapped("contentBlockStart", start)]
    events += [wrapped("contentBlockDelta", {"contentBlockIndex": 0,
                                             "delta": {"toolUse": {"input": p}}})
               for p in ("x9Qk", "Lm0Zp")]
    events += [wrapped("contentBlockStop", {"contentBlockIndex": 0}),
               wrapped("messageStop", {"stopReason": "tool_use"})]
    doc = _report(events, fmt="bedrock-converse", named=False)
    [call] = doc["calls"]
    assert (call["status"], call["arguments"], call["arguments_streamed"]) == (
        "ok", OSLO, "x9QkLm0Zp")
    assert _codes(doc) == {"args-restated"}


# -- AI SDK: tool-input-available restates the parsed input --------------------------


def _ai_sdk(input_: Any, *pieces: str) -> list[dict]:
    return [
        {"type": "start"},
        {"type": "tool-input-start", "toolCallId": "t1", "toolName": "get_weather"},
        *({"type": "tool-input-delta", "toolCallId": "t1", "inputTextDelta": p} for p in pieces),
        {"type": "tool-input-available", "toolCallId": "t1", "toolName": "get_weather",
         "input": input_},
        {"type": "finish"},
    ]


def test_ai_sdk_pieces_that_are_not_json_give_way_to_tool_input_available():
    doc = _report(_ai_sdk(OSLO, "x9Qk", "Lm0Zp"), done=True)
    [call] = doc["calls"]
    assert (call["status"], call["arguments"], call["arguments_streamed"]) == (
        "ok", OSLO, "x9QkLm0Zp")
    assert _codes(doc) == {"args-restated"}


def test_ai_sdk_no_pieces_is_the_restated_input_with_nothing_to_say():
    doc = _report(_ai_sdk(OSLO), done=True)
    assert doc["calls"][0]["arguments"] == OSLO and _codes(doc) == set()


def test_ai_sdk_two_valid_values_that_differ_stay_multiple_values():
    doc = _report(_ai_sdk(OSLO, '{"city":"Bergen"}'), done=True)
    assert "args-multiple-values" in _codes(doc) and "args-restated" not in _codes(doc)


# -- Vertex: a closing functionCall part that carries the whole args -----------------


def _vertex(closing_args: Any, *entries: dict, in_order: bool = True) -> list[dict]:
    def part(p: dict, finish: str | None = None) -> dict:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": [p]}}
        if finish:
            cand["finishReason"] = finish
        return {"candidates": [cand]}

    closing: dict[str, Any] = {} if closing_args is None else {"args": closing_args}
    return [
        part({"functionCall": {"name": "get_weather", "willContinue": True}}),
        *(part({"functionCall": {"partialArgs": [e], "willContinue": True}}) for e in entries),
        part({"functionCall": closing}),
        part({"text": ""}, "STOP"),
    ]


_CITY = {"jsonPath": "$.city", "stringValue": "Oslo"}
_DAYS = {"jsonPath": "$.days", "numberValue": 3}


@pytest.mark.parametrize("closing", [None, OSLO, {"days": 3, "city": "Oslo"}],
                         ids=["no-args", "same", "same-reordered"])
def test_vertex_closing_args_equal_to_the_streamed_ones_say_nothing(closing):
    doc = _report(_vertex(closing, _CITY, _DAYS), named=False)
    [call] = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", OSLO)
    assert _codes(doc) == {"id-missing"}  # Vertex sends no ids


def test_vertex_closing_args_that_differ_from_the_streamed_ones_are_multiple_values():
    doc = _report(_vertex({"city": "Bergen", "days": 3}, _CITY, _DAYS), named=False)
    assert doc["calls"][0]["arguments"] == OSLO
    assert _codes(doc) == {"id-missing", "args-multiple-values"}


def test_vertex_closing_args_are_weighed_against_a_value_built_out_of_order():
    # $.days then $.city then $.days again: the text cannot follow, the value
    # built by path replaces it, and the closing args are checked against that
    again = {"jsonPath": "$.days", "numberValue": 3}
    same = _report(_vertex(OSLO, _DAYS, _CITY, again), named=False)
    assert same["calls"][0]["arguments"] == {"days": 3, "city": "Oslo"}
    assert _codes(same) == {"id-missing"}
    other = _report(_vertex({"city": "Bergen"}, _DAYS, _CITY, again), named=False)
    assert "args-multiple-values" in _codes(other)
    assert "args-restated" not in _codes(other)
