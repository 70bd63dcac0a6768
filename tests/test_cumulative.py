"""Cumulative argument pieces (engine/cumulative.py), wherever they come from."""

from __future__ import annotations

import json

from fraglens.engine.cumulative import last_restatement
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report


def _ends(pieces: list[str]) -> tuple[str, list[int]]:
    ends, total = [], 0
    for p in pieces:
        total += len(p)
        ends.append(total)
    return "".join(pieces), ends


def test_each_piece_restating_the_text_so_far_gives_the_last():
    text, ends = _ends(["", '{"a', '{"a": 1', '{"a": 1', '{"a": 1}'])
    assert last_restatement(text, ends) == ('{"a": 1}', 4)


def test_ordinary_deltas_repeats_and_shrinking_pieces_are_not_cumulative():
    assert last_restatement(*_ends(['{"a', '": 1}'])) is None
    assert last_restatement(*_ends(['{"a": 1}', '{"a": 1}'])) is None  # args-duplicated
    assert last_restatement(*_ends(['{"a": 1', '{"a"'])) is None
    assert last_restatement(*_ends(['{"a": 1}'])) is None


def test_pieces_that_join_into_json_are_deltas_however_they_extend_each_other():
    assert last_restatement(*_ends(["1", "11"])) is None  # "111" is JSON
    assert last_restatement(*_ends(["[", "[]", "[]]"])) == ("[]]", 3)  # "[[][]]" is not


def _chat(*pieces: str, finish_after: int | None = None) -> bytes:
    def data(delta, finish=None):
        return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    out = data({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f",
                                                                     "arguments": ""}}]})
    for k, p in enumerate(pieces):
        out += data({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
        if finish_after == k:
            out += data({}, "tool_calls")
    return (out + "data: [DONE]\n\n").encode()


def _report(data: bytes, **kwargs) -> dict:
    stream, _ = stream_from_bytes(data, "test", **kwargs)
    return build_report(stream)


def test_pieces_after_a_finish_are_decided_again_with_the_rest():
    doc = _report(_chat('{"a', '{"a": 1', '{"a": 1, "b": 2}', finish_after=1))
    (call,) = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", {"a": 1, "b": 2})
    assert [d["code"] for d in doc["diagnostics"]].count("args-cumulative") == 1


def test_restatements_that_reach_the_size_limit_are_still_said():
    full = json.dumps({"text": "x" * 400})
    pieces = [full[:k] for k in range(40, len(full), 40)] + [full]
    doc = _report(_chat(*pieces), max_arg_bytes=2000)
    (call,) = doc["calls"]
    codes = {d["code"] for d in doc["diagnostics"]}
    assert {"args-over-limit", "args-cumulative"} <= codes
    assert call["status"] == "truncated"
    # the last piece kept whole, not the one cut at the limit
    assert full.startswith(call["arguments_raw"]) and len(call["arguments_raw"]) % 40 == 0


def test_a_responses_done_restating_the_last_cumulative_piece_is_one_finding():
    def data(payload):
        return "data: " + json.dumps(payload) + "\n\n"
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
            "arguments": ""}},
        *({"type": "response.function_call_arguments.delta", "output_index": 0,
           "item_id": "fc_1", "delta": d} for d in ['{"a', '{"a": 1', '{"a": 1}']),
        {"type": "response.function_call_arguments.done", "output_index": 0,
         "item_id": "fc_1", "arguments": '{"a": 1}'},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    doc = _report("".join(data(e) for e in events).encode())
    (call,) = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", {"a": 1})
    codes = {d["code"] for d in doc["diagnostics"]}
    assert "args-cumulative" in codes and "args-restated" not in codes
