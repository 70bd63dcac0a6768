"""Wire-format adapters: one decoded chunk of one format in, normalized fragment ops out.

Every adapter is a small class holding the state of one stream; ``feed`` takes
the decoded JSON value of one event (and the SSE ``event:`` name, if any) and
returns ``Op`` records from ``fraglens.engine.fragments``. Adapters never raise on
odd input: a JSON value of an unexpected shape yields a ``Notice`` where
``diagnostics.CODES`` has a code for it, and is otherwise ignored.

``detect`` names the format of a stream from one chunk, or says it cannot
tell yet; ``sniff`` says how sure it is, so that a stream that never shows a
telling chunk can be reported as a guess instead of silently assumed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal

from ..records import FrozenRecord
from .base import Adapter
from .event_types import AG_UI_OLDER_TYPES as _AG_UI_OLDER
from .event_types import AG_UI_TYPES as _AG_UI_TYPES
from .event_types import AI_SDK_PART_TYPES as _AI_SDK_TYPES
from .event_types import COHERE_TYPES as _COHERE_TYPES
from .event_types import CONVERSE_EVENTS as _CONVERSE_EVENTS
from .event_types import MISTRAL_TYPES as _MISTRAL_TYPES
from .event_types import REALTIME_ONLY_TYPES as _REALTIME_TYPES
from .event_types import is_langchain_message as _is_langchain_message

if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "ADAPTERS",
    "ALIASES",
    "Adapter",
    "Detection",
    "detect",
    "make_adapter",
    "sniff",
]

#: format name -> the module of this package and the class that read it, in
#: the order formats are listed: a module is imported when a stream of its
#: format is read, not to name a stream's format (``event_types.py``)
_TABLE = {
    "openai-chat": ("openai_chat", "OpenAIChatAdapter"),
    "anthropic": ("anthropic", "AnthropicAdapter"),
    "openai-responses": ("responses", "ResponsesAdapter"),
    "openai-realtime": ("realtime", "RealtimeAdapter"),
    "gemini": ("gemini", "GeminiAdapter"),
    "cohere": ("cohere", "CohereAdapter"),
    "dashscope": ("dashscope", "DashScopeAdapter"),
    "bedrock-converse": ("bedrock", "BedrockConverseAdapter"),
    "bedrock-invoke": ("bedrock", "BedrockInvokeAdapter"),
    "ollama": ("ollama", "OllamaAdapter"),
    "ai-sdk": ("ai_sdk", "AISDKAdapter"),
    "ag-ui": ("ag_ui", "AGUIAdapter"),
    "langgraph": ("langgraph", "LangGraphAdapter"),
    "mistral-conversations": ("mistral_conversations", "MistralConversationsAdapter"),
}


class _Adapters(Mapping[str, "type[Adapter]"]):
    """Format name -> adapter class, each class's module imported when it is asked for."""

    def __getitem__(self, name: str) -> type[Adapter]:
        module, cls = _TABLE[name]
        found: type[Adapter] = getattr(import_module(f"{__name__}.{module}"), cls)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_TABLE)

    def __len__(self) -> int:
        return len(_TABLE)


ADAPTERS: Mapping[str, type[Adapter]] = _Adapters()

#: Other names people type for ``--format``.
ALIASES = {
    "openai": "openai-chat",
    "chat": "openai-chat",
    "responses": "openai-responses",
    "realtime": "openai-realtime",
    "google": "gemini",
    "vertex": "gemini",
    "claude": "anthropic",
    "qwen": "dashscope",
    "bedrock": "bedrock-converse",
    "converse": "bedrock-converse",
    "ollama-native": "ollama",
    "vercel": "ai-sdk",
    "ai-sdk-ui": "ai-sdk",
    "agui": "ag-ui",
    "copilotkit": "ag-ui",
    "langgraph-messages": "langgraph",
    "mistral-agents": "mistral-conversations",
    "conversations": "mistral-conversations",
}


def make_adapter(name: str) -> Adapter:
    """A fresh adapter (fresh per-stream state) for a format name or alias."""
    key = ALIASES.get(name, name)
    if key not in ADAPTERS:
        known = ", ".join(sorted(ADAPTERS))
        raise ValueError(f"unknown wire format {name!r} (known: {known})")
    return ADAPTERS[key]()


Confidence = Literal["certain", "likely"]


class Detection(FrozenRecord):
    """What one chunk says about the format. ``certain``: only that format
    sends such a chunk; ``likely``: the best guess for a chunk several formats
    could send (an error body, a keep-alive)."""

    __slots__ = ("format", "confidence", "reason")
    format: Final[str]
    confidence: Final[Confidence]
    reason: Final[str]

    def __init__(self, format: str, confidence: Confidence, reason: str) -> None:
        self.format = format
        self.confidence = confidence
        self.reason = reason


_ANTHROPIC_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
_CHAT_OBJECTS = frozenset({"chat.completion.chunk", "chat.completion", "text_completion"})


def _by_type(kind: str, payload: dict[str, Any]) -> Detection | None:
    if kind in _AG_UI_TYPES or kind in _AG_UI_OLDER:
        return Detection("ag-ui", "certain", f"AG-UI event {kind!r}")
    if kind in _MISTRAL_TYPES:
        return Detection("mistral-conversations", "certain", f"Conversations event {kind!r}")
    if kind in _AI_SDK_TYPES or kind.startswith("data-"):
        return Detection("ai-sdk", "certain", f"UI message part {kind!r}")
    if kind in _REALTIME_TYPES:
        return Detection("openai-realtime", "certain", f"event type {kind!r}")
    if "event_id" in payload and kind.startswith(("response.", "error")):
        # every Realtime server event carries an event_id; no Responses event does
        return Detection("openai-realtime", "certain", f"event type {kind!r} with an event_id")
    if kind.startswith("response."):
        return Detection("openai-responses", "certain", f"event type {kind!r}")
    if kind in _ANTHROPIC_TYPES:
        return Detection("anthropic", "certain", f"event type {kind!r}")
    if kind in _COHERE_TYPES:
        return Detection("cohere", "certain", f"event type {kind!r}")
    if kind == "message" and isinstance(payload.get("content"), list):
        return Detection("anthropic", "certain", "a Messages body")
    if kind == "start" and set(payload) <= {"type", "messageId", "messageMetadata"}:
        return Detection("ai-sdk", "likely", "a start part")
    if kind == "ping":
        return Detection("anthropic", "likely", "a ping event")
    if kind == "error":
        if isinstance(payload.get("error"), dict):
            return Detection("anthropic", "likely", "an error event with an error object")
        return Detection("openai-responses", "likely", "an error event with a message")
    return None


def _by_event(event: str, payload: dict[str, Any]) -> Detection | None:
    """What a binary event-stream message's name (``:event-type``) tells: Bedrock."""
    if event in _CONVERSE_EVENTS:
        # "metadata" alone is a common SSE event name elsewhere too
        sure: Confidence = "likely" if event == "metadata" else "certain"
        return Detection("bedrock-converse", sure, f"Bedrock event {event!r}")
    if event == "chunk" and isinstance(payload.get("bytes"), str):
        return Detection("bedrock-invoke", "certain", "a Bedrock chunk with base64 bytes")
    if event.endswith("Exception"):
        return Detection("bedrock-converse", "likely", f"a Bedrock {event}")
    return None


def _by_shape(payload: dict[str, Any]) -> Detection | None:
    obj = payload.get("object")
    if isinstance(obj, str) and obj in _CHAT_OBJECTS:
        return Detection("openai-chat", "certain", f"object {obj!r}")
    if obj == "response":
        return Detection("openai-responses", "certain", "a Responses body")
    if isinstance(payload.get("choices"), list):
        return Detection("openai-chat", "certain", "a choices array")
    if isinstance(payload.get("candidates"), list) or isinstance(
        payload.get("promptFeedback"), dict
    ):
        return Detection("gemini", "certain", "candidates / promptFeedback")
    output = payload.get("output")
    if isinstance(output, dict) and (
        isinstance(output.get("choices"), list) or "text" in output or "finish_reason" in output
    ):
        return Detection("dashscope", "certain", "an output object")
    if isinstance(payload.get("message"), dict) and isinstance(payload.get("done"), bool):
        return Detection("ollama", "certain", "an /api/chat line (message, done)")
    if isinstance(payload.get("usageMetadata"), dict):
        sure = "modelVersion" in payload or "responseId" in payload
        return Detection("gemini", "certain" if sure else "likely", "usageMetadata")
    if obj == "error":
        return Detection("openai-chat", "likely", "an object: error body")
    if "request_id" in payload and "code" in payload and "message" in payload:
        return Detection("dashscope", "likely", "a code/message/request_id error")
    return None


def _langgraph(payload: Any, event: str | None) -> Detection | None:
    """LangGraph's message modes: the SSE event's name, or a ``[message, metadata]`` pair."""
    mode = event.split("|", 1)[0] if isinstance(event, str) else ""
    if mode == "messages" or mode.startswith("messages/"):
        return Detection("langgraph", "certain", f"LangGraph event {event!r}")
    if (
        isinstance(payload, list)
        and len(payload) == 2
        and _is_langchain_message(payload[0])
        and isinstance(payload[1], dict)
    ):
        return Detection("langgraph", "certain", "a [message, metadata] pair")
    return None


def sniff(payload: Any, event: str | None = None) -> Detection | None:
    """What one chunk tells about the wire format, with how sure it is; None if nothing."""
    graph = _langgraph(payload, event)
    if graph is not None:
        return graph
    if isinstance(payload, list):
        items = [sniff(item) for item in payload[:8] if isinstance(item, dict)]
        certain = [d for d in items if d is not None and d.confidence == "certain"]
        return certain[0] if certain else next((d for d in items if d is not None), None)
    if isinstance(payload, dict):
        if isinstance(event, str) and event:
            bedrock = _by_event(event, payload)
            if bedrock is not None:
                return bedrock
        kind = payload.get("type")
        found = _by_type(kind, payload) if isinstance(kind, str) else None
        if found is None or found.confidence != "certain":
            shaped = _by_shape(payload)
            if shaped is not None and (found is None or shaped.confidence == "certain"):
                found = shaped
        if found is not None and found.confidence == "certain":
            return found
        by_event = _by_type(event, {}) if isinstance(event, str) and event else None
        if by_event is not None and by_event.confidence == "certain":
            return Detection(by_event.format, "certain", f"SSE event {event!r}")
        return found or by_event
    if isinstance(event, str) and event:
        by_event = _by_type(event, {})
        if by_event is not None:
            return Detection(by_event.format, "likely", f"SSE event {event!r}")
    return None


def detect(payload: Any, event: str | None = None) -> str | None:
    """The format this chunk proves, or None when it does not prove one (look at the next)."""
    found = sniff(payload, event)
    return found.format if found is not None and found.confidence == "certain" else None
