"""Write the binary Bedrock samples (sample_streams/*.eventstream), reproducibly.

    .venv/bin/python scripts/make_eventstream_samples.py

Binary files cannot carry a header comment: what each one shows, and what
fraglens must report on it, is in sample_streams/README.md ("Bedrock"). The
events follow the ConverseStream and InvokeModelWithResponseStream references
(see docs/formats.md); ids and texts are made up. Running this again writes
the same bytes.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tui"))

from fraglens.framing.eventstream import encode_message  # noqa: E402

OUT = ROOT / "sample_streams"


def event(name: str, payload: dict) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload, separators=(",", ":")).encode())


def exception(name: str, message: str) -> bytes:
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, json.dumps({"message": message}).encode())


def tool(index: int, tool_id: str, name: str, pieces: list[str]) -> list[bytes]:
    out = [event("contentBlockStart", {
        "contentBlockIndex": index,
        "start": {"toolUse": {"toolUseId": tool_id, "name": name}},
    })]
    for piece in pieces:
        out.append(event("contentBlockDelta", {
            "contentBlockIndex": index, "delta": {"toolUse": {"input": piece}},
        }))
    out.append(event("contentBlockStop", {"contentBlockIndex": index}))
    return out


def text(index: int, pieces: list[str]) -> list[bytes]:
    out = [event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": p}})
           for p in pieces]
    out.append(event("contentBlockStop", {"contentBlockIndex": index}))
    return out


START = event("messageStart", {"role": "assistant"})


def stop(reason: str, inputs: int, outputs: int) -> list[bytes]:
    return [
        event("messageStop", {"stopReason": reason}),
        event("metadata", {
            "usage": {"inputTokens": inputs, "outputTokens": outputs,
                      "totalTokens": inputs + outputs},
            "metrics": {"latencyMs": 1187},
        }),
    ]


def converse_text_and_tool() -> bytes:
    return b"".join([
        START,
        *text(0, ["I'll look up ", "the weather in Lisbon."]),
        *tool(1, "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather",
              ['{"city": ', '"Lisbon', '", "unit": "c', 'elsius"}']),
        *stop("tool_use", 412, 76),
    ])


def converse_parallel() -> bytes:
    return b"".join([
        START,
        *tool(0, "tooluse_3Yb4oOQ0TnWnS6Wm0m0wGg", "get_stock_price",
              ['{"tick', 'er": "AMZN"}']),
        *tool(1, "tooluse_VfUuPq0sQ2aGxnY3ZyB7dA", "get_stock_price",
              ['{"ticker"', ': "MSFT"}']),
        *stop("tool_use", 388, 91),
    ])


def converse_no_args() -> bytes:
    # a tool without parameters: its only delta is empty input text
    return b"".join([
        START,
        *tool(0, "tooluse_Q1n8bqvZSB2r4yS2rH0Lkw", "get_current_time", [""]),
        *stop("tool_use", 301, 38),
    ])


def converse_truncated() -> bytes:
    whole = b"".join([
        START,
        *tool(0, "tooluse_m9cXoJ8nTkyLZr7mA1dXvQ", "create_issue",
              ['{"title": "Crash on ', 'save", "body": "Steps to', ' reproduce: open']),
    ])
    last = event("contentBlockDelta", {
        "contentBlockIndex": 0, "delta": {"toolUse": {"input": ' the editor, type'}},
    })
    return whole + last[: len(last) // 2]  # the connection dropped mid-message


def converse_exception() -> bytes:
    return b"".join([
        START,
        *tool(0, "tooluse_b2Zc8mW1QpK3sVt6uXy9Aa", "search_docs", ['{"query": "S3 lifecycle ']),
        exception("modelStreamErrorException",
                  "The model stream was interrupted. Retry your request."),
    ])


def converse_crc_damaged() -> bytes:
    messages = [
        START,
        *text(0, ["Checking ", "both airports."]),
        *tool(1, "tooluse_Hh2kT7pWQe2m4bY5cZ6dNg", "get_airport_info", ['{"iata": "OPO"}']),
        *stop("tool_use", 350, 60),
    ]
    # one flipped bit in the second text delta's prelude: its length no longer
    # matches its CRC, so nothing says where that message ends
    broken = bytearray(messages[2])
    broken[3] ^= 0x01
    messages[2] = bytes(broken)
    return b"".join(messages)


#: what Bedrock pads every payload with, in a ``"p"`` field: a prefix of this,
#: of a random length per message (so a message's size hides its content's)
PAD = string.ascii_lowercase + string.ascii_uppercase + string.digits


def converse_padded() -> bytes:
    lengths = random.Random(14).randint  # seeded: the same bytes every time

    def padded(name: str, payload: dict) -> bytes:
        return event(name, {**payload, "p": PAD[: lengths(1, len(PAD))]})

    pieces = ['{"path": "notes/', 'plan.md", "con', 'tent": "# Plan\\n\\n- ', 'ship the rea',
              'der\\n- measure', ' it\\n"}']
    return b"".join([
        padded("messageStart", {"role": "assistant"}),
        padded("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "tooluse_Xq3vR8sLTe2N5bYw7cK1pA", "name": "write_file"}}}),
        *(padded("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": p}}})
          for p in pieces),
        padded("contentBlockStop", {"contentBlockIndex": 0}),
        padded("messageStop", {"stopReason": "tool_use"}),
        padded("metadata", {"usage": {"inputTokens": 377, "outputTokens": 64,
                                      "totalTokens": 441}, "metrics": {"latencyMs": 903}}),
    ])


def chunk(inner: dict, pad: str | None = None) -> bytes:
    data = base64.b64encode(json.dumps(inner, separators=(",", ":")).encode()).decode()
    return event("chunk", {"bytes": data} if pad is None else {"bytes": data, "p": pad})


def anthropic_tool(index: int, tool_id: str, name: str, pieces: list[str]) -> list[bytes]:
    out = [chunk({"type": "content_block_start", "index": index, "content_block": {
        "type": "tool_use", "id": tool_id, "name": name, "input": {}}})]
    for piece in ["", *pieces]:
        out.append(chunk({"type": "content_block_delta", "index": index,
                          "delta": {"type": "input_json_delta", "partial_json": piece}}))
    out.append(chunk({"type": "content_block_stop", "index": index}))
    return out


INVOKE_START = chunk({"type": "message_start", "message": {
    "id": "msg_bdrk_01HkVz4CqJ9a7S2tQwYxPmN3", "type": "message", "role": "assistant",
    "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": None,
    "stop_sequence": None, "usage": {"input_tokens": 402, "output_tokens": 1}}})


def invoke_parallel() -> bytes:
    return b"".join([
        INVOKE_START,
        *anthropic_tool(0, "toolu_bdrk_01Ab3Zx9Qm2Lw8Ty6Uv4Rs1P", "get_weather",
                        ['{"city": "', 'Madrid"}']),
        *anthropic_tool(1, "toolu_bdrk_01Cd5Ef7Gh9Ij1Kl3Mn5Op7Q", "get_weather",
                        ['{"city": "', 'Valencia"}']),
        chunk({"type": "message_delta", "delta": {"stop_reason": "tool_use",
               "stop_sequence": None}, "usage": {"output_tokens": 98}}),
        chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": {
            "inputTokenCount": 402, "outputTokenCount": 98, "invocationLatency": 1604,
            "firstByteLatency": 611}}),
    ])


def invoke_padded() -> bytes:
    lengths = random.Random(15).randint  # seeded: the same bytes every time
    events = [
        {"type": "message_start", "message": {
            "id": "msg_bdrk_01Wq8Nn2Lk5Jh7Gf9Ds1Ap3Z", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 415, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_bdrk_01Mn4Bv6Cx8Za0Sd2Fg4Hj6K", "name": "run_query",
            "input": {}}},
        *({"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": piece}}
          for piece in ["", '{"sql": "SELECT', ' name, total FROM', ' orders WHERE total',
                        ' > 100",', ' "limit": 20}']),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 57}},
        {"type": "message_stop", "amazon-bedrock-invocationMetrics": {
            "inputTokenCount": 415, "outputTokenCount": 57, "invocationLatency": 1322,
            "firstByteLatency": 540}},
    ]
    return b"".join(chunk(e, PAD[: lengths(1, len(PAD))]) for e in events)


def invoke_throttled() -> bytes:
    return b"".join([
        INVOKE_START,
        *anthropic_tool(0, "toolu_bdrk_01Rt7Yu9Io1Pa3Sd5Fg7Hj9K", "read_file",
                        ['{"path": "src/', 'main.rs"}']),
        # the second call's start and first deltas, then the throttle: no block stop
        *anthropic_tool(1, "toolu_bdrk_01Zx2Cv4Bn6Mq8Wr0Et2Yu4I", "read_file",
                        ['{"path": "src/li'])[:-1],
        exception("throttlingException", "Too many requests, please wait before trying again."),
    ])


SAMPLES = {
    "bedrock_converse_text_and_tool": converse_text_and_tool,
    "bedrock_converse_parallel": converse_parallel,
    "bedrock_converse_no_args": converse_no_args,
    "bedrock_converse_truncated": converse_truncated,
    "bedrock_converse_exception": converse_exception,
    "bedrock_converse_crc_damaged": converse_crc_damaged,
    "bedrock_converse_padded": converse_padded,
    "bedrock_invoke_claude_parallel": invoke_parallel,
    "bedrock_invoke_padded": invoke_padded,
    "bedrock_invoke_throttled": invoke_throttled,
}


def main() -> None:
    for name, build in SAMPLES.items():
        path = OUT / f"{name}.eventstream"
        path.write_bytes(build())
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
