"""How a backend cut its tool calls into fragments: the chunking profile of a stream.

Two backends can send the same call and break it into pieces very
differently: a character at a time, one whole call per chunk, cuts inside
strings or escapes, the id and name repeated on every piece. The profile puts
numbers on that, for ``check --chunking``, ``compare`` and the app.

A view over a closed ``Stream``, like the report: fragments are counted as
``check`` counts them (``Call.fragments``), and where each fragment ended
(inside a string, inside an escape) is the scanner's per-fragment record
(``Call.frag_shape``), never a second scan of the text.
"""

from __future__ import annotations

import re
from statistics import median
from typing import Any

from ..engine.calls import Call
from ..engine.finalize import OK_STATUSES
from ..engine.plural import counted
from ..engine.scanner import IN_ESCAPE, IN_STRING
from ..reading.stream import Stream

__all__ = ["chunking_line", "chunking_profile"]

# an escaped high surrogate (\uD800-\uDBFF) at the very end, not itself escaped:
# its low half is in the next fragment
_HIGH_ESCAPE_AT_END = re.compile(r"(?:^|[^\\])(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}\Z")
# enough text before a fragment's end to see such an escape and the backslashes before it
_LOOKBACK = 64


def _mid_character(text: str, end: int, in_string: bool) -> bool:
    """Whether a fragment ending at ``end`` cut one character in two: the bytes
    of a UTF-8 character split between chunks (each half decoded to U+FFFD), or
    a UTF-16 surrogate pair split, raw or as ``\\uXXXX`` escapes."""
    if end == 0:
        return False
    last = text[end - 1]
    if last == "\ufffd" or "\ud800" <= last <= "\udbff":
        return True
    return in_string and _HIGH_ESCAPE_AT_END.search(text[max(0, end - _LOOKBACK) : end]) is not None


def _one_chunk(call: Call) -> bool:
    """The call came whole in the event that opened it: id, name and every
    argument fragment, and its arguments parse."""
    start = call.first_event
    result = call.result
    return (
        result is not None
        and result.status in OK_STATUSES
        and all(e == start for e in call.frag_event)
        and all(e == start for e, _ in call.name_history)
        and all(e == start for e, _ in call.id_history)
    )


def chunking_profile(stream: Stream) -> dict[str, Any]:
    """The profile of every tool call's argument fragments in a closed stream.

    ``mid_string`` / ``mid_escape`` / ``mid_utf8`` count fragment ends that have
    a next fragment in the same call (a call's last fragment ending in a string
    is a truncation, which the call's status reports); ``mid_escape`` fragments
    are counted in ``mid_string`` too."""
    calls = stream.reassembler.calls
    sizes: list[int] = []
    mid_string = mid_escape = mid_utf8 = 0
    for call in calls:
        ends = call.frag_end
        previous = 0
        for end in ends:
            sizes.append(end - previous)
            previous = end
        if len(ends) < 2:
            continue
        call.catch_up()  # the scanner's record per fragment (linear, once per call)
        text = call.text
        shapes = call.frag_shape
        for k in range(len(ends) - 1):
            shape = shapes[k]
            in_string = bool(shape & IN_STRING)
            mid_string += in_string
            mid_escape += bool(shape & IN_ESCAPE)
            mid_utf8 += _mid_character(text, ends[k], in_string)
    return {
        "calls": len(calls),
        "fragments": len(sizes),
        "fragment_chars": {
            "min": min(sizes) if sizes else None,
            "median": median(sizes) if sizes else None,
            "max": max(sizes) if sizes else None,
        },
        "mid_string": mid_string,
        "mid_escape": mid_escape,
        "mid_utf8": mid_utf8,
        "whole_in_one_chunk": sum(_one_chunk(c) for c in calls),
        "ids_resent": sum("id-repeated" in c.raised for c in calls),
        "names_resent": sum("name-repeated" in c.raised for c in calls),
    }


def _n(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}"


def chunking_line(profile: dict[str, Any]) -> str:
    """The profile in one line, for the text report and the app."""
    sizes = profile["fragment_chars"]
    return (
        f"{counted(profile['fragments'], 'fragment')} over {counted(profile['calls'], 'call')}, "
        f"{_n(sizes['min'])}/{_n(sizes['median'])}/{_n(sizes['max'])} chars "
        f"(min/median/max); cut mid-string {profile['mid_string']}, "
        f"mid-escape {profile['mid_escape']}, mid-character {profile['mid_utf8']}; "
        f"whole in one chunk {profile['whole_in_one_chunk']}; "
        f"id re-sent {profile['ids_resent']}, name re-sent {profile['names_resent']}"
    )
