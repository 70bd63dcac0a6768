"""The tools a request declared, read from whichever API shape they were written in.

People hold tool lists in four shapes, and often inside a whole request body:

- OpenAI Chat:      ``[{"type": "function", "function": {"name", "parameters", "strict"}}]``
- OpenAI Responses: ``[{"type": "function", "name", "parameters", "strict"}]``
- Anthropic:        ``[{"name", "input_schema"}]`` (``strict`` too, for structured outputs)
- Gemini:           ``[{"functionDeclarations": [{"name", "parameters"}]}]``; in a whole
  request, ``toolConfig.functionCallingConfig.mode: "VALIDATED"`` is its strict
- Bedrock Converse: ``[{"toolSpec": {"name", "inputSchema": {"json": ...}}}]``, in a whole
  request under ``toolConfig.tools``

:func:`read_tools` takes any of them (a list, ``{"tools": [...]}``, a request
body, a Gemini ``functionDeclarations`` object) and gives one :class:`Tool`
per declared function, its parameters as a JSON Schema. Gemini writes its
schemas in an OpenAPI subset (``"type": "OBJECT"``, ``nullable``); they are
rewritten into the JSON Schema they mean. Hosted tools (web search, code
interpreter...) declare no function and are left out: their calls are the
provider's, not the user's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .declared import converse_tools, declaring_body

__all__ = ["Tool", "ToolsError", "read_tools", "tool_parts"]

#: what a tool without parameters accepts
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


class ToolsError(ValueError):
    """The value holds no tool declarations fraglens can read: a one-line reason."""


@dataclass(frozen=True)
class Tool:
    name: str
    #: the parameters as a JSON Schema (Gemini's OpenAPI subset already rewritten)
    schema: Any
    #: the declaration promised that calls follow the schema exactly
    strict: bool = False
    description: str | None = None


def tool_parts(tool: Any) -> tuple[str, str | None, Any] | None:
    """(name, description, JSON schema) from an OpenAI Chat, Responses or Anthropic tool."""
    if not isinstance(tool, Mapping):
        return None
    converse = tool.get("toolSpec")
    if isinstance(converse, Mapping):
        return _converse_parts(converse)
    function = tool.get("function")
    inner: Mapping[str, Any] = function if isinstance(function, Mapping) else tool
    name = inner.get("name")
    if not isinstance(name, str):
        return None
    schema = inner.get("parameters", inner.get("input_schema"))
    if schema is None:
        schema = EMPTY_OBJECT
    description = inner.get("description")
    return name, description if isinstance(description, str) else None, schema


def _converse_parts(spec: Mapping[str, Any]) -> tuple[str, str | None, Any] | None:
    name = spec.get("name")
    if not isinstance(name, str):
        return None
    holder = spec.get("inputSchema")
    schema = holder.get("json") if isinstance(holder, Mapping) else None
    description = spec.get("description")
    text = description if isinstance(description, str) else None
    return name, text, EMPTY_OBJECT if schema is None else schema


def _declarations(item: Mapping[str, Any]) -> list[Any] | None:
    found = item.get("functionDeclarations", item.get("function_declarations"))
    return found if isinstance(found, list) else None


def _tool_list(value: Any) -> list[Any]:
    """The list of tool entries in a list, ``{"tools": ...}``, a request body or a
    Gemini ``functionDeclarations`` object."""
    if isinstance(value, list):
        return value
    if not isinstance(value, Mapping):
        raise ToolsError("expected a list of tools or a JSON object that holds one")
    if _declarations(value) is not None:
        return [value]
    for key in ("tools", "functions"):  # "functions": OpenAI's legacy field
        if isinstance(value.get(key), list):
            return list(value[key])
    converse = converse_tools(value)
    if converse is not None:
        return list(converse)
    raise ToolsError(
        'no "tools" list in the object (nor Gemini "functionDeclarations", nor Converse'
        ' "toolConfig.tools")'
    )


def read_tools(value: Any) -> list[Tool]:
    """Every function tool declared in ``value``; ToolsError when it declares none
    in a readable shape. An empty list is a declaration of no tools: []."""
    try:
        tools = _read(_tool_list(value))
    except RecursionError:
        raise ToolsError("a tool's schema is nested too deeply to read") from None
    if _gemini_validated(value):
        tools = [replace(tool, strict=True) for tool in tools]
    return tools


def _gemini_validated(body: Any) -> bool:
    """A Gemini request in ``VALIDATED`` function-calling mode: the API promises
    schema adherence for every function, as ``strict: true`` does elsewhere."""
    if not isinstance(body, Mapping):
        return False
    config = body.get("toolConfig", body.get("tool_config"))
    if not isinstance(config, Mapping):
        return False
    calling = config.get("functionCallingConfig", config.get("function_calling_config"))
    return isinstance(calling, Mapping) and calling.get("mode") == "VALIDATED"


def _read(entries: list[Any]) -> list[Tool]:
    tools: list[Tool] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        declarations = _declarations(entry)
        if declarations is not None:
            for declaration in declarations:
                tool = _gemini(declaration)
                if tool is not None:
                    tools.append(tool)
            continue
        if entry.get("type") not in (None, "function", "custom") and "input_schema" not in entry:
            continue  # a hosted tool: web_search, code_interpreter, ...
        parts = tool_parts(entry)
        if parts is None:
            continue
        name, description, schema = parts
        function = entry.get("function")
        holder = function if isinstance(function, Mapping) else entry
        strict = holder.get("strict") is True or entry.get("strict") is True
        if entry.get("type") == "custom":
            schema = None  # free-form input: a grammar or plain text, no JSON Schema
        tools.append(Tool(name, schema, strict, description))
    if entries and not tools:
        if len(entries) == 1:
            raise ToolsError("the one tool entry declares no function")
        raise ToolsError(f"none of the {len(entries)} tool entries declares a function")
    return tools


def _gemini(declaration: Any) -> Tool | None:
    if not isinstance(declaration, Mapping) or not isinstance(declaration.get("name"), str):
        return None
    if "parametersJsonSchema" in declaration:  # already JSON Schema
        schema = declaration["parametersJsonSchema"]
    elif "parameters" in declaration:
        schema = openapi_to_json_schema(declaration["parameters"])
    else:
        schema = EMPTY_OBJECT
    description = declaration.get("description")
    text = description if isinstance(description, str) else None
    return Tool(declaration["name"], schema, description=text)


def openapi_to_json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-subset schema as JSON Schema: ``"OBJECT"`` -> ``"object"``,
    ``nullable: true`` -> the type or null. Everything else passes as it is."""
    if isinstance(schema, list):
        return [openapi_to_json_schema(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "nullable":
            continue
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {name: openapi_to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"):
            out[key] = openapi_to_json_schema(value)
        else:
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def request_tools(request: Any) -> list[Tool] | None:
    """The tools a recorded request declared (a recording's or a HAR entry's
    ``request``, the proxy's flow), or None when its body declares no function tools.
    The body may still be bytes, as the proxy holds it."""
    body = declaring_body(request)
    if body is None:
        return None
    try:
        return read_tools(body)
    except ToolsError:
        return None
