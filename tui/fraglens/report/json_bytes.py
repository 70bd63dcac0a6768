"""The report as one line of UTF-8 JSON, its large values written by msgspec.

Most of a large report is a few values: each call's arguments, parsed and
as they came (``arguments``, ``arguments_raw``), and the choices' text.
Python's json writes a megabyte of arguments objects in about 9 ms, and
then the whole text is encoded to UTF-8 again; msgspec writes each of those
values, as UTF-8, in a tenth of the time (engine/plain_json.py: the values
it writes as json does, and how a value is known to hold no float). The rest
of the report, small and holding the floats (cost, timing), is written by
json as before, with a marker string where each large value goes; the
markers are then replaced by the values' bytes.

Why the bytes are json's. The rest is the report with each large value
replaced in place by a marker, written by the same call as before, so it is
the report's own text but for the markers. A marker's text, a space or ``[``
and then ``"\\u0000fraglens-spliced-N"``, can only be the marker: inside a
JSON string every ``"`` comes escaped, so a quote after a space or a bracket
opens a string, and this one closes after ``N``. A key or a string of the
report that were the marker itself would be found too: each marker must be
found exactly once, or the report is written whole by json. So must it be
when any value cannot be written by msgspec (a lone surrogate): json then
escapes non-ASCII characters in the whole report (``document.utf8_parts``).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from typing import Any

from ..engine.plain_json import utf8

__all__ = ["spliced_parts"]

#: a value is spliced from this many characters: a marker costs a few
#: microseconds, and json writes a short value in less
_LEAST = 4096
#: with msgspec not loaded yet, what its import (about 12 ms) is worth: json's
#: time on about 1.5 MB of arguments objects, or three times as many
#: characters of strings (which json writes faster, in C, as one token)
_WORTH_LOADING = 1_500_000
_MARKER = "\x00fraglens-spliced-"
_FOUND = re.compile(rb'(?<=[ \[])"\\u0000fraglens-spliced-(\d+)"')


def spliced_parts(doc: dict[str, Any], exact: Iterable[Any] = ()) -> list[bytes] | None:
    """``(json.dumps(doc, ensure_ascii=False) + "\\n").encode("utf-8")`` for
    the report ``doc`` (``build_report``'s) in parts, to be written one after
    the other (not joined: a copy of the whole), its large strings and the
    large values of ``exact`` (``arguments`` known to hold no float: see
    ``exact_arguments``) written by msgspec; None when that cannot be (nothing
    large enough to be worth it, a lone surrogate, a marker found twice):
    then json writes the report whole."""
    markers = _Markers({id(v) for v in exact})
    rest = dict(doc)
    for key in ("text", "reasoning"):
        texts = doc.get(key)
        if isinstance(texts, dict) and any(map(_large, texts.values())):
            rest[key] = {n: markers.string(t) for n, t in texts.items()}
    calls = doc.get("calls")
    if isinstance(calls, list):
        rest["calls"] = [markers.call(item) for item in calls]
    values = markers.values
    if not values or ("msgspec" not in sys.modules and markers.weight < _WORTH_LOADING):
        return None
    try:
        text = (json.dumps(rest, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return None
    pieces = []
    for value in values:
        piece = utf8(value)
        if piece is None:
            return None
        pieces.append(piece)
    parts = _FOUND.split(text)
    found = sorted(map(int, parts[1::2]))
    if found != list(range(len(values))):
        return None
    parts[1::2] = [pieces[int(n)] for n in parts[1::2]]
    return parts


class _Markers:
    """The large values of a report, each replaced by its marker."""

    def __init__(self, exact_ids: set[int]) -> None:
        self.exact_ids = exact_ids
        self.values: list[Any] = []
        #: json's time on the values, about: what writing them with msgspec saves
        self.weight = 0

    def _mark(self, value: Any, weight: int) -> str:
        self.weight += weight
        self.values.append(value)
        return f"{_MARKER}{len(self.values) - 1}"

    def string(self, value: Any) -> Any:
        """A large string's marker (json writes strings three times as fast
        as objects), or the value."""
        size = _large(value)
        return self._mark(value, size // 3) if size else value

    def call(self, item: Any) -> Any:
        """A call's item with its large values as markers."""
        if not isinstance(item, dict):
            return item
        out = dict(item)
        args, size = item.get("arguments"), _large(item.get("arguments_raw"))
        if size and id(args) in self.exact_ids:
            out["arguments"] = self._mark(args, size)  # its text's length: its size as JSON
        for key in ("arguments_raw", "arguments_streamed", "repaired_text"):
            if key in out:
                out[key] = self.string(out[key])
        return out


def _large(value: Any) -> int:
    """The length of a string long enough to be spliced, else 0."""
    return len(value) if type(value) is str and len(value) >= _LEAST else 0
