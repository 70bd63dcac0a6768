"""The stdlib floor per wire format, run as its own process by bench/engine.py.

    python bench/floors.py FORMAT FILE
    python bench/floors.py --msgspec FORMAT FILE    # the same with msgspec's decoder

The least any reader of FORMAT must do to get the tool calls' arguments out
of FILE: cut the events out of the framing, decode each JSON payload, append
each argument piece to its call's list, join, and parse the result. It gets
the same shortcut fraglens uses for each payload (the C ``scan_once`` without
``json.loads``'s Python layers), checks no CRC, validates nothing, and prints
only how many calls it parsed. Standard library only, so its start-up is
Python's alone. With ``--msgspec`` every payload is decoded by
``msgspec.json.decode`` instead, from the input's bytes (SSE is cut as bytes,
not decoded to text first): the fastest decoder Python has, the physical
limit of a reader that decodes every event.
"""

from __future__ import annotations

import base64
import json
import struct
import sys

_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
MSGSPEC = sys.argv[1:2] == ["--msgspec"]


def loads(text: str):
    return _scan_once(text, 0)[0]


def loads_bytes(raw: bytes):
    return loads(raw.decode("utf-8"))


if MSGSPEC:
    import msgspec

    loads = loads_bytes = msgspec.json.decode


def sse_payloads(data: bytes):
    """Each ``data:`` line's JSON (one-line events, LF or CRLF line ends)."""
    crlf = b"\r\n" in data[:4096]
    if MSGSPEC:
        for line in data.split(b"\r\n" if crlf else b"\n"):
            if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
                yield loads_bytes(line[5:])
        return
    for line in data.decode("utf-8").split("\r\n" if crlf else "\n"):
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            yield loads(line[5:].lstrip(" "))


def eventstream_payloads(data: bytes):
    unpack = struct.Struct(">II").unpack_from
    pos = 0
    while pos + 12 <= len(data):
        total, headers = unpack(data, pos)
        start = pos + 12 + headers
        yield loads_bytes(data[start : pos + total - 4])
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


def gemini(data: bytes, bufs: dict) -> None:
    """Vertex's streamed arguments: each leaf's value by its path (a string's
    pieces appended), then the value built from the paths."""
    for ev in sse_payloads(data):
        for cand in ev.get("candidates") or ():
            for part in cand["content"]["parts"]:
                call = part.get("functionCall")
                if call is None:
                    continue
                if "name" in call:
                    bufs[len(bufs)] = {}
                for entry in call.get("partialArgs") or ():
                    leaves = bufs[len(bufs) - 1]
                    path = entry["jsonPath"]
                    if "stringValue" in entry:
                        leaves.setdefault(path, []).append(entry["stringValue"])
                    else:
                        leaves[path] = entry.get("numberValue")
    for key, leaves in bufs.items():
        value: dict = {}
        for path, leaf in leaves.items():
            steps = [int(s) if s.isdigit() else s
                     for s in path[2:].replace("[", ".").replace("]", "").split(".")]
            node = value
            for step, after in zip(steps, steps[1:], strict=False):
                if isinstance(step, int):
                    if step == len(node):
                        node.append({} if isinstance(after, str) else [])
                    node = node[step]
                else:
                    node = node.setdefault(step, {} if isinstance(after, str) else [])
            node[steps[-1]] = "".join(leaf) if isinstance(leaf, list) else leaf
        bufs[key] = [json.dumps(value)]


def dashscope(data: bytes, bufs: dict) -> None:
    for ev in sse_payloads(data):
        for choice in ev["output"]["choices"]:
            for tc in choice["message"].get("tool_calls") or ():
                bufs.setdefault(tc["index"], []).append(tc["function"].get("arguments") or "")


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
    "gemini": gemini,
    "gemini-long": gemini,
    "dashscope": dashscope,
}


def main() -> None:
    fmt, path = sys.argv[-2], sys.argv[-1]
    with open(path, "rb") as f:
        data = f.read()
    bufs: dict = {}
    FLOORS[fmt](data, bufs)
    parsed = [json.loads("".join(v)) for k, v in bufs.items() if k != "text"]
    print(len(parsed))


if __name__ == "__main__":
    main()
