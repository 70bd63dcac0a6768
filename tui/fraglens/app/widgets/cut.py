"""Cutting long strings to what a pane can show.

A 1 MB ``file_text`` rendered whole is thousands of wrapped lines and a
frozen screen: every pane that prints a value cuts its strings here, and says
how much it left out, so the text rendered is bounded by the screen.
"""

from __future__ import annotations

#: characters of one string value shown before cutting it
STRING_CHARS = 400
#: what a cut value says at its end
MORE = "v shows it whole, c copies it"


def cut_string(value: str) -> tuple[str, bool]:
    """``value`` cut to ``STRING_CHARS``, the cut said inside it; and whether it was cut."""
    if len(value) <= STRING_CHARS:
        return value, False
    return value[:STRING_CHARS] + f"… [+{len(value) - STRING_CHARS:,} chars]", True
