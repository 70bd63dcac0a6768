"""Build the messages that go back to the model after a streamed tool-call turn.

The input is the ``fraglens check --json`` report (the contract between the
engine and every view), so this module knows nothing of streams or the engine.
The output is the assistant turn plus one empty tool-result skeleton per call,
in the shape of the stream's API, ready to paste into the next request once the
results are filled in.

What goes back is what the model said, never something quieter: calls whose
arguments did not survive the stream are left out unless asked for, and every
departure from the wire (a left-out or broken call, a synthesized id, a
replaced ``input``) is written in ``notes``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import HistoryError

#: The shapes history can be built in.
SHAPES = ("openai-chat", "anthropic", "openai-responses")

#: Statuses whose arguments are exactly what the model sent.
_SOUND = ("ok", "empty")
#: Statuses whose parsed value is complete JSON (repaired: made whole by a listed repair).
_PARSED = ("ok", "empty", "repaired")

_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def default_shape(fmt: str | None) -> str:
    """The shape a stream of wire format ``fmt`` goes back in: its own API where
    it has one here, OpenAI chat for the rest (Gemini, Cohere and DashScope
    clients mostly speak it through OpenAI-compatible endpoints)."""
    if fmt in ("anthropic", "openai-responses"):
        return fmt
    return "openai-chat"


def build_history(
    report: dict[str, Any],
    shape: str | None = None,
    include_broken: bool = False,
    choice: int = 0,
) -> dict[str, Any]:
    """The assistant turn of ``choice`` and one result skeleton per call.

    Returns ``{"shape", "messages", "notes"}``. ``messages`` is empty (and a
    note says why) when the choice has neither text nor a call to send back.
    Raises ``HistoryError`` for a report that is not one, or an unknown shape.
    """
    shape, text, calls, notes = _prepare(report, shape, include_broken, choice)
    assistant = _assistant(shape, text, calls)
    if not assistant:
        notes.append(f"choice {choice} has no text and no tool call to send back")
        return {"shape": shape, "messages": [], "notes": notes}
    return {"shape": shape, "messages": assistant + _results(shape, calls), "notes": notes}


def assistant_message(
    report: dict[str, Any],
    shape: str | None = None,
    include_broken: bool = False,
    choice: int = 0,
) -> dict[str, Any] | list[dict[str, Any]] | None:
    """Just the assistant turn: what the app's ``m`` key copies.

    One message for ``openai-chat`` and ``anthropic``; for ``openai-responses``
    the turn is several input items, so a list of them. ``None`` when there is
    nothing to send back.
    """
    shape, text, calls, _ = _prepare(report, shape, include_broken, choice)
    items = _assistant(shape, text, calls)
    if not items:
        return None
    return items if shape == "openai-responses" else items[0]


@dataclass(frozen=True, slots=True)
class _Call:
    """One call as it will be written: id, name and arguments settled."""

    id: str
    name: str
    #: the string form (OpenAI chat, Responses)
    arguments: str
    #: the object form (Anthropic)
    input: dict[str, Any]


def _prepare(
    report: dict[str, Any], shape: str | None, include_broken: bool, choice: int
) -> tuple[str, str, list[_Call], list[str]]:
    if not isinstance(report, dict) or not isinstance(report.get("calls"), list):
        raise HistoryError("not a fraglens check report: expected an object with a 'calls' list")
    if shape is None:
        shape = default_shape(report.get("format"))
    elif shape not in SHAPES:
        raise HistoryError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")

    texts = report.get("text")
    texts = {} if texts is None else texts
    if not isinstance(texts, dict):
        raise HistoryError("not a fraglens check report: 'text' is not an object")
    text = texts.get(str(choice)) or ""
    if not isinstance(text, str):
        raise HistoryError(f"not a fraglens check report: text[{str(choice)!r}] is not a string")
    notes: list[str] = []
    if shape == "anthropic" and text and not text.strip():
        # Anthropic rejects text blocks that hold only whitespace
        notes.append("the assistant text is only whitespace; Anthropic rejects that, left out")
        text = ""

    calls: list[_Call] = []
    used: set[str] = set()
    for position, raw in enumerate(report["calls"]):
        if not isinstance(raw, dict):
            raise HistoryError(f"not a fraglens check report: calls[{position}] is not an object")
        if raw.get("choice", 0) != choice:
            continue
        call = _settle(position, raw, shape, include_broken, used, notes)
        if call is not None:
            calls.append(call)
            used.add(call.id)
    return shape, text, calls, notes


def _settle(
    position: int,
    raw: dict[str, Any],
    shape: str,
    include_broken: bool,
    used: set[str],
    notes: list[str],
) -> _Call | None:
    status = raw.get("status") or "ok"
    name = raw.get("name") or ""
    label = f"call {position} ({name or 'no name'}, {status})"
    broken = status not in _SOUND or not name
    if broken and not include_broken:
        why = "it has no name" if status in _SOUND else f"its status is {status}"
        notes.append(f"{label} left out: {why}; include broken calls to add it")
        return None

    #: every way this call departs from the wire, said once in one note
    said: list[str] = []
    if not name:
        said.append("included with an empty name")
    elif status == "repaired":
        said.append("included with its repaired arguments")
    elif broken:
        said.append("included although its arguments are not intact")

    call_id = raw.get("id")
    if not call_id:
        call_id = raw.get("synthetic_id") or f"fraglens_{raw.get('choice', 0)}_{position}"
        said.append(f"the stream sent no id; using the synthesized id {call_id!r}")
    if call_id in used:
        # two calls under one id (``id-duplicate``) cannot both be answered: the second gets its own
        taken, n = call_id, 2
        while f"{taken}_{n}" in used:
            n += 1
        call_id = f"{taken}_{n}"
        said.append(f"id {taken!r} is taken by an earlier call; renamed {call_id!r}")

    value = raw.get("arguments")
    if status == "empty":
        value = {}
    parsed = status in _PARSED and value is not None
    if parsed:
        arguments = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        arguments = raw.get("arguments_raw") or ""
        if shape != "anthropic":
            said.append("arguments are the raw text as received")
    if isinstance(value, dict):
        input_ = value
        if shape == "anthropic" and not parsed:
            said.append(f"input is the best-effort value of {status} text")
    else:
        input_ = {}
        if shape == "anthropic":
            what = "no complete value" if value is None else _JSON_KINDS.get(type(value), "")
            said.append(f"the arguments are {what}, not an object; input set to {{}}")
    if said:
        notes.append(f"{label}: " + "; ".join(said))
    return _Call(call_id, name, arguments, input_)


def _assistant(shape: str, text: str, calls: list[_Call]) -> list[dict[str, Any]]:
    if not text and not calls:
        return []
    if shape == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in calls
        ]
        return [{"role": "assistant", "content": content}]
    if shape == "openai-responses":
        items: list[dict[str, Any]] = []
        if text:
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }
            )
        items += [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for c in calls
        ]
        return items
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        # OpenAI rejects an empty tool_calls array: the key is there only with calls
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in calls
        ]
    return [message]


def _results(shape: str, calls: list[_Call]) -> list[dict[str, Any]]:
    if not calls:
        return []
    if shape == "anthropic":
        blocks = [{"type": "tool_result", "tool_use_id": c.id, "content": ""} for c in calls]
        return [{"role": "user", "content": blocks}]
    if shape == "openai-responses":
        return [{"type": "function_call_output", "call_id": c.id, "output": ""} for c in calls]
    return [{"role": "tool", "tool_call_id": c.id, "content": ""} for c in calls]
