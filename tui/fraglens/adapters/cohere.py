"""Cohere v2 chat streaming.

A call is keyed by the event ``index`` of ``tool-call-start`` /
``tool-call-delta``; its arguments are the concatenated
``delta.message.tool_calls.function.arguments``. ``tool-plan-delta`` (the
plan the model writes before calling tools) and ``content-delta`` are text;
``message-end`` carries the finish reason and usage and ends the stream.

A part of a tool-call event of the wrong shape (``tool_calls`` that is no
object, a ``function`` that is no object, an index that is no whole number),
and an event type this adapter does not know that carries tool calls, are
named with their wire value (``chunk-unreadable``), never dropped silently.
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    NO_OBJECT,
    Finish,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from .base import Continuation, as_dict, as_int, as_list, as_str, error_message, unread
from .event_types import COHERE_TYPES as EVENT_TYPES


def _calls(payload: dict[str, Any], ops: list[Op]) -> list[dict[str, Any]]:
    """``delta.message.tool_calls``: one object (v2), or a list of them; a
    part of another shape is named in ``ops``."""
    calls = as_dict(as_dict(payload.get("delta")).get("message")).get("tool_calls")
    if isinstance(calls, dict):
        return [calls]
    if calls is not None and not isinstance(calls, list):
        ops.append(unread("tool_calls is neither an object nor an array: ignored", calls))
        return []
    out = []
    for pos, call in enumerate(as_list(calls)):
        if isinstance(call, dict):
            out.append(call)
        else:
            ops.append(unread(f"tool_calls[{pos}] is not an object: ignored", call))
    return out


class CohereAdapter:
    """Cohere ``/v2/chat`` SSE events."""

    name = "cohere"
    ends_with = "terminal"
    indexes_calls = True
    @staticmethod
    def continuation(payload: Any) -> Continuation | None:
        """``(0, index, text)`` for a ``tool-call-delta`` that carries only
        argument text (no id, no name); None for anything else."""
        if type(payload) is not dict or payload.get("type") != "tool-call-delta":
            return None
        index = payload.get("index")
        delta = payload.get("delta")
        if type(index) is not int or type(delta) is not dict:
            return None
        message = delta.get("message")
        calls = message.get("tool_calls") if type(message) is dict else None
        fn = calls.get("function") if type(calls) is dict and len(calls) == 1 else None
        if type(fn) is not dict or len(fn) != 1:
            return None
        args = fn.get("arguments")
        return (0, index, args) if type(args) is str else None

    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("delta", "message", "tool_calls", "function", "arguments")

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            kind = event if isinstance(event, str) else ""
        message = as_dict(as_dict(payload.get("delta")).get("message"))
        if kind in ("tool-call-start", "tool-call-delta"):
            ops: list[Op] = []
            wire = payload.get("index")
            index = as_int(wire)
            if index is None and wire is not None:
                ops.append(unread("the event index is not a whole number: read as no index",
                                  wire))
            for call in _calls(payload, ops):
                fn = call.get("function")
                if fn is not None and not isinstance(fn, dict):
                    ops.append(unread("tool_calls.function is not an object: ignored", fn))
                ops.append(self._tool(index, call))
            return ops
        if kind == "tool-plan-delta":
            plan = message.get("tool_plan")
            return [TextDelta(0, plan)] if isinstance(plan, str) and plan else []
        if kind in ("content-delta", "content-start"):
            content = as_dict(message.get("content"))
            ops = []
            thinking = content.get("thinking")
            if isinstance(thinking, str) and thinking:
                ops.append(TextDelta(0, thinking, "reasoning"))
            text = content.get("text")
            if isinstance(text, str) and text:
                ops.append(TextDelta(0, text))
            return ops
        if kind == "message-end":
            return self._end(as_dict(payload.get("delta")))
        if payload.get("error") not in (None, ""):
            return [StreamError(error_message(payload.get("error"), "error"))]
        if kind not in EVENT_TYPES and "tool_calls" in message:
            return [unread(f"event {kind!r} carries tool calls fraglens does not read: ignored",
                           message["tool_calls"])]
        return []

    def _tool(self, index: int | None, call: dict[str, Any]) -> ToolDelta:
        fn = as_dict(call.get("function"))
        raw = fn.get("arguments")
        args_obj: Any = NO_OBJECT
        args = None
        if isinstance(raw, str):
            args = raw
        elif raw is not None:
            args_obj = raw
        return ToolDelta(
            choice=0,
            index=index,
            id=as_str(call.get("id")),
            name=as_str(fn.get("name")),
            args=args,
            args_null=raw is None and "arguments" in fn,
            args_obj=args_obj,
        )

    def _end(self, delta: dict[str, Any]) -> list[Op]:
        ops: list[Op] = []
        raw = delta.get("finish_reason")
        if isinstance(raw, str) and raw:
            ops.append(Finish(0, normalize_finish(raw), raw))
        usage = delta.get("usage")
        if isinstance(usage, dict):
            ops.append(Usage(dict(usage)))
        err = delta.get("error")
        if err not in (None, ""):
            ops.append(StreamError(error_message(err, "error")))
        elif isinstance(raw, str) and normalize_finish(raw) == "error":
            ops.append(StreamError(f"finish_reason: {raw}"))
        ops.append(Terminal("message-end"))
        return ops
