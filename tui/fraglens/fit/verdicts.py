"""Does each call fit the tool it calls? Its parsed arguments against the tool's JSON Schema.

A call can be reassembled perfectly and still be wrong for its tool: a required
field missing, a number sent as a string, an enum value the tool does not
know, a tool name that was never declared. This module reads a closed
``Stream``'s calls against the declared tools (``fraglens.tools``) with the
schema checker (``fraglens.schema``).

What is checked: calls whose arguments were parsed (``ok``, ``empty``, and
``repaired``, whose repaired value is what a lenient client would run). A
call whose text could not be parsed is not validated: its status already says
why. Hosted calls (the provider's own tools) are not the user's to check.

Each finding is also a diagnostic on its call, at the event of the call's
verdict: ``args-schema`` per broken rule, ``strict-broken`` once when the tool
promised ``strict: true``, ``tool-undeclared`` for a name no tool declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.calls import Call
from ..engine.diagnostics import Diagnostic, make
from ..engine.plural import counted
from ..reading.stream import Stream
from .schema import DEFAULT_BUDGET, CallFit, Checker
from .tools import Tool, request_tools

__all__ = ["Fit", "check_fit", "fit_for_request"]

#: statuses whose value is what the client would run
_PARSED = ("ok", "empty", "repaired")


@dataclass
class Fit:
    """The verdict for every call of a stream, by the call's ``seq``."""

    tools: list[Tool]
    calls: dict[int, CallFit]
    diagnostics: list[Diagnostic]


def check_fit(stream: Stream, tools: list[Tool], budget: float | None = DEFAULT_BUDGET) -> Fit:
    """Every call of a closed ``stream`` against ``tools``, each validated
    within ``budget`` seconds (None: no limit)."""
    checker = Checker(tools, budget)
    calls = [call for call in stream.reassembler.calls if not call.hosted]
    known = {call.seq: _unparsed(call, checker) for call in calls}
    asked = [call for call in calls if known[call.seq] is None]
    values = [(c.name, c.result.arguments if c.result else None) for c in asked]
    checked = dict(zip([c.seq for c in asked], checker.check_many(values), strict=True))
    verdicts = {call.seq: known[call.seq] or checked[call.seq] for call in calls}
    found: list[Diagnostic] = []
    for call in calls:
        found.extend(_diagnostics(call, verdicts[call.seq]))
    return Fit(tools, verdicts, found)


def fit_for_request(
    stream: Stream,
    request: Any,
    tools: list[Tool] | None = None,
    budget: float | None = DEFAULT_BUDGET,
) -> Fit | None:
    """The calls against ``tools`` when given (``--tools``), else against the tools
    a recorded or sent request declared; None when there are none (a tool-less
    capture: nothing checked, nothing raised)."""
    if tools is None:
        tools = request_tools(request)
    return None if tools is None else check_fit(stream, tools, budget)


def _unparsed(call: Call, checker: Checker) -> CallFit | None:
    """The verdict on a call of a declared tool whose arguments were not
    parsed; None for a call the checker is to read."""
    result = call.result
    tool = checker.tool(call.name)
    if tool is not None and (result is None or result.status not in _PARSED):
        status = result.status if result else "open"
        return CallFit(False, tool.name, tool.strict, reason=f"arguments not parsed ({status})")
    return None


def _diagnostics(call: Call, verdict: CallFit) -> list[Diagnostic]:
    # the verdict's event: where the app shows the parse status this sits beside
    event = call.results[-1][0] if call.results else max(call.first_event, call.last_event)
    name = call.name
    if verdict.undeclared:
        # where the name came (a late name, ``name-late``, comes after the call opened)
        named = call.name_history[-1][0] if call.name_history else call.first_event
        return [
            make("tool-undeclared", f"{name!r} is not among the declared tools", named, call.seq)
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
            make(
                "args-schema",
                f"{name}: {counted(verdict.more_errors, 'more error')}",
                event,
                call.seq,
            )
        )
    total = len(verdict.errors) + verdict.more_errors
    if total and verdict.strict:
        out.append(
            make(
                "strict-broken",
                f"{name}: the provider promised arguments that match this tool's schema "
                f"(strict) and broke that promise: {counted(total, 'schema error')}",
                event,
                call.seq,
            )
        )
    if verdict.code is not None:  # not checked, and a code says why
        out.append(make(verdict.code, f"{name}: {verdict.reason}", event, call.seq))
    return out
