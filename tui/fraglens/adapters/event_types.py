"""The event types and names each wire format is known by.

Detection (``adapters/__init__.py``) reads a chunk's ``type`` and the SSE or
event-stream name against these; the adapters read them too. They live here,
apart from the adapters, so that naming a stream's format loads none of the
fourteen adapters: only the one of the format found is imported (start-up).
"""

from __future__ import annotations

from typing import Any

#: every event type of the AG-UI protocol (``ag_ui.core.EventType``; a test
#: holds the two equal)
AG_UI_TYPES = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TEXT_MESSAGE_CHUNK",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_CHUNK",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "MESSAGES_SNAPSHOT",
        "ACTIVITY_SNAPSHOT",
        "ACTIVITY_DELTA",
        "RAW",
        "CUSTOM",
        "RUN_STARTED",
        "RUN_FINISHED",
        "RUN_ERROR",
        "STEP_STARTED",
        "STEP_FINISHED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_MESSAGE_CHUNK",
        "REASONING_END",
        "REASONING_ENCRYPTED_VALUE",
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
        "SUBAGENT_ERROR",
    }
)

#: the reasoning events of AG-UI versions before 1.0, still in captures
AG_UI_OLDER_TYPES = frozenset(
    {
        "THINKING_START",
        "THINKING_END",
        "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
    }
)

#: AI SDK UI stream part types only that stream sends (``start``, ``finish``,
#: ``error`` are generic)
AI_SDK_PART_TYPES = frozenset(
    {
        "start-step",
        "finish-step",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-output-available",
        "tool-output-error",
        "tool-output-denied",
        "tool-approval-request",
        "source-url",
        "source-document",
        "message-metadata",
    }
)

#: event names of a Bedrock ConverseStream (the members of ConverseStreamOutput)
CONVERSE_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop",
     "metadata"}
)

#: every event type of a Cohere v2 chat stream
COHERE_TYPES = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)

#: every event type of a Mistral Conversations stream (the SDK's ``SSETypes``;
#: a test holds the two equal)
MISTRAL_TYPES = frozenset(
    {
        "conversation.response.started",
        "conversation.response.done",
        "conversation.response.error",
        "message.output.delta",
        "tool.execution.started",
        "tool.execution.delta",
        "tool.execution.done",
        "agent.handoff.started",
        "agent.handoff.done",
        "function.call.delta",
    }
)

#: event types only the Realtime API sends (the Responses API shares the rest)
REALTIME_ONLY_TYPES = frozenset(
    {
        "session.created",
        "session.updated",
        "conversation.created",
        "conversation.item.created",
        "conversation.item.added",
        "conversation.item.done",
        "rate_limits.updated",
        "response.done",
        "response.text.delta",
        "response.audio_transcript.delta",
        "response.output_audio_transcript.delta",
        "response.audio.delta",
        "response.output_audio.delta",
        "input_audio_buffer.committed",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
    }
)

#: LangChain message types that are the model's (``AIMessageChunk`` and its serializations)
LANGCHAIN_AI_TYPES = frozenset({"AIMessageChunk", "ai", "AIMessage"})
LANGCHAIN_MESSAGE_TYPES = LANGCHAIN_AI_TYPES | {
    "tool", "ToolMessage", "ToolMessageChunk", "human", "system"
}


def is_langchain_message(value: Any) -> bool:
    """A serialized LangChain message (what LangGraph's ``messages`` events carry)."""
    kind = value.get("type") if isinstance(value, dict) else None
    return isinstance(kind, str) and kind in LANGCHAIN_MESSAGE_TYPES and "content" in value
