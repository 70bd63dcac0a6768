"""Parsed arguments against a declared tool's JSON Schema: each call's verdict.

The validation itself (``fit.validation``, jsonschema with references that
never leave the schema) runs in the validation worker under a time budget per
call (``fit.budget``): a call whose check runs past it, whose schema has a
reference fraglens does not follow, or whose values the validator cannot do
sums with is "not checked", with the reason and the diagnostic code that says
so. Plain values in, plain verdicts out: a stream's calls (``fraglens.fit``)
and a conversation's (``history check``) use the same :class:`Checker`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from . import budget as budgets
from .budget import DEFAULT_BUDGET
from .tools import Tool
from .validation import MAX_ERRORS, Outcome, pointer

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_ERRORS",
    "UNDECLARED",
    "CallFit",
    "Checker",
    "SchemaError",
    "pointer",
]

#: the reason given for a call whose name no declared tool has
UNDECLARED = "no declared tool has this name"
#: a key per (checker, tool), by which the worker keeps each tool's validator
_KEYS = itertools.count()


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
    #: the diagnostic code that says why it was not checked (tool-schema-invalid,
    #: schema-ref-unresolved, schema-too-slow, schema-uncheckable), when one does
    code: str | None = None

    @property
    def schema_invalid(self) -> bool:
        """The tool's schema is not valid JSON Schema (the reason says how)."""
        return self.code == "tool-schema-invalid"

    @property
    def undeclared(self) -> bool:
        return self.reason == UNDECLARED

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


class Checker:
    """Parsed arguments against declared tools; each tool's validator is built
    once, however many calls name it. Streams and conversations both use it.
    ``budget``: the seconds each call's validation may take (None: no limit)."""

    def __init__(self, tools: list[Tool], budget: float | None = DEFAULT_BUDGET) -> None:
        self.tools = tools
        self.budget = budget
        self._declared: dict[str, Tool] = {}
        for tool in tools:
            self._declared.setdefault(tool.name, tool)
        self._keys: dict[str, int] = {}

    def tool(self, name: str | None) -> Tool | None:
        return self._declared.get(name) if name else None

    def check(self, name: str | None, value: Any) -> CallFit:
        """The verdict for a call of ``name`` whose parsed arguments are ``value``."""
        return self.check_many([(name, value)])[0]

    def check_many(self, calls: list[tuple[str | None, Any]]) -> list[CallFit]:
        """The verdict for each (name, parsed arguments), in order: the calls
        with a schema go to the validation worker together."""
        verdicts: list[CallFit] = []
        items: list[budgets.Item] = []
        waiting: list[CallFit] = []
        for name, value in calls:
            tool = self._declared.get(name) if name else None
            if not name:
                verdicts.append(CallFit(False, reason="the call has no name"))
            elif tool is None:
                verdicts.append(CallFit(False, reason=UNDECLARED))
            elif tool.schema is None:
                reason = "the tool declares no JSON Schema (free-form input)"
                verdicts.append(CallFit(False, tool.name, tool.strict, reason=reason))
            else:
                verdict = CallFit(False, tool.name, tool.strict)
                verdicts.append(verdict)
                waiting.append(verdict)
                if tool.name not in self._keys:
                    self._keys[tool.name] = next(_KEYS)
                key = self._keys[tool.name]
                items.append((key, tool.schema, value))
        if items:
            for verdict, outcome in zip(waiting, budgets.run(items, self.budget), strict=True):
                self._read(verdict, outcome)
        return verdicts

    def _read(self, verdict: CallFit, outcome: Outcome) -> None:
        if outcome[0] == "ok":
            verdict.checked = True
            verdict.errors = [SchemaError(*error) for error in outcome[1]]
            verdict.more_errors = outcome[2]
        else:
            verdict.code, verdict.reason = self._unchecked(outcome)

    def _unchecked(self, outcome: Outcome) -> tuple[str, str]:
        """The diagnostic code and the reason for an outcome that is no verdict."""
        kind = outcome[0]
        if kind == "schema-invalid":
            return "tool-schema-invalid", outcome[1]
        if kind == "unresolved":
            return "schema-ref-unresolved", (
                f"reference {outcome[1]} not resolved (a $ref is followed only inside "
                "the tool's own schema; nothing is fetched)"
            )
        if kind == "too-slow":
            where = f"in {outcome[1]!r}" if outcome[1] else ""
            limit = f"{self.budget:g} s" if self.budget is not None else "its time"
            return "schema-too-slow", " ".join(
                filter(None, ["validation ran past", limit, where, "(--schema-timeout)"])
            )
        if kind == "skipped" and outcome[1] == "too-slow":
            return "schema-too-slow", (
                "an earlier call of this tool ran past the time budget, so this one "
                "was not tried (--schema-timeout)"
            )
        if kind == "skipped":
            return "schema-uncheckable", (
                "an earlier call of this tool stopped the validator, so this one was not tried"
            )
        if kind == "failed":
            return "schema-uncheckable", (
                f"the validator failed in {outcome[1]!r} on these arguments ({outcome[2]})"
            )
        return "schema-uncheckable", str(outcome[1])
