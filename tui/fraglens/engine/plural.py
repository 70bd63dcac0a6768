"""Counts in words: "1 event", "2 events", never "1 events" or "event(s)".

Every layer writes counts into text a user reads (diagnostic messages, the
report, the app's lines), so the one rule lives here, in the core, where the
lowest of them can use it.
"""

from __future__ import annotations

__all__ = ["counted", "noun"]

#: nouns whose plural is not the singular plus "s"
_IRREGULAR = {"entry": "entries", "match": "matches", "child": "children"}


def noun(n: int, singular: str, plural: str | None = None) -> str:
    """The word for ``n`` of them: ``singular`` for exactly one, else the plural
    (``plural``, a known irregular one, or ``singular + "s"``)."""
    if n == 1:
        return singular
    return plural or _IRREGULAR.get(singular, singular + "s")


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and its word: "1 event", "1,204 events"."""
    return f"{n:,} {noun(n, singular, plural)}"
