"""The diagnostic codes: a public interface.

The table is data, not code, so that a code's severity and meaning live in one
place and can never drift between the engine, ``check`` and the app. Codes are
never renamed; a new code comes with its entry in ``explanations.py`` (what it
means, the wire shape, what fraglens does, what to do), which a test requires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..records import FrozenRecord

if TYPE_CHECKING:
    from typing import Final

Severity = Literal["info", "warning", "error"]

#: code -> (severity, what it means in a few words)
CODES: dict[str, tuple[Severity, str]] = {
    "index-missing": ("warning", "tool-call entries carry no index"),
    "unattributed-fragment": ("error", "a fragment could not be attributed to a call"),
    "index-nonzero-start": ("info", "the first tool-call index is not 0"),
    "index-changed": ("warning", "a call's fragments arrived under two indexes"),
    "index-collision": ("warning", "a new call arrived on an index already in use"),
    "duplicate-index-in-chunk": ("info", "two entries with the same index in one chunk"),
    "id-repeated": ("info", "the call id was re-sent on later fragments"),
    "id-changed": ("warning", "a different id arrived for an open call"),
    "id-missing": ("warning", "the call had no id; one was synthesized"),
    "id-duplicate": ("warning", "two calls share one id"),
    "name-repeated": ("info", "the whole name was re-sent on later fragments"),
    "name-split": ("info", "the name arrived in pieces"),
    "name-changed": ("warning", "a different name arrived after argument text"),
    "name-late": ("info", "the name arrived after argument text"),
    "name-missing": ("error", "the call never got a name"),
    "args-duplicated": ("warning", "the complete arguments were sent twice"),
    "args-multiple-values": ("warning", "several different JSON values under one call"),
    "args-object": ("warning", "arguments came as a JSON object, not a string"),
    "args-null": ("info", "arguments: null fragments were skipped"),
    "args-empty": ("info", "no argument text; parsed as {}"),
    "args-double-encoded": ("warning", "arguments were JSON encoded twice"),
    "args-truncated": ("error", "arguments end inside an open value"),
    "finish-length": ("warning", "the stream stopped at the token limit"),
    "args-repaired": ("warning", "malformed arguments were repaired"),
    "args-invalid": ("error", "arguments are not JSON and could not be repaired"),
    "args-restated": ("warning", "non-JSON argument pieces; the restated value was used"),
    "args-cumulative": ("warning", "each fragment restated the arguments so far; read the last"),
    "args-misrouted": ("error", "argument text came under another call's id"),
    "args-missing": ("warning", "a call started and ended with no argument events"),
    "result-orphan": ("warning", "a tool result for a call that never started"),
    "index-null-chunk": ("warning", "a tool-call chunk with index null would open a phantom call"),
    "event-unknown": ("info", "an event type the format does not define; kept and named"),
    "args-surrogate-split": ("info", "a UTF-16 surrogate pair was split and joined"),
    "args-over-limit": ("error", "a call's arguments exceeded the size limit"),
    "finish-reason-mismatch": ("warning", "finish_reason does not match the calls made"),
    "multiple-finish": ("info", "several finish chunks for one choice"),
    "usage-only-chunk": ("info", "a chunk carried only usage"),
    "no-done": ("warning", "the stream ended without [DONE]"),
    "eof-without-finish": ("warning", "the stream ended without a finish"),
    "sse-comment": ("info", "SSE comments or keep-alives"),
    "error-event": ("error", "the stream reported an error"),
    "annotation-chunk": ("info", "an annotation chunk with no delta"),
    "choice-index-unstable": ("warning", "the choice index drifted or choices interleave"),
    "bytes-replaced": ("warning", "bytes that are not UTF-8 were read as U+FFFD"),
    "chunk-unreadable": ("warning", "part of a chunk has a shape the format does not allow"),
    "non-json-data": ("error", "a data: payload is not JSON"),
    "frame-too-large": ("error", "a line or event exceeded the reader's size limit"),
    "stray-bytes": ("warning", "stray bytes before an SSE field name were skipped"),
    "recording-damaged": ("error", "lines of the recording could not be read"),
    "recording-error": ("error", "the recording ends with an error"),
    "parallel-wrapper": ("warning", "one multi_tool_use.parallel call wraps several calls"),
    "text-with-tool-calls": ("info", "assistant text alongside tool calls"),
    "tool-markup-in-content": ("warning", "tool-call markup leaked into text"),
    "tool-call-rejected": ("warning", "the provider refused the model's tool call"),
    "frame-damaged": ("error", "binary framing failed a checksum; bytes were skipped"),
    "frame-truncated": ("error", "the stream ended inside a binary message"),
    "ws-binary-frame": ("info", "a binary WebSocket message, kept and not decoded"),
    "tool-input-error": ("warning", "the client SDK rejected a call's input"),
    # the calls against the declared tools (fraglens.fit.verdicts), when the tools are known
    "args-schema": ("error", "the arguments break the tool's JSON Schema"),
    "strict-broken": ("error", "a strict: true tool got arguments that break its schema"),
    "tool-undeclared": ("error", "the call names a tool the request did not declare"),
    "tool-schema-invalid": ("warning", "a declared tool's schema is not valid JSON Schema"),
    "schema-ref-unresolved": ("warning", "a $ref of the tool's schema is not followed"),
    "schema-too-slow": ("warning", "validating the call ran past the time budget"),
    "schema-uncheckable": ("warning", "the validator could not check the arguments"),
}

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


class Diagnostic(FrozenRecord):
    """One finding. ``event`` is the event number it belongs to, ``call`` the
    position of the call in the report's ``calls`` list."""

    __slots__ = ("code", "message", "event", "call")
    code: Final[str]
    message: Final[str]
    event: Final[int | None]
    call: Final[int | None]

    def __init__(
        self, code: str, message: str, event: int | None = None, call: int | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.event = event
        self.call = call

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
    """Build a diagnostic, refusing codes the table does not define."""
    if code not in CODES:
        raise KeyError(f"unknown diagnostic code {code!r}")
    return Diagnostic(code, message, event, call)
