"""Does each call fit the tool it calls? Its parsed arguments against the tool's JSON Schema.

A call can be reassembled perfectly and still be wrong for its tool: a required
field missing, a number sent as a string, an enum value the tool does not
know, a tool name that was never declared. This module reads a closed
``Stream``'s calls against the declared tools (``fraglens.tools``) with
``jsonschema``, the reference validator, picked by the schema's ``$schema``
(draft 2020-12 when it names none, which is what the providers document).

What is checked: calls whose arguments were parsed (``ok``, ``empty``, and
``repaired``, whose repaired value is what a lenient client would run). A
call whose text could not be parsed is not validated: its status already says
why. Hosted calls (the provider's own tools) are not the user's to check.

Each finding is also a diagnostic on its call, at the event of the call's
verdict: ``args-schema`` per broken rule, ``strict-broken`` once when the tool
promised ``strict: true``, ``tool-undeclared`` for a name no tool declares.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from jsonschema import exceptions, validators

from .engine.calls import Call
from .engine.diagnostics import Diagnostic, make
from .stream import Stream
from .tools import Tool, request_tools

__all__ = ["CallFit", "Fit", "SchemaError", "check_fit", "fit_for_request", "pointer"]

#: schema errors kept per call; a wrong type on every item of a long array stops here
MAX_ERRORS = 50
#: statuses whose value is what the client would run
_PARSED = ("ok", "empty", "repaired")


@dataclass(frozen=True)
class SchemaError:
    #: RFC 6901 pointer into the arguments ("" is the whole value)
    pointer: str
    #: the schema keyword that failed: required, type, enum, ...
    rule: str
    #: where that keyword sits in the tool's schema, as a pointer
    schema_path: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {
            "pointer": self.pointer,
            "rule": self.rule,
            "schema_path": self.schema_path,
            "message": self.message,
        }


@dataclass
class CallFit:
    """One call's verdict against its tool."""

    #: the arguments were validated against a schema
    checked: bool
    #: the declared tool the call named, or None
    tool: str | None = None
    strict: bool = False
    errors: list[SchemaError] = field(default_factory=list)
    #: errors past MAX_ERRORS, counted, not kept
    more_errors: int = 0
    #: why it was not checked
    reason: str | None = None

    @property
    def fits(self) -> bool:
        return self.checked and not self.errors

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "checked": self.checked,
            "tool": self.tool,
            "errors": [e.as_json() for e in self.errors],
        }
        if self.strict:
            out["strict"] = True
        if self.more_errors:
            out["more_errors"] = self.more_errors
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass
class Fit:
    """The verdict for every call of a stream, by the call's ``seq``."""

    tools: list[Tool]
    calls: dict[int, CallFit]
    diagnostics: list[Diagnostic]


def pointer(path: Iterable[Any]) -> str:
    """A jsonschema path (keys and indexes) as an RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _validator(schema: Any) -> Any:
    """A validator for ``schema``, or a SchemaError message when it is no valid schema."""
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def check_fit(stream: Stream, tools: list[Tool]) -> Fit:
    """Every call of a closed ``stream`` against ``tools``."""
    declared: dict[str, Tool] = {}
    for tool in tools:
        declared.setdefault(tool.name, tool)
    compiled: dict[str, Any] = {}
    broken_schema: dict[str, str] = {}
    verdicts: dict[int, CallFit] = {}
    found: list[Diagnostic] = []
    for call in stream.reassembler.calls:
        if call.hosted:
            continue
        verdict = _fit_call(call, declared, compiled, broken_schema)
        verdicts[call.seq] = verdict
        found.extend(_diagnostics(call, verdict))
    return Fit(tools, verdicts, found)


def fit_for_request(stream: Stream, request: Any) -> Fit | None:
    """The calls against the tools a recorded or sent request declared; None
    when it declared none (a tool-less capture: nothing checked, nothing raised)."""
    tools = request_tools(request)
    return None if tools is None else check_fit(stream, tools)


def _fit_call(
    call: Call, declared: dict[str, Tool], compiled: dict[str, Any], broken: dict[str, str]
) -> CallFit:
    if not call.name:
        return CallFit(False, reason="the call has no name")
    tool = declared.get(call.name)
    if tool is None:
        return CallFit(False, reason="no declared tool has this name")
    verdict = CallFit(False, tool.name, tool.strict)
    result = call.result
    if result is None or result.status not in _PARSED:
        status = result.status if result else "open"
        verdict.reason = f"arguments not parsed ({status})"
        return verdict
    if tool.schema is None:
        verdict.reason = "the tool declares no JSON Schema (free-form input)"
        return verdict
    if tool.name not in compiled and tool.name not in broken:
        try:
            compiled[tool.name] = _validator(tool.schema)
        except exceptions.SchemaError as exc:
            broken[tool.name] = f"the tool's schema is not valid JSON Schema: {exc.message}"
        except RecursionError:
            broken[tool.name] = "the tool's schema is nested too deeply to check"
    if tool.name in broken:
        verdict.reason = broken[tool.name]
        return verdict
    verdict.checked = True
    try:
        errors = sorted(
            compiled[tool.name].iter_errors(result.arguments),
            key=lambda e: (pointer(e.absolute_path), pointer(e.absolute_schema_path)),
        )
    except RecursionError:
        verdict.checked = False
        verdict.reason = "the arguments are nested too deeply to check"
        return verdict
    for error in errors[:MAX_ERRORS]:
        verdict.errors.append(
            SchemaError(
                pointer(error.absolute_path),
                str(error.validator),
                pointer(error.absolute_schema_path),
                error.message,
            )
        )
    verdict.more_errors = max(0, len(errors) - MAX_ERRORS)
    return verdict


def _diagnostics(call: Call, verdict: CallFit) -> list[Diagnostic]:
    # the verdict's event: where the app shows the parse status this sits beside
    event = call.results[-1][0] if call.results else max(call.first_event, call.last_event)
    name = call.name
    if verdict.tool is None and name:
        return [
            make(
                "tool-undeclared",
                f"{name!r} is not among the declared tools",
                call.first_event,
                call.seq,
            )
        ]
    out = [
        make(
            "args-schema",
            f"{name} at {e.pointer or '(the whole value)'}: {e.message} ({e.rule})",
            event,
            call.seq,
        )
        for e in verdict.errors
    ]
    if verdict.more_errors:
        out.append(
            make("args-schema", f"{name}: {verdict.more_errors} more errors", event, call.seq)
        )
    total = len(verdict.errors) + verdict.more_errors
    if total and verdict.strict:
        out.append(
            make(
                "strict-broken",
                f"{name}: the provider promised arguments that match this tool's schema "
                f"(strict) and broke that promise: {total} schema error(s)",
                event,
                call.seq,
            )
        )
    if verdict.reason is not None and verdict.reason.startswith("the tool's schema"):
        out.append(make("tool-schema-invalid", f"{name}: {verdict.reason}", event, call.seq))
    return out
