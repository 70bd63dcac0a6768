"""The reassembler: normalized fragment ops in, calls and diagnostics out.

It knows nothing of wire formats, files or screens. Fed the ops of one event
at a time (``apply``), it resolves each tool delta to a call slot (see
``slots.py``), appends to that call's buffer, and finalizes calls when their
choice finishes, when an error arrives, or when the stream ends. Everything
is kept with the event it happened at, so any earlier step can be looked at
exactly (``calls.py``).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from heapq import merge
from itertools import accumulate
from operator import methodcaller
from typing import TYPE_CHECKING, Any

from ..records import Record
from .calls import Call
from .cumulative import last_restatement
from .diagnostics import Diagnostic, make
from .finalize import Result, finalize
from .fragments import (
    NO_OBJECT,
    ArgsFinal,
    ArgsParsed,
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
from .plural import counted
from .slots import SlotResolver, clean
from .text_pieces import TextPieces
from .usage_log import UsageLog

if TYPE_CHECKING:  # the markup families load with the first text or refusal (start-up)
    from .leaks import Leaked

DEFAULT_MAX_ARG_BYTES = 16 * 1024 * 1024

#: a UTF-16 surrogate pair written as two escapes, high half then low half
#: (compiled when a text first holds an escape: ``re`` keeps it)
_PAIR_ESCAPE = r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"


#: the name OpenAI models sometimes give one call holding several (issue 11)
PARALLEL_WRAPPER = "multi_tool_use.parallel"


def unwrap_parallel(value: Any) -> list[dict[str, Any]] | None:
    """The calls a ``multi_tool_use.parallel`` wrapper holds, as the model meant
    them (``{"tool_uses": [{"recipient_name": "functions.X", "parameters": {...}}]}``),
    or None when the value is not that shape. The call itself stays as received."""
    uses = value.get("tool_uses") if isinstance(value, dict) else None
    if not isinstance(uses, list) or not uses:
        return None
    inner: list[dict[str, Any]] = []
    for use in uses:
        if not isinstance(use, dict) or not isinstance(use.get("recipient_name"), str):
            return None
        name = use["recipient_name"]
        inner.append({
            "name": name.removeprefix("functions."),
            "recipient_name": name,
            "arguments": use.get("parameters"),
        })
    return inner


_NOT_JSON: Any = object()


def _json_value(text: str) -> Any:
    """The value of a whole JSON text, or ``_NOT_JSON``."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


#: a text's UTF-8 bytes, lone surrogates included, for counting them in C loops
_ENCODE = methodcaller("encode", "utf-8", "surrogatepass")

#: the ops that belong to one choice
Chosen = ToolDelta | TextDelta | ArgsFinal | ArgsParsed | Finish | ToolOutput
_CHOSEN = (ToolDelta, TextDelta, ArgsFinal, ArgsParsed, Finish, ToolOutput)


#: adapter notices told apart by what they say (they name calls, parts or types)
_PER_MESSAGE = frozenset(
    {"chunk-unreadable", "args-misrouted", "args-missing", "result-orphan", "index-null-chunk",
     "event-unknown"}
)


class ChoiceState(Record):
    """What one choice said besides its calls. ``text``, ``reasoning`` and
    ``finishes`` are append-only sequences in event order and part of the read
    API: views binary-search them by event to show any step."""

    __slots__ = ("text", "reasoning", "finishes")
    text: TextPieces  # (event, piece)
    reasoning: TextPieces
    finishes: list[tuple[int, str, str]]  # (event, reason, raw)

    def __init__(
        self, text: TextPieces | None = None, reasoning: TextPieces | None = None,
        finishes: list[tuple[int, str, str]] | None = None,
    ) -> None:
        self.text = TextPieces() if text is None else text
        self.reasoning = TextPieces() if reasoning is None else reasoning
        self.finishes = [] if finishes is None else finishes

    def text_at(self, step: int, channel: str = "content") -> str:
        return (self.text if channel == "content" else self.reasoning).text_upto(step)

    @property
    def finish(self) -> str | None:
        return self.finishes[-1][1] if self.finishes else None


class Reassembler:
    """Feed ``apply(event, ops)`` in event order, then ``close(event)`` once."""

    def __init__(self, max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES) -> None:
        self.max_arg_bytes = max_arg_bytes
        self.calls: list[Call] = []
        self.choices: dict[int, ChoiceState] = {}
        self._diagnostics: list[Diagnostic] = []
        #: (event, usage) per event that reported usage, in event order
        self.usage = UsageLog()
        self.errors: list[tuple[int, str]] = []
        self.terminal: tuple[int, str] | None = None
        #: fragments nothing could be attributed to: kept, never dropped
        self.unattributed: list[tuple[int, ToolDelta]] = []
        #: calls the model meant that arrived as text or in a rejected
        #: generation: shown, never made calls (engine/leaks.py)
        self.leaked: list[Leaked] = []
        self.closed_at: int | None = None
        self._slots = SlotResolver(self)
        self._once: set[str] = set()
        #: wire choice -> the choice it continues, for a server that gives every
        #: chunk of one answer its own choice index (``choice-index-unstable``)
        self._moved: dict[int, int] = {}

    # -- feeding -------------------------------------------------------------
    def apply(self, event: int, ops: list[Op]) -> None:
        if len(ops) == 1:
            op = ops[0]
            if isinstance(op, _CHOSEN) and op.choice not in self.choices:
                op = self._rechosen(event, op)
            if type(op) is ToolDelta:
                self._tool_delta(event, op)  # most events: one fragment, nothing else
                return
            if type(op) is TextDelta:  # the next commonest: a piece of text
                ch = self._choice(op.choice)
                (ch.text if op.channel == "content" else ch.reasoning).append((event, op.text))
                return
        finishes: list[Finish] = []
        errors: list[StreamError] = []
        deltas_seen: set[tuple[int, int]] = set()
        for op in ops:
            if isinstance(op, _CHOSEN) and op.choice not in self.choices:
                op = self._rechosen(event, op)
            if isinstance(op, ToolDelta):
                if op.index is not None:
                    key = (op.choice, op.index)
                    if key in deltas_seen:
                        self.note_once(
                            f"dup-index-{event}",
                            "duplicate-index-in-chunk",
                            f"two tool-call entries with index {op.index} in one chunk",
                            event,
                        )
                    deltas_seen.add(key)
                self._tool_delta(event, op)
            elif isinstance(op, TextDelta):
                ch = self._choice(op.choice)
                (ch.text if op.channel == "content" else ch.reasoning).append((event, op.text))
            elif isinstance(op, ArgsFinal):
                self._args_final(event, op)
            elif isinstance(op, ArgsParsed):
                self._args_parsed(op)
            elif isinstance(op, Finish):
                # deltas first, then finish: a whole call may ride with its finish
                finishes.append(op)
            elif isinstance(op, Usage):
                self.usage.append((event, op.data))
            elif isinstance(op, StreamError):
                errors.append(op)
            elif isinstance(op, Terminal):
                if self.terminal is None:
                    self.terminal = (event, op.name)
            elif isinstance(op, Notice):
                self.notice(op.code, op.message, event)
            elif isinstance(op, ToolOutput):
                call = self._slots.by_index.get((op.choice, op.index))
                if call is not None:
                    call.outputs.append((event, op.output, op.error))
        for fin in finishes:
            self._finish(event, fin)
        for err in errors:
            self._error(event, err)

    def _rechosen(self, event: int, op: Chosen) -> Chosen:
        """``op`` on the choice it continues, when its own choice index (one no
        op came under yet) is one the answer drifted to (see ``_drift_target``)."""
        wire = op.choice
        target = self._moved.get(wire)
        if target is None:
            target = self._drift_target(op)
            if target is None:
                return op
            self._moved[wire] = target
            self.note_once(
                "choice-drift",
                "choice-index-unstable",
                f"the answer on choice {target} went on under choice {wire}: read as one "
                "choice (every later new choice index too)",
                event,
            )
        return op.replace(choice=target)

    def _drift_target(self, op: Chosen) -> int | None:
        """The choice a first op on a new choice index continues, or None when
        it starts a choice of its own. Once an answer has drifted, every new
        index continues it; before that, only argument text with no id and no
        name can tell (a choice of an ``n>1`` answer opens its call with both),
        and only when one choice has a call open to take it."""
        if self._moved:
            return next(iter(self._moved.values()))
        if type(op) is not ToolDelta or not op.args or clean(op.id) or clean(op.name):
            return None
        open_on = {c.choice for c in self.calls if not c.finalized}
        return open_on.pop() if len(open_on) == 1 else None

    def continue_call(self, event: int, choice: int, index: int, text: str) -> bool:
        """More argument text for the open call on ``(choice, index)`` and nothing
        else: the commonest fragment, appended without building ops, where
        ``apply`` would do exactly the same. False (nothing done) whenever a
        rule could apply; then ``apply`` must be given the fragment.

        With no id and no name, no keying rule moves text off the call on its
        index, not even a second value (``args-duplicated`` is decided when finalizing)."""
        call = self._slots.by_index.get((choice, index))
        if call is None or call.finalized or call.over_limit or not text:
            return False
        if call.length and text.lstrip()[:1] in ("{", "[") and self._slots.waiting(choice, index):
            return False  # perhaps the waiting call's text under another index
        self._append(event, call, text)  # the size limit, as on the full path
        return True

    def continue_run(
        self, first_event: int, choice: int, index: int, texts: list[str], step: int = 1,
        joined: str | None = None,
    ) -> int:
        """``continue_call`` for the events ``first_event``, ``first_event +
        step``, ..., one text each: how many of them were taken (from the
        first). A run stops before an empty text and before the text that
        would pass the size limit; the rest take ``continue_call``, which cuts
        that text there. ``joined``: the texts joined, when they were (the
        reader's, which others keep too: one copy)."""
        call = self._slots.by_index.get((choice, index))
        if call is None or call.finalized or call.over_limit or self._slots.waiting(choice, index):
            return 0
        run, lengths = self._fitting(call, texts)
        call.extend(first_event, run, step, lengths, joined if len(run) == len(texts) else None)
        return len(run)

    def continue_at(self, events: list[int], choice: int, index: int, texts: list[str]) -> int:
        """``continue_run`` for the events ``events`` (in order, each with its
        text): how many were taken, from the first."""
        call = self._slots.by_index.get((choice, index))
        if call is None or call.finalized or call.over_limit or self._slots.waiting(choice, index):
            return 0
        run, lengths = self._fitting(call, texts)
        if run:
            call.extend_at(events[:len(run)], run, lengths)
        return len(run)

    def _fitting(self, call: Call, texts: list[str]) -> tuple[list[str], list[int]]:
        """The texts a run may give ``call``, from the first, and their
        lengths: up to an empty one (no continuation, see ``continue_call``)
        and short of the size limit."""
        lengths = list(map(len, texts))
        taken = lengths.index(0) if 0 in lengths else len(texts)
        if taken < len(texts):
            texts, lengths = texts[:taken], lengths[:taken]
        # a character is at most 4 bytes: texts that end within a quarter of the
        # limit surely fit (as in _append); past it, their bytes are counted
        if (call.length + sum(lengths)) * 4 > self.max_arg_bytes:
            if call.nbytes is None:
                call.nbytes = _utf8_len(call.text)
            sizes = list(accumulate(map(len, map(_ENCODE, texts)), initial=call.nbytes))
            taken = bisect_right(sizes, self.max_arg_bytes) - 1
            call.nbytes = sizes[taken]
            texts, lengths = texts[:taken], lengths[:taken]
        return texts, lengths

    def continue_mixed(
        self, first_event: int, keys: list[tuple[int, int]], numbers: list[list[int]],
        texts: list[list[str]], count: int, step: int = 1, joined: list[str] | None = None,
    ) -> int:
        """``continue_call`` for the ``count`` events ``first_event``,
        ``first_event + step``, ... of several calls in turns (read in bulk),
        handed over put with their calls: the events ``numbers[k]`` (in
        order) are the call's on ``keys[k]``, one text each of ``texts[k]``.
        How many were taken, from the first in the stream's order: it stops
        before the first text that is empty or that would pass its call's
        size limit (those take ``continue_call``, one by one). ``joined``: each
        key's texts joined, when they were (the reader's: one copy)."""
        found = [self._slots.by_index.get(key) for key in keys]
        if any(c is None or c.finalized or c.over_limit for c in found):
            return 0
        calls: list[Call] = []
        mine: list[tuple[list[int], list[str]]] = []
        whole: list[str | None] = list(joined) if joined is not None else [None] * len(keys)
        for call, numbers_k, texts_k in zip(found, numbers, texts, strict=True):
            assert call is not None
            k = next((j for j, c in enumerate(calls) if c is call), len(calls))
            if k == len(calls):
                calls.append(call)
                mine.append((numbers_k, texts_k))
                continue
            # two keys name one call (a call whose start was lost takes the
            # pieces of both indexes): its pieces are taken in their order
            both = list(merge(zip(*mine[k], strict=True), zip(numbers_k, texts_k, strict=True)))
            mine[k] = ([n for n, _ in both], [t for _, t in both])
            whole[k] = None
        del whole[len(calls):]
        taken = count
        lengths = [list(map(len, texts_k)) for _, texts_k in mine]
        for call, (numbers_k, texts_k), lengths_k in zip(calls, mine, lengths, strict=True):
            if 0 in lengths_k:
                taken = min(taken, (numbers_k[lengths_k.index(0)] - first_event) // step)
            if (call.length + sum(lengths_k)) * 4 <= self.max_arg_bytes:
                continue
            # near the limit: UTF-8 bytes counted, the run cut before the text that passes it
            start = _utf8_len(call.text) if call.nbytes is None else call.nbytes
            sizes = list(accumulate(map(len, map(_ENCODE, texts_k)), initial=start))
            fits = bisect_right(sizes, self.max_arg_bytes) - 1
            if fits < len(texts_k):
                taken = min(taken, (numbers_k[fits] - first_event) // step)
        if not taken:
            return 0
        stop = first_event + step * taken
        for call, (numbers_k, texts_k), lengths_k, joined_k in zip(calls, mine, lengths, whole,
                                                                  strict=True):
            cut = bisect_left(numbers_k, stop)
            if not cut:
                continue
            if cut < len(texts_k):
                numbers_k, texts_k, lengths_k = numbers_k[:cut], texts_k[:cut], lengths_k[:cut]
                joined_k = None
            if (call.length + sum(lengths_k)) * 4 > self.max_arg_bytes:
                if call.nbytes is None:
                    call.nbytes = _utf8_len(call.text)
                call.nbytes += sum(map(len, map(_ENCODE, texts_k)))
            call.extend_at(numbers_k, texts_k, lengths_k, joined_k)
        return taken

    def text_run(self, first_event: int, choice: int, channel: str, texts: list[str]) -> None:
        """One piece of text (``channel``: content or reasoning) for each of the
        consecutive events from ``first_event``: what ``apply`` does with each
        one's ``TextDelta``. An empty piece is an event with no op: it adds
        nothing, and a run of only such events leaves the choices as they are."""
        if not any(texts):
            return
        if choice not in self.choices:
            first = next(filter(None, texts))
            choice = self._rechosen(first_event, TextDelta(choice, first)).choice
        ch = self._choice(choice)
        (ch.text if channel == "content" else ch.reasoning).extend_run(first_event, texts)

    def close(self, event: int) -> None:
        """The stream ended after ``event``: finalize everything still open."""
        self.closed_at = event
        for call in self.calls:
            if not call.finalized:
                self._finalize(call, event)
        self._end_checks(event)

    # -- diagnostics -----------------------------------------------------------
    def diag(
        self, code: str, message: str, event: int | None = None, call: Call | None = None
    ) -> None:
        self._diagnostics.append(make(code, message, event, call.seq if call else None))

    def note_once(
        self, key: str, code: str, message: str, event: int | None, call: Call | None = None
    ) -> None:
        if key not in self._once:
            self._once.add(key)
            self.diag(code, message, event, call)

    def notice(self, code: str, message: str, event: int | None) -> None:
        """Adapter and framing notices: a repeated one is listed once (a
        keep-alive every second is not 600 findings). Unreadable parts are
        told apart by what they quote: each different one is named, or all
        but the first would be dropped without a word; the same one repeated
        (a DashScope snapshot re-sends it every event) is named once. So are
        the notices that name calls: each pair of calls, each orphan result."""
        key = f"notice-{code}" if code not in _PER_MESSAGE else f"notice-{code}-{message}"
        if key in self._once:
            return
        self._once.add(key)
        self.diag(code, message, event)

    def call_once(self, call: Call, code: str, message: str, event: int) -> None:
        if code not in call.raised:
            call.raised.add(code)
            self.diag(code, message, event, call)

    def diagnostics(self, step: int | None = None) -> list[Diagnostic]:
        """Every diagnostic (up to event ``step``), in event order."""
        out = list(self._diagnostics)
        for call in self.calls:
            found = call.result_at(step) if step is not None else call.result
            if found is None:
                continue
            event = max(e for e, r in call.results if r is found)
            out.extend(make(code, msg, event, call.seq) for code, msg in found.findings)
        if step is not None:
            out = [d for d in out if d.event is None or d.event <= step]
        out.sort(key=lambda d: (d.event if d.event is not None else 1 << 62))
        return out

    # -- internals -----------------------------------------------------------
    def _choice(self, choice: int) -> ChoiceState:
        ch = self.choices.get(choice)
        if ch is None:
            ch = self.choices[choice] = ChoiceState()
        return ch

    def new_call(self, event: int, choice: int, index: int | None) -> Call:
        call = Call(seq=len(self.calls), choice=choice, first_event=event, index=index)
        self.calls.append(call)
        self._choice(choice)
        return call

    def _tool_delta(self, event: int, d: ToolDelta) -> None:
        call = self._slots.resolve(event, d)
        args = d.args
        if call is not None and args and not call.finalized and not call.over_limit and (
            d.args_obj is NO_OBJECT and not d.args_null
        ):
            self._append(event, call, args)  # plain text for an open call: most fragments
            if d.args_value is not NO_OBJECT:
                call.text_value = (args, d.args_value, True)
            return
        if call is None:
            self.unattributed.append((event, d))
            self.diag(
                "unattributed-fragment",
                f"{counted(len(d.args or ''), 'char')} with no index, id or name while several "
                "calls "
                "are open; kept aside, not guessed",
                event,
            )
            return
        if call.finalized and (d.args or d.args_obj is not NO_OBJECT):
            call.finalized = False  # more text after a finish: decide again later
        if d.args_null:
            self.call_once(call, "args-null", "arguments: null fragments skipped", event)
        if d.args_obj is not NO_OBJECT:
            self._object_args(event, call, d)
        elif d.args:
            self._append(event, call, d.args)
            if d.args_value is not NO_OBJECT:
                call.text_value = (d.args, d.args_value, True)
        elif d.args == "" and call.fragments == 0:
            # an empty first fragment is still a fragment (Anthropic's first partial_json)
            self._append(event, call, "")
        call.last_event = max(call.last_event, event)

    def _append(self, event: int, call: Call, text: str) -> None:
        if call.over_limit:
            call.dropped_bytes += _utf8_len(text)
            return
        # a character is at most 4 bytes: far from the limit, no need to count them
        if (call.length + len(text)) * 4 > self.max_arg_bytes and self._over(event, call, text):
            return
        call.append(event, text)

    def _over(self, event: int, call: Call, text: str) -> bool:
        """Near the limit, count UTF-8 bytes exactly; past it, keep the prefix
        that fits, stop buffering and say so. True when the text was handled."""
        if call.nbytes is None:
            call.nbytes = _utf8_len(call.text)
        size = _utf8_len(text)
        if call.nbytes + size <= self.max_arg_bytes:
            call.nbytes += size
            return False
        room = self.max_arg_bytes - call.nbytes
        raw = text.encode("utf-8", "surrogatepass")
        kept = raw[:room].decode("utf-8", "ignore")  # never half a character
        call.dropped_bytes += size - _utf8_len(kept)
        if kept:
            call.append(event, kept)
        call.nbytes += _utf8_len(kept)
        call.over_limit = True
        call.last_event = max(call.last_event, event)
        self.diag(
            "args-over-limit",
            f"arguments passed {self.max_arg_bytes} bytes; buffering stopped",
            event,
            call,
        )
        return True

    def _object_args(self, event: int, call: Call, d: ToolDelta) -> None:
        self.call_once(call, "args-object", "arguments came as a JSON object", event)
        value = d.args_obj
        if isinstance(call.obj, dict) and isinstance(value, dict):
            merged = dict(call.obj)
            merged.update(value)
            value = merged
        call.obj, call.obj_seen = value, True
        # the buffer shows the serialization, fragment by fragment
        text = json.dumps(d.args_obj, ensure_ascii=False)
        call.obj_chars += len(text)
        self._append(event, call, text)

    def _args_parsed(self, op: ArgsParsed) -> None:
        """The adapter's parse of the call's text, kept for its verdict while
        the text is still the one parsed (``ArgsParsed``)."""
        call = self._slots.by_index.get((op.choice, op.index))
        if call is None or call.finalized or call.restated is not None:
            return
        if call.is_text(op.text):  # (the text the call holds from here: ``known``'s)
            call.text_value = (op.text, op.value, op.no_floats)

    def _args_final(self, event: int, op: ArgsFinal) -> None:
        call = self._slots.find_final(op)
        if call is None:
            return
        cid = clean(op.id)
        if cid and cid != call.id:
            self._slots.final_id(event, call, cid)
        if not op.text or op.text == call.restated:
            return  # nothing restated, or the same restatement again (.done, then the item)
        if op.replaces and call.fragments:
            call.restated = op.text
            call.last_event = max(call.last_event, event)
            call.notes.append(
                "the argument paths left document order: the value built path by path "
                "replaces the text streamed so far"
            )
            return
        if call.fragments == 0 or not call.text:
            if op.text:
                self._append(event, call, op.text)
            return
        # what the call holds now: the streamed text, or a value an earlier
        # restatement put in its place (Vertex paths that left document order)
        current = call.final_text
        if op.text == current or call.obj_seen:
            return
        streamed, restated = _json_value(current), _json_value(op.text)
        if streamed is not _NOT_JSON and streamed == restated:
            return  # the same value, spelled differently
        if streamed is _NOT_JSON and restated is not _NOT_JSON and self._cumulative(call, event):
            if _json_value(call.final_text) == restated:
                return  # the last cumulative piece is the value restated: one finding
            call.restated, call.cumulative = None, False
        if streamed is _NOT_JSON and restated is not _NOT_JSON:
            # the pieces were no JSON (obfuscated, encrypted, or a gateway's
            # own rendering); the format's restatement is: it is the arguments
            call.restated = op.text
            call.finalized = False  # decided again, on the restated text
            call.last_event = max(call.last_event, event)
            call.notes.append(
                "the streamed pieces are not JSON; the arguments restated when the call "
                "ended are used (both texts are kept)"
            )
            self.call_once(
                call,
                "args-restated",
                "the streamed argument pieces are not JSON; the value restated at the end is "
                "used",
                event,
            )
            return
        call.notes.append("the closing restatement differs from the deltas")
        self.call_once(
            call,
            "args-multiple-values",
            "the arguments restated at the end differ from the streamed deltas",
            event,
        )

    def _finish(self, event: int, fin: Finish) -> None:
        ch = self._choice(fin.choice)
        ch.finishes.append((event, fin.reason, fin.raw))
        if len(ch.finishes) > 1:
            self.note_once(
                f"multi-finish-{fin.choice}",
                "multiple-finish",
                f"choice {fin.choice} finished {counted(len(ch.finishes), 'time')}",
                event,
            )
        if fin.reason == "length":
            self.note_once(
                f"length-{fin.choice}", "finish-length", f"choice {fin.choice} hit the token limit",
                event,
            )
        if fin.reason == "error":
            return  # the StreamError that comes with it aborts the open calls
        for call in self.calls:
            if call.choice == fin.choice and not call.finalized:
                self._finalize(call, event)

    def _error(self, event: int, err: StreamError) -> None:
        self.errors.append((event, err.message))
        self.diag("error-event", err.message, event)
        if err.generation is not None:
            from .leaks import rejected

            found = rejected(err.generation, event)
            self.leaked.extend(found)
            names = ", ".join(str(f.piece.name) for f in found if f.piece.name) or "no call"
            self.diag(
                "tool-call-rejected",
                f"the provider refused the model's call and sent back what it generated: "
                f"{names} (see leaked)",
                event,
            )
        for call in self.calls:
            if not call.finalized:
                # a call whose arguments were already one whole value was closed
                # before the error came; only the one still open is cut off
                self._finalize(call, event, aborted=not call.complete)

    def _finalize(self, call: Call, event: int, aborted: bool = False) -> None:
        finish = self._choice(call.choice).finish
        self._cumulative(call, event)
        self._surrogate_split(call)
        result: Result = finalize(
            call.final_text,
            call.scan_state,
            obj=call.obj,
            # objects and text for one call: the whole buffer is judged, so the
            # text's value is not dropped (several values are said as such)
            obj_seen=call.obj_seen and call.length <= call.obj_chars,
            over_limit=call.over_limit,
            aborted=aborted,
            finish=finish,
            known=call.text_value,
        )
        call.results.append((event, result))
        call.finalized = True
        call.proved_whole_at = call.fragments if result.whole_value else None
        wrapped = call.name == PARALLEL_WRAPPER and result.has_value
        call.inner_calls = inner = unwrap_parallel(result.arguments) if wrapped else None
        if inner is not None:
            self.call_once(
                call,
                "parallel-wrapper",
                f"one {PARALLEL_WRAPPER} call wrapping {counted(len(inner), 'call')}: "
                + ", ".join(c["name"] for c in inner[:5]),
                event,
            )

    def _cumulative(self, call: Call, event: int) -> bool:
        """``args-cumulative``: every piece restated the text so far; the last
        one is the arguments (engine/cumulative.py). Decided again each time
        the call is finalized, since more pieces may have come."""
        if call.cumulative:
            call.restated, call.cumulative = None, False
        if call.restated is not None or call.obj_seen or call.fragments < 2:
            return False
        text, ends = call.text, call.frag_end
        if call.over_limit:
            # restatements fill the limit quadratically sooner: the pieces kept
            # whole still tell, the one cut at the limit is left out
            ends = ends[:-1]
            if len(ends) < 2:
                return False
            text = text[: ends[-1]]
        found = last_restatement(text, ends)
        if found is None:
            return False
        last, pieces = found
        call.restated, call.cumulative = last, True
        if "args-cumulative" not in call.raised:
            call.notes.append(
                "each argument piece restated the text so far: the last one is the arguments"
            )
        self.call_once(
            call,
            "args-cumulative",
            f"each of {pieces} argument pieces restated the whole text so far (cumulative, "
            "not deltas); the last one is read as the arguments",
            call.frag_event[-1],
        )
        return True

    def _surrogate_split(self, call: Call) -> None:
        """``args-surrogate-split``: a surrogate pair escape cut between two fragments, said at the
        event whose fragment completed it. A call already scanned knows where;
        otherwise only a pair escape that straddles a fragment end can be one,
        and only then is the scanner run to tell (it knows strings from the
        rest, and a real escape from an escaped backslash)."""
        if "args-surrogate-split" in call.raised:
            return
        if len(call.frag_shape) < len(call.frag_end):
            ends = call.frag_end
            text = call.text
            pairs = re.finditer(_PAIR_ESCAPE, text) if "\\u" in text else iter(())
            for m in pairs:
                at = bisect_right(ends, m.start())  # the fragment the pair starts in
                if at < len(ends) and ends[at] < m.end():
                    call.catch_up()  # straddles a fragment end: the scanner knows
                    break
            else:
                return
        k = call.surrogate_split_at
        if k is not None:
            self.call_once(
                call,
                "args-surrogate-split",
                "a surrogate pair escape was split; joined",
                call.frag_event[k],
            )

    def _end_checks(self, event: int) -> None:
        ids: dict[tuple[int, str], Call] = {}
        for call in self.calls:
            if call.name is None:
                self.diag("name-missing", "the call never got a name", event, call)
            if call.id is None:
                call.synthetic_id = f"call_fraglens_{call.choice}_{call.seq}"
                self.diag("id-missing", f"no id came; using {call.synthetic_id}", event, call)
            else:
                other = ids.get((call.choice, call.id))
                if other is not None:
                    self.diag("id-duplicate", f"id {call.id!r} also names call {other.seq}",
                              event, call)
                ids[(call.choice, call.id)] = call
        for number, ch in self.choices.items():
            # hosted calls run at the provider: they do not end a turn with tool_calls
            calls = [c for c in self.calls if c.choice == number and not c.hosted]
            # judge each finish by the calls that came since the one before it, so
            # that several responses recorded back to back are judged one by one
            previous = -1
            for fin_event, reason, raw in ch.finishes:
                made = [c for c in calls if previous < c.first_event <= fin_event]
                previous = fin_event
                if made and reason not in ("tool_calls", "length", "error"):
                    self.diag(
                        "finish-reason-mismatch",
                        f"choice {number}: finish_reason {raw!r} but "
                        f"{counted(len(made), 'tool call')} "
                        f"{'was' if len(made) == 1 else 'were'} made",
                        fin_event,
                    )
            late = [c for c in calls if c.first_event > previous] if ch.finishes else []
            if late and ch.finishes:
                self.diag(
                    "finish-reason-mismatch",
                    f"choice {number}: {counted(len(late), 'tool call')} came after the last "
                    "finish",
                    late[0].first_event,
                )
            if not calls and ch.finish == "tool_calls":
                self.diag(
                    "finish-reason-mismatch",
                    f"choice {number}: finish_reason tool_calls but no tool call came",
                    ch.finishes[-1][0],
                )
            content = ch.text.text
            if calls and content.strip():
                # said where it became true: when the second of the two arrived
                first_text = ch.text.event_at(len(content) - len(content.lstrip()))
                self.diag(
                    "text-with-tool-calls", f"choice {number} has text besides its calls",
                    max(first_text, min(c.first_event for c in calls)),
                )
            if content:  # no text holds no markup
                self._leaked_in_text(number, ch, content)
        # a refused call was read when its error came, the text's only now
        self.leaked.sort(key=lambda found: found.event)
        self._choice_drift()

    def _leaked_in_text(self, number: int, ch: ChoiceState, content: str) -> None:
        """``tool-markup-in-content``: markup of a known family in the text,
        said at the event whose text completed its opener; the calls read out
        of it go to ``leaked`` with the event their markup began at."""
        from .leaks import BY_KEY, judge, scan

        marks, pieces = scan(content)
        if not marks:
            return
        event_at = ch.text.event_at

        found = [judge(p, "text", number, event_at(p.start)) for p in pieces]
        self.leaked.extend(found)
        first = marks[0]
        family = BY_KEY[(found[0].piece.family if found else None) or first.family]
        if found:
            names = ", ".join(str(f.piece.name) for f in found[:5])
            more = f" and {len(found) - 5} more" if len(found) > 5 else ""
            read = f"{counted(len(found), 'call')} read from it ({names}{more}), none made"
        else:
            read = "no call could be read from it"
        self.diag(
            "tool-markup-in-content",
            f"choice {number}: {family.label} markup {first.opener!r} in the text; {read}. "
            f"The server should parse it: {family.fix}",
            event_at(first.end - 1),
        )

    def _choice_drift(self) -> None:
        """``choice-index-unstable``: choices that each keep their own index (an
        ``n>1`` request) are fine; a call whose pieces moved to another choice
        index is not. It shows as one id under two choices, or as a call with
        neither id nor name on a choice other than the first (a continuation
        that lost its choice)."""
        if len(self.choices) < 2:
            return
        first = min(self.choices)
        seen: dict[str, int] = {}
        for call in self.calls:
            if call.id is not None:
                other = seen.setdefault(call.id, call.choice)
                if other != call.choice:
                    self.diag(
                        "choice-index-unstable",
                        f"call {call.id!r} arrived under choice {other} and choice "
                        f"{call.choice}; calls are kept per choice",
                        call.first_event,
                        call,
                    )
                    return
            elif call.name is None and call.choice != first:
                self.diag(
                    "choice-index-unstable",
                    f"argument text with no id or name under choice {call.choice}, which no "
                    "call opened: the choice index drifted; calls are kept per choice",
                    call.first_event,
                    call,
                )
                return
