"""A chunk as one line: compact JSON, the repeated envelope elided, the tool-call
bytes found and marked.

Pure text work (no Textual), so the stream list can cache what it returns and
tests can read it directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..steps import Added

ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class ChunkLine:
    text: str
    #: (start, end, kind) spans in ``text``; kind is "args", "name" or "text"
    marks: tuple[tuple[int, int, str], ...] = ()
    #: the data did not parse as JSON
    broken: bool = False


def parse(data: str) -> tuple[Any, bool]:
    """The chunk's JSON value, and whether it parsed."""
    try:
        return json.loads(data), True
    except (ValueError, RecursionError):
        return None, False


def compact(value: Any, previous: Any = None) -> str:
    """``value`` as compact one-line JSON, top-level plain values equal to the
    previous chunk's elided (``{…,``): ids, model names and timestamps repeat
    on every chunk and hide the part that changes."""
    shown = value
    elided = False
    if isinstance(value, dict) and isinstance(previous, dict):
        # only plain values: a container may repeat the last chunk exactly (the
        # same fragment twice) and still be what this chunk is about
        shown = {
            k: v
            for k, v in value.items()
            if isinstance(v, (dict, list)) or k not in previous or previous[k] != v
        }
        elided = len(shown) < len(value)
    text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    if elided:
        text = "{" + ELLIPSIS + ("," + text[1:] if shown else "}")
    return text


def _needle(piece: str) -> str:
    """How an argument piece appears inside compact JSON: as a string body."""
    return json.dumps(piece, ensure_ascii=False)[1:-1]


def mark(
    text: str,
    added: list[Added],
    first_of: list[tuple[str | None, str | None]],
    said: list[str] = (),  # type: ignore[assignment]
) -> list[tuple[int, int, str]]:
    """Find in ``text`` each call's added bytes ("args"), on a call's first
    event its id and name ("name"), and the assistant text the event carried
    ("text"). Searching moves forward so that two calls adding the same bytes
    in one chunk each get their own match."""
    marks: list[tuple[int, int, str]] = []
    for call_id, name in first_of:
        for value in (call_id, name):
            if value:
                needle = json.dumps(value, ensure_ascii=False)
                i = text.find(needle)
                if i >= 0:
                    marks.append((i + 1, i + len(needle) - 1, "name"))
    pieces = [(a.text, "args") for a in added] + [(piece, "text") for piece in said]
    at = 0
    for piece, kind in pieces:
        if not piece:
            continue
        # a piece is usually a whole string value of the chunk: look for it
        # quoted first, so that a "," piece does not mark the first comma
        needle = _needle(piece)
        i = text.find(f'"{needle}"', at)
        if i >= 0:
            i += 1
        else:
            i = text.find(needle, at)
            if i < 0:  # object arguments (args-object): the piece is their serialization
                i = text.find(piece, at)
                needle = piece
        if i >= 0:
            marks.append((i, i + len(needle), kind))
            at = i + len(needle)
    marks.sort()
    return marks


def window(line: ChunkLine, width: int) -> ChunkLine:
    """Cut ``line`` to about ``width`` characters so that the first mark is in
    view, with a little context before it."""
    text = line.text
    if len(text) <= width or not line.marks:
        return line
    first = line.marks[0][0]
    start = max(0, first - max(6, width // 4))
    if start == 0:
        return line
    shift = start - 1  # one character for the ellipsis
    marks = tuple((max(1, s - shift), e - shift, k) for s, e, k in line.marks if e > start)
    return ChunkLine(ELLIPSIS + text[start:], marks, line.broken)
