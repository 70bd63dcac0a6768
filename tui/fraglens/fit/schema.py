"""Parsed arguments against a declared tool's JSON Schema, with ``jsonschema``.

``jsonschema`` is the reference validator; the draft comes from the schema's
``$schema``, 2020-12 when it names none (what the providers document). Each
failure keeps the JSON pointer into the arguments, the keyword that failed and
where it sits in the schema. Nothing is fetched: a ``$ref`` resolves inside
the tool's own schema or not at all. Plain values in, plain verdicts out: a stream's
calls (``fraglens.fit``) and a conversation's (``history check``) use the same
:class:`Checker`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .tools import Tool

__all__ = ["MAX_ERRORS", "UNDECLARED", "CallFit", "Checker", "SchemaError", "pointer"]

#: the reason given for a call whose name no declared tool has
UNDECLARED = "no declared tool has this name"
#: schema errors kept per call; a wrong type on every item of a long array stops here
MAX_ERRORS = 50


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
    #: the tool's schema is not valid JSON Schema (the reason says how)
    schema_invalid: bool = False

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


def pointer(path: Iterable[Any]) -> str:
    """A jsonschema path (keys and indexes) as an RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _validator(schema: Any) -> Any:
    """A validator for ``schema``; jsonschema's SchemaError when it is no valid schema."""
    # jsonschema takes longer to import than the rest of ``check`` (about a
    # third of its start-up): loaded when the first tool schema is compiled
    from jsonschema import validators

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


class Checker:
    """Parsed arguments against declared tools; each tool's validator is built
    once, however many calls name it. Streams and conversations both use it."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = tools
        self._declared: dict[str, Tool] = {}
        for tool in tools:
            self._declared.setdefault(tool.name, tool)
        self._compiled: dict[str, Any] = {}
        #: tool name -> why its schema cannot be used
        self._broken: dict[str, str] = {}

    def tool(self, name: str | None) -> Tool | None:
        return self._declared.get(name) if name else None

    def check(self, name: str | None, value: Any) -> CallFit:
        """The verdict for a call of ``name`` whose parsed arguments are ``value``."""
        if not name:
            return CallFit(False, reason="the call has no name")
        tool = self._declared.get(name)
        if tool is None:
            return CallFit(False, reason=UNDECLARED)
        verdict = CallFit(False, tool.name, tool.strict)
        validator = self._validator(tool)
        if validator is None:
            broken = self._broken.get(tool.name)
            verdict.schema_invalid = broken is not None
            verdict.reason = broken or "the tool declares no JSON Schema (free-form input)"
            return verdict
        from referencing.exceptions import Unresolvable  # loaded with jsonschema

        try:
            errors = sorted(
                validator.iter_errors(value),
                key=lambda e: (pointer(e.absolute_path), pointer(e.absolute_schema_path)),
            )
        except RecursionError:
            verdict.reason = "the arguments are nested too deeply to check"
            return verdict
        except Unresolvable as exc:
            # nothing is fetched: a $ref is followed only inside the schema itself
            verdict.schema_invalid = True
            verdict.reason = f"the tool's schema has a $ref that does not resolve: {exc}"
            return verdict
        verdict.checked = True
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

    def _validator(self, tool: Tool) -> Any:
        if tool.schema is None:
            return None
        if tool.name not in self._compiled and tool.name not in self._broken:
            from jsonschema import exceptions

            try:
                self._compiled[tool.name] = _validator(tool.schema)
            except exceptions.SchemaError as exc:
                reason = f"the tool's schema is not valid JSON Schema: {exc.message}"
                self._broken[tool.name] = reason
            except RecursionError:
                self._broken[tool.name] = "the tool's schema is nested too deeply to check"
        return self._compiled.get(tool.name)
