"""Properties of the whole pipeline, bytes in, calls out.

Any set of calls with arbitrary JSON arguments (escapes, CJK, emoji,
surrogate-pair escapes), split at arbitrary points (inside escapes too),
interleaved in any order, with ids and names repeated or not, comes back
exactly; arbitrary bytes and arbitrary JSON chunks never raise.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.adapters import ADAPTERS
from tui.framing.detect import FramingError, read_stream
from tui.framing.events import RawEvent
from tui.load import stream_from_framed
from tui.report import build_report
from tui.stream import Stream

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
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_interleaving_of_any_arguments_comes_back_exactly(case):
    data, expected = case
    doc = run_sse(data)
    assert [c["arguments"] for c in doc["calls"]] == expected
    assert all(c["status"] in ("ok", "empty") for c in doc["calls"])
    assert not [d for d in doc["diagnostics"] if d["severity"] == "error"]


@given(st.binary(max_size=400))
@settings(max_examples=200, deadline=None)
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
@settings(max_examples=300, deadline=None)
def test_arbitrary_json_chunks_never_raise_in_any_format(fmt, chunks, names):
    stream = Stream(format=fmt)
    for i, chunk in enumerate(chunks):
        name = names[i] if i < len(names) else None
        stream.feed(RawEvent(i, "data", json.dumps(chunk), event=name))
    stream.close()
    doc = build_report(stream)
    json.dumps(doc)  # the report is always serializable
