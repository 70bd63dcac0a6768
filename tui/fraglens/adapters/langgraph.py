"""LangGraph's server stream (``/runs/stream``) in its message modes.

The server sends SSE events named after the stream mode (``name|namespace``
for subgraphs). What carries calls:

- ``messages`` (``stream_mode="messages-tuple"``): ``[message_chunk, metadata]``,
  the chunk a LangChain ``AIMessageChunk`` as its ``model_dump()``: the call
  pieces are ``tool_call_chunks`` ``{name, args, id, index}``, keyed per
  message (``id``) by ``index``, as LangChain's own merge keys them;
  ``response_metadata.finish_reason`` (or ``stop_reason``) is the finish;
  a ``tool`` message (``tool_call_id``, ``content``) is a call's result;
- ``messages/partial`` (``stream_mode="messages"``): a list of messages, each
  the whole message so far (the server merges the chunks): each call's
  ``args`` text is a snapshot, and the new text is the difference from the
  previous one; ``messages/complete`` restates the finished messages, whose
  parsed ``tool_calls[].args`` are weighed against the stream;
- ``metadata``, ``messages/metadata``, ``values``, ``updates``, ``custom``,
  ``debug``, ``events``, ``tasks``, ``checkpoints``: no calls; ``error`` is an
  error and ``end`` the end.

A chunk whose ``index`` is null is one LangChain's merge cannot place: it
stays a separate entry, a phantom call of its own (``index-null-chunk``); it
is read as more of the call its id names, else of the message's latest call.
Arguments a provider sends cumulatively (each chunk the whole text so far,
langgraphjs's "Malformed args") are found by the engine (``args-cumulative``).
"""

from __future__ import annotations

from collections.abc import Hashable
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
    normalize_finish,
)
from .base import as_dict, as_int, as_list, as_str, dump, error_message, text_of, unread
from .event_types import LANGCHAIN_AI_TYPES, is_langchain_message

#: the modes that carry no calls: known, read as nothing
QUIET_EVENTS = frozenset(
    {"metadata", "messages/metadata", "values", "updates", "custom", "debug", "events",
     "tasks", "checkpoints", "feedback"}
)


class LangGraphAdapter:
    """LangGraph ``messages`` / ``messages/partial`` events, one decoded payload at a time."""

    name = "langgraph"
    ends_with = "finish"  # the server just closes the stream after the run
    indexes_calls = True  # the adapter numbers the calls 0, 1, ... itself
    continuation = None  # every chunk goes through feed

    def __init__(self) -> None:
        self._index: dict[tuple[str, Hashable], int] = {}  # (message, wire index) -> call
        self._by_id: dict[str, int] = {}  # call id -> call
        self._latest: dict[str, int] = {}  # message -> its latest call
        self._snapshots: dict[tuple[str, Hashable], str] = {}  # messages/partial args so far
        self._finished: set[str] = set()  # messages whose finish was passed on
        self._anonymous = 0
        self._calls = 0

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        mode = (event or "").split("|", 1)[0]
        if mode in QUIET_EVENTS:
            return []
        if mode == "error":
            body = as_dict(payload)
            text = error_message(body.get("message") or body.get("error") or payload, "error")
            return [StreamError(text)]
        if mode == "end":
            return [Terminal("end")]
        if mode in ("messages/partial", "messages/complete"):
            ops: list[Op] = []
            for message in as_list(payload):
                if is_langchain_message(message):
                    self._message(message, ops, mode)
            return ops
        if mode in ("messages", ""):
            # [chunk, metadata]; a bare chunk from a client that dropped the tuple
            chunk = payload[0] if isinstance(payload, list) and payload else payload
            ops = []
            if is_langchain_message(chunk):
                self._message(chunk, ops, "messages")
            return ops
        return [Notice("event-unknown", f"LangGraph event {event!r} is not a stream mode "
                                        "fraglens knows; kept in the stream, not read")]

    def _message(self, message: dict[str, Any], ops: list[Op], mode: str) -> None:
        kind = message.get("type")
        mid = as_str(message.get("id")) or f"message-{self._anonymous}"
        if message.get("id") is None:
            self._anonymous += 1
        if kind not in LANGCHAIN_AI_TYPES:
            if kind in ("tool", "ToolMessage", "ToolMessageChunk"):
                self._tool_result(message, ops)
            return
        text = text_of(message.get("content"))
        if text and mode != "messages/complete":
            ops.append(TextDelta(0, self._new_text((mid, "text"), text, mode)))
        chunks = message.get("tool_call_chunks")
        if mode == "messages/complete":
            self._restate(mid, message, ops)
        elif isinstance(chunks, list) and chunks:
            for pos, entry in enumerate(chunks):
                if isinstance(entry, dict):
                    self._piece(mid, pos, entry, ops, mode)
                else:
                    ops.append(unread(f"tool_call_chunks[{pos}] is not an object: ignored",
                                      entry))
        elif chunks is None and kind != "AIMessageChunk":
            self._whole(mid, message, ops)  # a whole AIMessage: its parsed tool_calls
        self._finish(mid, message, ops)

    def _new_text(self, key: tuple[str, Hashable], text: str, mode: str) -> str:
        """The new part: the text itself, or its growth over the last snapshot."""
        if mode != "messages/partial":
            return text
        prev = self._snapshots.get(key, "")
        self._snapshots[key] = text
        return text[len(prev):] if text.startswith(prev) else text

    def _call(self, mid: str, wire: Hashable, cid: str | None) -> tuple[int, bool]:
        """The call a piece belongs to, and whether it is new."""
        key = (mid, wire)
        index = self._index.get(key)
        if index is None and cid is not None:
            index = self._by_id.get(cid)
        new = index is None
        if index is None:
            index, self._calls = self._calls, self._calls + 1
        self._index[key] = index
        if cid is not None:
            self._by_id.setdefault(cid, index)
        self._latest[mid] = index
        return index, new

    def _piece(self, mid: str, pos: int, entry: dict[str, Any], ops: list[Op],
               mode: str) -> None:
        cid, name = as_str(entry.get("id")) or None, as_str(entry.get("name")) or None
        wire = entry.get("index")
        number = as_int(wire)
        if wire is not None and number is None:
            ops.append(unread(f"tool_call_chunks[{pos}].index is not a whole number: read as "
                              "its position", wire))
            number = pos
        args = entry.get("args")
        if number is None:
            index = self._by_id.get(cid) if cid is not None else self._latest.get(mid)
            target = "a new call" if index is None else f"call {index}"
            ops.append(Notice("index-null-chunk",
                              f"a tool_call_chunk of message {mid} has index null (id "
                              f"{cid!r}, name {name!r}): LangChain's merge keeps it apart as "
                              f"a phantom call; read as {target}"))
            new = index is None
            if index is None:
                index, new = self._call(mid, ("null", pos, len(self._index)), cid)
        else:
            index, new = self._call(mid, number, cid)
        if mode == "messages/partial" and not new:
            cid = name = None  # a snapshot repeats them: said once, when the call opened
        op = ToolDelta(0, index, id=cid, name=name, native_index=True)
        if isinstance(args, str):
            op.args = self._new_text((mid, index), args, mode) or None
        elif args is not None:
            ops.append(unread(f"tool_call_chunks[{pos}].args is not text: ignored", args))
        if op.args or cid or name or new:
            ops.append(op)

    def _whole(self, mid: str, message: dict[str, Any], ops: list[Op]) -> None:
        for pos, call in enumerate(as_list(message.get("tool_calls"))):
            call = as_dict(call)
            cid, name = as_str(call.get("id")), as_str(call.get("name"))
            index, _ = self._call(mid, pos, cid)
            args = dump(call["args"]) if "args" in call else None
            ops.append(ToolDelta(0, index, id=cid, name=name, args=args, native_index=True))

    def _restate(self, mid: str, message: dict[str, Any], ops: list[Op]) -> None:
        """``messages/complete``: each parsed call, weighed against the stream."""
        for call in as_list(message.get("tool_calls")):
            call = as_dict(call)
            cid = as_str(call.get("id"))
            if cid in self._by_id and "args" in call:
                ops.append(ArgsFinal(0, self._by_id[cid], dump(call["args"]), id=cid))

    def _tool_result(self, message: dict[str, Any], ops: list[Op]) -> None:
        cid = as_str(message.get("tool_call_id"))
        if cid in self._by_id:
            if message.get("status") == "error":
                ops.append(ToolOutput(0, self._by_id[cid], error=text_of(message["content"])))
            else:
                ops.append(ToolOutput(0, self._by_id[cid], output=message.get("content")))
            return
        ops.append(Notice("result-orphan", f"a tool message answers call {cid!r}, which never "
                                           "started; shown in the stream only"))

    def _finish(self, mid: str, message: dict[str, Any], ops: list[Op]) -> None:
        if mid in self._finished:
            return
        meta = as_dict(message.get("response_metadata"))
        raw = meta.get("finish_reason") or meta.get("stop_reason")
        if not isinstance(raw, str) or not raw:
            if message.get("chunk_position") != "last":
                return
            raw = "tool_calls" if mid in self._latest else "stop"
        self._finished.add(mid)
        ops.append(Finish(0, normalize_finish(raw), raw))
