"""Chat Completions SSE chunks for the benchmarks that build their own streams
(the engine benchmark writes its own f-strings: it makes a million of them)."""

from __future__ import annotations

import json


def chat_chunk(
    delta: dict,
    finish: str | None = None,
    *,
    id: str = "chatcmpl-bench",
    created: int = 1760000000,
    model: str = "gpt-4o-2024-08-06",
) -> str:
    """One ``data:`` event of a ``chat.completion.chunk`` with one choice."""
    body = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(body, separators=(",", ":")) + "\n\n"
