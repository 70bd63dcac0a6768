"""Cumulative arguments: fragments that each restate the whole text so far.

Some providers and gateways (a LangGraph model wrapper, a proxy that re-streams
snapshots, DashScope without ``incremental_output``) send every argument
fragment as the complete text up to that point instead of the new part. Joined
as deltas, ``{"ci`` + ``{"city": "Pa`` + ``{"city": "Paris"}`` is garbage that
ends inside a string, and a lenient parser makes a wrong value of it.

The test is exact and cheap: every non-empty piece begins with the piece
before it, at least one is longer than the one before (a stream that merely
repeats one piece is ``args-duplicated``, not this), and the pieces joined are
not one JSON text (a real delta stream whose pieces happened to extend each
other and still formed JSON is left alone). An ordinary delta stream fails at
its second piece, so the walk costs nothing there; a cumulative one is walked
once, in time linear in its own size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = ["last_restatement"]


def last_restatement(text: str, ends: Sequence[int]) -> tuple[str, int] | None:
    """The last piece and how many pieces there were, when the pieces of
    ``text`` (cut at ``ends``) each restate the text so far; else None."""
    start = 0
    prev_start = prev_len = -1
    grew = False
    pieces = 0
    for end in ends:
        size = end - start
        if size > 0:
            if prev_len >= 0:
                if size < prev_len or not text.startswith(
                    text[prev_start : prev_start + prev_len], start
                ):
                    return None
                grew = grew or size > prev_len
            prev_start, prev_len = start, size
            pieces += 1
        start = end
    if not grew:
        return None
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return text[prev_start : prev_start + prev_len], pieces
    return None
