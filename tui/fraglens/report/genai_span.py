"""What one exchange's OpenTelemetry span says: a ``check`` report and its
stream in, the span's name, attributes and events out, as plain data.

The attributes follow OpenTelemetry's GenAI semantic conventions for an
inference span (status: Development; the names of the current conventions,
``gen_ai.provider.name`` rather than the older ``gen_ai.system``), so that
any backend that reads GenAI spans shows the exchange; the ``fraglens.*``
attributes and one span event per diagnostic carry what only fraglens
knows: which call was truncated or repaired, and why. The calls' content
(``gen_ai.output.messages``) is opt-in, as the conventions ask.

Sans-I/O: ``net/otlp.py`` turns this into a real span and sends it.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine.diagnostics import SEVERITY_RANK
from ..reading.stream import Stream
from .identity import streamed_identity

__all__ = ["PROVIDERS", "genai_span"]

#: wire format -> ``gen_ai.provider.name``: the conventions' registered names
#: where there is one; an OpenAI-compatible stream is read as OpenAI's
#: protocol, whoever served it
PROVIDERS: dict[str, str] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "cohere": "cohere",
    "dashscope": "alibaba.dashscope",
    "bedrock-converse": "aws.bedrock",
    "bedrock-invoke": "aws.bedrock",
    "ollama": "ollama",
    "ai-sdk": "vercel.ai_sdk",
}

_SEVERITY = {rank: name for name, rank in SEVERITY_RANK.items()}


def _seconds(ms: Any) -> float | None:
    return ms / 1000 if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None


def _output_messages(doc: dict[str, Any]) -> str:
    """``gen_ai.output.messages``: one assistant message per choice, its text
    and its tool calls as parts (arguments as parsed, else as received)."""
    messages = []
    choices = sorted({*doc["text"], *(str(c["choice"]) for c in doc["calls"])}, key=int)
    for choice in choices:
        parts: list[dict[str, Any]] = []
        if doc["text"].get(choice):
            parts.append({"type": "text", "content": doc["text"][choice]})
        for call in doc["calls"]:
            if str(call["choice"]) == choice:
                arguments = call["arguments"] if call["arguments"] is not None else call[
                    "arguments_raw"]
                parts.append({"type": "tool_call", "id": call["id"], "name": call["name"],
                              "arguments": arguments})
        messages.append({"role": "assistant", "parts": parts,
                         "finish_reason": doc["finish_reasons"].get(choice) or ""})
    return json.dumps(messages, ensure_ascii=False)


def genai_span(
    doc: dict[str, Any],
    stream: Stream,
    content: bool = False,
    request_model: str | None = None,
) -> dict[str, Any]:
    """The span of the exchange ``doc`` reports (``stream``: what it was read
    from): ``{"name", "attributes", "events", "error"}``. ``request_model``:
    the model the request named, where it is known (live, the proxy)."""
    who = streamed_identity(stream.events)
    model = request_model or who.model
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.stream": True,
        "fraglens.format": doc["format"],
        "fraglens.framing": doc["framing"],
        "fraglens.end": doc["end"],
        "fraglens.events": doc["events"],
        "fraglens.calls.count": len(doc["calls"]),
        "fraglens.calls.status": [c["status"] for c in doc["calls"]],
        "fraglens.calls.name": [c["name"] or "" for c in doc["calls"]],
        "fraglens.calls.fragments": [c["fragments"] for c in doc["calls"]],
        "fraglens.fragments": sum(c["fragments"] for c in doc["calls"]),
        "fraglens.diagnostics.count": len(doc["diagnostics"]),
        "fraglens.bytes_replaced": sum(
            1 for d in doc["diagnostics"] if d["code"] == "bytes-replaced"),
    }
    provider = PROVIDERS.get(doc["format"] or "")
    if provider:
        attrs["gen_ai.provider.name"] = provider
    if model:
        attrs["gen_ai.request.model"] = model
    if who.model:
        attrs["gen_ai.response.model"] = who.model
    if who.response_id:
        attrs["gen_ai.response.id"] = who.response_id
    finishes = [f for _, f in sorted(doc["finish_reasons"].items()) if f]
    if finishes:
        attrs["gen_ai.response.finish_reasons"] = finishes
    used = doc.get("usage") or {}
    for name, key in (("input_tokens", "input"), ("output_tokens", "output"),
                      ("cache_read.input_tokens", "cached"),
                      ("cache_creation.input_tokens", "cache_write")):
        if used.get(key) is not None:
            attrs[f"gen_ai.usage.{name}"] = used[key]
    if used.get("reasoning") is not None:
        attrs["fraglens.usage.reasoning_tokens"] = used["reasoning"]
    if doc.get("cost"):
        attrs["fraglens.cost.total"] = doc["cost"]["total"]
        attrs["fraglens.cost.currency"] = doc["cost"]["currency"]
    if doc["diagnostics"]:
        worst = max(SEVERITY_RANK[d["severity"]] for d in doc["diagnostics"])
        attrs["fraglens.worst_severity"] = _SEVERITY[worst]
    timing = doc.get("timing") or {}
    first = _seconds(timing.get("first_event_ms"))
    if first is not None:
        attrs["gen_ai.response.time_to_first_chunk"] = first
        attrs["fraglens.timing.first_event_s"] = first
    first_tool = _seconds(timing.get("first_tool_byte_ms"))
    if first_tool is not None:
        attrs["fraglens.timing.first_tool_byte_s"] = first_tool
    if timing:
        attrs["fraglens.timing.stalls"] = len(timing.get("stalls") or [])
    if content:
        attrs["gen_ai.output.messages"] = _output_messages(doc)
    events = []
    for d in doc["diagnostics"]:
        event_attrs: dict[str, Any] = {
            "fraglens.diagnostic.code": d["code"],
            "fraglens.diagnostic.severity": d["severity"],
            "fraglens.diagnostic.message": d["message"],
        }
        if d.get("event") is not None:
            event_attrs["fraglens.diagnostic.event"] = d["event"]
        if d.get("call") is not None:
            event_attrs["fraglens.diagnostic.call"] = d["call"]
        events.append({"name": "fraglens.diagnostic", "attributes": event_attrs})
    error = None
    if doc["end"] == "error":
        error = "error"
        attrs["error.type"] = "stream_error"
    return {
        "name": f"chat {model}" if model else "chat",
        "attributes": attrs,
        "events": events,
        "error": error,
        "duration_s": _seconds(timing.get("duration_ms")),
    }
