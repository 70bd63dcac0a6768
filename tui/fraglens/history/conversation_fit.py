"""A conversation's calls against the conversation's own ``tools``.

``history check`` reads a request body; when it declares tools, each call in
its assistant turns (OpenAI ``tool_calls``, Anthropic ``tool_use`` blocks,
Responses ``function_call`` items) is held to the tool it names, as
``check --tools`` holds a stream's calls: an undeclared name, and every broken
schema rule with its JSON pointer. Arguments that are not JSON are left to
``arguments-invalid-json``; nothing is checked twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..fit.schema import DEFAULT_BUDGET, Checker
from ..fit.tools import ToolsError, read_tools

__all__ = ["conversation_calls", "declared_checker"]


def declared_checker(doc: Any, budget: float | None = DEFAULT_BUDGET) -> Checker | None:
    """A checker for the tools a request body declares (each call validated
    within ``budget`` seconds, None: no limit); None without any."""
    if not isinstance(doc, dict) or not isinstance(doc.get("tools"), list):
        return None
    try:
        return Checker(read_tools(doc), budget)
    except ToolsError:
        return None


def conversation_calls(items: list[Any], array: str) -> Iterator[tuple[int, str, str | None, Any]]:
    """(position, path, name, parsed arguments) for each call whose arguments parse."""
    for i, m in enumerate(items):
        if not isinstance(m, dict):
            continue
        where = f"{array}[{i}]"
        if m.get("type") == "function_call":
            value = _parsed(m.get("arguments"))
            if value is not _UNPARSED:
                yield i, where, _name(m.get("name")), value
            continue
        if m.get("role") != "assistant":
            continue
        tool_calls = m.get("tool_calls")
        if isinstance(tool_calls, list):
            for j, tc in enumerate(tool_calls):
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict):
                    value = _parsed(fn.get("arguments"))
                    if value is not _UNPARSED:
                        yield i, f"{where}.tool_calls[{j}]", _name(fn.get("name")), value
        content = m.get("content")
        if isinstance(content, list):
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    if isinstance(block.get("input"), dict):
                        yield i, f"{where}.content[{j}]", _name(block.get("name")), block["input"]


_UNPARSED: Any = object()


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: ``json.loads`` without NaN and Infinity, which Python's json reads and JSON
#: lacks; one decoder for every call (``json.loads`` with a keyword builds one
#: each time)
strict_loads = json.JSONDecoder(parse_constant=_reject).decode


def _parsed(arguments: Any) -> Any:
    """The value of an OpenAI arguments string; _UNPARSED when it is not JSON
    (``arguments-not-string`` / ``arguments-invalid-json`` already say so)."""
    if not isinstance(arguments, str) or not arguments.strip():
        return _UNPARSED
    try:
        return strict_loads(arguments)
    except (ValueError, RecursionError):
        return _UNPARSED


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
