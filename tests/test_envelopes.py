"""The envelope shortcut (adapters/envelope.py) changes no report.

A continuation read from its learned envelope, without decoding the event,
must give exactly what decoding it gives. Each format's commonest event is
written here in many spellings - compact, with spaces, ASCII-escaped, keys in
another order, an extra field, the piece's key twice, whitespace around,
a byte inserted anywhere - among other events that change the adapter's
state, and the report must be the same with envelopes, with the continuation
shortcut alone, and with no shortcut at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.adapters import envelope as envelope_module
from fraglens.adapters.envelope import Envelopes
from fraglens.framing.events import RawEvent
from fraglens.reading.capture import stream_from_bytes
from fraglens.reading.stream import Stream
from fraglens.report.document import build_report

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
REAL = Path(__file__).parent.parent.parent / "shared" / "real_streams"

#: two calls' arguments: escapes (a surrogate pair among them), CJK, spaces
ARGS = [
    '{"path": "a/b.txt", "text": "d\\u00e9j\\u00e0 \\"vu\\" \\ud83d\\ude80 深"}',
    '{"n": [1, 2.5, null]}',
]


def _calls(fmt: str) -> tuple[list[tuple[str | None, dict]], list[tuple[str | None, dict]]]:
    """(opening events, closing events) of two calls in ``fmt``."""
    if fmt == "openai-chat":
        head = [(None, {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": f"call_{i}", "type": "function",
             "function": {"name": f"f{i}", "arguments": ""}}]}}]}) for i in (0, 1)]
        tail = [(None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})]
    elif fmt == "anthropic":
        head = [("message_start", {"type": "message_start", "message": {"id": "m"}})] + [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": f"toolu_{i}", "name": f"f{i}", "input": {}}})
            for i in (0, 1)]
        tail = [("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
                ("message_stop", {"type": "message_stop"})]
    elif fmt == "openai-responses":
        head = [("response.output_item.added", {
            "type": "response.output_item.added", "output_index": i, "item": {
                "type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}",
                "name": f"f{i}", "arguments": ""}}) for i in (0, 1)]
        tail = [("response.completed", {"type": "response.completed",
                                        "response": {"id": "r", "status": "completed"}})]
    elif fmt == "cohere":
        head = [("tool-call-start", {"type": "tool-call-start", "index": i, "delta": {"message": {
            "tool_calls": {"id": f"c{i}", "type": "function",
                           "function": {"name": f"f{i}", "arguments": ""}}}}}) for i in (0, 1)]
        tail = [("message-end", {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}})]
    elif fmt == "bedrock-converse":
        head = [("messageStart", {"role": "assistant"})] + [
            ("contentBlockStart", {"contentBlockIndex": i, "start": {"toolUse": {
                "toolUseId": f"t{i}", "name": f"f{i}"}}}) for i in (0, 1)]
        tail = [("messageStop", {"stopReason": "tool_use"})]
    else:  # ai-sdk
        head = [(None, {"type": "tool-input-start", "toolCallId": f"c{i}", "toolName": f"f{i}"})
                for i in (0, 1)]
        tail = [(None, {"type": "tool-input-available", "toolCallId": f"c{i}",
                        "toolName": f"f{i}", "input": json.loads(ARGS[i])}) for i in (0, 1)]
        tail.append((None, {"type": "finish"}))
    return head, tail


def _continuation(fmt: str, i: int, piece: str) -> tuple[str | None, dict]:
    if fmt == "openai-chat":
        return None, {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": piece}}]},
             "finish_reason": None}]}
    if fmt == "anthropic":
        return "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
            "type": "input_json_delta", "partial_json": piece}}
    if fmt == "openai-responses":
        return "response.function_call_arguments.delta", {
            "type": "response.function_call_arguments.delta", "item_id": f"fc_{i}",
            "output_index": i, "delta": piece}
    if fmt == "cohere":
        return "tool-call-delta", {"type": "tool-call-delta", "index": i, "delta": {"message": {
            "tool_calls": {"function": {"arguments": piece}}}}}
    if fmt == "bedrock-converse":
        return "contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": piece}}}
    return None, {"type": "tool-input-delta", "toolCallId": f"c{i}", "inputTextDelta": piece}


#: events besides the calls' pieces, which may change the adapter's state
def _other(fmt: str, kind: int) -> tuple[str | None, dict]:
    if fmt == "anthropic":
        return [("ping", {"type": "ping"}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_start", {"type": "message_start", "message": {"id": "m2"}})][kind]
    if fmt == "openai-chat":
        return [(None, {"choices": [{"index": 0, "delta": {"content": "hi"}}]}),
                (None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                (None, {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                 "id": "call_x", "function": {"name": "g", "arguments": "{"}}]}}]})][kind]
    if fmt == "ai-sdk":
        return [(None, {"type": "text-delta", "id": "t", "delta": "hi"}),
                (None, {"type": "tool-input-available", "toolCallId": "c0", "toolName": "f0",
                        "input": {"other": True}}),
                (None, {"type": "start-step"})][kind]
    if fmt == "bedrock-converse":
        return [("contentBlockStop", {"contentBlockIndex": 0}),
                ("metadata", {"usage": {"inputTokens": 1}}),
                ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "hi"}})][kind]
    if fmt == "cohere":
        return [("tool-call-end", {"type": "tool-call-end", "index": 0}),
                ("content-delta", {"type": "content-delta", "index": 0, "delta": {
                    "message": {"content": {"text": "hi"}}}}),
                ("tool-plan-delta", {"type": "tool-plan-delta", "delta": {
                    "message": {"tool_plan": "x"}}})][kind]
    return [("response.output_text.delta", {"type": "response.output_text.delta", "delta": "hi"}),
            ("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", "item_id": "fc_0",
                "output_index": 0, "arguments": "{}"}),
            ("response.output_item.added", {"type": "response.output_item.added",
             "output_index": 0, "item": {"type": "function_call", "id": "fc_9",
                                         "call_id": "call_9", "name": "g", "arguments": ""}})][kind]


def _spell(payload: dict, how: str, leaf: str, at: int) -> str:
    """``payload`` as one spelling of it."""
    if how == "compact":
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    if how == "spaced":
        return json.dumps(payload, ensure_ascii=False)
    if how == "ascii":
        return json.dumps(payload, separators=(",", ":"))
    if how == "reordered":
        return json.dumps(dict(reversed(payload.items())), separators=(",", ":"))
    if how == "extra":
        return json.dumps({**payload, "extra": 1}, ensure_ascii=False, separators=(",", ":"))
    if how == "twin":  # the piece's key again, at the top, before the rest
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return '{"' + leaf + '":"decoy",' + text[1:]
    if how == "padded":
        return " " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\t"
    # what real streams vary from one event to the next (the envelopes' holes)
    if how == "obfuscated":
        noise = ["", "a" * (at % 17), "x\"y", "\u00e9", at, None][at % 6]
        return json.dumps({**payload, "obfuscation": noise}, ensure_ascii=False,
                          separators=(",", ":"))
    if how == "numbered":
        number = [at, -at, at / 2, str(at)][at % 4]
        return json.dumps({"sequence_number": number, **payload}, separators=(",", ":"))
    if how == "numbered-bad":  # not JSON: never read from an envelope
        text = json.dumps(payload, separators=(",", ":"))
        bad = ["1.", "01", "1.2", "-", "1e", "0x1"][at % 6]
        return '{"sequence_number":' + bad + "," + text[1:]
    if how == "padded-end":
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return text[:-1] + " \t"[at % 2] * (at % 16) + "}"
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))  # a byte inserted
    at %= len(text) + 1
    return text[:at] + how[-1] + text[at:]


SPELLINGS = ["compact"] * 6 + ["spaced", "ascii", "reordered", "extra", "twin", "padded",
                               "insert ", "insert\\", 'insert"', "insert\x01", "insert}",
                               "insert.", "insert-",
                               *["obfuscated", "numbered", "padded-end"] * 3, "numbered-bad"]
FORMATS = ["openai-chat", "anthropic", "openai-responses", "cohere", "bedrock-converse", "ai-sdk"]
LEAF = {"openai-chat": "arguments", "anthropic": "partial_json", "openai-responses": "delta",
        "cohere": "arguments", "bedrock-converse": "input", "ai-sdk": "inputTextDelta"}

steps = st.lists(
    st.one_of(
        st.tuples(st.just("piece"), st.integers(0, 1), st.integers(0, 12),
                  st.sampled_from(SPELLINGS), st.integers(0, 400)),
        st.tuples(st.just("other"), st.integers(0, 2)),
    ),
    max_size=40,
)


def _events(fmt: str, plan: list[tuple]) -> list[RawEvent]:
    head, tail = _calls(fmt)
    pos = [0, 0]
    out: list[tuple[str | None, str]] = [
        (name, json.dumps(p, separators=(",", ":"))) for name, p in head
    ]
    for step in plan:
        if step[0] == "other":
            name, payload = _other(fmt, step[1])
            out.append((name, json.dumps(payload)))
            continue
        _, i, size, how, at = step
        piece = ARGS[i][pos[i] : pos[i] + size]
        pos[i] += size
        name, payload = _continuation(fmt, i, piece)
        out.append((name, _spell(payload, how, LEAF[fmt], at)))
    for i in (0, 1):  # the rest of each call, so that most calls end whole
        if pos[i] < len(ARGS[i]):
            name, payload = _continuation(fmt, i, ARGS[i][pos[i] :])
            out.append((name, _spell(payload, "compact", LEAF[fmt], 0)))
    out += [(name, json.dumps(p)) for name, p in tail]
    return [RawEvent(n, "data", data, event=name) for n, (name, data) in enumerate(out)]


def _report(fmt: str, events: list[RawEvent], mode: str) -> tuple[dict, list[str]]:
    stream = Stream(format=fmt, keep_naive=mode == "full")
    if mode == "continuation":
        stream._envelopes = None
    assert (stream._envelopes is not None) == (mode == "envelopes")
    for ev in events:
        stream.feed(ev)
    stream.close()
    return build_report(stream), stream.labels


@pytest.mark.parametrize("fmt", FORMATS)
@given(plan=steps)
@settings(max_examples=60, deadline=None)
def test_envelopes_give_the_report_the_full_path_gives(fmt, plan):
    events = _events(fmt, plan)
    reports = [_report(fmt, events, mode) for mode in ("envelopes", "continuation", "full")]
    assert reports[0] == reports[1] == reports[2]


@pytest.mark.parametrize("fmt", FORMATS)
def test_envelopes_read_most_pieces_of_a_plain_stream(fmt, monkeypatch):
    """So that the property above is not vacuous: in a stream of compact
    continuations, every piece after the first of each call comes from its envelope."""
    hits = []
    read = Envelopes.read
    monkeypatch.setattr(Envelopes, "read", lambda self, d: hits.append(read(self, d)) or hits[-1])
    plan = [("piece", k % 2, 3 - 2 * (k % 2), "compact", 0) for k in range(20)]
    events = _events(fmt, plan)
    assert _report(fmt, events, "envelopes") == _report(fmt, events, "full")
    assert sum(hit is not None for hit in hits) >= 18


@pytest.mark.parametrize("fmt", FORMATS)
def test_envelopes_read_pieces_whose_events_vary_as_real_ones_do(fmt, monkeypatch):
    """Chat Completions' obfuscation, Responses' sequence numbers, Anthropic's
    padding: each continuation differs from the last outside its piece, and
    still comes from its envelope (where the adapter says the field is unread,
    or the difference is spacing)."""
    hits = []
    read = Envelopes.read
    monkeypatch.setattr(Envelopes, "read", lambda self, d: hits.append(read(self, d)) or hits[-1])
    how = {"openai-chat": "obfuscated", "openai-responses": "numbered"}.get(fmt, "padded-end")
    # spellings of the kind the hole takes: a string of letters, a whole number
    plan = [("piece", k % 2, 3 - 2 * (k % 2), how, 6 * k + 1 if how == "obfuscated" else 4 * k)
            for k in range(20)]
    events = _events(fmt, plan)
    assert _report(fmt, events, "envelopes") == _report(fmt, events, "full")
    assert sum(hit is not None for hit in hits) >= 16


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses"])
@pytest.mark.parametrize("at", range(12))
def test_a_hole_takes_only_a_value_of_its_kind(fmt, at):
    """Once a hole is learned, a value of another kind there (a number that
    is not JSON, a float, a string with an escape in a number's place) is
    read the full way, as a payload that is not JSON must be."""
    how = "obfuscated" if fmt == "openai-chat" else "numbered"
    plan = [("piece", 0, 2, how, 4 * k + 1 if how == "obfuscated" else 4 * k) for k in range(4)]
    plan += [("piece", 0, 2, how if at < 6 else "numbered-bad", at)] * 2
    events = _events(fmt, plan)
    assert _report(fmt, events, "envelopes") == _report(fmt, events, "full")


def test_a_probe_refuses_an_envelope_whose_key_is_not_where_the_adapter_reads():
    # the continuation read "ab" at delta.partial_json; the same string under
    # another "partial_json" key, later in the text, is not the piece
    data = ('{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
            '"partial_json":"ab"},"x":{"partial_json":"ab"}}')
    envs = Envelopes(("delta", "partial_json"), lambda payload: "t")
    envs.learn(data, 0, 0, "ab", "t")
    assert envs.items and envs.items[0].suffix == '},"x":{"partial_json":"ab"}}'
    assert envs.read(data.replace('"ab"}', '"cd"}', 1))[1] == "cd"
    assert envs.read(data.replace('"ab"}}', '"cd"}}')) is None


def test_a_stream_gives_up_learning_after_so_many_misses(monkeypatch):
    envs = Envelopes(("delta",), lambda payload: "t")
    for _ in range(envelope_module.MAX_MISSES + 5):
        envs.learn('{"delta" : 1}', 0, 0, "x", "t")  # the piece is not where the path says
    assert envs.misses == envelope_module.MAX_MISSES and not envs.items


# the real captures beside the repository, when they are there (conftest's rule)
REAL_STREAMS = sorted(REAL.glob("*/*")) if REAL.is_dir() else []


@pytest.mark.parametrize(
    "path", [p for p in sorted(SAMPLES.iterdir()) if p.suffix in (".sse", ".eventstream")]
    + [p for p in REAL_STREAMS if p.suffix in (".sse", ".eventstream")],
    ids=lambda p: p.name,
)
def test_every_capture_reads_the_same_with_and_without_envelopes(path, monkeypatch):
    data = path.read_bytes()
    fast = build_report(stream_from_bytes(data)[0])
    monkeypatch.setattr(Stream, "_envelopes_for", lambda self: None)
    assert fast == build_report(stream_from_bytes(data)[0])


def test_an_envelope_opens_with_its_tokens_before_the_first_hole_or_gap():
    """A holed envelope tests a payload's opening before its expression, and
    compiles the expression only when a payload opens so: what every payload
    it reads opens with is its tokens up to the first hole or space."""
    spaced = '{"type": "content_block_delta", "index": 0, "delta": {"partial_json": "ab"}   }'
    envs = Envelopes(("delta", "partial_json"), lambda payload: "t", ("type",),
                     lambda payload: (0, 0, payload["delta"]["partial_json"]))
    envs.learn(spaced, 0, 0, "ab", "t", json.loads(spaced))
    (env,) = envs.items
    assert env.opening == '{"type":'  # a gap after it; the type a hole (unread)
    assert env._pattern is None
    other = spaced.replace('"ab"', '"cd"').replace('"content_block_delta"', '"x"')
    assert envs.read(other)[1] == "cd"
    assert envs.read(other.replace(": ", ":    ")) is not None  # spaces where it had some
    assert env._pattern is not None
    # a payload that does not open so is none of its payloads, compiled or not
    envs = Envelopes(("delta", "partial_json"), lambda payload: "t", ("type",),
                     lambda payload: (0, 0, payload["delta"]["partial_json"]))
    envs.learn(spaced, 0, 0, "ab", "t", json.loads(spaced))
    assert envs.read('{"index": 0}') is None and envs.items[0]._pattern is None
