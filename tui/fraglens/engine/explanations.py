"""The diagnostics reference, in fraglens's own words: one entry per code of ``diagnostics.CODES``.

``fraglens explain CODE`` prints an entry, ``docs/diagnostics.md`` is generated
from this table (``scripts/diagnostics_doc.py``), and the app's Parse pane and
help point at the same text; a test holds the table, the code list and the
document together, so none of them can drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import CODES

__all__ = ["EXPLANATIONS", "Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class Explanation:
    #: what the code means, in a sentence or two
    means: str
    #: a short example of the wire shape that raises it
    wire: str
    #: what fraglens did about it
    did: str
    #: what the user should do
    todo: str


EXPLANATIONS: dict[str, Explanation] = {}


def explain(code: str) -> str:
    """The entry for ``code`` as plain text, ending in a newline. KeyError for an unknown code."""
    severity, summary, _ = CODES[code]
    entry = EXPLANATIONS.get(code)
    lines = [f"{code} ({severity}): {summary}", ""]
    if entry is not None:
        lines += [entry.means, "", "On the wire:", *("  " + w for w in entry.wire.splitlines())]
        lines += ["", f"What fraglens did: {entry.did}", "", f"What to do: {entry.todo}"]
    return "\n".join(lines) + "\n"
