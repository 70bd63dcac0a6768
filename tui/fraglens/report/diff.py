"""Two captures of one exchange, call by call: what ``fraglens diff`` reports.

The captures may come from any two layers or formats (the provider's SSE and
the AG-UI stream an agent made of it, a recording and a HAR, two proxies), so
they are compared as their reports, never as bytes. Calls are matched by id
first, then, among the rest, in order among calls of the same name, then in
order whatever the name (a renamed call is still that call); what is left over
is missing from one side. For each pair the document says whether the name,
the arguments (by value: a JSON diff that names each key path added, removed
or changed) and the verdict (the status) differ. Arguments with no value on
either side (an ``invalid`` call) are compared as text.

Every step is linear in the calls and in the size of the values; the
character marks of the text view are made only for texts up to
``MARK_LIMIT`` characters (above it, the key paths say what changed).
"""

from __future__ import annotations

import json
from collections import deque
from difflib import SequenceMatcher
from typing import Any

from rich.console import Console, Group
from rich.style import Style
from rich.text import Text

from ..engine.plural import counted
from .text import STATUS_STYLE

__all__ = [
    "ADDED",
    "MARK_LIMIT",
    "REMOVED",
    "change_line",
    "diff_doc",
    "diff_exit",
    "marked_pair",
    "print_diff",
    "value_changes",
]

#: how the text view marks what only A has, and what only B has
REMOVED, ADDED = "black on red", "black on green"
#: the longest argument text given character marks
MARK_LIMIT = 4000
#: changes listed per call; the rest are counted
_MAX_CHANGES = 200


def value_changes(a: Any, b: Any, path: str = "") -> list[dict[str, Any]]:
    """The differences between two JSON values, as key paths (JSON Pointer):
    ``added`` (only in ``b``), ``removed`` (only in ``a``), ``changed``."""
    out: list[dict[str, Any]] = []
    _walk(a, b, path, out)
    return out


def _walk(a: Any, b: Any, path: str, out: list[dict[str, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key, value in a.items():
            where = f"{path}/{_escape(key)}"
            if key in b:
                _walk(value, b[key], where, out)
            else:
                out.append({"path": where, "change": "removed", "a": value})
        for key, value in b.items():
            if key not in a:
                out.append({"path": f"{path}/{_escape(key)}", "change": "added", "b": value})
        return
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _walk(x, y, f"{path}/{i}", out)
        for i in range(len(b), len(a)):
            out.append({"path": f"{path}/{i}", "change": "removed", "a": a[i]})
        for i in range(len(a), len(b)):
            out.append({"path": f"{path}/{i}", "change": "added", "b": b[i]})
        return
    # JSON's equality: 1 and 1.0 are one number, true is no number
    if type(a) is type(b) or {type(a), type(b)} <= {int, float}:
        if a == b:
            return
    out.append({"path": path or "/", "change": "changed", "a": a, "b": b})


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _matches(
    a: list[dict[str, Any]], b: list[dict[str, Any]]
) -> tuple[list[tuple[int, int, str]], list[int], list[int]]:
    """Pairs (position in a, position in b, how matched), then the positions
    of ``a`` with no partner in ``b`` and of ``b`` with none in ``a``."""
    pairs: list[tuple[int, int, str]] = []
    by_id: dict[str, deque[int]] = {}
    for j, call in enumerate(b):
        if call.get("id"):
            by_id.setdefault(call["id"], deque()).append(j)
    taken_b: set[int] = set()
    rest_a: list[int] = []
    for i, call in enumerate(a):
        queue = by_id.get(call.get("id") or "")
        if queue:
            j = queue.popleft()
            pairs.append((i, j, "id"))
            taken_b.add(j)
        else:
            rest_a.append(i)
    by_name: dict[Any, deque[int]] = {}
    for j in range(len(b)):
        if j not in taken_b:
            by_name.setdefault(b[j].get("name"), deque()).append(j)
    unnamed: list[int] = []
    for i in rest_a:
        queue = by_name.get(a[i].get("name"))
        if queue:
            j = queue.popleft()
            pairs.append((i, j, "order"))
            taken_b.add(j)
        else:
            unnamed.append(i)
    left_b = deque(j for j in range(len(b)) if j not in taken_b)
    only_a: list[int] = []
    for i in unnamed:
        if left_b:
            pairs.append((i, left_b.popleft(), "order"))
        else:
            only_a.append(i)
    pairs.sort()
    return pairs, only_a, list(left_b)


def _has_value(call: dict[str, Any]) -> bool:
    return call.get("arguments") is not None or call.get("status") in ("ok", "empty")


def _pair(a: dict[str, Any], b: dict[str, Any], how: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "a": a["position"],
        "b": b["position"],
        "matched_by": how,
        "id": a.get("id"),
        "name": a.get("name"),
        "differs": [],
    }
    if a.get("id") != b.get("id"):
        out["id_b"] = b.get("id")
    if a.get("name") != b.get("name"):
        out["differs"].append("name")
        out["name_b"] = b.get("name")
    if _has_value(a) and _has_value(b):
        changes = value_changes(a["arguments"], b["arguments"])
    elif a["arguments_raw"] == b["arguments_raw"]:
        changes = []
    else:  # no value on one side at least: the texts are what can be compared
        changes = [{"path": "/", "change": "text", "a": a["arguments_raw"],
                    "b": b["arguments_raw"]}]
    if changes:
        out["differs"].append("arguments")
        out["changes"] = changes[:_MAX_CHANGES]
        if len(changes) > _MAX_CHANGES:
            out["more_changes"] = len(changes) - _MAX_CHANGES
        out["arguments_raw"] = {"a": a["arguments_raw"], "b": b["arguments_raw"]}
    if a["status"] != b["status"]:
        out["differs"].append("verdict")
    out["status"] = {"a": a["status"], "b": b["status"]}
    return out


def _side(label: str, doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": label,
        "format": doc.get("format"),
        "framing": doc.get("framing"),
        "end": doc.get("end"),
        "calls": len(doc.get("calls", [])),
    }


def _summary(call: dict[str, Any]) -> dict[str, Any]:
    return {"position": call["position"], "id": call.get("id"), "name": call.get("name"),
            "status": call["status"], "arguments_raw": call["arguments_raw"]}


def diff_doc(a_label: str, a: dict[str, Any], b_label: str, b: dict[str, Any]) -> dict[str, Any]:
    """The ``diff --json`` document of two ``check --json`` reports."""
    a_calls, b_calls = a.get("calls", []), b.get("calls", [])
    pairs, only_a, only_b = _matches(a_calls, b_calls)
    calls = [_pair(a_calls[i], b_calls[j], how) for i, j, how in pairs]
    missing = [_summary(a_calls[i]) for i in only_a]
    extra = [_summary(b_calls[j]) for j in only_b]
    same = not missing and not extra and not any(
        {"name", "arguments"} & set(c["differs"]) for c in calls
    )
    return {
        "fraglens": 1,
        "a": _side(a_label, a),
        "b": _side(b_label, b),
        "same": same,
        "calls": calls,
        "missing_in_b": missing,
        "extra_in_b": extra,
    }


def diff_exit(doc: dict[str, Any]) -> int:
    """0: the same calls with the same arguments; 1: they differ."""
    return 0 if doc["same"] else 1


def marked_pair(
    a: str, b: str, removed: str | Style, added: str | Style
) -> tuple[Text, Text]:
    """The two texts with what only ``a`` has marked ``removed`` and what only
    ``b`` has marked ``added`` (a character diff; unmarked past ``MARK_LIMIT``)."""
    left, right = Text(a, overflow="fold"), Text(b, overflow="fold")
    if len(a) > MARK_LIMIT or len(b) > MARK_LIMIT:
        return left, right
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op in ("replace", "delete"):
            left.stylize(removed, a0, a1)
        if op in ("replace", "insert"):
            right.stylize(added, b0, b1)
    return left, right


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def change_line(change: dict[str, Any]) -> str:
    """One key path's change in words."""
    kind, path = change["change"], change["path"]
    if kind == "added":
        return f"{path}: only in B: {_short(change['b'])}"
    if kind == "removed":
        return f"{path}: only in A: {_short(change['a'])}"
    if kind == "text":
        return "the arguments are no JSON value on one side: the texts differ"
    return f"{path}: {_short(change['a'])} -> {_short(change['b'])}"


def _call_title(call: dict[str, Any]) -> str:
    ids = call["id"] if "id_b" not in call else f"{call['id']} / {call['id_b']}"
    return f"call A#{call['a']} / B#{call['b']} {call['name']} ({ids}, by {call['matched_by']})"


def render_diff(doc: dict[str, Any]) -> Group:
    a, b = doc["a"], doc["b"]
    parts: list[Any] = [
        Text(f"A: {a['path']} ({a['format']}, {counted(a['calls'], 'call')})"),
        Text(f"B: {b['path']} ({b['format']}, {counted(b['calls'], 'call')})"),
    ]
    for call in doc["calls"]:
        differs = call["differs"]
        mark = "=" if not differs else "≠"
        style = "green" if not differs else "bold yellow"
        what = "same" if not differs else "differs: " + ", ".join(differs)
        parts.append(Text(f"{mark} {_call_title(call)}: {what}", style=style))
        if "name" in differs:
            parts.append(Text(f"    name: {call['name']} -> {call['name_b']}"))
        for change in call.get("changes", []):
            parts.append(Text(f"    {change_line(change)}"))
        if call.get("more_changes"):
            more = counted(call["more_changes"], "more change")
            parts.append(Text(f"    … and {more}", style="dim"))
        if "arguments" in differs:
            raw_a, raw_b = call["arguments_raw"]["a"], call["arguments_raw"]["b"]
            if max(len(raw_a), len(raw_b)) <= MARK_LIMIT:
                left, right = marked_pair(raw_a, raw_b, REMOVED, ADDED)
                parts.append(Text.assemble("    A: ", left))
                parts.append(Text.assemble("    B: ", right))
            else:  # too long to read here: the key paths say it, --json has both texts
                parts.append(Text(f"    A: {len(raw_a):,} chars, B: {len(raw_b):,} chars "
                                  "(both in --json)", style="dim"))
        if "verdict" in differs:
            sa, sb = call["status"]["a"], call["status"]["b"]
            parts.append(Text.assemble("    verdict: ", (sa, STATUS_STYLE.get(sa, "")),
                                       " -> ", (sb, STATUS_STYLE.get(sb, ""))))
    for label, key in (("only in A", "missing_in_b"), ("only in B", "extra_in_b")):
        for call in doc[key]:
            parts.append(Text(f"≠ {label}: #{call['position']} {call['name']} ({call['id']}) "
                              f"{call['arguments_raw']}", style="bold yellow"))
    if doc["same"]:
        parts.append(Text("same calls, same arguments", style="green"))
    else:
        parts.append(Text("the captures differ", style="bold yellow"))
    return Group(*parts)


def print_diff(doc: dict[str, Any], console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=120)
    console.print(render_diff(doc))
