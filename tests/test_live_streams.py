"""Small streams the live / serve / export tests replay, and the helpers they share.

Written here so the network tests stand on their own; the arguments carry
multi-byte UTF-8 (ü, ☀️, 東京) so that splitting the body at arbitrary byte
offsets cuts characters in half. The tests at the bottom pin what each
stream holds, so a failing network test is never a broken fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

from fraglens.reading.capture import load_stream
from fraglens.report.document import build_report

FAKE_KEY = "sk-fraglens-TEST-KEY-0123456789abcdef"


def _chat(delta: dict, finish: str | None = None, usage: dict | None = None) -> str:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        chunk = {**chunk, "choices": [], "usage": usage}
    return "data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n"


def _tool(index: int, args: str, id: str | None = None, name: str | None = None) -> dict:
    entry: dict = {"index": index, "function": {"arguments": args}}
    if id:
        entry.update(id=id, type="function")
        entry["function"]["name"] = name
    return {"tool_calls": [entry]}


OPENAI_ARGS = ['{"city": "Zürich ☀️", ', '"days": 3}']
OPENAI_ARGS_2 = ['{"city": "東京', '", "unit": "c"}']
OPENAI_SSE = (
    ": keep-alive\n\n"
    + _chat({"role": "assistant", "content": None})
    + _chat(_tool(0, "", "call_a", "get_weather"))
    + "".join(_chat(_tool(0, piece)) for piece in OPENAI_ARGS)
    + _chat(_tool(1, "", "call_b", "get_weather"))
    + "".join(_chat(_tool(1, piece)) for piece in OPENAI_ARGS_2)
    + _chat({}, finish="tool_calls")
    + _chat({}, usage={"prompt_tokens": 120, "completion_tokens": 48, "total_tokens": 168})
    + "data: [DONE]\n\n"
).encode("utf-8")
#: events in OPENAI_SSE: comment, role, 2 x (open + 2 fragments), finish, usage, [DONE]
OPENAI_EVENTS = 11


def _anthropic(kind: str, payload: dict) -> str:
    return (
        f"event: {kind}\ndata: "
        + json.dumps({"type": kind, **payload}, ensure_ascii=False)
        + "\n\n"
    )


ANTHROPIC_SSE = (
    _anthropic(
        "message_start",
        {
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-test",
                "usage": {"input_tokens": 300, "output_tokens": 1},
            }
        },
    )
    + _anthropic(
        "content_block_start",
        {
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}},
        },
    )
    + _anthropic(
        "content_block_delta",
        {"index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"q": "'}},
    )
    + _anthropic(
        "content_block_delta",
        {"index": 0, "delta": {"type": "input_json_delta", "partial_json": 'naïve"}'}},
    )
    + _anthropic("content_block_stop", {"index": 0})
    + _anthropic(
        "message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 25}}
    )
    + _anthropic("message_stop", {})
).encode("utf-8")


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def calls_of(path: str) -> list[tuple[str | None, str | None, str]]:
    """(id, name, raw argument text) per call of a capture, as ``check`` reads it."""
    stream, _ = load_stream(path)
    return [(c["id"], c["name"], c["arguments_raw"]) for c in build_report(stream)["calls"]]


def report_of(path: str) -> dict:
    stream, _ = load_stream(path)
    return build_report(stream)


# -- the fixtures themselves ------------------------------------------------------


def test_the_openai_stream_has_two_calls_with_multibyte_arguments(tmp_path):
    path = write(tmp_path, "chat.sse", OPENAI_SSE)
    assert calls_of(path) == [
        ("call_a", "get_weather", "".join(OPENAI_ARGS)),
        ("call_b", "get_weather", "".join(OPENAI_ARGS_2)),
    ]
    doc = report_of(path)
    assert doc["events"] == OPENAI_EVENTS
    assert doc["end"] == "done"
    assert doc["usage"]["output"] == doc["usage"]["reported"]["completion_tokens"] == 48


def test_the_anthropic_stream_has_one_call(tmp_path):
    path = write(tmp_path, "claude.sse", ANTHROPIC_SSE)
    assert calls_of(path) == [("toolu_1", "lookup", '{"q": "naïve"}')]
    assert report_of(path)["format"] == "anthropic"
