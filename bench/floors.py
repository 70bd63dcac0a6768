"""The stdlib floor per wire format, run as its own process by bench/engine.py.

    python bench/floors.py FORMAT FILE

The least any reader of FORMAT must do to get the tool calls' arguments out
of FILE: cut the events out of the framing, decode each JSON payload, append
each argument piece to its call's list, join, and parse the result. It gets
the same shortcut fraglens uses for each payload (the C ``scan_once`` without
``json.loads``'s Python layers), checks no CRC, validates nothing, and prints
only how many calls it parsed. Standard library only, so its start-up is
Python's alone.
"""

from __future__ import annotations

import base64
import json
import struct
import sys

_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def loads(text: str):
    return _scan_once(text, 0)[0]


def sse_payloads(data: bytes):
    for block in data.decode("utf-8").split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: ") and line != "data: [DONE]":
                yield loads(line[6:])


def eventstream_payloads(data: bytes):
    unpack = struct.Struct(">II").unpack_from
    pos = 0
    while pos + 12 <= len(data):
        total, headers = unpack(data, pos)
        start = pos + 12 + headers
        yield loads(data[start : pos + total - 4].decode("utf-8"))
        pos += total


def openai_chat(data: bytes, bufs: dict) -> None:
    for chunk in sse_payloads(data):
        for choice in chunk["choices"]:
            for tc in choice["delta"].get("tool_calls") or ():
                bufs.setdefault(tc["index"], []).append(tc["function"].get("arguments") or "")


def anthropic_events(events, bufs: dict) -> None:
    for ev in events:
        if ev.get("type") == "content_block_delta":
            delta = ev["delta"]
            if delta.get("type") == "input_json_delta":
                bufs.setdefault(ev["index"], []).append(delta["partial_json"])


def anthropic(data: bytes, bufs: dict) -> None:
    anthropic_events(sse_payloads(data), bufs)


def openai_responses(data: bytes, bufs: dict) -> None:
    for ev in sse_payloads(data):
        if ev.get("type") == "response.function_call_arguments.delta":
            bufs.setdefault(ev["output_index"], []).append(ev["delta"])


def cohere(data: bytes, bufs: dict) -> None:
    for ev in sse_payloads(data):
        if ev.get("type") == "tool-call-delta":
            args = ev["delta"]["message"]["tool_calls"]["function"]["arguments"]
            bufs.setdefault(ev["index"], []).append(args)


def ai_sdk(data: bytes, bufs: dict) -> None:
    for ev in sse_payloads(data):
        if ev.get("type") == "tool-input-delta":
            bufs.setdefault(ev["toolCallId"], []).append(ev["inputTextDelta"])


def bedrock_converse(data: bytes, bufs: dict) -> None:
    for ev in eventstream_payloads(data):
        tool = ev.get("delta", {}).get("toolUse")
        if tool is not None:
            bufs.setdefault(ev["contentBlockIndex"], []).append(tool["input"])


def bedrock_invoke(data: bytes, bufs: dict) -> None:
    inner = (loads(base64.b64decode(ev["bytes"]).decode()) for ev in eventstream_payloads(data))
    anthropic_events(inner, bufs)


def ollama(data: bytes, bufs: dict) -> None:
    for line in data.decode("utf-8").split("\n"):
        if not line:
            continue
        message = loads(line).get("message") or {}
        if message.get("content"):
            bufs.setdefault("text", []).append(message["content"])
        for i, call in enumerate(message.get("tool_calls") or ()):
            bufs.setdefault(i, []).append(json.dumps(call["function"]["arguments"]))


FLOORS = {
    "openai-chat": openai_chat,
    "anthropic": anthropic,
    "openai-responses": openai_responses,
    "cohere": cohere,
    "bedrock-converse": bedrock_converse,
    "bedrock-invoke": bedrock_invoke,
    "ollama": ollama,
    "ai-sdk": ai_sdk,
}


def main() -> None:
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = f.read()
    bufs: dict = {}
    FLOORS[fmt](data, bufs)
    parsed = [json.loads("".join(v)) for k, v in bufs.items() if k != "text"]
    print(len(parsed))


if __name__ == "__main__":
    main()
