"""Properties of the whole pipeline, bytes in, calls out.

Any set of calls with arbitrary JSON arguments (escapes, CJK, emoji,
surrogate-pair escapes), split at arbitrary points (inside escapes too),
interleaved in any order, with ids and names repeated or not, comes back
exactly; arbitrary bytes and arbitrary JSON chunks never raise.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from fraglens.adapters import ADAPTERS
from fraglens.framing.detect import FramingError, read_stream
from fraglens.framing.events import RawEvent
from fraglens.reading.capture import stream_from_framed
from fraglens.reading.stream import Stream
from fraglens.report.document import build_report

from .conftest import examples

text = st.text(
    alphabet=st.sampled_from(list('ab "\\/\n\t{}[]:,') + ["深", "圳", "é", "🚀", "\u2028"]),
    max_size=12,
)
scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | text
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(text, values, max_size=4)


def run_sse(data: bytes) -> dict:
    return build_report(stream_from_framed(read_stream(data)))


@st.composite
def interleaved_streams(draw):
    """SSE bytes for several calls, and the arguments each must come back with."""
    n = draw(st.integers(1, 4))
    calls = []
    for i in range(n):
        args = draw(arguments)
        raw = json.dumps(args, ensure_ascii=draw(st.booleans()))
        cuts = sorted(set(draw(st.lists(st.integers(0, len(raw)), max_size=6))))
        pieces, prev = [], 0
        for c in cuts + [len(raw)]:
            if c > prev:
                pieces.append(raw[prev:c])
            prev = c
        calls.append({"index": i, "id": f"call_{i}", "name": f"tool_{i % 2}", "pieces": pieces,
                      "args": args, "repeat": draw(st.booleans())})
    # an interleaving that keeps each call's own order: a shuffled merge
    order = [c["index"] for c in calls for _ in c["pieces"]]
    order = draw(st.permutations(order))
    chunks = []
    for c in calls:  # every call announces itself first, like real backends
        entry = {"index": c["index"], "id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": ""}}
        chunks.append(entry)
    taken = [0] * n
    for i in order:
        c = calls[i]
        piece = c["pieces"][taken[i]]
        taken[i] += 1
        entry = {"index": i, "function": {"arguments": piece}}
        if c["repeat"]:  # Fireworks-style: id and name on every fragment
            entry["id"] = c["id"]
            entry["function"]["name"] = c["name"]
        chunks.append(entry)
    lines = []
    for entry in chunks:
        chunk = {"object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}
        lines.append(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n")
    lines.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n')
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode(), [c["args"] for c in calls]


@given(interleaved_streams())
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_interleaving_of_any_arguments_comes_back_exactly(case):
    data, expected = case
    doc = run_sse(data)
    assert [c["arguments"] for c in doc["calls"]] == expected
    assert all(c["status"] in ("ok", "empty") for c in doc["calls"])
    assert not [d for d in doc["diagnostics"] if d["severity"] == "error"]


@given(st.binary(max_size=400))
@settings(max_examples=examples(200), deadline=None)
def test_arbitrary_bytes_never_raise(data):
    try:
        framed = read_stream(data)
    except FramingError:
        return
    build_report(stream_from_framed(framed))


json_chunks = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["choices", "delta", "tool_calls", "index", "id", "function", "name",
                         "arguments", "type", "finish_reason", "usage", "error", "content",
                         "candidates", "parts", "functionCall", "args", "output", "item_id",
                         "output_index", "delta", "message", "content_block", "partial_json"]),
        inner,
        max_size=4,
    ),
    max_leaves=12,
)


@given(st.sampled_from(sorted(ADAPTERS)), st.lists(json_chunks, max_size=8),
       st.lists(st.sampled_from([None, "message_start", "content_block_delta", "error",
                                 "response.output_item.added", "tool-call-delta"]), max_size=8))
@settings(max_examples=examples(300), deadline=None)
def test_arbitrary_json_chunks_never_raise_in_any_format(fmt, chunks, names):
    stream = Stream(format=fmt)
    for i, chunk in enumerate(chunks):
        name = names[i] if i < len(names) else None
        stream.feed(RawEvent(i, "data", json.dumps(chunk), event=name))
    stream.close()
    doc = build_report(stream)
    json.dumps(doc)  # the report is always serializable


# -- the shortcut for bare continuations changes nothing ------------------------

pieces = st.lists(
    st.sampled_from(list('{}[]":,ab1 \\') + ['{"s":"\\ud83d', "\\ude80", "深"]), max_size=6
).map("".join)
wire_entries = st.one_of(
    # a bare continuation: the shape the shortcut takes
    st.builds(lambda i, p: {"index": i, "function": {"arguments": p}}, st.integers(0, 2), pieces),
    # a call's head, sometimes on an index already used (Q04), sometimes nameless
    st.builds(
        lambda i, cid, name, p: {"index": i, "id": cid, "type": "function",
                                 "function": {"name": name, "arguments": p}},
        st.integers(0, 2), st.sampled_from(["call_a", "call_b", ""]),
        st.sampled_from(["f", "g", ""]), pieces,
    ),
)
wire_chunks = st.one_of(
    st.builds(lambda c, e: {"choices": [{"index": c, "delta": {"tool_calls": [e]}}]},
              st.integers(0, 1), wire_entries),
    st.builds(lambda c, r: {"choices": [{"index": c, "delta": {}, "finish_reason": r}]},
              st.integers(0, 1), st.sampled_from(["tool_calls", "length", "error"])),
    st.just({"choices": [], "usage": {"total_tokens": 7}}),
    st.just({"object": "error", "message": "boom"}),
)


def _delta(entry: dict) -> dict:
    return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}


_HEAD = {"index": 0, "id": "call_a", "function": {"name": "f", "arguments": '{"s":"\\ud83d'}}
_BARE = {"index": 0, "function": {"arguments": '\\ude80 and some more text"}'}}


@given(st.lists(wire_chunks, max_size=16), st.sampled_from([12, 40, 16 << 20]))
@example([_delta(_HEAD), _delta(_BARE)], 16 << 20)  # a surrogate pair split (Q42)
@example([_delta(_HEAD), _delta(_BARE)], 20)  # the continuation crosses the limit
@settings(max_examples=examples(300), deadline=None)
def test_the_continuation_shortcut_gives_the_report_the_full_path_gives(chunks, limit):
    # keep_naive logs every fragment as ops, so it turns the shortcut off
    reports = []
    for keep_naive in (False, True):
        stream = Stream(format="openai-chat", max_arg_bytes=limit, keep_naive=keep_naive)
        assert (stream._continuation is None) == keep_naive
        for i, chunk in enumerate(chunks):
            stream.feed(RawEvent(i, "data", json.dumps(chunk)))
        stream.close()
        reports.append(build_report(stream))
    assert reports[0] == reports[1]


# -- scanning when asked is scanning on every append ----------------------------


def _report(chunks: list[dict], eager: bool, limit: int = 16 << 20) -> dict:
    stream = Stream(format="openai-chat", max_arg_bytes=limit)
    for i, chunk in enumerate(chunks):
        stream.feed(RawEvent(i, "data", json.dumps(chunk)))
        if eager:  # what the app does while it shows every step of a live call
            for call in stream.reassembler.calls:
                call.catch_up()  # catches the scanner up
    stream.close()
    return build_report(stream)


_SPLIT_PAIR = [
    _delta({"index": 0, "id": "call_a", "function": {"name": "f", "arguments": '{"s":"\\ud8'}}),
    _delta({"index": 0, "function": {"arguments": '3d\\ude80"}'}}),
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]
_ESCAPED_BACKSLASH = [  # looks like a split pair, but the backslash is escaped: text
    _delta({"index": 0, "id": "call_a", "function": {"name": "f", "arguments": '{"s":"\\\\ud83d'}}),
    _delta({"index": 0, "function": {"arguments": '\\ude80"}'}}),
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]


@given(st.lists(wire_chunks, max_size=16), st.sampled_from([12, 40, 16 << 20]))
@example(_SPLIT_PAIR, 16 << 20)
@example(_ESCAPED_BACKSLASH, 16 << 20)
@example([_delta(_HEAD), _delta(_BARE)], 16 << 20)
@example(  # whole at its finish, then a second value starts: decided again at the end
    [
        _delta({"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a":1}'}}),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        _delta({"index": 0, "function": {"arguments": '{"a":'}}),
    ],
    16 << 20,
)
@settings(max_examples=examples(300), deadline=None)
def test_a_scanner_run_only_when_asked_gives_the_report_of_one_run_on_every_append(chunks, limit):
    assert _report(chunks, eager=False, limit=limit) == _report(chunks, eager=True, limit=limit)


def test_a_split_surrogate_pair_is_found_without_the_scanner_having_run():
    doc = _report(_SPLIT_PAIR, eager=False)
    (split,) = [d for d in doc["diagnostics"] if d["code"] == "args-surrogate-split"]
    assert split["event"] == 1  # where the low half was completed
    assert doc["calls"][0]["arguments"] == {"s": "🚀"}
    doc = _report(_ESCAPED_BACKSLASH, eager=False)
    assert [c["status"] for c in doc["calls"]] == ["ok"]
    assert [d["code"] for d in doc["diagnostics"]] == ["no-done"]


# -- verdicts: truncation wins over repair, a repair keeps the shape ----------

def _engine_verdict(text: str):
    from fraglens.engine.fragments import Finish, ToolDelta
    from fraglens.engine.reassembler import Reassembler

    r = Reassembler()
    r.apply(0, [ToolDelta(index=0, id="c", name="f", args=text)])
    r.apply(1, [Finish(0, "tool_calls", "tool_calls")])  # a finish that says "complete"
    r.close(1)
    return r.calls[0].result


def _defect_spots(raw: str) -> list[tuple[int, str]]:
    """Where a defect can go in JSON text, and which: a raw newline or tab
    before a plain character inside a string, a comma before a closer (a
    trailing comma) or before a comma (a doubled one) outside strings."""
    in_string = escaped = False
    spots: list[tuple[int, str]] = []
    for k, ch in enumerate(raw):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            else:
                spots += [(k, "\n"), (k, "\t")]
        elif ch == '"':
            in_string = True
        elif ch in "}],":
            spots.append((k, ","))
    return spots


def _insert(raw: str, defects: list[tuple[int, str]]) -> str:
    """``raw`` with each defect inserted at its offset in ``raw``."""
    for at, defect in sorted(defects, reverse=True):  # from the end: offsets stay right
        raw = raw[:at] + defect + raw[at:]
    return raw


containers = st.dictionaries(text, values, min_size=1, max_size=4) | st.lists(
    values, min_size=1, max_size=4
)
#: any JSON value whose proper prefixes can all be told cut: a container, or a
#: string (a number's or a literal's prefix may be a value of its own: 12 of 123)
cuttable = containers | text.map(lambda t: t or "x")


@settings(max_examples=examples(200), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(cuttable, st.data())
def test_a_cut_text_is_truncated_whatever_defect_came_before(value, data):
    raw = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    cut = data.draw(st.integers(1, len(raw) - 1))
    spots = _defect_spots(raw[:cut])
    assume(spots)  # a cut at '{' leaves nowhere for a defect: not an example
    defects = data.draw(st.lists(st.sampled_from(spots), min_size=1, max_size=3,
                                 unique_by=lambda s: s[0]))
    broken = _insert(raw[:cut], defects)
    result = _engine_verdict(broken)
    assert result.status == "truncated", (broken, result)
    if result.arguments is not None:  # a best effort keeps the type the text began
        assert isinstance(result.arguments, type(value)), (broken, result)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(containers, st.data())
def test_trailing_commas_are_repaired_to_exactly_the_value_written(value, data):
    """A complete text with trailing commas has one exact reading: the call
    is ``repaired`` to the value before the commas, never to another one."""
    raw = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    closers = [at for at, defect in _defect_spots(raw) if defect == "," and raw[at] in "}]"]
    defects = data.draw(st.lists(st.sampled_from(closers), min_size=1, max_size=3, unique=True))
    broken = _insert(raw, [(at, ",") for at in defects])
    result = _engine_verdict(broken)
    assert (result.status, result.arguments) == ("repaired", value), (broken, result)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(containers, st.data())
def test_any_defect_in_a_whole_text_gives_a_repair_of_its_type_or_no_value(value, data):
    """Doubled commas, raw newlines and tabs in strings, trailing commas in a
    complete text: ``repaired`` with a value of the text's top-level type, or
    ``invalid`` with none - never ``ok``, never a value of another type."""
    raw = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    spots = _defect_spots(raw)
    defects = data.draw(st.lists(st.sampled_from(spots), min_size=1, max_size=3,
                                 unique_by=lambda s: s[0]))
    broken = _insert(raw, defects)
    result = _engine_verdict(broken)
    assert result.status in ("repaired", "invalid"), (broken, result)
    if result.status == "repaired":
        assert isinstance(result.arguments, type(value)), (broken, result)
    else:
        assert result.arguments is None, (broken, result)


repairable = st.text(alphabet=st.sampled_from(list('{}[]",:ab1 \n\'')), max_size=24)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from("{["), repairable)
@example("{", "[1, 2]}")
def test_a_repair_never_changes_the_top_level_type(first, rest):
    result = _engine_verdict(first + rest)
    if result.status == "repaired":
        assert isinstance(result.arguments, dict if first == "{" else list), (first + rest)


# the cases these properties found, kept as plain tests


def test_a_trailing_comma_beside_an_escaped_backslash_keeps_the_backslash():
    # json-repair read this key as '"', dropping the backslash the text escaped
    result = _engine_verdict('{"\\\\\\"": null,}')
    assert (result.status, result.arguments) == ("repaired", {'\\"': None})
    assert result.repairs == ('removed "," at 13',)


def test_a_surrogate_pair_spelled_as_escapes_is_one_character_not_dropped_text():
    result = _engine_verdict('{"\\ud83d\\ude80": null,}')
    assert (result.status, result.arguments) == ("repaired", {"🚀": None})


def test_a_cut_string_gets_no_best_effort_value_of_another_type():
    # json-repair read '"<LF>[' as an empty array
    result = _engine_verdict('"\n[')
    assert (result.status, result.arguments, result.has_value) == ("truncated", None, False)
    assert any("turns the string into an array" in r for r in result.repairs)
