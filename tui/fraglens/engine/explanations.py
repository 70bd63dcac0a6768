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


EXPLANATIONS: dict[str, Explanation] = {
    "frame-damaged": Explanation(
        means=(
            "Part of a binary event stream (AWS Bedrock) did not hold together: a message "
            "whose CRC32 does not match its bytes, or bytes where a message should start "
            "that are no valid prelude."
        ),
        wire=(
            "00 00 00 5b 00 00 00 4b 8e 21 6c 09 ...  prelude: total, headers, CRC\n"
            "... payload ... 3f 0a 9c 12                message CRC that does not match"
        ),
        did=(
            "Skipped the damaged bytes, said how many, and went on reading at the next "
            "offset holding a prelude whose own CRC matches; the messages around it are kept."
        ),
        todo=(
            "Suspect whatever sat between the server and the capture: a proxy that rewrote "
            "the body, a capture saved as text (line ends converted), or a file cut and pasted."
        ),
    ),
    "frame-truncated": Explanation(
        means="A binary event stream ended part-way through a message.",
        wire="00 00 01 2c 00 00 00 55 ... (the prelude announces 300 bytes; 120 arrived)",
        did=(
            "Kept every complete message before it and reported the bytes left over; "
            "calls still open are judged on what arrived (truncated when cut inside a value)."
        ),
        todo=(
            "The connection dropped or the capture stopped early: check timeouts and the "
            "recording tool; the server's last complete message is the last event shown."
        ),
    ),
    "tool-input-error": Explanation(
        means=(
            "The Vercel AI SDK sent a tool-input-error part: the backend could not parse or "
            "validate the call's input against the tool's schema, so the tool did not run."
        ),
        wire=(
            'data: {"type":"tool-input-error","toolCallId":"call_1","toolName":"search",'
            '"input":"{\\"q\\": ","errorText":"JSON parsing failed"}'
        ),
        did=(
            "Kept the input as the call's arguments (when no deltas came) and repeated the "
            "SDK's error text in this diagnostic, with the call it belongs to."
        ),
        todo=(
            "Look at the call's arguments and status: truncated or invalid JSON points at the "
            "model or the stream; valid JSON points at a schema the model did not follow."
        ),
    ),
}


def explain(code: str) -> str:
    """The entry for ``code`` as plain text, ending in a newline. KeyError for an unknown code."""
    severity, summary, _ = CODES[code]
    entry = EXPLANATIONS.get(code)
    lines = [f"{code} ({severity}): {summary}", ""]
    if entry is not None:
        lines += [entry.means, "", "On the wire:", *("  " + w for w in entry.wire.splitlines())]
        lines += ["", f"What fraglens did: {entry.did}", "", f"What to do: {entry.todo}"]
    return "\n".join(lines) + "\n"
