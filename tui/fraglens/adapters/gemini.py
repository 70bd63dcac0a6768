"""Gemini ``streamGenerateContent`` (``alt=sse`` or a JSON array), Google AI and Vertex.

Gemini sends no argument text: a ``functionCall`` part holds the whole
``args`` object, so each one is a complete call and is serialized once. Parts
restart in every chunk, so the fragment ``index`` is a running count of the
calls a candidate made, not the part position. ``id`` is passed on when the
wire has one (most Gemini streams have none; the engine synthesizes one).

Gemini has no tool-call finish reason: a candidate that made calls finishes
with ``STOP``, which is passed on as ``tool_calls`` (raw ``STOP``), as the
Responses adapter does with ``completed``.

Vertex can stream the arguments instead (``streamFunctionCallArguments``): a
``functionCall`` with a ``name`` and ``willContinue: true`` opens the call,
name-less ``functionCall`` parts carry ``partialArgs`` entries
(``jsonPath`` + one ``*Value``), and the first one without ``willContinue``
(usually an empty ``functionCall: {}``) ends it. ``partial_args.py`` turns
those entries into argument text as they come. A closing part that carries
the whole ``args`` as well restates them (``ArgsFinal``), for the engine to
check against what streamed.

What cannot be read is named with its wire value (``chunk-unreadable``): a
``functionCall`` or ``partialArgs`` of the wrong type, an entry with no
readable path or value or one that contradicts an earlier path, and a part
under a key this adapter does not know that holds call arguments.
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    ArgsFinal,
    Finish,
    Notice,
    Op,
    StreamError,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from ..records import Record
from .base import as_dict, as_int, as_list, as_str, dump, error_message, unread
from .partial_args import PartialArgs

#: part keys read here, or known to carry no call (``functionResponse`` is a
#: tool's answer, sent back by the client)
_PART_KEYS = frozenset({"text", "thought", "functionCall", "thoughtSignature", "functionResponse"})


class _Candidate(Record):
    __slots__ = ("calls", "streaming", "index", "ids")
    calls: int  # calls opened so far: the next call's index
    streaming: PartialArgs | None
    index: int  # the streaming call's index
    ids: dict[int, str | None]

    def __init__(
        self, calls: int = 0, streaming: PartialArgs | None = None, index: int = 0,
        ids: dict[int, str | None] | None = None,
    ) -> None:
        self.calls = calls
        self.streaming = streaming
        self.index = index
        self.ids = {} if ids is None else ids


def one_delta_per_call(ops: list[Op]) -> list[Op]:
    """Fold the argument text a chunk adds to a streamed call into that call's first
    fragment of the chunk: the opening, the entries and the closing brackets of one
    chunk are one piece of one call, not several entries for the same index
    (``duplicate-index-in-chunk``)."""
    out: list[Op] = []
    first: dict[tuple[int, int | None], int] = {}
    for op in ops:
        if isinstance(op, ToolDelta):
            key = (op.choice, op.index)
            if key in first and op.id is None and op.name is None:
                head = out[first[key]]
                assert isinstance(head, ToolDelta)
                out[first[key]] = head.replace(args=(head.args or "") + (op.args or ""))
                continue
            first.setdefault(key, len(out))
        out.append(op)
    return out


class GeminiAdapter:
    """``GenerateContentResponse`` chunks."""

    name = "gemini"
    ends_with = "finish"
    indexes_calls = True
    continuation = None  # no shortcut: every chunk goes through feed

    def __init__(self) -> None:
        self._candidates: dict[int, _Candidate] = {}

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if isinstance(payload, list):  # a whole JSON-array response handed over at once
            return [op for item in payload for op in self.feed(item, event)]
        if not isinstance(payload, dict):
            return []
        ops: list[Op] = []
        err = payload.get("error")
        if err not in (None, "", {}, []):
            ops.append(StreamError(error_message(err, "error")))
        for pos, cand in enumerate(as_list(payload.get("candidates"))):
            if isinstance(cand, dict):
                number = as_int(cand.get("index"))
                ops.extend(self._candidate(pos if number is None else number, cand))
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            ops.append(Usage(dict(usage)))
        feedback = as_dict(payload.get("promptFeedback"))
        block = feedback.get("blockReason")
        if isinstance(block, str) and block:
            message = feedback.get("blockReasonMessage")
            text = f"prompt blocked: {block}"
            ops.append(StreamError(f"{text}: {message}" if isinstance(message, str) else text))
        return one_delta_per_call(ops)

    def _candidate(self, number: int, cand: dict[str, Any]) -> list[Op]:
        state = self._candidates.setdefault(number, _Candidate())
        ops: list[Op] = []
        for part in as_list(as_dict(cand.get("content")).get("parts")):
            if not isinstance(part, dict):
                continue
            text = part.get("text")
            if isinstance(text, str) and text:
                ops.append(
                    TextDelta(number, text, "reasoning" if part.get("thought") else "content")
                )
            call = part.get("functionCall")
            if isinstance(call, dict):
                ops.extend(self._function_call(number, state, call))
            elif call is not None:
                ops.append(unread("functionCall is not an object: ignored", call))
            ops.extend(_unknown_keys(part))
        raw = cand.get("finishReason")
        if isinstance(raw, str) and raw:
            ops.extend(self._end_streaming(number, state))
            reason = normalize_finish(raw)
            if reason == "stop" and state.calls:
                # Gemini has no tool-call finish reason: a turn that called tools
                # ends with STOP, the way a Responses turn ends "completed"
                reason = "tool_calls"
            ops.append(Finish(number, reason, raw))
        return ops

    def _function_call(self, number: int, state: _Candidate, call: dict[str, Any]) -> list[Op]:
        name = as_str(call.get("name"))
        raw_partial = call.get("partialArgs")
        partial = as_list(raw_partial)
        more = call.get("willContinue") is True
        ops: list[Op] = []
        if raw_partial is not None and not isinstance(raw_partial, list):
            ops.append(unread("functionCall.partialArgs is not an array: ignored", raw_partial))
        if state.streaming is not None and not name:
            index = state.index
            ops.extend(self._stream(number, state, index, partial))
            if not more:
                ops.extend(self._end_streaming(number, state))
                args = call.get("args")
                if args is not None:
                    # the closing part restates the whole arguments: checked
                    # against the streamed ones by the engine
                    whole = args if isinstance(args, str) else dump(args)
                    ops.append(ArgsFinal(number, index, whole, id=state.ids.get(index)))
            elif call.get("args") is not None:
                ops.append(unread("functionCall.args on a part that continues the streamed "
                                  "arguments: ignored", call.get("args")))
            return ops
        ops.extend(self._end_streaming(number, state))
        cid = as_str(call.get("id"))
        args = call.get("args")
        if name is None and cid is None and args is None and not partial and not more:
            return ops  # an empty functionCall with nothing open: a stray end marker
        index = state.calls
        state.calls += 1
        if partial or more:
            state.streaming, state.index = PartialArgs(), index
            state.ids[index] = cid
            ops.append(ToolDelta(choice=number, index=index, id=cid, name=name))
            ops.extend(self._stream(number, state, index, partial))
            if not more:
                ops.extend(self._end_streaming(number, state))
            return ops
        if isinstance(args, str):
            text: str | None = args
        elif args is None:
            text = None  # no args at all: the engine reports args-empty
        else:
            text = dump(args)
        ops.append(ToolDelta(choice=number, index=index, id=cid, name=name, args=text))
        return ops

    def _stream(self, number: int, state: _Candidate, index: int, entries: list[Any]) -> list[Op]:
        builder = state.streaming
        if builder is None:
            return []
        problems: list[Op] = []
        pieces: list[str] = []
        for pos, entry in enumerate(entries):
            pieces.append(builder.add(entry))
            if builder.problem is not None:
                problems.append(unread(f"partialArgs[{pos}]: {builder.problem}: ignored", entry))
            if builder.replaced is not None:
                said = f"partialArgs[{pos}]: {builder.replaced}"
                problems.append(Notice("args-multiple-values", said))
        text = "".join(pieces)
        delta: list[Op] = [ToolDelta(choice=number, index=index, args=text)] if text else []
        return delta + problems

    def _end_streaming(self, number: int, state: _Candidate) -> list[Op]:
        builder, state.streaming = state.streaming, None
        if builder is None:
            return []
        if builder.in_order:
            tail = builder.close()
            return [ToolDelta(choice=number, index=state.index, args=tail)] if tail else []
        # the paths left document order: the text streamed so far cannot be
        # completed, so the value built by path is restated whole instead
        return [
            ArgsFinal(
                number, state.index, builder.text(), id=state.ids.get(state.index), replaces=True
            )
        ]


def _unknown_keys(part: dict[str, Any]) -> list[Op]:
    """Call arguments under a part key this adapter does not read (a
    ``function_call`` spelled in snake case, a key from a newer API version):
    named, never dropped without a word."""
    ops: list[Op] = []
    for key, value in part.items():
        if key in _PART_KEYS or not isinstance(value, dict):
            continue
        for field_name in ("args", "partialArgs"):
            if field_name in value:
                ops.append(unread(f"part key {key!r} carries {field_name} fraglens does not "
                                  "read: ignored", value[field_name]))
                break
    return ops
