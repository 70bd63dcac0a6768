"""The diagnostic codes of ``../shared/QUIRKS.md``: a public interface.

The table is data, not code, so that a code's severity and meaning live in one
place and can never drift between the engine, ``check`` and the app. Codes are
never renamed and never invented here without QUIRKS.md saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["info", "warning", "error"]

#: code -> (severity, what it means, the QUIRKS.md entry)
CODES: dict[str, tuple[Severity, str, str]] = {
    "index-missing": ("warning", "tool-call entries carry no index", "Q01"),
    "unattributed-fragment": ("error", "a fragment could not be attributed to a call", "Q01"),
    "index-nonzero-start": ("info", "the first tool-call index is not 0", "Q02"),
    "index-changed": ("warning", "a call's fragments arrived under two indexes", "Q03"),
    "index-collision": ("warning", "a new call arrived on an index already in use", "Q04"),
    "duplicate-index-in-chunk": ("info", "two entries with the same index in one chunk", "Q05"),
    "id-repeated": ("info", "the call id was re-sent on later fragments", "Q06"),
    "id-changed": ("warning", "a different id arrived for an open call", "Q08"),
    "id-missing": ("warning", "the call had no id; one was synthesized", "Q09"),
    "id-duplicate": ("warning", "two calls share one id", "Q09"),
    "name-repeated": ("info", "the whole name was re-sent on later fragments", "Q10"),
    "name-split": ("info", "the name arrived in pieces", "Q11"),
    "name-late": ("info", "the name arrived after argument text", "Q12"),
    "name-missing": ("error", "the call never got a name", "Q12"),
    "args-duplicated": ("warning", "the complete arguments were sent twice", "Q14"),
    "args-multiple-values": ("warning", "several different JSON values under one call", "Q14b"),
    "args-object": ("warning", "arguments came as a JSON object, not a string", "Q15"),
    "args-null": ("info", "arguments: null fragments were skipped", "Q16"),
    "args-empty": ("info", "no argument text; parsed as {}", "Q17"),
    "args-double-encoded": ("warning", "arguments were JSON encoded twice", "Q18"),
    "args-truncated": ("error", "arguments end inside an open value", "Q22"),
    "finish-length": ("warning", "the stream stopped at the token limit", "Q22"),
    "args-repaired": ("warning", "malformed arguments were repaired", "-"),
    "args-invalid": ("error", "arguments are not JSON and could not be repaired", "-"),
    "args-restated": ("warning", "non-JSON argument pieces; the restated value was used", "-"),
    "args-surrogate-split": ("info", "a UTF-16 surrogate pair was split and joined", "Q42"),
    "args-over-limit": ("error", "a call's arguments exceeded the size limit", "-"),
    "finish-reason-mismatch": ("warning", "finish_reason does not match the calls made", "Q20"),
    "multiple-finish": ("info", "several finish chunks for one choice", "Q21"),
    "usage-only-chunk": ("info", "a chunk carried only usage", "Q23"),
    "no-done": ("warning", "the stream ended without [DONE]", "Q24"),
    "eof-without-finish": ("warning", "the stream ended without a finish", "Q24"),
    "sse-comment": ("info", "SSE comments or keep-alives", "Q25"),
    "error-event": ("error", "the stream reported an error", "Q27"),
    "annotation-chunk": ("info", "an annotation chunk with no delta", "Q29"),
    "choice-index-unstable": ("warning", "the choice index drifted or choices interleave", "Q30"),
    "non-json-data": ("error", "a data: payload is not JSON", "-"),
    "text-with-tool-calls": ("info", "assistant text alongside tool calls", "Q31"),
    "tool-markup-in-content": ("warning", "tool-call markup leaked into text", "Q31b"),
}

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding. ``event`` is the event number it belongs to, ``call`` the
    position of the call in the report's ``calls`` list."""

    code: str
    message: str
    event: int | None = None
    call: int | None = None

    @property
    def severity(self) -> Severity:
        return CODES[self.code][0]

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }
        if self.event is not None:
            out["event"] = self.event
        if self.call is not None:
            out["call"] = self.call
        return out


def make(code: str, message: str, event: int | None = None, call: int | None = None) -> Diagnostic:
    """Build a diagnostic, refusing codes that QUIRKS.md does not define."""
    if code not in CODES:
        raise KeyError(f"unknown diagnostic code {code!r}")
    return Diagnostic(code, message, event, call)
