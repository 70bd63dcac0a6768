"""DashScope native (Qwen ``/api/v1/services/aigc/...generation``) streaming.

By default every event repeats the whole output so far (cumulative snapshots):
the new text of a call, or of the answer, is the difference from the previous
event's text for it. With ``incremental_output`` the events carry deltas. The
request is not in the stream, so the mode is read from the stream itself:
as long as each text starts with the previous event's text for the same call
(or channel) it is taken as a snapshot; the first text that does not proves
the stream is incremental, and from then on every text is a delta. A snapshot
never shrinks, so the only possible misreading is a delta that happens to
begin with the previous delta before any proof came, and that can only make
the start of a stream look shorter, never glue snapshots together.

``finish_reason`` is the string ``"null"`` until the end; usage comes on
every event. The old ``output.text`` form is read too. Once the stream is
proved incremental, the commonest event (more argument text for a call)
takes a shortcut (``continuation``), its usage read by the stream
(``usage_field``), and runs of them are read in bulk (reading/sse_runs.py).

A ``tool_calls`` part of the wrong shape (an object instead of an array, an
entry or a ``function`` that is no object, an index that is no whole number)
is named with its wire value (``chunk-unreadable``), never dropped silently;
in snapshot mode each event repeats it, and says so again.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..engine.fragments import (
    NO_OBJECT,
    Finish,
    Op,
    StreamError,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from .base import (
    Continuation,
    as_dict,
    as_int,
    as_str,
    error_message,
    text_of,
    tool_call_entries,
    unread,
)

_CHOICE_KEYS = frozenset({"index", "message", "finish_reason"})
_MESSAGE_KEYS = frozenset({"content", "tool_calls", "role"})


class DashScopeAdapter:
    """DashScope ``output`` events."""

    name = "dashscope"
    ends_with = "finish"
    indexes_calls = True
    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("output", "choices", 0, "message", "tool_calls", 0, "function",
                         "arguments")
    #: every event's usage, which feed reads and the continuation carries
    usage_field = "usage"

    def continuation(self, payload: Any) -> Continuation | None:
        """``(choice, index, text)`` for the commonest event of an incremental
        stream - one choice whose message is one ``tool_calls`` entry of only
        ``index`` and argument text, no finish - where ``feed`` gives exactly
        that delta (and the event's usage, which the stream reads:
        ``usage_field``); None for anything else. Only once the stream is
        proved incremental: before that, feed takes the difference from the
        last snapshot. From then on the texts and ids feed keeps are never
        read again, so taking the piece without keeping it changes nothing."""
        if not self._incremental or type(payload) is not dict:
            return None
        output = payload.get("output")
        if type(output) is not dict:
            return None
        choices = output.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = choices[0]
        if type(choice) is not dict or not choice.keys() <= _CHOICE_KEYS:
            return None
        number = choice.get("index", 0)
        finish = choice.get("finish_reason")
        if type(number) is not int or not (
            finish is None or (type(finish) is str and finish.lower() in ("", "null", "none"))
        ):
            return None
        message = choice.get("message")
        if type(message) is not dict or not message.keys() <= _MESSAGE_KEYS:
            return None
        if message.get("content") not in (None, ""):
            return None
        calls = message.get("tool_calls")
        if type(calls) is not list or len(calls) != 1:
            return None
        entry = calls[0]
        if type(entry) is not dict or len(entry) != 2:
            return None
        fn = entry.get("function")
        index = entry.get("index")
        if type(fn) is not dict or len(fn) != 1 or type(index) is not int:
            return None
        text = fn.get("arguments")
        if type(text) is not str or not text:
            return None
        if payload.get("error") not in (None, "", {}):
            return None
        return number, index, text

    def __init__(self) -> None:
        self._incremental = False  # proven by a text that did not extend the previous one
        self._prev: dict[Hashable, str] = {}  # last text seen per call field / channel
        self._sent: dict[Hashable, str] = {}  # last id / name passed on per call

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        ops: list[Op] = []
        finishes: list[Op] = []
        output = as_dict(payload.get("output"))
        choices = output.get("choices")
        if isinstance(choices, list):
            for pos, choice in enumerate(choices):
                if isinstance(choice, dict):
                    number = as_int(choice.get("index"))
                    self._choice(pos if number is None else number, choice, ops, finishes)
        else:
            text = self._new_text(("text", 0), output.get("text"))
            if text:
                ops.append(TextDelta(0, text))
            self._finish(0, output.get("finish_reason"), finishes)
        ops.extend(finishes)
        usage = payload.get("usage")
        if isinstance(usage, dict):
            ops.append(Usage(dict(usage)))
        code = payload.get("code")
        if isinstance(code, str) and code and not output:
            ops.append(StreamError(f"{code}: {error_message(payload.get('message'), code)}"))
        elif payload.get("error") not in (None, "", {}):
            ops.append(StreamError(error_message(payload.get("error"), "error")))
        return ops

    def _choice(
        self, number: int, choice: dict[str, Any], ops: list[Op], finishes: list[Op]
    ) -> None:
        message = as_dict(choice.get("message"))
        reasoning = self._new_text(("reasoning", number), message.get("reasoning_content"))
        if reasoning:
            ops.append(TextDelta(number, reasoning, "reasoning"))
        content = self._new_text(("content", number), text_of(message.get("content")))
        if content:
            ops.append(TextDelta(number, content))
        calls = message.get("tool_calls")
        for pos, entry in tool_call_entries(calls, ops):
            wire, fn = entry.get("index"), entry.get("function")
            if wire is not None and as_int(wire) is None:
                ops.append(unread(f"tool_calls[{pos}].index is not a whole number: read as "
                                  "its position", wire))
            if fn is not None and not isinstance(fn, dict):
                ops.append(unread(f"tool_calls[{pos}].function is not an object: ignored", fn))
            op = self._tool(number, pos, entry)
            if op is not None:
                ops.append(op)
        self._finish(number, choice.get("finish_reason"), finishes)

    def _tool(self, number: int, pos: int, entry: dict[str, Any]) -> ToolDelta | None:
        wire = as_int(entry.get("index"))
        index = pos if wire is None else wire  # snapshot positions are stable
        fn = as_dict(entry.get("function"))
        key = (number, index)
        cid = self._changed((key, "id"), as_str(entry.get("id")))
        name = self._changed((key, "name"), as_str(fn.get("name")))
        raw = fn.get("arguments")
        args: str | None = None
        args_obj: Any = NO_OBJECT
        if isinstance(raw, str):
            args = self._new_text((key, "args"), raw)
        elif raw is not None:
            args_obj = raw
        if not cid and not name and not args and args_obj is NO_OBJECT:
            if raw is None and "arguments" in fn:
                return ToolDelta(choice=number, index=index, args_null=True)
            return None  # nothing new for this call in this snapshot
        return ToolDelta(
            choice=number, index=index, id=cid, name=name, args=args or None, args_obj=args_obj
        )

    def _changed(self, key: Hashable, value: str | None) -> str | None:
        """An id or name, unless a snapshot merely repeats the one already passed on."""
        if value is None or value == "":
            return value
        if not self._incremental and self._sent.get(key) == value:
            return None
        self._sent[key] = value
        return value

    def _new_text(self, key: Hashable, text: Any) -> str:
        if not isinstance(text, str) or not text:
            return ""
        prev = self._prev.get(key, "")
        self._prev[key] = text
        if self._incremental:
            return text
        if text.startswith(prev):
            return text[len(prev) :]
        if prev:
            self._incremental = True  # a snapshot never loses its beginning: these are deltas
        return text

    @staticmethod
    def _finish(number: int, raw: Any, finishes: list[Op]) -> None:
        if isinstance(raw, str) and raw and raw.lower() not in ("null", "none"):
            finishes.append(Finish(number, normalize_finish(raw), raw))
