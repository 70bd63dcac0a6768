"""What every wire-format adapter shares: the protocol, and how to read raw wire values.

An adapter is fed one decoded JSON value at a time (any JSON value: a chunk
can be a list, a number or ``null`` when a backend misbehaves) and must never
raise. The helpers below read a value *as the wire spelled it* and answer
``None`` for a value of the wrong type instead of guessing; blank strings stay
blank, because deciding that ``""`` means "absent" is the engine's job (a blank id is no id).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from ..engine.fragments import Notice, Op

#: ``(choice, index, text)``: more argument text for the call at a known index
Continuation = tuple[int, int, str]


class Adapter(Protocol):
    """One wire format, one stream: ``feed`` each decoded event, get fragment ops."""

    name: str
    #: How a complete stream of this format ends: ``"done"`` (the ``[DONE]``
    #: sentinel), ``"terminal"`` (an end event, handed on as ``Terminal``) or
    #: ``"finish"`` (nothing follows the last finish: EOF there is normal).
    ends_with: str
    #: True when a fragment ``index`` counts tool calls (0, 1, ...), so that a
    #: first index other than 0 is a quirk (``index-nonzero-start``); False when it is a position
    #: among every output block or item (text, reasoning, tool results too), as
    #: in Anthropic content blocks and Responses output items.
    indexes_calls: bool

    @property
    def continuation(self) -> Callable[[Any], Continuation | None] | None:
        """None, or a reader of the format's commonest chunk - more argument
        text for a known index - as a :data:`Continuation`, None for anything
        else; the pipeline hands it to ``Reassembler.continue_call`` without
        building ops. It must agree with ``feed`` on every chunk it accepts.
        (A property here so that a class attribute, None or a function, fits.)"""

    def feed(self, payload: Any, event: str | None = None) -> list[Op]: ...


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    """A wire index: an integer (or an integral float, or a string of digits), else None.

    ``True``/``False`` are not indexes even though Python says ``True == 1``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def as_str(value: Any) -> str | None:
    """A wire id or name as text: strings as they are, numbers spelled out, else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    return None


def text_of(value: Any) -> str:
    """Text content that may come as a string or as a list of parts
    (``[{"type": "text", "text": "..."}]``); anything else has no text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def dump(value: Any) -> str:
    """Serialize a whole-object argument value the way JS ``JSON.stringify`` does
    (compact, non-ASCII kept), which is how most clients show such arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_message(value: Any, fallback: str) -> str:
    """A readable message from whatever an error field holds."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict):
        for key in ("message", "msg", "detail", "error", "type", "code", "status"):
            inner = value.get(key)
            if isinstance(inner, str) and inner:
                return inner
            if isinstance(inner, dict):
                return error_message(inner, fallback)
        try:
            return dump(value)[:500]
        except (TypeError, ValueError):
            return fallback
    if value is None or value == "":
        return fallback
    return str(value)[:500]


def unread(what: str, value: Any) -> Notice:
    """A part of a chunk the adapter could not read, named with its wire value:
    kept in the stream view as it came, never dropped without a word."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        shown = repr(value)
    if len(shown) > 60:
        shown = shown[:59] + "…"
    return Notice("chunk-unreadable", f"{what} (the wire has {shown})")


def tool_call_entries(calls: Any, ops: list[Op]) -> list[tuple[int, dict[str, Any]]]:
    """The entries of a Chat-Completions-shaped ``tool_calls`` (OpenAI's deltas,
    DashScope's messages), each with its position in the array: an object is
    read as the one entry it is; what is no array or no object is named in
    ``ops`` and skipped."""
    if calls is None:
        return []
    if isinstance(calls, dict):
        ops.append(unread("tool_calls is an object, not an array: read as one entry", calls))
        return [(0, calls)]
    if not isinstance(calls, list):
        ops.append(unread("tool_calls is not an array: ignored", calls))
        return []
    entries = []
    for pos, entry in enumerate(calls):
        if isinstance(entry, dict):
            entries.append((pos, entry))
        else:
            ops.append(unread(f"tool_calls[{pos}] is not an object: ignored", entry))
    return entries
