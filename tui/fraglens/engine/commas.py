"""Exact readings of the two comma defects, without json-repair.

A comma before a closer (a trailing comma) and a comma missing between two
members each have one reading: drop it, or put it in. Both are found where
the strict parser stops, so the value is exactly what the text says, and each
edit is known where it is made: the changes are listed without walking the
texts. Anything else, and more than ``MAX_EDITS`` edits (trailing commas
aside: those are dropped in one pass when there are many), is left to
json-repair.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord

if TYPE_CHECKING:
    from typing import Final
from .changes import MAX_CHANGES, describe

#: commas put in or dropped one parse at a time, at most: each costs a parse
#: of the whole text, and many missing commas are less a slip than a text
#: that is not JSON
MAX_EDITS = 8

#: a comma, then a closer, anywhere (in strings too): a cheap count of the
#: trailing commas there may be
_CLOSER_COMMA = re.compile(r",[ \t\r\n]*[}\]]")
#: a string (kept as it is), or a comma outside strings that a closer follows
_TRAILING_COMMA = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|,(?=[ \t\r\n]*[}\]])', re.S)
_SPACE = re.compile(r"[ \t\r\n]*")
#: what a JSON value starts with
_VALUE_START = frozenset('"{[-0123456789tfn')
#: where the parser stops at a closer that a trailing comma comes before
_AFTER_COMMA = ("Expecting value", "Expecting property name enclosed in double quotes")


class Reading(FrozenRecord):
    """The value of a text once its comma defects are mended, and the edits."""

    __slots__ = ("value", "listed")
    value: Final[Any]
    #: the edits in words, in the order of the text, at most ``MAX_CHANGES``
    listed: Final[list[str]]

    def __init__(self, value: Any, listed: list[str]) -> None:
        self.value = value
        self.listed = listed


def read_commas(text: str, error: json.JSONDecodeError) -> Reading | None:
    """The value of ``text`` with its trailing commas dropped and up to
    ``MAX_EDITS`` missing commas put in, or None when that does not make it
    JSON. ``error`` is what the strict parser said of ``text`` (where the
    first edit goes, without parsing it again). The top-level type is kept by
    construction: only commas change."""
    return _read(text, error, sweep=len(_CLOSER_COMMA.findall(text)) > MAX_EDITS)


def _read(text: str, error: json.JSONDecodeError, sweep: bool) -> Reading | None:
    """``sweep``: drop every trailing comma in one pass first (a model may end
    every object with one), rather than one parse at a time."""
    swept: list[int] = []
    fixed = text
    e: json.JSONDecodeError | None = error
    if sweep:
        swept = [m.start() for m in _TRAILING_COMMA.finditer(text) if m.group(0) == ","]
        ends = [*swept, len(text)]
        fixed = "".join(text[a + 1 : b] for a, b in zip([-1, *swept], ends, strict=True))
        e = None  # the parser's error on the text as sent no longer holds
    edits: list[tuple[int, bool]] = []  # (offset in the swept text, put in)
    shift = 0  # how far the edits so far moved the text after them
    while True:
        if e is None:
            try:
                return Reading(json.loads(fixed), _listed(swept, edits))
            except json.JSONDecodeError as err:
                e = err
            except RecursionError:
                return None
        if len(edits) == MAX_EDITS:
            # dropped commas among them: drop them all in one pass instead
            if not sweep and not all(put_in for _, put_in in edits):
                return _read(text, error, sweep=True)
            return None
        if _missing_comma(fixed, e):
            at, put_in = e.pos, True
            fixed = fixed[:at] + "," + fixed[at:]
        else:
            comma = _trailing_comma(fixed, e)
            if comma is None:
                return None
            at, put_in = comma, False
            fixed = fixed[:at] + fixed[at + 1 :]
        # each edit comes after the ones before it (the parse got past them),
        # so they moved its offset by their sum
        edits.append((at - shift, put_in))
        shift += 1 if put_in else -1
        e = None


def _missing_comma(text: str, e: json.JSONDecodeError) -> bool:
    """The parser stopped after a complete member, where a comma or a closer
    must come, at the start of another value: a comma is the one reading.
    Not when that value touches the one before (``"a""b"``, ``2024-01``): a
    quote or a sign there may belong to the text of the previous value."""
    p = e.pos
    return (
        e.msg == "Expecting ',' delimiter"
        and p < len(text)
        and text[p] in _VALUE_START
        and text[p - 1] in " \t\r\n}]"
    )


def _trailing_comma(text: str, e: json.JSONDecodeError) -> int | None:
    """Where the trailing comma is, when the parser stopped because a value
    or a key must follow a comma and a closer follows it instead (``[1,]``),
    or the comma is all a container holds (``[,]``). Not in ``[1,,]``: which
    comma is the slip is a guess."""
    p = e.pos
    if e.msg not in _AFTER_COMMA or p >= len(text):
        return None
    if text[p] == ",":
        after = _SPACE.match(text, p + 1).end()  # type: ignore[union-attr]
        closed = after < len(text) and text[after] in "}]"
        return p if closed and text[_last(text, p)] in "[{" else None
    if text[p] not in "}]":
        return None
    q = _last(text, p)
    return q if text[q] == "," else None


def _last(text: str, p: int) -> int:
    """Where the last character before ``p`` that is not whitespace is. The
    parser stopped at ``p`` expecting a value or a key, so it read a comma or
    an opener before; at the very start there is none, and the ``p`` itself
    stands in (a closer or a comma, which is no answer)."""
    q = p - 1
    while q >= 0 and text[q] in " \t\r\n":
        q -= 1
    return q if q >= 0 else p


def _listed(swept: list[int], edits: list[tuple[int, bool]]) -> list[str]:
    """The edits in words, at their offsets in the text as sent."""
    # offsets in the swept text back to the text as sent: past the k-th
    # swept comma (swept[k] - k once swept), add k + 1
    shifted = [at - k for k, at in enumerate(swept)]
    listed = [(at, describe(",", "", f"at {at}")) for at in swept]
    for at, put_in in edits:
        raw = at + bisect_right(shifted, at)
        old, new = ("", ",") if put_in else (",", "")
        listed.append((raw, describe(old, new, f"at {raw}")))
    listed.sort()
    words = [w for _, w in listed[:MAX_CHANGES]]
    if len(listed) > MAX_CHANGES:
        words.append("… more changes not listed")
    return words
