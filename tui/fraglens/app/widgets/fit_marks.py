"""A call's fit against its declared tool, as the Parse pane shows it.

The verdict sits beside the parse status (``✔ fits get_weather``, ``✖ 2 schema
errors``, ``✖ undeclared tool``); the failures follow, each with its JSON
pointer; and the parsed value is printed with the failing paths marked. The
verdicts come from ``fraglens.fit`` (the same as ``check``); this module only
draws them.
"""

from __future__ import annotations

import json
from typing import Any

from rich.highlighter import JSONHighlighter
from rich.style import Style
from rich.text import Text

from ...fit.schema import CallFit
from ...redact import TextScrub
from ..scrubbed import scrubbed
from .cut import MORE, cut_string

__all__ = ["fit_details", "fit_verdict", "marked_value"]

_json = JSONHighlighter()
_dumps = json.JSONEncoder(ensure_ascii=False).encode
_INDENT = "  "


def fit_verdict(verdict: CallFit, styles: dict[str, Style]) -> Text:
    """A few words beside the parse status; ``styles``: ok, bad, unchecked."""
    if verdict.undeclared:
        return Text(" ✖ undeclared tool ", styles["bad"])
    if not verdict.checked:
        return Text(f" ○ not checked ({verdict.reason}) ", styles["unchecked"])
    count = len(verdict.errors) + verdict.more_errors
    if not count:
        return Text(f" ✔ fits {verdict.tool} ", styles["ok"])
    strict = ", strict broken" if verdict.strict else ""
    return Text(f" ✖ {count} schema error{'s' * (count != 1)}{strict} ", styles["bad"])


def fit_details(verdict: CallFit, meta: Style, scrub: TextScrub | None = None) -> Text | None:
    """One line per failure: where, what, which rule. None when nothing failed.
    ``scrub``: the stream's credentials, which a message quoting a value may hold."""
    if verdict.undeclared:
        return Text("no declared tool has this name (t lists the tools)", meta)
    if not verdict.errors:
        return None
    out = Text()
    for i, error in enumerate(verdict.errors):
        out.append(("\n" if i else "") + "• ")
        out.append(error.pointer or "(the whole value)", "bold")
        # jsonschema quotes the failing value in its message: a megabyte, maybe
        out.append(f" {cut_string(error.message, scrub)[0]} ")
        out.append(f"({error.rule})", meta)
    if verdict.more_errors:
        out.append(f"\n… {verdict.more_errors} more", meta)
    if verdict.strict:
        out.append("\nthe tool was declared strict: the provider broke its promise", meta)
    return scrubbed(out, scrub) if scrub else out


class _Full(Exception):
    """The lines shown are written: the walk stops (see ``marked_value``)."""


def marked_value(
    value: Any, pointers: set[str], mark: Style, lines: int, scrub: TextScrub | None = None
) -> Text:
    """``value`` as indented JSON (as ``json.dumps(indent=2)`` writes it), the
    members at ``pointers`` marked, cut after ``lines`` lines, long strings cut
    as the Parse pane cuts them. The walk stops once the lines shown are
    written: it costs what the screen shows, not what the value holds."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    #: the members being written, with where each began: marked up to the cut
    #: when the walk stops inside them
    open_members: list[tuple[str, int]] = []
    size = 0
    newlines = 0
    cut = False

    def put(text: str) -> None:
        nonlocal size, newlines
        parts.append(text)
        size += len(text)
        newlines += text.count("\n")
        if newlines > lines:
            raise _Full

    def walk(item: Any, pointer: str, depth: int, start: int) -> None:
        nonlocal cut
        open_members.append((pointer, start))
        if isinstance(item, dict) and item:
            put("{\n")
            for n, (key, sub) in enumerate(item.items()):
                put(_INDENT * (depth + 1))
                begin = size
                put(_dumps(str(key)) + ": ")
                walk(sub, f"{pointer}/{_escape(str(key))}", depth + 1, begin)
                put(",\n" if n < len(item) - 1 else "\n")
            put(_INDENT * depth + "}")
        elif isinstance(item, list) and item:
            put("[\n")
            for n, sub in enumerate(item):
                put(_INDENT * (depth + 1))
                walk(sub, f"{pointer}/{n}", depth + 1, size)
                put(",\n" if n < len(item) - 1 else "\n")
            put(_INDENT * depth + "]")
        elif isinstance(item, str):
            shown, shortened = cut_string(item, scrub)
            cut = cut or shortened
            put(_dumps(shown))
        else:
            put(_dumps(item))
        open_members.pop()
        if pointer in pointers:
            spans.append((start, size))

    try:
        walk(value, "", 0, 0)
    except _Full:
        cut = True
        spans.extend((start, size) for pointer, start in open_members if pointer in pointers)
    text = _json(Text("".join(parts)))
    for start, end in spans:
        if start or end != size:  # the whole value failing marks nothing in it
            text.stylize(mark, start, end)
    kept = text.split("\n", allow_blank=True)
    if len(kept) > lines:
        text = Text("\n").join(kept[:lines])
        cut = True
    if cut:
        text.append(f"\n… ({MORE})")
    return scrubbed(text, scrub) if scrub else text


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
