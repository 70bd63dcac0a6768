"""Exact readings of the two comma defects, without json-repair.

A comma before a closer (a trailing comma) and a comma missing between two
members each have one reading: drop it, or put it in. Both are read here with
the strict parser, so the value is exactly what the text says, and each edit
is known where it is made: the changes are listed without walking the texts.
Anything else, and more than ``MAX_INSERTED`` missing commas, is left to
json-repair.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from .changes import MAX_CHANGES, describe

#: missing commas put in before the text is left to json-repair: each one
#: costs a parse of the whole text, and many are less a slip than a text
#: that is not JSON
MAX_INSERTED = 8

#: a comma, then a closer, anywhere (a cheap test before the string-aware pass)
_CLOSER_COMMA = re.compile(r",[ \t\r\n]*[}\]]")
#: a string (kept as it is), or a comma outside strings that a closer follows
_TRAILING_COMMA = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|,(?=[ \t\r\n]*[}\]])', re.S)
#: what a JSON value starts with
_VALUE_START = frozenset('"{[-0123456789tfn')


@dataclass(frozen=True, slots=True)
class Reading:
    """The value of a text once its comma defects are mended, and the edits."""

    value: Any
    #: the edits in words, in the order of the text, at most ``MAX_CHANGES``
    listed: list[str]


def read_commas(text: str) -> Reading | None:
    """The value of ``text`` with its trailing commas dropped and up to
    ``MAX_INSERTED`` missing commas put in, or None when that does not make it
    JSON (the caller has already found ``text`` itself is not). The top-level
    type is kept by construction: only commas change."""
    removed: list[int] = []
    fixed = text
    if _CLOSER_COMMA.search(text) is not None:
        removed = [m.start() for m in _TRAILING_COMMA.finditer(text) if m.group(0) == ","]
        ends = [*removed, len(text)]
        fixed = "".join(text[a + 1 : b] for a, b in zip([-1, *removed], ends, strict=True))
    inserted: list[int] = []  # offsets in the text after the removals
    while True:
        try:
            value = json.loads(fixed)
        except json.JSONDecodeError as e:
            if len(inserted) == MAX_INSERTED or not _missing_comma(fixed, e):
                return None
            fixed = fixed[: e.pos] + "," + fixed[e.pos :]
            # each comma goes in after the ones before it (the parse got past
            # them), so the earlier ones shift this offset by their number
            inserted.append(e.pos - len(inserted))
        except (ValueError, RecursionError):
            return None
        else:
            return Reading(value, _listed(removed, inserted))


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


def _listed(removed: list[int], inserted: list[int]) -> list[str]:
    """The edits in words, at their offsets in the text as sent."""
    # offsets after the removals back to the text as sent: past the k-th
    # removed comma (removed[k] - k after the removals), add k + 1
    shifted = [at - k for k, at in enumerate(removed)]
    edits = [(at, describe(",", "", f"at {at}")) for at in removed]
    for at in inserted:
        raw = at + bisect_right(shifted, at)
        edits.append((raw, describe("", ",", f"at {raw}")))
    edits.sort()
    listed = [words for _, words in edits[:MAX_CHANGES]]
    if len(edits) > MAX_CHANGES:
        listed.append("… more changes not listed")
    return listed
