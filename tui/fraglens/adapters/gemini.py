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

A streamed call's chunks are most of a long one, each one entry: the
commonest (a piece of the string still growing, or its last) take a
shortcut (``continuation``), and runs of them are read in bulk, a growing
string's pieces at once (``piece_chunk``, ``read_pieces``) or any entries
(``entry_chunk``, ``read_entries``: the same ``PartialArgs.add`` the full
path uses for every entry that is no piece): reading/sse_runs.py.

What cannot be read is named with its wire value (``chunk-unreadable``): a
``functionCall`` or ``partialArgs`` of the wrong type, an entry with no
readable path or value or one that contradicts an earlier path, and a part
under a key this adapter does not know that holds call arguments.
"""

from __future__ import annotations

from json.encoder import encode_basestring
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
from .base import Continuation, as_dict, as_int, as_list, as_str, dump, error_message, unread
from .partial_args import PartialArgs, escaped

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
    #: every chunk's usage, which feed reads and the shortcuts carry
    usage_field = "usageMetadata"
    #: where a streamed call's chunk holds its one ``partialArgs`` entry
    #: (``entry_chunk``, ``read_entries``: reading/sse_runs.py), and its piece
    entry_path = ("candidates", 0, "content", "parts", 0, "functionCall", "partialArgs", 0)
    piece_path = (*entry_path, "stringValue")

    def __init__(self) -> None:
        self._candidates: dict[int, _Candidate] = {}
        #: the payload the shortcut read last, and its delta: should the engine
        #: decline the shortcut, feed reads this very payload next, whose piece
        #: the streamed value already holds
        self._kept: tuple[Any, int, int, str] | None = None

    def entry_chunk(self, payload: Any) -> int | None:
        """The candidate whose streamed call ``payload`` continues with one
        ``partialArgs`` entry and nothing else that feed reads but its usage:
        then feed reads it as ``read_entries`` reads its entry (and the usage
        as ``usage_field`` says). None for any other chunk, or when that
        candidate has no call streaming."""
        if type(payload) is not dict:
            return None
        candidates = payload.get("candidates")
        if type(candidates) is not list or len(candidates) != 1:
            return None
        cand = candidates[0]
        if type(cand) is not dict:
            return None
        number = cand.get("index", 0)
        content = cand.get("content")
        if type(number) is not int or type(content) is not dict:
            return None
        finish = cand.get("finishReason")
        if type(finish) is str and finish:
            return None
        parts = content.get("parts")
        if type(parts) is not list or len(parts) != 1:
            return None
        part = parts[0]
        if type(part) is not dict or len(part) != 1:
            return None
        call = part.get("functionCall")
        if type(call) is not dict or len(call) != 2 or call.get("willContinue") is not True:
            return None
        entries = call.get("partialArgs")
        if type(entries) is not list or len(entries) != 1:
            return None
        if payload.get("error") not in (None, "", {}, []):
            return None
        block = as_dict(payload.get("promptFeedback")).get("blockReason")
        if isinstance(block, str) and block:
            return None
        return number if self.streams(number) else None

    def streams(self, number: int) -> bool:
        """Candidate ``number`` has a call whose arguments are streaming."""
        state = self._candidates.get(number)
        return state is not None and state.streaming is not None

    def streaming_index(self, number: int) -> int:
        """The index of candidate ``number``'s streaming call (``streams``)."""
        return self._candidates[number].index

    def piece_chunk(self, payload: Any) -> int | None:
        """The candidate whose growing string ``payload``'s entry continues
        with a non-empty piece (``entry_chunk``, and the entry is exactly
        ``jsonPath``, ``stringValue`` and ``willContinue: true``, at the path
        of that string): feed would add the piece and nothing else
        (``read_pieces``). None for any other chunk. Reads, changes nothing."""
        number = self.entry_chunk(payload)
        if number is None:
            return None
        entry = payload["candidates"][0]["content"]["parts"][0]["functionCall"]["partialArgs"][0]
        if type(entry) is not dict or len(entry) != 3 or entry.get("willContinue") is not True:
            return None
        piece = entry.get("stringValue")
        builder = self._candidates[number].streaming
        assert builder is not None
        if type(piece) is not str or not piece or not builder.continues(entry.get("jsonPath")):
            return None
        return number

    def read_pieces(self, number: int, pieces: list[str]) -> tuple[list[str], dict[int, list[Op]]]:
        """``read_entries`` for chunks each of which is the last ``piece_chunk``
        with another non-empty piece: the string grows by them, each adds
        itself escaped."""
        builder = self._candidates[number].streaming
        assert builder is not None
        builder.extend(pieces)
        return escaped(pieces), {}

    def continuation(self, payload: Any) -> Continuation | None:
        """``(choice, index, text)`` for the commonest chunks of a streamed
        call: its entry adds a piece to the string value still growing (same
        ``jsonPath``, ``willContinue``), which feed writes as the piece
        escaped, or ends it (no ``willContinue``: the closing quote too). The
        value grows by the piece here; None for anything else."""
        number = self.entry_chunk(payload)
        if number is None:
            return None
        entry = payload["candidates"][0]["content"]["parts"][0]["functionCall"]["partialArgs"][0]
        if type(entry) is not dict:
            return None
        piece = entry.get("stringValue")
        state = self._candidates[number]
        builder = state.streaming
        assert builder is not None
        if type(piece) is not str or not builder.continues(entry.get("jsonPath")):
            return None
        if len(entry) == 3 and entry.get("willContinue") is True and piece:
            builder.extend([piece])
            text = escaped([piece])[0]
        elif len(entry) == 2:  # the string's last piece (often empty): it closes
            text = builder.finish(piece)
        else:
            return None
        self._kept = (payload, number, state.index, text)
        return number, state.index, text

    def read_entries(
        self, number: int, entries: list[Any]
    ) -> tuple[list[str], dict[int, list[Op]]]:
        """What feed makes of chunks that ``entry_chunk`` says continue
        candidate ``number``'s streamed call, one entry each: the argument
        text each adds (empty: none), and the notices of those whose entry
        could not be read as it came (by position). Pieces that continue the
        growing string (``PartialArgs.continues``) are given to it a streak at
        a time (it stays the growing one while they come)."""
        builder = self._candidates[number].streaming
        assert builder is not None
        texts: list[str] = []
        notices: dict[int, list[Op]] = {}
        said = texts.append
        growing: list[str] = []  # pieces of the growing string not given to it yet
        leaf = builder.growing_path()  # what continues it (the same until add or finish)
        for entry in entries:
            if leaf is not None and entry.get("jsonPath") == leaf:
                piece = entry.get("stringValue")
                if type(piece) is str:
                    size = len(entry)
                    if size == 3 and piece and entry.get("willContinue") is True:
                        growing.append(piece)
                        said(encode_basestring(piece)[1:-1])  # partial_args.escape
                        continue
                    if size == 2:  # the string's last piece
                        builder.extend(growing)
                        growing = []
                        said(builder.finish(piece))
                        leaf = builder.growing_path()
                        continue
            if growing:
                builder.extend(growing)
                growing = []
            said(builder.add(entry))
            leaf = builder.growing_path()
            if builder.problem is not None or builder.replaced is not None:
                notices[len(texts) - 1] = self._problems(builder, 0, entry)
        if growing:
            builder.extend(growing)
        return texts, notices

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        kept = self._kept
        if kept is not None and kept[0] is payload:
            # the shortcut read this chunk and the engine declined it: the
            # streamed value holds its piece already
            self._kept = None
            return [ToolDelta(choice=kept[1], index=kept[2], args=kept[3]),
                    *_usage(payload.get("usageMetadata"))]
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
        ops.extend(_usage(payload.get("usageMetadata")))
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
            if builder.problem is not None or builder.replaced is not None:
                problems.extend(self._problems(builder, pos, entry))
        text = "".join(pieces)
        delta: list[Op] = [ToolDelta(choice=number, index=index, args=text)] if text else []
        return delta + problems

    @staticmethod
    def _problems(builder: PartialArgs, pos: int, entry: Any) -> list[Op]:
        """What the entry at ``pos`` that ``builder`` just took could not place."""
        problems: list[Op] = []
        if builder.problem is not None:
            problems.append(unread(f"partialArgs[{pos}]: {builder.problem}: ignored", entry))
        if builder.replaced is not None:
            said = f"partialArgs[{pos}]: {builder.replaced}"
            problems.append(Notice("args-multiple-values", said))
        return problems

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


def _usage(value: Any) -> list[Op]:
    """A chunk's ``usageMetadata`` as the op it makes, when it is an object."""
    return [Usage(dict(value))] if isinstance(value, dict) else []


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
