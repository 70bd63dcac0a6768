"""`history check` holds a conversation's calls to the conversation's own tools."""

from __future__ import annotations

import json

from fraglens.cli import main
from fraglens.history import check_conversation

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city"],
}


def codes(doc) -> list[tuple[str, int, str]]:
    return [(p.code, p.position, p.message) for p in check_conversation(doc)]


def chat_body(*calls: tuple[str, str], tools: bool = True) -> dict:
    tool_calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": args}}
        for n, (name, args) in enumerate(calls)
    ]
    body: dict = {
        "model": "gpt-4.1",
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None, "tool_calls": tool_calls},
            *(
                {"role": "tool", "tool_call_id": f"call_{n}", "content": "sunny"}
                for n in range(len(calls))
            ),
        ],
    }
    if tools:
        body["tools"] = [
            {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
        ]
    return body


def test_chat_calls_that_fit_raise_nothing():
    assert codes(chat_body(("get_weather", '{"city": "Oslo", "unit": "c"}'))) == []


def test_chat_calls_are_held_to_their_tools_with_the_path_and_pointer():
    found = codes(
        chat_body(
            ("get_weather", '{"unit": "k"}'),
            ("get_forecast", '{"city": "Rome"}'),
        )
    )
    assert found == [
        (
            "arguments-schema",
            1,
            "messages[1].tool_calls[0] (get_weather) at (the whole value): "
            "'city' is a required property (required)",
        ),
        (
            "arguments-schema",
            1,
            "messages[1].tool_calls[0] (get_weather) at /unit: 'k' is not one of ['c', 'f'] (enum)",
        ),
        (
            "undeclared-tool",
            1,
            "messages[1].tool_calls[1] calls 'get_forecast', which no tool declares",
        ),
    ]


def test_a_conversation_without_tools_is_not_held_to_any():
    body = chat_body(("get_forecast", '{"unit": "k"}'), tools=False)
    assert codes(body) == []
    assert codes(body["messages"]) == []  # a bare messages array declares nothing


def test_arguments_that_are_not_json_are_reported_once_not_validated():
    found = [c for c, _, _ in codes(chat_body(("get_weather", '{"city": ')))]
    assert found == ["arguments-invalid-json"]


def test_anthropic_tool_use_input_is_checked_against_input_schema():
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "tools": [{"name": "get_weather", "input_schema": WEATHER}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": 3},
                    },
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}],
            },
        ],
    }
    assert codes(body) == [
        (
            "arguments-schema",
            1,
            "messages[1].content[0] (get_weather) at /city: 3 is not of type 'string' (type)",
        )
    ]


def test_responses_function_call_items_are_checked_against_flat_tools():
    body = {
        "model": "gpt-4.1",
        "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER}],
        "input": [
            {"role": "user", "content": "Weather?"},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "get_weather",
                "arguments": '{"city": "Oslo", "unit": "kelvin"}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
        ],
    }
    assert [(c, p) for c, p, _ in codes(body)] == [("arguments-schema", 1)]


def test_history_check_exits_1_and_lists_the_schema_problems(tmp_path, capsys):
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(chat_body(("get_weather", '{"unit": "c"}'))), encoding="utf-8")
    assert main(["history", "check", "--json", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [p["code"] for p in doc["problems"]] == ["arguments-schema"]
