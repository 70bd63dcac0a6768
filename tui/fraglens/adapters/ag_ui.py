"""AG-UI events: what an agent framework streams to its UI (CopilotKit, and the
AG-UI adapters of LangGraph, CrewAI, Mastra, Pydantic AI, Agno).

SSE whose ``data:`` payloads are events with an upper-case ``type`` (the
``EventType`` of the protocol's ``ag-ui-protocol`` package, camelCase fields):

- ``TOOL_CALL_START`` (``toolCallId``, ``toolCallName``, ``parentMessageId``)
  opens a call, ``TOOL_CALL_ARGS`` (``toolCallId``, ``delta``) streams its
  argument text, ``TOOL_CALL_END`` closes it; ``TOOL_CALL_CHUNK`` is the
  short form (an id and name on the first chunk, ``delta`` on any), which the
  client expands into the three;
- ``TOOL_CALL_RESULT`` (``toolCallId``, ``content``): the tool's result, shown
  with its call;
- ``TEXT_MESSAGE_CONTENT`` / ``TEXT_MESSAGE_CHUNK`` (``delta``) are the answer,
  ``REASONING_MESSAGE_CONTENT`` / ``REASONING_MESSAGE_CHUNK`` (and the older
  ``THINKING_TEXT_MESSAGE_CONTENT``) the reasoning;
- ``MESSAGES_SNAPSHOT`` restates the conversation: an assistant message's
  ``toolCalls[].function.arguments`` is weighed against the streamed text;
- ``RUN_FINISHED`` ends a run, ``RUN_ERROR`` (``message``, ``code``) is an error.

Calls are keyed by ``toolCallId``, numbered in order of appearance. The
breakages the protocol's adapters are known for are said, never smoothed
over: argument text under the id of a call that already ended, or under an
earlier call's id while a later call stays empty (``args-misrouted``, naming
both; the text stays where the wire put it, as the client glues it); a call
started and ended with no ``TOOL_CALL_ARGS`` (``args-missing``: the client
parses ``""``); a ``TOOL_CALL_RESULT`` for a call that never started
(``result-orphan``). A type the protocol does not define is named
(``event-unknown``) and kept in the stream view.
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    ArgsFinal,
    Finish,
    Notice,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    ToolOutput,
)
from .base import Continuation, as_dict, as_list, as_str, error_message, unread
from .event_types import AG_UI_OLDER_TYPES as OLDER_TYPES
from .event_types import AG_UI_TYPES as EVENT_TYPES

_TEXT = {"TEXT_MESSAGE_CONTENT": "content", "TEXT_MESSAGE_CHUNK": "content",
         "REASONING_MESSAGE_CONTENT": "reasoning", "REASONING_MESSAGE_CHUNK": "reasoning",
         "THINKING_TEXT_MESSAGE_CONTENT": "reasoning"}


class AGUIAdapter:
    """AG-UI events, one decoded ``data:`` payload at a time."""

    name = "ag-ui"
    ends_with = "terminal"
    indexes_calls = True  # the adapter numbers the calls 0, 1, ... itself

    def __init__(self) -> None:
        self._index: dict[str, int] = {}  # toolCallId -> index, in order of appearance
        self._names: dict[str, str] = {}
        self._args: dict[str, int] = {}  # characters of argument text per call
        self._open: dict[str, None] = {}  # calls started and not ended, in start order
        self._ended: set[str] = set()
        #: the open calls with no text of their own yet, in start order, each with
        #: the text other calls' ids carried while it was the latest of them
        self._empty: dict[str, dict[str, int]] = {}
        self._chunking: str | None = None  # the call TOOL_CALL_CHUNK events continue

    def continuation(self, payload: Any) -> Continuation | None:
        """``(0, index, text)`` for a ``TOOL_CALL_ARGS`` that continues an open
        call already holding text, while no open call is empty (the misrouting
        watch has nothing to note); None for anything else. A call's count of
        text only matters while it is zero, so it is not kept here: the
        pieces an envelope reads (adapters/envelope.py) need no hook either."""
        if type(payload) is not dict or payload.get("type") != "TOOL_CALL_ARGS":
            return None
        cid = payload.get("toolCallId")
        delta = payload.get("delta")
        if type(cid) is not str or type(delta) is not str or not delta or self._empty:
            return None
        if cid not in self._open or not self._args.get(cid):
            return None
        return 0, self._index[cid], delta

    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("delta",)

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            return []
        if kind == "TOOL_CALL_ARGS":
            return self._args_event(payload)
        channel = _TEXT.get(kind)
        if channel is not None:
            delta = payload.get("delta")
            return [TextDelta(0, delta, channel)] if isinstance(delta, str) and delta else []
        if kind == "TOOL_CALL_START":
            return self._start(payload)
        if kind == "TOOL_CALL_END":
            return self._end(payload)
        if kind == "TOOL_CALL_CHUNK":
            return self._chunk(payload)
        if kind == "TOOL_CALL_RESULT":
            return self._result(payload)
        if kind == "MESSAGES_SNAPSHOT":
            return self._snapshot(payload)
        if kind == "RUN_FINISHED":
            reason = "tool_calls" if self._index else "stop"
            return [Finish(0, reason, "RUN_FINISHED"), Terminal("RUN_FINISHED")]
        if kind == "RUN_ERROR":
            message = error_message(payload.get("message"), "run error")
            code = as_str(payload.get("code"))
            return [StreamError(f"{code}: {message}" if code else message)]
        if kind in EVENT_TYPES or kind in OLDER_TYPES:
            return []
        return [Notice("event-unknown", f"AG-UI event type {kind!r} is not in the protocol; "
                                        "kept in the stream, not read")]

    # -- calls ---------------------------------------------------------------------
    def _label(self, cid: str) -> str:
        name = self._names.get(cid)
        return f"{cid} ({name})" if name else cid

    def _open_call(self, cid: str, name: str | None, ops: list[Op]) -> int:
        if cid not in self._index:
            self._index[cid] = len(self._index)
            self._args[cid] = 0
            if name:
                self._names[cid] = name
            ops.append(ToolDelta(0, self._index[cid], id=cid, name=name, native_index=True))
        return self._index[cid]

    def _start(self, payload: dict[str, Any]) -> list[Op]:
        cid = as_str(payload.get("toolCallId"))
        name = as_str(payload.get("toolCallName"))
        if cid is None:
            return [unread("TOOL_CALL_START has no toolCallId: ignored", name)]
        ops: list[Op] = []
        self._open_call(cid, name, ops)
        if cid not in self._open:
            self._open[cid] = None
            if self._args[cid] == 0:
                self._empty[cid] = {}
        self._ended.discard(cid)
        return ops

    def _args_event(self, payload: dict[str, Any]) -> list[Op]:
        cid = as_str(payload.get("toolCallId"))
        delta = payload.get("delta")
        if cid is None or not isinstance(delta, str):
            what = "has no toolCallId" if cid is None else "delta is not text"
            return [unread(f"TOOL_CALL_ARGS {what}: ignored", delta)]
        ops: list[Op] = []
        self._text_for(cid, delta, ops)
        return ops

    def _text_for(self, cid: str, delta: str, ops: list[Op]) -> None:
        # the call most likely to own text sent under another id: the latest
        # started that is still open and empty (one look, whatever the number
        # of calls); text for an earlier call while it is open is legitimate
        # interleaving unless it ends with nothing (said then)
        empty = next(reversed(self._empty), None) if self._empty else None
        if cid in self._ended:
            latest = next(reversed(self._open), None) if self._open else None
            where = f"while call {self._label(latest)} was open" if latest else "with no call open"
            ops.append(Notice("args-misrouted",
                              f"arguments came under the id of call {self._label(cid)} after "
                              f"it ended, {where}; kept on {cid}, where the client glues them"))
        elif cid not in self._open or (empty is not None and empty == cid):
            empty = None
        elif empty is not None and self._index[empty] < self._index[cid]:
            empty = None  # the empty call started before this one: not its text
        if empty is not None and empty != cid and delta:
            seen = self._empty[empty]
            seen[cid] = seen.get(cid, 0) + len(delta)
        if delta:
            self._empty.pop(cid, None)  # it has text of its own now
        index = self._open_call(cid, None, ops)
        self._args[cid] += len(delta)
        if not delta:
            return
        last = ops[-1] if ops else None
        if isinstance(last, ToolDelta) and last.index == index and last.args is None:
            last.args = delta  # the call opened by this very event: one fragment
        else:
            ops.append(ToolDelta(0, index, args=delta, native_index=True))

    def _end(self, payload: dict[str, Any]) -> list[Op]:
        cid = as_str(payload.get("toolCallId"))
        if cid is None or cid not in self._index:
            return [unread("TOOL_CALL_END for a call that never started: ignored",
                           payload.get("toolCallId"))]
        ops: list[Op] = []
        foreign = self._empty.pop(cid, {})
        self._open.pop(cid, None)
        self._ended.add(cid)
        if self._args.get(cid, 0) == 0:
            if foreign:
                named = ", ".join(f"{self._label(c)} ({n} chars)" for c, n in foreign.items())
                ops.append(Notice("args-misrouted",
                                  f"call {self._label(cid)} ended with no arguments while "
                                  f"text came under the id of call {named}: that text is "
                                  "probably this call's"))
            else:
                ops.append(Notice("args-missing",
                                  f"call {self._label(cid)} started and ended with no "
                                  "TOOL_CALL_ARGS; a client that parses the arguments "
                                  "parses an empty string"))
        return ops

    def _chunk(self, payload: dict[str, Any]) -> list[Op]:
        cid = as_str(payload.get("toolCallId"))
        name = as_str(payload.get("toolCallName"))
        delta = payload.get("delta")
        ops: list[Op] = []
        if cid is not None:
            if cid != self._chunking:
                self._open_call(cid, name, ops)  # a new id starts a new call
                self._chunking = cid
        elif self._chunking is None:
            return [unread("TOOL_CALL_CHUNK with no toolCallId and no call to continue: "
                           "ignored", delta)]
        if isinstance(delta, str) and delta:
            self._text_for(self._chunking, delta, ops)
        elif delta is not None and not isinstance(delta, str):
            ops.append(unread("TOOL_CALL_CHUNK delta is not text: ignored", delta))
        return ops

    def _result(self, payload: dict[str, Any]) -> list[Op]:
        cid = as_str(payload.get("toolCallId"))
        if cid is None or cid not in self._index:
            shown = payload.get("content")
            return [Notice("result-orphan",
                           f"TOOL_CALL_RESULT for call {cid!r}, which never started "
                           f"(content: {str(shown)[:40]!r}); shown in the stream only")]
        return [ToolOutput(0, self._index[cid], output=payload.get("content"))]

    def _snapshot(self, payload: dict[str, Any]) -> list[Op]:
        """An assistant message's calls restated whole: weighed against the stream."""
        ops: list[Op] = []
        for message in as_list(payload.get("messages")):
            for call in as_list(as_dict(message).get("toolCalls")):
                call = as_dict(call)
                cid = as_str(call.get("id"))
                args = as_dict(call.get("function")).get("arguments")
                if cid in self._index and isinstance(args, str) and args:
                    ops.append(ArgsFinal(0, self._index[cid], args, id=cid))
        return ops
