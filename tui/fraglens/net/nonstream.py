"""The answer a provider gives without streaming, made from a streamed capture.

``fraglens serve --answer-nonstream`` answers a request that says
``"stream": false`` with this body instead of HTTP 400, so that
``compare --nonstream`` can hold a stream's reassembly to the non-streamed
answer of the same exchange. The body holds the calls as fraglens reads the
capture whole (each call's value, its text when it has none), the text, the
finish and the usage, in the shape of the endpoint asked: Chat Completions'
``chat.completion``, Anthropic's ``message``, or a Responses ``response``.
Chaos never touches it: it stands for the model's answer, the stream for
what the wire made of it.
"""

from __future__ import annotations

import json
from typing import Any

from ..reading.capture import LoadError, stream_from_bytes
from ..report.document import build_report
from .replay import Source

__all__ = ["ANSWERED_FORMATS", "answer_body"]

#: the endpoints whose non-streamed answer can be made
ANSWERED_FORMATS = frozenset({"openai-chat", "anthropic", "openai-responses"})


def _arguments(call: dict[str, Any]) -> tuple[Any, str]:
    """The call's value (None when it has none) and its JSON text."""
    value = call["arguments"]
    if value is None:
        return None, call["arguments_raw"]
    return value, json.dumps(value, ensure_ascii=False)


def answer_body(source: Source, fmt: str) -> dict[str, Any] | None:
    """``source`` answered without streaming in the shape of ``fmt``; None
    when that shape is not one of ``ANSWERED_FORMATS`` or the capture holds
    no answer (an error replayed as it came, say)."""
    if fmt not in ANSWERED_FORMATS:
        return None
    try:
        stream, _ = stream_from_bytes(source.body, source.name, format=source.format)
    except LoadError:  # a capture serve could load but not read: no answer to make
        return None
    doc = build_report(stream)
    calls = doc["calls"]
    text = doc["text"].get("0")
    model = source.model or "fraglens-replay"
    # the usage as the capture spelled it (the report's own is normalized)
    usage = (doc.get("usage") or {}).get("reported")
    if fmt == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for call in calls:
            value, raw = _arguments(call)
            content.append({"type": "tool_use", "id": call["id"], "name": call["name"],
                            "input": value if value is not None else raw})
        return {"id": f"msg_{source.name}", "type": "message", "role": "assistant",
                "model": model, "content": content,
                "stop_reason": "tool_use" if calls else "end_turn", "usage": usage or {}}
    if fmt == "openai-responses":
        output: list[dict[str, Any]] = []
        if text:
            output.append({"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": text}]})
        for call in calls:
            output.append({"type": "function_call", "call_id": call["id"],
                           "name": call["name"], "arguments": _arguments(call)[1]})
        return {"id": f"resp_{source.name}", "object": "response", "model": model,
                "status": "completed", "output": output, "usage": usage}
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": call["id"], "type": "function",
             "function": {"name": call["name"], "arguments": _arguments(call)[1]}}
            for call in calls
        ]
    return {"id": f"chatcmpl-{source.name}", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": usage}
