"""Cutting long strings to what a pane can show.

A 1 MB ``file_text`` rendered whole is thousands of wrapped lines and a
frozen screen: every pane that prints a value cuts its strings here, and says
how much it left out, so the text rendered is bounded by the screen.
"""

from __future__ import annotations

from ...redact import TextScrub
from ..scrubbed import window_end

#: characters of one string value shown before cutting it
STRING_CHARS = 400
#: what a cut value says at its end
MORE = "v shows it whole, c copies it"


def cut_string(value: str, scrub: TextScrub | None = None) -> tuple[str, bool]:
    """``value`` cut to ``STRING_CHARS``, the cut said inside it; and whether it was cut.
    With ``scrub``, a value the cut crosses is kept whole, for ``scrubbed`` to find."""
    if len(value) <= STRING_CHARS:
        return value, False
    end = window_end(value, 0, STRING_CHARS, scrub) if scrub else STRING_CHARS
    if end >= len(value):
        return value, False
    return value[:end] + f"… [+{len(value) - end:,} chars]", True
