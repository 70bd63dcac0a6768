"""Anthropic Messages streaming (and the non-streamed ``message`` body).

A call is a ``tool_use`` / ``server_tool_use`` / ``mcp_tool_use`` content
block keyed by its block ``index``; its arguments are the concatenated
``input_json_delta.partial_json`` pieces, starting from ``""``. The ``input``
in ``content_block_start`` is an empty placeholder, except where gateways
(and tool calls made from code execution) put the whole input there, then
send only empty pieces, none, or pieces of their own (obfuscated, or another
rendering): a non-empty one is restated at ``content_block_stop`` as
``ArgsFinal``, and the engine weighs it against what streamed.

An event type, or a delta type, this adapter does not know that carries
tool input is named (``chunk-unreadable``), never dropped silently.

Block indexes count from 0 in every message. Some captures hold several
messages back to back; a ``message_start`` after a ``message_stop`` therefore
shifts the indexes of the new message past every index already used, so two
messages' block 1 do not look like one slot to the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..engine.fragments import (
    ArgsFinal,
    Finish,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from .base import (
    Continuation,
    as_dict,
    as_int,
    as_list,
    as_str,
    dump,
    error_message,
    unread,
)

TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class AnthropicAdapter:
    """Messages SSE events, one decoded ``data:`` payload at a time."""

    name = "anthropic"
    ends_with = "terminal"
    indexes_calls = False

    def __init__(self) -> None:
        self._base = 0  # index shift of the current message
        self._next_base = 0  # one past the highest (shifted) index used so far
        self._ended = False  # a message_stop came: the next message_start is a new message
        self._started = False
        self._usage: dict[str, Any] = {}
        #: shifted block index -> (id, input from content_block_start)
        self._blocks: dict[int, tuple[str | None, Any]] = {}

    def continuation(self, payload: Any) -> Continuation | None:
        """``(0, index, text)`` for the commonest event of a long call - an
        ``input_json_delta`` for a block index - with ``feed``'s bookkeeping
        for it (both idempotent, so ``feed`` may read the same event after);
        None for anything else."""
        if type(payload) is not dict or payload.get("type") != "content_block_delta":
            return None
        delta = payload.get("delta")
        wire = payload.get("index")
        if type(delta) is not dict or type(wire) is not int:
            return None
        piece = delta.get("partial_json")
        if type(piece) is not str or delta.get("type") != "input_json_delta":
            return None
        index = self._base + wire
        if index >= self._next_base:
            self._next_base = index + 1
        return 0, index, piece

    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("delta", "partial_json")

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            kind = event if isinstance(event, str) else None
        handler = self._HANDLERS.get(kind or "")
        if handler is None:
            if kind is None and payload.get("error") not in (None, ""):
                return [StreamError(error_message(payload.get("error"), "error"))]
            return _unknown_event(kind, payload)
        return handler(self, payload)

    # -- message level ---------------------------------------------------------
    def _message_start(self, payload: dict[str, Any]) -> list[Op]:
        if self._ended or not self._started:
            # a new message (not a gateway's repeated message_start): fresh indexes
            self._base = self._next_base
            self._blocks.clear()
        self._started, self._ended = True, False
        message = as_dict(payload.get("message"))
        self._usage = {}
        return self._message_body(message, start=True)

    def _message(self, payload: dict[str, Any]) -> list[Op]:
        """A whole non-streamed body: ``{"type": "message", "content": [...]}``."""
        if self._started:
            self._base = self._next_base
        self._started, self._ended = True, True
        self._usage = {}
        return self._message_body(payload, start=False)

    def _message_body(self, message: dict[str, Any], start: bool) -> list[Op]:
        ops: list[Op] = []
        for pos, block in enumerate(as_list(message.get("content"))):
            if isinstance(block, dict):
                ops.extend(self._whole_block(pos, block))
        usage = message.get("usage")
        if isinstance(usage, dict):
            self._usage = dict(usage)
            ops.append(Usage(dict(self._usage)))
        raw = message.get("stop_reason")
        if isinstance(raw, str) and raw:
            ops.append(Finish(0, normalize_finish(raw), raw))
        return ops

    def _whole_block(self, pos: int, block: dict[str, Any]) -> list[Op]:
        """A content block given complete (inside ``message_start`` or a body)."""
        kind = block.get("type")
        if isinstance(kind, str) and kind in TOOL_BLOCKS:
            index = self._index(pos)
            ops: list[Op] = [self._tool_start(index, block)]
            ops.extend(self._restate(index))
            return ops
        return self._block_text(block)

    def _message_delta(self, payload: dict[str, Any]) -> list[Op]:
        ops: list[Op] = []
        delta = as_dict(payload.get("delta"))
        raw = delta.get("stop_reason")
        if isinstance(raw, str) and raw:
            ops.append(Finish(0, normalize_finish(raw), raw))
        usage = payload.get("usage")
        if isinstance(usage, dict):
            # message_delta usage restates the running totals: it updates, never adds
            self._usage.update(usage)
            ops.append(Usage(dict(self._usage)))
        return ops

    def _message_stop(self, payload: dict[str, Any]) -> list[Op]:
        self._ended = True
        return [Terminal("message_stop")]

    def _error(self, payload: dict[str, Any]) -> list[Op]:
        return [StreamError(error_message(payload.get("error"), "error event"))]

    # -- content blocks ----------------------------------------------------------
    def _index(self, wire: int) -> int:
        index = self._base + wire
        self._next_base = max(self._next_base, index + 1)
        return index

    def _tool_start(self, index: int, block: dict[str, Any]) -> ToolDelta:
        cid = as_str(block.get("id"))
        self._blocks[index] = (cid, block.get("input"))
        return ToolDelta(
            choice=0,
            index=index,
            id=cid,
            name=as_str(block.get("name")),
            native_index=True,
            hosted=block.get("type") != "tool_use",
        )

    def _restate(self, index: int) -> list[Op]:
        """ArgsFinal from the start's ``input`` when it held one (not the empty
        placeholder): with no delta it is the arguments; after deltas the
        engine checks it against them (the same value says nothing; pieces
        that are not JSON give way to it; another value is a second value)."""
        cid, value = self._blocks.pop(index, (None, None))
        if value is None or value == {} or value == "":
            return []
        text = value if isinstance(value, str) else dump(value)
        return [ArgsFinal(0, index, text, id=cid)]

    def _block_text(self, block: dict[str, Any]) -> list[Op]:
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            return [TextDelta(0, text)] if isinstance(text, str) and text else []
        if kind == "thinking":
            text = block.get("thinking")
            return [TextDelta(0, text, "reasoning")] if isinstance(text, str) and text else []
        return []  # tool results, redacted thinking, citations: not calls, not text

    def _block_start(self, payload: dict[str, Any]) -> list[Op]:
        wire = as_int(payload.get("index"))
        block = as_dict(payload.get("content_block"))
        kind = block.get("type")
        if isinstance(kind, str) and kind in TOOL_BLOCKS:
            index = self._index(wire) if wire is not None else None
            if index is None:
                cid = as_str(block.get("id"))
                hosted = kind != "tool_use"
                return [*_bad_index(payload),
                        ToolDelta(0, None, cid, as_str(block.get("name")), hosted=hosted)]
            return [self._tool_start(index, block)]
        if "input" in block and block.get("input") not in (None, {}, ""):
            # a block type this adapter does not know, holding tool input
            return [unread(f"content_block of type {kind!r} carries tool input fraglens "
                           "does not read: ignored", block.get("input"))]
        return self._block_text(block)

    def _block_delta(self, payload: dict[str, Any]) -> list[Op]:
        wire = as_int(payload.get("index"))
        index = None if wire is None else self._base + wire
        delta = as_dict(payload.get("delta"))
        kind = delta.get("type")
        if kind == "input_json_delta":
            piece = delta.get("partial_json")
            if not isinstance(piece, str):
                if piece is None and "partial_json" not in delta:
                    return []
                return [unread("input_json_delta.partial_json is not text: ignored", piece)]
            if index is not None:
                self._next_base = max(self._next_base, index + 1)
            op = ToolDelta(choice=0, index=index, args=piece, native_index=True)
            return [*_bad_index(payload), op] if index is None else [op]
        if kind == "text_delta":
            text = delta.get("text")
            return [TextDelta(0, text)] if isinstance(text, str) and text else []
        if kind == "thinking_delta":
            text = delta.get("thinking")
            return [TextDelta(0, text, "reasoning")] if isinstance(text, str) and text else []
        if "partial_json" in delta or "input" in delta:
            # a delta type this adapter does not know, carrying tool input
            return [unread(f"content_block_delta of type {kind!r} carries tool input fraglens "
                           "does not read: ignored", delta.get("partial_json", delta.get("input")))]
        return []  # signature_delta, citations_delta: metadata

    def _block_stop(self, payload: dict[str, Any]) -> list[Op]:
        wire = as_int(payload.get("index"))
        if wire is None:
            return []
        return self._restate(self._base + wire)

    def _ping(self, payload: dict[str, Any]) -> list[Op]:
        return []

    _HANDLERS: ClassVar[dict[str, Callable[[AnthropicAdapter, dict[str, Any]], list[Op]]]] = {
        "message_start": _message_start,
        "message": _message,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
        "content_block_start": _block_start,
        "content_block_delta": _block_delta,
        "content_block_stop": _block_stop,
        "ping": _ping,
        "error": _error,
    }


def _bad_index(payload: dict[str, Any]) -> list[Op]:
    """A block ``index`` that is there but no whole number, named (the piece
    is then attributed as one with no index)."""
    wire = payload.get("index")
    if wire is None:
        return []
    return [unread("the block index is not a whole number: read as no index", wire)]


def _unknown_event(kind: str | None, payload: dict[str, Any]) -> list[Op]:
    """An event type this adapter does not know: nothing, unless it carries
    tool input (a ``partial_json`` or ``input`` in its delta, a tool block),
    which is named with its wire value instead of dropped without a word."""
    delta = as_dict(payload.get("delta"))
    block = as_dict(payload.get("content_block"))
    for where, key in ((delta, "partial_json"), (delta, "input"), (block, "input")):
        if key in where:
            return [unread(f"event {kind!r} carries tool input fraglens does not read: "
                           "ignored", where[key])]
    if isinstance(block.get("type"), str) and block["type"] in TOOL_BLOCKS:
        return [unread(f"event {kind!r} carries a tool block fraglens does not read: "
                       "ignored", block)]
    return []
