"""Do the calls fit their tools: reading tool declarations in every shape, and the checks."""

from __future__ import annotations

import json

import pytest

from fraglens.fit.schema import MAX_ERRORS, pointer
from fraglens.fit.tools import Tool, ToolsError, read_tools, request_tools
from fraglens.fit.verdicts import check_fit
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report, exit_code

from .conftest import SAMPLES
from .test_live_streams import _chat, _tool

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city"],
}


# -- reading the declarations ----------------------------------------------------------


def names(tools: list[Tool]) -> list[tuple[str, bool]]:
    return [(t.name, t.strict) for t in tools]


def test_openai_chat_tools_as_a_list_and_inside_a_request_body():
    chat = [
        {"type": "function", "function": {"name": "a", "parameters": WEATHER, "strict": True}},
        {"type": "function", "function": {"name": "b"}},
    ]
    for value in (chat, {"model": "m", "messages": [], "tools": chat}):
        tools = read_tools(value)
        assert names(tools) == [("a", True), ("b", False)]
        assert tools[0].schema == WEATHER
        assert tools[1].schema == {"type": "object", "properties": {}}  # no parameters


def test_responses_tools_are_flat_and_hosted_tools_are_left_out():
    tools = read_tools(
        [
            {"type": "function", "name": "a", "parameters": WEATHER, "strict": True},
            {"type": "web_search"},
            {"type": "code_interpreter", "container": {"type": "auto"}},
        ]
    )
    assert names(tools) == [("a", True)]


def test_anthropic_tools_with_input_schema_and_strict():
    tools = read_tools({"tools": [{"name": "a", "input_schema": WEATHER, "strict": True}]})
    assert names(tools) == [("a", True)]
    assert tools[0].schema == WEATHER


def test_a_custom_tool_declares_no_json_schema():
    tools = read_tools([{"type": "custom", "name": "apply_patch", "description": "a diff"}])
    assert tools == [Tool("apply_patch", None, False, "a diff")]


def test_gemini_declarations_in_every_spelling_and_openapi_types_become_json_schema():
    declaration = {
        "name": "a",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "city": {"type": "STRING", "nullable": True},
                "days": {"type": "ARRAY", "items": {"type": "INTEGER"}},
            },
            "required": ["city"],
        },
    }
    expected = {
        "type": "object",
        "properties": {
            "city": {"type": ["string", "null"]},
            "days": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["city"],
    }
    for value in (
        {"functionDeclarations": [declaration]},
        [{"functionDeclarations": [declaration]}],
        {"contents": [], "tools": [{"function_declarations": [declaration]}]},
    ):
        tools = read_tools(value)
        assert names(tools) == [("a", False)]
        assert tools[0].schema == expected


def test_gemini_parameters_json_schema_is_taken_as_it_is():
    tools = read_tools({"functionDeclarations": [{"name": "a", "parametersJsonSchema": WEATHER}]})
    assert tools[0].schema == WEATHER


def test_gemini_validated_mode_is_a_strict_promise_for_every_function():
    body = {
        "tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}},
    }
    assert names(read_tools(body)) == [("a", True), ("b", True)]
    body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY"}}
    assert names(read_tools(body)) == [("a", False), ("b", False)]


def test_an_empty_list_declares_no_tools():
    assert read_tools([]) == []


@pytest.mark.parametrize(
    "value, reason",
    [
        ({"model": "m", "messages": []}, 'no "tools" list'),
        ("tools", "expected a list of tools"),
        ([{"type": "web_search"}, 3], "none of the 2 tool entries declares a function"),
    ],
)
def test_values_that_declare_no_function_are_refused_with_a_reason(value, reason):
    with pytest.raises(ToolsError, match=reason):
        read_tools(value)


def test_a_recorded_request_gives_its_tools_or_none():
    chat = [{"type": "function", "function": {"name": "a"}}]
    assert names(request_tools({"body": {"tools": chat}})) == [("a", False)]
    assert request_tools({"body": {"messages": []}}) is None  # a tool-less request
    assert request_tools({"body": "not json"}) is None
    assert request_tools(None) is None


# -- the checks ----------------------------------------------------------------------------


def stream_of(*calls: tuple[str, list[str]], finish: str = "tool_calls"):
    body = _chat({"role": "assistant"})
    for n, (name, pieces) in enumerate(calls):
        body += _chat(_tool(n, "", f"call_{n}", name))
        body += "".join(_chat(_tool(n, piece)) for piece in pieces)
    body += _chat({}, finish=finish) + "data: [DONE]\n\n"
    stream, _ = stream_from_bytes(body.encode())
    return stream


def test_json_pointers_escape_tilde_and_slash():
    assert pointer([]) == ""
    assert pointer(["a/b", 0, "m~n"]) == "/a~1b/0/m~0n"


def test_a_call_that_fits_is_checked_with_no_errors_and_raises_nothing():
    stream = stream_of(("weather", ['{"city": ', '"Paris"}']))
    fit = check_fit(stream, [Tool("weather", WEATHER)])
    verdict = fit.calls[0]
    assert verdict.checked and verdict.fits and verdict.tool == "weather"
    assert fit.diagnostics == []


def test_every_error_is_listed_with_its_pointer_and_rule():
    stream = stream_of(("weather", ['{"city": 3, "unit": "k"}']))
    verdict = check_fit(stream, [Tool("weather", WEATHER)]).calls[0]
    assert [(e.pointer, e.rule, e.schema_path) for e in verdict.errors] == [
        ("/city", "type", "/properties/city/type"),
        ("/unit", "enum", "/properties/unit/enum"),
    ]


def test_a_repaired_call_is_checked_on_its_repaired_value():
    stream = stream_of(("weather", ['{"unit": "c",}']))
    assert stream.reassembler.calls[0].result.status == "repaired"
    verdict = check_fit(stream, [Tool("weather", WEATHER)]).calls[0]
    assert verdict.checked
    assert [e.rule for e in verdict.errors] == ["required"]


def test_a_call_whose_arguments_did_not_parse_is_not_checked():
    stream = stream_of(("weather", ['{"city": "Par']), finish="length")
    fit = check_fit(stream, [Tool("weather", WEATHER)])
    assert not fit.calls[0].checked
    assert fit.calls[0].reason == "arguments not parsed (truncated)"
    assert fit.diagnostics == []  # its status already says why


def test_an_undeclared_name_is_an_error_on_that_call_even_if_the_arguments_are_broken():
    stream = stream_of(("weather", ['{"city": "Paris"}']), ("nope", ['{"a": ']), finish="length")
    fit = check_fit(stream, [Tool("weather", WEATHER)])
    assert [(d.code, d.call, d.severity) for d in fit.diagnostics] == [
        ("tool-undeclared", 1, "error")
    ]


def test_a_broken_strict_tool_says_the_promise_was_broken_once_per_call():
    stream = stream_of(("weather", ['{"city": 1, "unit": "k"}']))
    fit = check_fit(stream, [Tool("weather", WEATHER, strict=True)])
    codes = [d.code for d in fit.diagnostics]
    assert codes == ["args-schema", "args-schema", "strict-broken"]
    assert "2 schema errors" in fit.diagnostics[-1].message


def test_a_tool_with_an_invalid_schema_leaves_its_calls_unchecked_and_says_so():
    stream = stream_of(("weather", ['{"city": "Paris"}']))
    fit = check_fit(stream, [Tool("weather", {"type": "dict"})])
    assert not fit.calls[0].checked
    assert fit.calls[0].reason.startswith("the tool's schema is not valid JSON Schema")
    assert [(d.code, d.severity) for d in fit.diagnostics] == [("tool-schema-invalid", "warning")]


def test_a_free_form_tool_is_matched_but_not_checked():
    stream = stream_of(("patch", ['{"diff": "x"}']))
    verdict = check_fit(stream, [Tool("patch", None)]).calls[0]
    assert verdict.tool == "patch" and not verdict.checked
    assert "no JSON Schema" in verdict.reason


def test_errors_past_the_limit_are_counted_not_kept():
    items = json.dumps({"ids": ["x"] * (MAX_ERRORS + 7)})
    schema = {"type": "object", "properties": {"ids": {"items": {"type": "integer"}}}}
    stream = stream_of(("f", [items]))
    fit = check_fit(stream, [Tool("f", schema)])
    assert len(fit.calls[0].errors) == MAX_ERRORS
    assert fit.calls[0].more_errors == 7
    assert fit.diagnostics[-1].message == "f: 7 more errors"


def test_the_report_carries_the_fit_per_call_and_its_errors_fail_the_exit_code():
    stream = stream_of(("weather", ['{"city": "Paris"}']), ("weather", ['{"unit": "c"}']))
    plain = build_report(stream)
    assert "tools" not in plain and all("fit" not in c for c in plain["calls"])
    assert exit_code(plain) == 0
    doc = build_report(
        stream, fit=check_fit(stream, read_tools([{"name": "weather", "input_schema": WEATHER}]))
    )
    assert doc["tools"] == ["weather"]
    assert doc["calls"][0]["fit"] == {"checked": True, "tool": "weather", "errors": []}
    assert doc["calls"][1]["fit"]["errors"][0]["rule"] == "required"
    assert [d["call"] for d in doc["diagnostics"] if d["code"] == "args-schema"] == [1]
    assert exit_code(doc) == 1


def test_fit_samples_without_their_tools_check_nothing_and_raise_nothing():
    """The tool-less reading of every fit sample: no declaration, no verdict."""
    for path in sorted(SAMPLES.glob("fit_*.sse")):
        stream, _ = stream_from_bytes(path.read_bytes())
        doc = build_report(stream)
        codes = {d["code"] for d in doc["diagnostics"]}
        assert not codes & {"args-schema", "strict-broken", "tool-undeclared"}, path.name
        assert all("fit" not in c for c in doc["calls"])


def test_an_undeclared_name_that_came_late_is_reported_where_it_came():
    opened = {"index": 0, "id": "call_0", "type": "function", "function": {"arguments": '{"a": '}}
    named = {"index": 0, "function": {"name": "nope", "arguments": "1}"}}
    body = _chat({"tool_calls": [opened]}) + _chat({"tool_calls": [named]})
    body += _chat({}, finish="tool_calls") + "data: [DONE]\n\n"
    stream, _ = stream_from_bytes(body.encode())
    assert "name-late" in {d.code for d in stream.reassembler.diagnostics()}
    (found,) = check_fit(stream, [Tool("weather", WEATHER)]).diagnostics
    assert (found.code, found.event) == ("tool-undeclared", 1)


def test_an_invalid_schema_is_flagged_on_the_verdict_not_read_from_its_words():
    stream = stream_of(("weather", ['{"city": "Paris"}']))
    verdict = check_fit(stream, [Tool("weather", {"required": "city"})]).calls[0]
    assert verdict.schema_invalid and not verdict.checked
    free = check_fit(stream, [Tool("weather", None)]).calls[0]
    assert not free.schema_invalid


@pytest.mark.parametrize(
    "schema",
    [{"$ref": "https://example.com/x.json"}, {"properties": {"a": {"$ref": "#/$defs/no"}}}],
)
def test_a_ref_that_does_not_resolve_leaves_the_call_unchecked_and_fetches_nothing(schema):
    stream = stream_of(("weather", ['{"a": 1}']))
    fit = check_fit(stream, [Tool("weather", schema)])
    verdict = fit.calls[0]
    assert not verdict.checked and verdict.code == "schema-ref-unresolved"
    assert "not resolved" in verdict.reason
    assert [d.code for d in fit.diagnostics] == ["schema-ref-unresolved"]


def test_a_ref_inside_the_schema_is_followed():
    schema = {
        "$defs": {"city": {"type": "string"}},
        "properties": {"city": {"$ref": "#/$defs/city"}},
    }
    stream = stream_of(("weather", ['{"city": 3}']))
    (error,) = check_fit(stream, [Tool("weather", schema)]).calls[0].errors
    assert (error.pointer, error.rule) == ("/city", "type")
