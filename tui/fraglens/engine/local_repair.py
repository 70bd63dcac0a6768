"""json-repair on the damaged members only; the rest of the text read strictly.

json-repair is pure Python: on 64 KB it takes twice as long as reading the
whole call does, and most of that goes on text that is valid JSON. Yet a
defect the strict parser stops at is usually one member long: a key without
quotes, a value in single quotes, a raw newline in one string. So json-repair
is given that member alone, and the strict parser (in C) reads the rest:

1. **Where the damage is.** The strict parser stops at some offset. Walking
   the containers from the top down, each member before that offset is
   skipped whole by json's own scanner (runs of plain scalars by one regular
   expression), down to the innermost container that holds the offset, and
   there to the member that holds it: the damage starts where that member
   starts.
2. **Where it ends.** At a comma outside the member's brackets (counted
   leniently from the member's start, strings stepped over), or at its
   container's closer; past that closer, at the same one level out, where
   the window is then the member of that level (``{"x": [1, 2}, "y": 4}``
   lacks a ``]`` and is mended as the member ``"x"``). The first such end
   from which the rest of the text reads strictly as the rest of the
   containers around it (parsed behind a made-up opening of the same
   containers) is the window's end. Another defect further on, after a
   comma and at least one sound member of the same container, stops that
   strict reading: the window still ends there, and the next defect gets
   its own window.
3. **The window repaired.** json-repair reads the window's members wrapped in
   the container's brackets; what it makes must be a container of the same
   kind, not empty, and is put back in the window's place as JSON text.

The mended text is then parsed strictly again, up to ``MAX_WINDOWS`` times.
When no end is found within ``MAX_ENDS`` tries, the caller gives json-repair
the whole text as before. Nothing here is trusted: the value it returns is
walked against the text as sent like any json-repair result
(engine/changes.py), every difference listed, and a result that drops
content is a guess. What this changes is what json-repair sees: a defect's
reading no longer depends on how json-repair reads the valid text around it
(on the whole text it turns the ``3180`` of ``{"n":3180,k:1}`` into a
string), and the cost of a repair is the damaged members', not the call's.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable, Iterator
from typing import Any

from .changes import dump

#: json's C scanners (what json.loads reads with); typeshed omits them
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

#: windows repaired in one text at most: past these, many defects are less a
#: slip than a text that is not JSON, and json-repair reads the whole of it
MAX_WINDOWS = 8
#: characters given to json-repair in windows, per character of the text, at
#: most: windows it cannot read (not a container of their kind) are tried
#: longer, and this keeps their cost to a small multiple of one whole repair
_REPAIRED_PER_CHARACTER = 2
#: ends tried for one window at most (each is one strict parse of the rest
#: of the text)
MAX_ENDS = 16

_WS = re.compile(r"[ \t\r\n]*")
_STRING = r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
_SCALAR = rf"(?:{_STRING}|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)"
_SEP = r"[ \t\r\n]*,[ \t\r\n]*"
#: members that are plain scalars, each with the comma after it: skipped in
#: one match, since the strict parser read them (they lie before its stop)
_PLAIN = {
    "[": re.compile(rf"(?:{_SCALAR}{_SEP})*"),
    "{": re.compile(rf"(?:{_STRING}[ \t\r\n]*:[ \t\r\n]*{_SCALAR}{_SEP})*"),
}
_CLOSER = {"[": "]", "{": "}"}
#: how the text after a window's end reads (``_reads_on``)
_WHOLE, _LATER, _NOT = "whole", "later", "not"
#: what stands in front of the rest of the text when it is checked: the
#: containers around the window, opened, and one member of the window's own
_OPEN_AROUND = {"[": "[", "{": '{"":'}
_OPEN_HERE = {"[": "[0", "{": '{"":0'}

Repairer = Callable[[str], Any]


def repair_locally(text: str, stop: int, repair: Repairer) -> Any:
    """The value of ``text`` with each damaged member read by ``repair``
    (json-repair) and the rest strictly, or None when the damage cannot be
    held to members. ``stop`` is where the strict parser stopped."""
    allowance = len(text) * _REPAIRED_PER_CHARACTER

    def metered(window: str) -> Any:
        nonlocal allowance
        allowance -= len(window)
        if allowance < 0:
            raise _OverAllowance
        return repair(window)

    try:
        return _windows(text, stop, metered)
    except _OverAllowance:
        return None


class _OverAllowance(Exception):
    """json-repair was given more than its allowance of windows."""


def _windows(text: str, stop: int, repair: Repairer) -> Any:
    for _ in range(MAX_WINDOWS):
        path = _path(text, stop)
        if path is None:
            return None
        mended = _mend(text, stop, path, repair)
        if mended is None:
            return None
        text = mended
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            stop = e.pos
        except RecursionError:
            return None
    return None


def _mend(text: str, stop: int, path: list[tuple[str, int]], repair: Repairer) -> str | None:
    """``text`` with one window repaired, or None when no window's end can
    be found. The ends are tried in the order of the text (``_ends``), each
    kept if the text after it reads as the rest of the containers around it
    (``_reads_on``)."""
    tries = MAX_ENDS
    for end, depth in _ends(text, stop, path):
        if not tries:
            return None
        tries -= 1
        kind, start = path[depth]
        opening = "".join(_OPEN_AROUND[k] for k, _ in path[:depth]) + _OPEN_HERE[kind]
        if _reads_on(text, end, opening, kind) == _NOT:
            continue
        piece = _repaired(text[start:end], kind, repair)
        if piece is not None:
            return text[:start] + piece + text[end:]
    return None


#: what the lenient count of a window's brackets steps over: a string in
#: double quotes (unclosed: then it holds the rest), a single quote, a
#: bracket, a comma or a colon
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)|\'|[\[\]{},:]', re.S)
_SINGLE = re.compile(r"'[^'\\]*(?:\\.[^'\\]*)*(?:'|\Z)", re.S)


def _ends(text: str, stop: int, path: list[tuple[str, int]]) -> Iterator[tuple[int, int]]:
    """Where a window may end, in the order of the text, each with the level
    of ``path`` whose member it ends: a comma outside the damaged member's
    brackets, or the closer of its container; past that closer, the same one
    level out. The brackets are counted leniently from the damaged member's
    start: strings in double quotes stepped over, and in single quotes where
    a key or a value starts; a closer of the wrong kind counts but ends
    nothing. The strict parser read everything before the stop, so at the
    innermost member's start the containers of the path are what is open."""
    level = len(path) - 1
    inner = 0  # brackets open inside the member
    prev = ","
    i = path[level][1]
    while level >= 0:
        m = _TOKEN.search(text, i)
        if m is None:
            return
        tok, at, i = m.group(), m.start(), m.end()
        if tok == "'":
            if prev in ",:[{":
                i = _SINGLE.match(text, at).end()  # type: ignore[union-attr]
        elif tok in "[{":
            inner += 1
        elif tok in "]}":
            if inner:
                inner -= 1
            else:
                if at >= stop and tok == _CLOSER[path[level][0]]:
                    yield at, level
                level -= 1
        elif tok == "," and not inner and at >= stop:
            yield at, level
        prev = tok[:1]


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _path(text: str, stop: int) -> list[tuple[str, int]] | None:
    """The containers from the top down to the innermost one holding
    ``stop``, each as (its opener, where its member holding ``stop``
    starts); None when ``stop`` is not inside a container (a scalar at the
    top, or text after the top-level value)."""
    path: list[tuple[str, int]] = []
    i = _ws(text, 0)
    while i < len(text) and text[i] in "[{":
        kind = text[i]
        found, start, value = _member_at(text, _ws(text, i + 1), stop, kind)
        if found == _CLOSED:
            return None  # the container closed before the stop: so did the top one
        path.append((kind, start))
        if value is None or text[value] not in "[{":
            return path
        i = value  # the damage is inside this member's container: one level down
    return path or None


#: what ``_member_at`` found: the member that holds the stop, the container's
#: closer before it, or another character where a comma or closer must come
_HOLDS, _CLOSED, _DELIMITER = "holds", "closed", "delimiter"


def _member_at(text: str, i: int, stop: int, kind: str) -> tuple[str, int, int | None]:
    """Walk a ``kind`` container's members from ``i``, each read strictly to
    its comma, to the one that holds ``stop``: (what was found, where that
    member starts, where its value starts when the damage lies inside the
    value, else None)."""
    while True:
        i = _PLAIN[kind].match(text, i).end()  # type: ignore[union-attr]
        v = _value_start(text, i, stop) if kind == "{" else i
        if v is None or v >= stop:
            return _HOLDS, i, None
        try:
            end = scan_once(text, v)[1]
        except (StopIteration, ValueError, RecursionError):
            return _HOLDS, i, v
        j = _ws(text, end)
        if j >= stop:
            return _HOLDS, i, None
        if text[j] != ",":
            return (_CLOSED if text[j] == _CLOSER[kind] else _DELIMITER), i, None
        i = _ws(text, j + 1)


def _value_start(text: str, i: int, stop: int) -> int | None:
    """Where the value of the object member at ``i`` starts, or None when its
    key or colon is where the damage is."""
    if i >= stop or text[i] != '"':
        return None
    try:
        j = _ws(text, scanstring(text, i + 1)[1])
    except ValueError:
        return None
    if j >= stop or text[j] != ":":
        return None
    return _ws(text, j + 1)


def _reads_on(text: str, end: int, opening: str, kind: str) -> str:
    """How the text from ``end`` reads as the rest of the containers around
    it: strictly to its end (``_WHOLE``); from a comma, through sound members
    of the window's own container to another defect in one of them
    (``_LATER``: that defect gets the next window); or not (``_NOT``)."""
    rest = opening + text[end:]
    try:
        json.loads(rest)
    except json.JSONDecodeError as e:
        if text[end] != ",":
            return _NOT
        stop = e.pos - len(opening) + end
        return _LATER if _sound_members(text, _ws(text, end + 1), stop, kind) else _NOT
    except RecursionError:
        return _NOT
    return _WHOLE


def _sound_members(text: str, i: int, stop: int, kind: str) -> bool:
    """From ``i``, one member or more of a ``kind`` container read strictly,
    each with its comma, and then the member that holds ``stop``: not a
    closer first (the rest's brackets would then have closed a container
    the damage lies in, and the window's end lies further on)."""
    found, start, _ = _member_at(text, i, stop, kind)
    return found == _HOLDS and i < start <= stop


def _repaired(window: str, kind: str, repair: Repairer) -> str | None:
    """json-repair's reading of the window's members as JSON text, or None
    when it is not a non-empty container of the window's kind."""
    value = repair(kind + window + _CLOSER[kind])
    if kind == "{" and isinstance(value, dict) and value:
        return ",".join(dump(k) + ":" + dump(v) for k, v in value.items())
    if kind == "[" and isinstance(value, list) and value:
        return ",".join(dump(v) for v in value)
    return None
