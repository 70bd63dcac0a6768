"""Mistral's Conversations API stream (``/v1/conversations``, agents).

Mistral's chat completions stream is ``openai-chat``; its Conversations API
streams typed events of its own, as SSE with the type as the ``event:`` name
and in the payload's ``type`` (``ConversationEvents`` in the ``mistralai``
SDK's models):

- ``function.call.delta`` (``tool_call_id``, ``name``, ``arguments``,
  ``output_index``): a piece of a call the client answers; the name rides on
  every piece, the calls are keyed by ``tool_call_id``;
- ``tool.execution.started`` / ``.delta`` (``id``, ``name``, ``arguments``)
  and ``.done`` (``info``): a built-in tool (web search, code interpreter)
  Mistral runs itself: a hosted call, its ``info`` shown as its output;
- ``message.output.delta`` (``content``: text or content chunks): the answer;
- ``conversation.response.done`` (``usage``) ends the response,
  ``conversation.response.error`` (``message``, ``code``) is an error;
- ``conversation.response.started``, ``agent.handoff.started`` / ``.done``:
  no calls. Another type is named (``event-unknown``).
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    Finish,
    Notice,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    ToolOutput,
    Usage,
)
from .base import as_str, error_message, text_of, unread
from .event_types import MISTRAL_TYPES as EVENT_TYPES


class MistralConversationsAdapter:
    """Conversations API events, one decoded ``data:`` payload at a time."""

    name = "mistral-conversations"
    ends_with = "terminal"
    indexes_calls = True  # the adapter numbers the calls 0, 1, ... itself
    continuation = None  # every event goes through feed

    def __init__(self) -> None:
        self._index: dict[str, int] = {}  # call id -> index, in order of appearance
        self._client_calls = 0  # calls the client answers (not Mistral's own tools)

    def _call(self, cid: str, name: str | None, hosted: bool, ops: list[Op]) -> int:
        """The call's index; its first fragment (id, name) the first time."""
        if cid not in self._index:
            self._index[cid] = len(self._index)
            self._client_calls += not hosted
            ops.append(ToolDelta(0, self._index[cid], id=cid, name=name, native_index=True,
                                 hosted=hosted))
        return self._index[cid]

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            kind = event or ""
        ops: list[Op] = []
        if kind == "function.call.delta":
            self._piece(payload, "tool_call_id", hosted=False, ops=ops)
        elif kind in ("tool.execution.started", "tool.execution.delta"):
            self._piece(payload, "id", hosted=True, ops=ops)
        elif kind == "tool.execution.done":
            cid = as_str(payload.get("id"))
            if cid in self._index:
                ops.append(ToolOutput(0, self._index[cid], output=payload.get("info")))
        elif kind == "message.output.delta":
            text = text_of(payload.get("content"))
            if text:
                ops.append(TextDelta(0, text))
        elif kind == "conversation.response.done":
            if isinstance(payload.get("usage"), dict):
                ops.append(Usage(dict(payload["usage"])))
            reason = "tool_calls" if self._client_calls else "stop"
            ops += [Finish(0, reason, kind), Terminal(kind)]
        elif kind == "conversation.response.error":
            message = error_message(payload.get("message"), "conversation error")
            code = as_str(payload.get("code"))
            ops.append(StreamError(f"{code}: {message}" if code else message))
        elif kind not in EVENT_TYPES:
            ops.append(Notice("event-unknown", f"Mistral Conversations event {kind!r} is not in "
                                               "the API; kept in the stream, not read"))
        return ops

    def _piece(self, payload: dict[str, Any], key: str, *, hosted: bool, ops: list[Op]) -> None:
        cid = as_str(payload.get(key))
        if cid is None:
            ops.append(unread(f"{payload.get('type')} has no {key}: ignored",
                              payload.get("arguments")))
            return
        index = self._call(cid, as_str(payload.get("name")), hosted, ops)
        args = payload.get("arguments")
        if isinstance(args, str) and args:
            last = ops[-1] if ops else None
            if isinstance(last, ToolDelta) and last.index == index and last.args is None:
                last.args = args  # the call this event opened: one fragment
            else:
                ops.append(ToolDelta(0, index, args=args, native_index=True, hosted=hosted))
        elif args is not None and not isinstance(args, str):
            ops.append(unread(f"{payload.get('type')} arguments are not text: ignored", args))
