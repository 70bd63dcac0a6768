"""The Vercel AI SDK UI message stream (``x-vercel-ai-ui-message-stream: v1``).

What a ``useChat`` web app receives from its own backend: SSE whose ``data:``
payloads are typed parts (the ``uiMessageChunkSchema`` of ``ai``'s
``ui-message-stream/ui-message-chunks.ts``, and the "Stream Protocols" page of
the AI SDK docs), ending with ``data: [DONE]``:

- ``start`` / ``start-step`` / ``finish-step``: message and step boundaries;
- ``text-start`` / ``text-delta`` (``delta``) / ``text-end``, and the same
  for ``reasoning-*``;
- ``tool-input-start`` (``toolCallId``, ``toolName``) opens a call,
  ``tool-input-delta`` (``inputTextDelta``) streams its argument text, and
  ``tool-input-available`` restates the parsed ``input`` whole;
  ``tool-input-error`` says the backend could not use the input;
- ``tool-output-available`` (``output``) / ``tool-output-error``
  (``errorText``): the result of a tool the backend ran, shown with its call;
- ``finish`` (``finishReason`` in newer versions), ``error`` (``errorText``),
  ``abort``.

Calls are keyed by ``toolCallId``; the adapter numbers them in order of
appearance and hands that number on as a native index. ``tool-input-available``
is compared *by value* with the streamed text (the SDK re-serializes it, so
spacing differs): only a different value is passed on, as ``ArgsFinal``, for
the engine to flag; with no deltas at all it is the arguments. The value of
the streamed text goes to the engine with it (``ArgsParsed``), which would
otherwise parse the same text again for the call's verdict. A ``finish``
after calls is ``tool_calls`` whatever the last step's reason, since the
backend may have run the tools and let the model answer in a later step.

A ``tool-input-delta`` whose text is not text, and a part type this adapter
does not know that carries input (``inputTextDelta``, ``input``) or names a
call by ``toolCallId`` with a ``delta``, are named with their wire value
(``chunk-unreadable``), never dropped silently.
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    ArgsFinal,
    ArgsParsed,
    Finish,
    Notice,
    Op,
    StreamError,
    TextDelta,
    ToolDelta,
    ToolOutput,
    Usage,
    normalize_finish,
)
from ..engine.plain_json import strict_loads
from .base import Continuation, as_str, dump, error_message, unread
from .event_types import AI_SDK_PART_TYPES as PART_TYPES


class AISDKAdapter:
    """UI message stream parts, one decoded ``data:`` payload at a time."""

    name = "ai-sdk"
    ends_with = "done"
    indexes_calls = True  # the adapter numbers the calls 0, 1, ... itself

    def __init__(self) -> None:
        self._index: dict[str, int] = {}  # toolCallId -> index, in order of appearance
        #: the argument pieces streamed per call (the engine's own strings, not
        #: copies; a run's joined), to compare tool-input-available with by value
        self._pieces: dict[str, list[str]] = {}
        #: the payload whose piece the continuation shortcut kept last
        self._kept: Any = None
        self._ids: list[str] = []  # index -> toolCallId

    def continuation(self, payload: Any) -> Continuation | None:
        """``(0, index, text)`` for a ``tool-input-delta`` of a call already
        opened (its pieces kept for the by-value check, as ``feed`` keeps
        them); None for anything else."""
        if type(payload) is not dict or payload.get("type") != "tool-input-delta":
            return None
        cid = payload.get("toolCallId")
        text = payload.get("inputTextDelta")
        if type(cid) is not str or type(text) is not str or not text:
            return None
        pieces = self._pieces.get(cid)
        if pieces is None:
            return None
        pieces.append(text)
        # should the engine decline the shortcut, feed reads this very payload
        # next: it must not keep the piece twice
        self._kept = payload
        return 0, self._index[cid], text

    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("inputTextDelta",)

    def continued(self, index: int, text: str) -> None:
        """A piece read from an envelope of an event ``continuation`` read
        (adapters/envelope.py): kept as ``continuation`` keeps it. The stream
        forgets envelopes when an event takes ``feed``, so the call's pieces
        are still kept here."""
        self._pieces[self._ids[index]].append(text)

    def continued_run(self, index: int, texts: list[str]) -> None:
        """``continued`` for each of ``texts`` in turn (a run read in bulk),
        kept joined: only their whole is compared."""
        self._pieces[self._ids[index]].append("".join(texts))

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            return []
        if kind == "tool-input-delta":
            cid = as_str(payload.get("toolCallId"))
            text = payload.get("inputTextDelta")
            if cid is None or not isinstance(text, str):
                what = "has no toolCallId" if cid is None else "inputTextDelta is not text"
                return [unread(f"tool-input-delta {what}: ignored", text)]
            ops = self._open(cid, None)
            if payload is not self._kept:
                self._pieces.setdefault(cid, []).append(text)
            ops.append(ToolDelta(0, self._index[cid], args=text, native_index=True))
            return ops
        if kind in ("text-delta", "reasoning-delta"):
            text = payload.get("delta")
            if isinstance(text, str) and text:
                return [TextDelta(0, text, "content" if kind == "text-delta" else "reasoning")]
            return []
        if kind == "tool-input-start":
            cid = as_str(payload.get("toolCallId"))
            if cid is None:
                return [unread("tool-input-start has no toolCallId: ignored",
                               payload.get("toolName"))]
            return self._open(cid, payload)
        if kind in ("tool-input-available", "tool-input-error"):
            return self._input(kind, payload)
        if kind in ("tool-output-available", "tool-output-error"):
            cid = as_str(payload.get("toolCallId"))
            if cid not in self._index:
                return []
            index = self._index[cid]
            if kind == "tool-output-error":
                text = error_message(payload.get("errorText"), "tool error")
                return [ToolOutput(0, index, error=text)]
            return [ToolOutput(0, index, output=payload.get("output"))]
        if kind == "finish":
            return self._finish(payload)
        if kind == "error":
            return [StreamError(error_message(payload.get("errorText"), "error part"))]
        if kind == "abort":
            reason = payload.get("reason")
            text = f"aborted: {reason}" if isinstance(reason, str) and reason else "aborted"
            return [StreamError(text)]
        return self._unknown(kind, payload)

    def _unknown(self, kind: str, payload: dict[str, Any]) -> list[Op]:
        """A part type not handled above: nothing, unless it carries tool input."""
        if kind in PART_TYPES or kind in ("start", "finish") or kind.startswith("data-"):
            return []  # known parts that carry no call (sources, metadata, approvals)
        known = as_str(payload.get("toolCallId")) in self._index
        for key in ("inputTextDelta", "input", *(("delta",) if known else ())):
            if key in payload:
                return [unread(f"part {kind!r} carries tool input fraglens does not read: "
                               "ignored", payload[key])]
        return []

    def _open(self, cid: str, start: dict[str, Any] | None) -> list[Op]:
        """The call's first fragment (id, name) the first time its id is seen."""
        if cid in self._index:
            return []
        self._index[cid] = len(self._index)
        self._ids.append(cid)
        self._pieces[cid] = []
        name = as_str(start.get("toolName")) if start is not None else None
        hosted = start is not None and start.get("providerExecuted") is True
        return [
            ToolDelta(0, self._index[cid], id=cid, name=name, native_index=True, hosted=hosted)
        ]

    def _input(self, kind: str, payload: dict[str, Any]) -> list[Op]:
        cid = as_str(payload.get("toolCallId"))
        if cid is None:
            return [unread(f"{kind} has no toolCallId: ignored", payload.get("input"))]
        ops = self._open(cid, payload)
        index = self._index[cid]
        if kind == "tool-input-error":
            # one line: the SDK's text often quotes the input over several
            text = " ".join(error_message(payload.get("errorText"), "tool input error").split())
            name = as_str(payload.get("toolName")) or "?"
            ops.append(Notice("tool-input-error", f"{name} ({cid}): {text}"))
        value = payload.get("input")
        pieces = self._pieces.pop(cid, None)
        if "input" not in payload:
            return ops
        if not pieces:
            restated = (value if isinstance(value, str) and kind == "tool-input-error"
                        else dump(value))
            ops.append(ArgsFinal(0, index, restated, id=cid))
            return ops
        if kind != "tool-input-available":
            return ops  # the input of an error is said with it, never weighed
        # weighed by value: the SDK spells the input its own way. The value of
        # what streamed is the call's, which the engine would parse again for
        # its verdict: handed over with the text it is of
        streamed = "".join(pieces)
        try:
            parsed, no_floats = strict_loads(streamed)
            same = parsed == value  # (NaN equals nothing, however it is spelled)
        except (ValueError, RecursionError):
            same = False  # the engine reports the streamed text; the restatement differs
        else:
            ops.append(ArgsParsed(0, index, streamed, parsed, no_floats))
        if not same:
            ops.append(ArgsFinal(0, index, dump(value), id=cid))
        return ops

    def _finish(self, payload: dict[str, Any]) -> list[Op]:
        raw = payload.get("finishReason")
        raw = raw if isinstance(raw, str) and raw else "finish"
        reason = normalize_finish(raw.replace("-", "_")) if raw != "finish" else "stop"
        if reason == "stop" and self._index:
            reason = "tool_calls"
        ops: list[Op] = []
        meta = payload.get("messageMetadata")
        if isinstance(meta, dict) and isinstance(meta.get("usage"), dict):
            ops.append(Usage(dict(meta["usage"])))
        ops.append(Finish(0, reason, raw))
        return ops
