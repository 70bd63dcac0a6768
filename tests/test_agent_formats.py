"""The agent layer's formats held to the protocols' own packages.

AG-UI streams are built with ``ag-ui-protocol``'s event models and its
``EventEncoder``, and parsed back with its ``Event`` union; LangGraph's
``messages`` events are ``langchain_core`` ``AIMessageChunk``s as
``model_dump()`` gives them (what LangGraph's server sends under
``event: messages`` as ``[chunk, metadata]``), and the value fraglens reads
is held to LangChain's own merge of the chunks (``AIMessageChunk.__add__``,
then its ``tool_calls``); Mistral's Conversations events are built and parsed
with the ``mistralai`` SDK's models.
"""

from __future__ import annotations

import json
from functools import reduce

import pytest
from ag_ui.core import (
    CustomEvent,
    Event,
    EventType,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningMessageContentEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessageChunk
from mistralai.client import models as mistral
from pydantic import TypeAdapter

from fraglens.adapters import detect
from fraglens.adapters.ag_ui import EVENT_TYPES
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report

from .conftest import SAMPLES, examples

ENCODER = EventEncoder()
EVENTS = TypeAdapter(Event)


def read(text: str) -> dict:
    stream, _ = stream_from_bytes(text.encode("utf-8"), "test")
    doc = build_report(stream)
    doc["_format"] = stream.format
    return doc


def codes(doc: dict) -> set[str]:
    return {d["code"] for d in doc["diagnostics"]}


# -- AG-UI ------------------------------------------------------------------------------


def test_the_adapter_knows_every_event_type_of_the_protocol():
    assert {e.value for e in EventType} == EVENT_TYPES


def test_every_agui_sample_is_valid_to_the_protocols_models():
    """Each event of the samples parses as the package's Event union, but the
    one type a sample shows the protocol does not define."""
    for path in sorted(SAMPLES.glob("native_ag_ui_*.sse")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.startswith("data: "):
                payload = line[len("data: "):]
                if json.loads(payload)["type"] == "TOOL_CALL_PROGRESS":
                    continue
                EVENTS.validate_json(payload)


def test_events_that_carry_no_call_are_read_without_a_word():
    events = [
        RunStartedEvent(thread_id="t", run_id="r"),
        StepStartedEvent(step_name="plan"),
        StateSnapshotEvent(snapshot={"k": 1}),
        StateDeltaEvent(delta=[{"op": "add", "path": "/k", "value": 2}]),
        CustomEvent(name="x", value=1),
        RawEvent(event={"anything": True}),
        TextMessageContentEvent(message_id="m", delta="Hello"),
        TextMessageChunkEvent(message_id="m", delta=" there"),
        ReasoningMessageContentEvent(message_id="m2", delta="thinking"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    doc = read("".join(ENCODER.encode(e) for e in events))
    assert doc["_format"] == "ag-ui"
    assert codes(doc) == set()
    assert doc["text"] == {"0": "Hello there"}
    assert doc["reasoning"] == {"0": "thinking"}
    assert doc["end"] == "terminal-event"


def test_a_run_error_is_an_error_and_aborts_the_open_call():
    events = [
        RunStartedEvent(thread_id="t", run_id="r"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
        ToolCallArgsEvent(tool_call_id="c1", delta='{"a": '),
        RunErrorEvent(message="model overloaded", code="overloaded"),
    ]
    doc = read("".join(ENCODER.encode(e) for e in events))
    assert [c["status"] for c in doc["calls"]] == ["aborted"]
    assert [d["message"] for d in doc["diagnostics"] if d["code"] == "error-event"] == [
        "overloaded: model overloaded"
    ]


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)
_ARGS = st.dictionaries(st.text(min_size=1, max_size=8), _VALUES, max_size=4)


def _cuts(draw, text: str) -> list[str]:
    points = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=6)))
    bounds = [0, *[p for p in points if p < len(text)], len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@st.composite
def agui_runs(draw):
    """Calls with random arguments, streamed as START/ARGS/END or as CHUNKs,
    one after another (how the protocol's adapters send parallel calls)."""
    calls = []
    events = [RunStartedEvent(thread_id="t", run_id="r")]
    for n in range(draw(st.integers(1, 3))):
        cid, name = f"call_{n}", draw(st.sampled_from(["search", "get_weather", "f"]))
        value = draw(_ARGS)
        text = json.dumps(value, ensure_ascii=False)
        pieces = _cuts(draw, text)
        calls.append((cid, name, value))
        if draw(st.booleans()):
            events.append(ToolCallStartEvent(tool_call_id=cid, tool_call_name=name,
                                             parent_message_id="m"))
            events.extend(ToolCallArgsEvent(tool_call_id=cid, delta=p) for p in pieces)
            events.append(ToolCallEndEvent(tool_call_id=cid))
        else:
            events.append(ToolCallChunkEvent(tool_call_id=cid, tool_call_name=name,
                                              delta=pieces[0]))
            events.extend(ToolCallChunkEvent(delta=p) for p in pieces[1:])
    events.append(RunFinishedEvent(thread_id="t", run_id="r"))
    return calls, events


@settings(max_examples=examples(300), deadline=None)
@given(agui_runs())
def test_agui_calls_built_with_the_protocols_models_are_read_exactly(run):
    calls, events = run
    wire = "".join(ENCODER.encode(e) for e in events)
    # the protocol's own parser reads the same stream back
    parsed = [EVENTS.validate_json(line[6:]) for line in wire.split("\n")
              if line.startswith("data: ")]
    assert [e.type for e in parsed] == [e.type for e in events]
    doc = read(wire)
    assert doc["_format"] == "ag-ui"
    assert [(c["id"], c["name"], c["arguments"]) for c in doc["calls"]] == calls
    assert all(c["status"] == "ok" for c in doc["calls"])
    assert codes(doc) == set()


def test_interleaved_args_under_their_own_ids_are_not_misrouted():
    events = [
        ToolCallStartEvent(tool_call_id="a", tool_call_name="f"),
        ToolCallStartEvent(tool_call_id="b", tool_call_name="g"),
        ToolCallArgsEvent(tool_call_id="a", delta='{"x": '),
        ToolCallArgsEvent(tool_call_id="b", delta='{"y": 2}'),
        ToolCallArgsEvent(tool_call_id="a", delta="1}"),
        ToolCallEndEvent(tool_call_id="a"),
        ToolCallEndEvent(tool_call_id="b"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    doc = read("".join(ENCODER.encode(e) for e in events))
    assert [(c["name"], c["arguments"]) for c in doc["calls"]] == [("f", {"x": 1}),
                                                                   ("g", {"y": 2})]
    assert codes(doc) == set()


def test_a_messages_snapshot_that_restates_other_arguments_is_said():
    events = [
        ToolCallStartEvent(tool_call_id="a", tool_call_name="f"),
        ToolCallArgsEvent(tool_call_id="a", delta='{"x": 1}'),
        ToolCallEndEvent(tool_call_id="a"),
        MessagesSnapshotEvent(messages=[{
            "id": "m1", "role": "assistant",
            "toolCalls": [{"id": "a", "type": "function",
                           "function": {"name": "f", "arguments": '{"x": 2}'}}],
        }]),
        ToolCallResultEvent(message_id="t1", tool_call_id="a", content="done"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    doc = read("".join(ENCODER.encode(e) for e in events))
    assert "args-multiple-values" in codes(doc)
    same = [e for e in events]
    same[3] = MessagesSnapshotEvent(messages=[{
        "id": "m1", "role": "assistant",
        "toolCalls": [{"id": "a", "type": "function",
                       "function": {"name": "f", "arguments": '{"x":1}'}}],
    }])
    assert codes(read("".join(ENCODER.encode(e) for e in same))) == set()


# -- LangGraph ----------------------------------------------------------------------------

_META = {"langgraph_node": "agent", "langgraph_step": 1}


def messages_event(chunk: AIMessageChunk) -> str:
    """One ``event: messages`` as LangGraph's server sends it."""
    return f"event: messages\ndata: {json.dumps([chunk.model_dump(), _META])}\n\n"


@st.composite
def langgraph_turns(draw):
    """One model turn: calls streamed as tool_call_chunks, pieces of several
    calls interleaved, the id and name on each call's first chunk only."""
    values = [draw(_ARGS) for _ in range(draw(st.integers(1, 3)))]
    names = [draw(st.sampled_from(["search", "lookup"])) for _ in values]
    queues = [_cuts(draw, json.dumps(v, ensure_ascii=False)) for v in values]
    chunks, started = [], set()
    while any(queues):
        i = draw(st.sampled_from([k for k, q in enumerate(queues) if q]))
        first = i not in started
        started.add(i)
        chunks.append(AIMessageChunk(content="", id="run-1", tool_call_chunks=[{
            "name": names[i] if first else None, "args": queues[i].pop(0),
            "id": f"call_{i}" if first else None, "index": i}]))
    chunks.append(AIMessageChunk(content="", id="run-1",
                                 response_metadata={"finish_reason": "tool_calls"}))
    return chunks


@settings(max_examples=examples(300), deadline=None)
@given(langgraph_turns())
def test_langgraph_calls_are_what_langchains_own_merge_makes_of_the_chunks(chunks):
    merged = reduce(lambda a, b: a + b, chunks)
    doc = read("".join(messages_event(c) for c in chunks))
    assert doc["_format"] == "langgraph"
    assert [(c["id"], c["name"], c["arguments"]) for c in doc["calls"]] == [
        (t["id"], t["name"], t["args"]) for t in merged.tool_calls
    ]
    assert codes(doc) == set()


@settings(max_examples=examples(100), deadline=None)
@given(langgraph_turns())
def test_messages_partial_snapshots_read_as_the_tuple_stream_does(chunks):
    """``stream_mode="messages"``: the server sends the merged message so far."""
    partial = [reduce(lambda a, b: a + b, chunks[: k + 1]) for k in range(len(chunks))]
    wire = "".join(f"event: messages/partial\ndata: {json.dumps([m.model_dump()])}\n\n"
                   for m in partial)
    doc = read(wire)
    tuple_doc = read("".join(messages_event(c) for c in chunks))
    assert [(c["id"], c["name"], c["arguments"]) for c in doc["calls"]] == [
        (c["id"], c["name"], c["arguments"]) for c in tuple_doc["calls"]
    ]
    assert codes(doc) == set()


def test_an_index_none_chunk_is_the_phantom_call_langchain_makes_and_is_said():
    chunks = [
        AIMessageChunk(content="", id="run-1", tool_call_chunks=[
            {"name": "f", "args": '{"x": ', "id": "c1", "index": 0}]),
        AIMessageChunk(content="", id="run-1", tool_call_chunks=[
            {"name": None, "args": "1}", "id": None, "index": None}]),
    ]
    merged = chunks[0] + chunks[1]
    assert len(merged.tool_call_chunks) == 2  # LangChain's phantom
    doc = read("".join(messages_event(c) for c in chunks))
    assert [(c["name"], c["arguments"]) for c in doc["calls"]] == [("f", {"x": 1})]
    assert "index-null-chunk" in codes(doc)


def test_a_langgraph_pair_is_known_without_the_event_name():
    chunk = AIMessageChunk(content="hi", id="r")
    assert detect([chunk.model_dump(), _META]) == "langgraph"
    assert detect([chunk.model_dump(), _META], "messages") == "langgraph"
    assert detect({"run_id": "x"}, "metadata") is None


# -- cumulative arguments in every format ----------------------------------------------


def _openai(pieces: list[str]) -> str:
    def data(delta, finish=None):
        return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    out = data({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f",
                                                                     "arguments": ""}}]})
    out += "".join(data({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
                   for p in pieces)
    return out + data({}, "tool_calls") + "data: [DONE]\n\n"


def _anthropic(pieces: list[str]) -> str:
    def ev(payload):
        return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"
    out = ev({"type": "message_start", "message": {"id": "m", "content": []}})
    out += ev({"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "c1", "name": "f", "input": {}}})
    out += "".join(ev({"type": "content_block_delta", "index": 0, "delta": {
        "type": "input_json_delta", "partial_json": p}}) for p in pieces)
    out += ev({"type": "content_block_stop", "index": 0})
    out += ev({"type": "message_delta", "delta": {"stop_reason": "tool_use"}})
    return out + ev({"type": "message_stop"})


def _agui(pieces: list[str]) -> str:
    events = [ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
              *(ToolCallArgsEvent(tool_call_id="c1", delta=p) for p in pieces),
              ToolCallEndEvent(tool_call_id="c1"), RunFinishedEvent(thread_id="t", run_id="r")]
    return "".join(ENCODER.encode(e) for e in events)


def _langgraph(pieces: list[str]) -> str:
    chunks = [AIMessageChunk(content="", id="r", tool_call_chunks=[
        {"name": "f" if k == 0 else None, "args": p, "id": "c1" if k == 0 else None,
         "index": 0}]) for k, p in enumerate(pieces)]
    chunks.append(AIMessageChunk(content="", id="r",
                                 response_metadata={"finish_reason": "tool_calls"}))
    return "".join(messages_event(c) for c in chunks)


FORMATS = {"openai-chat": _openai, "anthropic": _anthropic, "ag-ui": _agui,
           "langgraph": _langgraph}


@st.composite
def cumulative(draw):
    """A JSON object's text and the growing prefixes a cumulative stream sends."""
    value = draw(_ARGS.filter(bool))
    text = json.dumps(value, ensure_ascii=False)
    ends = sorted(draw(st.sets(st.integers(1, len(text) - 1), min_size=1, max_size=5)))
    return value, [text[:e] for e in ends] + [text]


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(150), deadline=None)
@given(case=cumulative())
def test_cumulative_arguments_give_the_last_restatement_in_every_format(fmt, case):
    value, pieces = case
    doc = read(FORMATS[fmt](pieces))
    assert doc["_format"] == fmt
    (call,) = doc["calls"]
    assert (call["status"], call["arguments"]) == ("ok", value)
    assert "args-cumulative" in codes(doc)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(150), deadline=None)
@given(value=_ARGS, data=st.data())
def test_ordinary_deltas_are_never_taken_for_cumulative_ones(fmt, value, data):
    text = json.dumps(value, ensure_ascii=False)
    pieces = _cuts(data.draw, text)
    doc = read(FORMATS[fmt](pieces))
    (call,) = doc["calls"]
    assert call["arguments"] == value
    assert "args-cumulative" not in codes(doc)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stream_that_merely_repeats_one_fragment_is_not_cumulative(fmt):
    doc = read(FORMATS[fmt](['{"q": "x"}', '{"q": "x"}']))
    assert "args-cumulative" not in codes(doc)
    assert "args-duplicated" in codes(doc)


# -- Mistral's Conversations API -------------------------------------------------------



def test_the_mistral_adapter_knows_every_event_type_of_the_sdk():
    from typing import get_args

    from fraglens.adapters.mistral_conversations import EVENT_TYPES as MISTRAL_TYPES

    (literal, _unrecognized) = get_args(mistral.SSETypes)
    assert set(get_args(literal)) == MISTRAL_TYPES


def _mistral_event(event) -> str:
    return f"event: {event.type}\ndata: {event.model_dump_json(by_alias=True)}\n\n"


MISTRAL_EVENTS = TypeAdapter(mistral.ConversationEventsData)


def test_the_mistral_sample_is_valid_to_the_sdks_models():
    text = (SAMPLES / "native_mistral_conversations.sse").read_text(encoding="utf-8")
    parsed = [MISTRAL_EVENTS.validate_json(line[6:]) for line in text.split("\n")
              if line.startswith("data: ")]
    assert parsed and not any(getattr(e, "is_unknown", False) for e in parsed)


@st.composite
def mistral_responses(draw):
    """Function calls one after another, each in random pieces, a built-in tool
    run by Mistral before them, and the response's end."""
    events = [mistral.ResponseStartedEvent(conversation_id="conv_1")]
    calls = []
    if draw(st.booleans()):
        events.append(mistral.ToolExecutionStartedEvent(id="te_1", name="web_search",
                                                        arguments='{"query": "q"}'))
        events.append(mistral.ToolExecutionDoneEvent(id="te_1", name="web_search", info={}))
        calls.append(("te_1", "web_search", {"query": "q"}))
    for n in range(draw(st.integers(1, 3))):
        name, value = draw(st.sampled_from(["get_weather", "search"])), draw(_ARGS)
        for piece in _cuts(draw, json.dumps(value, ensure_ascii=False)):
            events.append(mistral.FunctionCallEvent(id=f"fc_{n}", name=name,
                                                    tool_call_id=f"call_{n}",
                                                    arguments=piece, output_index=n))
        calls.append((f"call_{n}", name, value))
    events.append(mistral.ResponseDoneEvent(usage=mistral.ConversationUsageInfo(
        prompt_tokens=5, completion_tokens=3, total_tokens=8)))
    return calls, events


@settings(max_examples=examples(200), deadline=None)
@given(mistral_responses())
def test_mistral_calls_built_with_the_sdks_models_are_read_exactly(response):
    calls, events = response
    wire = "".join(_mistral_event(e) for e in events)
    parsed = [MISTRAL_EVENTS.validate_json(line[6:]) for line in wire.split("\n")
              if line.startswith("data: ")]
    assert [p.type for p in parsed] == [e.type for e in events]
    doc = read(wire)
    assert doc["_format"] == "mistral-conversations"
    assert [(c["id"], c["name"], c["arguments"]) for c in doc["calls"]] == calls
    assert codes(doc) == set()
    assert doc["finish_reasons"] == {"0": "conversation.response.done"}
    usage = doc["usage"]
    assert (usage["input"], usage["output"]) == (5, 3)
    assert usage["reported"] == {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}


def test_the_agui_args_shortcut_and_its_runs_give_what_feed_gives():
    """Long runs of TOOL_CALL_ARGS take the continuation shortcut, envelopes and
    bulk runs; with a call started and left empty in between, and text under an
    ended call's id after, the report is the one every event read by feed gives."""
    piece = ToolCallArgsEvent(tool_call_id="a", delta="xy")
    events = [
        ToolCallStartEvent(tool_call_id="a", tool_call_name="f"),
        ToolCallArgsEvent(tool_call_id="a", delta='{"s": "'),
        *[piece] * 200,
        ToolCallStartEvent(tool_call_id="b", tool_call_name="g"),
        *[piece] * 60,
        ToolCallEndEvent(tool_call_id="b"),
        *[piece] * 60,
        ToolCallArgsEvent(tool_call_id="a", delta='"}'),
        ToolCallEndEvent(tool_call_id="a"),
        *[ToolCallArgsEvent(tool_call_id="a", delta="z")] * 40,
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    data = "".join(ENCODER.encode(e) for e in events).encode()
    fast, _ = stream_from_bytes(data, "fast")
    slow, _ = stream_from_bytes(data, "slow", keep_naive=True)  # no shortcut: every event fed
    fast_doc, slow_doc = build_report(fast), build_report(slow)
    slow_doc.pop("naive", None)
    assert fast_doc == slow_doc
    messages = [d["message"] for d in fast_doc["diagnostics"] if d["code"] == "args-misrouted"]
    assert len(messages) == 2 and "call b (g) ended with no arguments" in messages[0]


def test_a_langgraph_stream_names_its_model_from_the_messages_metadata():
    chunk = AIMessageChunk(content="hi", id="r")
    meta = {**_META, "ls_model_name": "claude-sonnet-4-5", "ls_provider": "anthropic"}
    wire = f"event: messages\ndata: {json.dumps([chunk.model_dump(), meta])}\n\n"
    assert read(wire)["model"] == "claude-sonnet-4-5"
