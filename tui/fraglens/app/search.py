"""``/``: where a text or a pattern occurs, as events to step to.

Two places are searched: each event's text as it came (its JSON), and each
call's argument text as a whole, across fragment boundaries. A match in a
call's text is placed at the event whose fragment completed it (its last
character), which answers "when did this value appear?". The query is a
regular expression when it compiles, else plain text; all lowercase means
case does not matter (as ``less`` and vim's smartcase). A match that touches a
credential the stream knows of is no match: the panes show ``[redacted]``
there, and a search must not tell a key's characters one guess at a time.
Read-only over the stream; no Textual here.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from ..redact import TextScrub
from .steps import StepIndex

#: matches kept; a search that finds more says so
MAX_MATCHES = 10_000


@dataclass(frozen=True, slots=True)
class Found:
    """The events holding a match, in order, and whether any were left out."""

    query: str
    events: list[int]
    in_calls: int
    in_events: int
    capped: bool


def compile_query(query: str) -> re.Pattern[str]:
    flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
    try:
        return re.compile(query, flags)
    except re.error:
        return re.compile(re.escape(query), flags)


def search(index: StepIndex, query: str) -> Found:
    pattern = compile_query(query)
    found: set[int] = set()
    in_calls = in_events = 0
    capped = False
    scrub = index.scrub
    for call in index.calls:
        ends = call.frag_end
        secret = scrub.spans(call.text) if scrub else []
        for match in pattern.finditer(call.text):
            if match.end() == match.start() or _touches(secret, match):
                continue
            k = bisect_left(ends, match.end())
            if k < len(ends):
                found.add(call.frag_event[k])
                in_calls += 1
            if in_calls >= MAX_MATCHES:
                capped = True
                break
    hit = pattern.search
    log = index.stream.events
    payload = log.data  # the text alone: no event object made for each of 1M events
    for number in range(len(log)):
        text = payload(number)
        if hit(text) and (not scrub or _clear_match(pattern, text, scrub)):
            found.add(number)
            in_events += 1
            if in_events >= MAX_MATCHES:
                capped = True
                break
    return Found(query, sorted(found), in_calls, in_events, capped)


def _touches(spans: list[tuple[int, int]], match: re.Match[str]) -> bool:
    """Does ``match`` overlap one of ``spans`` (in order, not overlapping)?"""
    i = bisect_left(spans, (match.end(), -1))  # the spans that start before its end
    return i > 0 and spans[i - 1][1] > match.start()


def _clear_match(pattern: re.Pattern[str], text: str, scrub: TextScrub) -> bool:
    """Does ``pattern`` match ``text`` somewhere away from every credential?"""
    secret = scrub.spans(text)
    return any(
        m.end() > m.start() and not _touches(secret, m) for m in pattern.finditer(text)
    )


def next_match(found: Found, step: int, direction: int) -> int | None:
    """The next (1) or previous (-1) event with a match after / before ``step``."""
    events = found.events
    if direction > 0:
        i = bisect_left(events, step + 1)
        return events[i] if i < len(events) else None
    i = bisect_left(events, step)
    return events[i - 1] if i else None
