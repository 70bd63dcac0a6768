"""What a pane draws, with the stream's credentials taken out.

A key a server echoed in two events is in neither event: it is whole only in
the text the engine joins, which is what the panes show. So each pane passes
the text it is about to draw (a card's window, a row, the value) through the
stream's ``TextScrub`` after styling it, and each value becomes ``[redacted]``
in the style it had. Only what is drawn is scrubbed, so a step costs the same
with or without credentials to find.
"""

from __future__ import annotations

from rich.text import Text

from ..redact import REDACTED, TextScrub


def scrubbed(text: Text, scrub: TextScrub) -> Text:
    """``text`` with each value ``scrub`` knows replaced, the styles around it kept."""
    if not scrub:
        return text
    spans = scrub.spans(text.plain)
    if not spans:
        return text
    out = text.blank_copy()
    at = 0
    for start, end in spans:
        out.append_text(text[at:start])
        value = text[start:end]
        mark = Text(REDACTED, style=value.style, end="")
        for span in value.spans:  # the style the value opened with, on the mark
            if span.start == 0:
                mark.stylize(span.style)
        out.append_text(mark)
        at = end
    out.append_text(text[at:])
    return out


def window_start(text: str, start: int, end: int, scrub: TextScrub) -> int:
    """Where a window ``text[start:end]`` must begin for a value its left edge cuts
    to be redacted whole: the value's start (the view then drops what is before
    ``start`` as it would anyway), or ``start``. Looks back ``scrub.reach`` at most."""
    if not scrub or start == 0:
        return start
    early = max(0, start - scrub.reach)
    for a, b in scrub.spans(text[early:end]):
        if early + b > start:
            return min(early + a, start)
    return start


def window_end(text: str, start: int, end: int, scrub: TextScrub) -> int:
    """Where a window ``text[start:end]`` must end for a value its right edge cuts
    to be redacted whole: the value's end, or ``end``. Looks ahead ``scrub.reach``
    at most, and never past ``text`` (hand it only what may be shown)."""
    if not scrub or end >= len(text):
        return end
    for a, b in scrub.spans(text[max(start, end - scrub.reach) : end + scrub.reach]):
        a, b = a + max(start, end - scrub.reach), b + max(start, end - scrub.reach)
        if a < end < b:
            return b
    return end


def masked(text: str, scrub: TextScrub) -> str:
    """``text`` with each value ``scrub`` knows written over by ``[redacted]`` and
    as many ``*`` as fill its length (cut when it is shorter): for a view whose
    offsets must not move, the value's length is all that is left of it."""
    if not scrub:
        return text
    parts = []
    at = 0
    for start, end in scrub.spans(text):
        parts += [text[at:start], REDACTED.ljust(end - start, "*")[: end - start]]
        at = end
    parts.append(text[at:])
    return "".join(parts)
