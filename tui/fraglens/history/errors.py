"""The one exception of the history package.

``HistoryError`` means "this input is not something history can read": a report
that is not a report, a conversation that is not a list of messages, an
unknown shape. The CLI turns it into exit status 2. Problems *inside* a
readable conversation are never exceptions: they are ``Problem`` records.
"""

from __future__ import annotations


class HistoryError(ValueError):
    """The input is unreadable as a report or as a conversation."""
