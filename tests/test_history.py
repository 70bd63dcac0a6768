"""Tool-call history: building the messages that go back to the model, and
checking that a conversation's calls and results pair up.

Reports are hand-written ``check --json`` dicts; conversations are hand-written
in the three shapes. Every check rule has a failing and a passing example.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fraglens.history import (
    EXIT_UNREADABLE,
    PROBLEM_CODES,
    SHAPES,
    HistoryError,
    Problem,
    assistant_message,
    build_history,
    check_conversation,
    exit_code,
    format_problems,
    load_conversation,
    problems_json,
)

# -- report and conversation makers ----------------------------------------------


def call(
    position: int,
    name: str = "get_weather",
    status: str = "ok",
    arguments: Any = None,
    raw: str | None = None,
    id: str | None = "auto",
    choice: int = 0,
) -> dict[str, Any]:
    """One entry of a report's ``calls``, as ``check --json`` writes it."""
    if arguments is None and status in ("ok", "repaired"):
        arguments = {"city": "Paris"}
    if status == "empty":
        arguments, raw = {}, ""
    entry: dict[str, Any] = {
        "choice": choice,
        "index": position,
        "id": f"call_{position}" if id == "auto" else id,
        "name": name,
        "arguments_raw": raw if raw is not None else json.dumps(arguments),
        "status": status,
        "arguments": arguments,
        "repairs": [],
    }
    if entry["id"] is None:
        entry["synthetic_id"] = f"fraglens_{choice}_{position}"
    return entry


def report(*calls: dict[str, Any], text: str = "", fmt: str = "openai-chat") -> dict[str, Any]:
    return {"format": fmt, "text": {"0": text} if text else {}, "calls": list(calls)}


def tc(id: str, name: str = "f", arguments: Any = "{}") -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def asst(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": id, "content": "ok"}


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool_use(id: str, input: Any = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": "f", "input": {} if input is None else input}


def tool_result(id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id, "content": "ok"}


def text(t: str = "hi") -> dict[str, Any]:
    return {"type": "text", "text": t}


def fc(id: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"type": "function_call", "call_id": id, "name": "f", "arguments": arguments}


def fco(id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": id, "output": "ok"}


def codes(doc: Any) -> list[str]:
    return [p.code for p in check_conversation(doc)]


# -- check: one failing and one passing example per rule ---------------------------


def test_orphan_tool_result() -> None:
    problems = check_conversation([user(), tool("call_1")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("orphan-tool-result", "error", 1)
    ]
    assert "messages[1]" in problems[0].message


def test_orphan_tool_result_passes_after_calls() -> None:
    assert codes([user(), asst(tc("call_1")), tool("call_1")]) == []


def test_orphan_tool_result_after_an_interruption() -> None:
    # OpenAI: "messages with role 'tool' must be a response to a preceding
    # message with 'tool_calls'": a user message in between breaks the pairing
    problems = check_conversation([asst(tc("call_1")), user(), tool("call_1")])
    assert [p.code for p in problems] == [
        "tool-calls-not-followed-by-results",
        "orphan-tool-result",
    ]
    assert "of messages[0].tool_calls[0] (f, 'call_1'), but messages[1]" in problems[1].message


def test_orphan_tool_result_anthropic() -> None:
    doc = [user(), {"role": "user", "content": [tool_result("toolu_1")]}]
    assert codes(doc) == ["orphan-tool-result"]


def test_unknown_tool_call_id() -> None:
    problems = check_conversation([asst(tc("call_1")), tool("call_1"), tool("call_9")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("unknown-tool-call-id", "error", 2)
    ]


def test_unknown_tool_call_id_passes_with_declared_ids() -> None:
    assert codes([asst(tc("call_1"), tc("call_9")), tool("call_1"), tool("call_9")]) == []


def test_unknown_tool_call_id_for_a_call_of_an_earlier_turn() -> None:
    doc = [asst(tc("call_1")), user(), asst(tc("call_2")), tool("call_1"), tool("call_2")]
    problems = check_conversation(doc)
    assert [p.code for p in problems] == [
        "tool-calls-not-followed-by-results",
        "unknown-tool-call-id",
    ]
    assert "it is a call of messages[0].tool_calls[0]" in problems[1].message


def test_missing_tool_result() -> None:
    doc = [asst(tc("call_1"), tc("call_2")), tool("call_1"), user()]
    problems = check_conversation(doc)
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("missing-tool-result", "error", 0)
    ]
    assert problems[0].message.startswith("messages[0].tool_calls[1]")


def test_missing_tool_result_passes_when_every_call_is_answered() -> None:
    assert codes([asst(tc("call_1"), tc("call_2")), tool("call_1"), tool("call_2"), user()]) == []


def test_missing_tool_result_for_a_call_without_id() -> None:
    doc = [asst({"type": "function", "function": {"name": "f", "arguments": "{}"}}), user()]
    problems = check_conversation(doc)
    assert [p.code for p in problems] == ["tool-calls-not-followed-by-results"]
    assert "no id" in problems[0].message


def test_pending_tool_results() -> None:
    problems = check_conversation([user(), asst(tc("call_1"), tc("call_2")), tool("call_1")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("pending-tool-results", "warning", 1)
    ]
    assert "'call_2'" in problems[0].message


def test_pending_tool_results_passes_when_answered() -> None:
    assert codes([user(), asst(tc("call_1")), tool("call_1")]) == []


def test_duplicate_tool_result() -> None:
    problems = check_conversation([asst(tc("call_1")), tool("call_1"), tool("call_1")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("duplicate-tool-result", "error", 2)
    ]
    assert "messages[1] already did" in problems[0].message


def test_duplicate_tool_result_passes_with_one_result_per_call() -> None:
    assert codes([asst(tc("call_1")), tool("call_1")]) == []


def test_duplicate_tool_call_id() -> None:
    problems = check_conversation(
        [asst(tc("call_1"), tc("call_1")), tool("call_1"), tool("call_1")]
    )
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("duplicate-tool-call-id", "error", 0)
    ]


def test_duplicate_tool_call_id_across_turns() -> None:
    doc = [asst(tc("call_1")), tool("call_1"), asst(tc("call_1")), tool("call_1")]
    assert codes(doc) == ["duplicate-tool-call-id"]


def test_duplicate_tool_call_id_passes_with_unique_ids() -> None:
    doc = [asst(tc("call_1")), tool("call_1"), asst(tc("call_2")), tool("call_2")]
    assert codes(doc) == []


def test_tool_results_out_of_order() -> None:
    problems = check_conversation(
        [asst(tc("call_1"), tc("call_2")), tool("call_2"), tool("call_1")]
    )
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("tool-results-out-of-order", "warning", 2)
    ]


def test_tool_results_out_of_order_passes_in_declared_order() -> None:
    assert codes([asst(tc("call_1"), tc("call_2")), tool("call_1"), tool("call_2")]) == []


def test_arguments_not_string() -> None:
    problems = check_conversation([asst(tc("call_1", arguments={"a": 1})), tool("call_1")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("arguments-not-string", "error", 0)
    ]
    assert problems[0].message.startswith("messages[0].tool_calls[0].function.arguments")


def test_arguments_not_string_passes_with_a_string() -> None:
    assert codes([asst(tc("call_1", arguments='{"a":1}')), tool("call_1")]) == []


def test_arguments_not_string_when_missing() -> None:
    doc = [asst({"id": "call_1", "type": "function", "function": {"name": "f"}}), tool("call_1")]
    assert codes(doc) == ["arguments-not-string"]


def test_input_not_object() -> None:
    doc = [
        {"role": "assistant", "content": [tool_use("toolu_1", input='{"a": 1}')]},
        {"role": "user", "content": [tool_result("toolu_1")]},
    ]
    problems = check_conversation(doc)
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("input-not-object", "error", 0)
    ]
    assert "holds JSON text" in problems[0].message


def test_input_not_object_passes_with_an_object() -> None:
    doc = [
        {"role": "assistant", "content": [tool_use("toolu_1", input={"a": 1})]},
        {"role": "user", "content": [tool_result("toolu_1")]},
    ]
    assert codes(doc) == []


def test_arguments_invalid_json() -> None:
    problems = check_conversation([asst(tc("call_1", arguments='{"a": ')), tool("call_1")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("arguments-invalid-json", "error", 0)
    ]


def test_arguments_invalid_json_when_empty() -> None:
    assert codes([asst(tc("call_1", arguments="")), tool("call_1")]) == ["arguments-invalid-json"]


def test_arguments_invalid_json_rejects_nan() -> None:
    assert codes([asst(tc("call_1", arguments='{"a": NaN}')), tool("call_1")]) == [
        "arguments-invalid-json"
    ]


def test_arguments_invalid_json_passes_with_json() -> None:
    assert codes([asst(tc("call_1", arguments='{"a": [1, 2]}')), tool("call_1")]) == []


def test_arguments_invalid_json_responses() -> None:
    assert codes([fc("call_1", arguments="{'a': 1}"), fco("call_1")]) == ["arguments-invalid-json"]


def test_tool_calls_not_followed_by_results() -> None:
    problems = check_conversation([asst(tc("call_1")), user(), asst(content="done")])
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("tool-calls-not-followed-by-results", "error", 1)
    ]
    assert "messages[1] (user) follows the tool calls of messages[0]" in problems[0].message


def test_tool_calls_not_followed_by_results_passes_with_results_first() -> None:
    assert codes([asst(tc("call_1")), tool("call_1"), user(), asst(content="done")]) == []


def test_tool_calls_not_followed_by_results_anthropic_text_first() -> None:
    doc = [
        {"role": "assistant", "content": [text("let me look"), tool_use("toolu_1")]},
        {"role": "user", "content": [text("also this"), tool_result("toolu_1")]},
    ]
    problems = check_conversation(doc)
    assert [(p.code, p.position) for p in problems] == [("tool-calls-not-followed-by-results", 1)]
    assert "must come first" in problems[0].message


def test_tool_calls_not_followed_by_results_anthropic_passes_results_first() -> None:
    doc = [
        {"role": "assistant", "content": [text("let me look"), tool_use("toolu_1")]},
        {"role": "user", "content": [tool_result("toolu_1"), text("also this")]},
        {"role": "assistant", "content": "done"},
    ]
    assert codes(doc) == []


def test_tool_calls_not_followed_by_results_anthropic_later_message() -> None:
    doc = [
        {"role": "assistant", "content": [tool_use("toolu_1")]},
        {"role": "user", "content": "wait"},
        {"role": "user", "content": [tool_result("toolu_1")]},
    ]
    assert codes(doc) == ["tool-calls-not-followed-by-results", "orphan-tool-result"]


def test_tool_result_not_adjacent() -> None:
    doc = [user(), fc("call_1"), {"role": "user", "content": "hurry"}, fco("call_1")]
    problems = check_conversation(doc)
    assert [(p.code, p.severity, p.position) for p in problems] == [
        ("tool-result-not-adjacent", "warning", 3)
    ]
    assert problems[0].message.startswith("input[3] answers input[1]")


def test_tool_result_not_adjacent_passes_when_adjacent() -> None:
    assert codes([user(), fc("call_1"), fc("call_2"), fco("call_1"), fco("call_2")]) == []


# -- check: shapes and their particular rules ---------------------------------------


def test_anthropic_results_may_span_consecutive_user_messages() -> None:
    # the API merges consecutive user turns, so this is one message for it
    doc = [
        {"role": "assistant", "content": [tool_use("toolu_1"), tool_use("toolu_2")]},
        {"role": "user", "content": [tool_result("toolu_1")]},
        {"role": "user", "content": [tool_result("toolu_2")]},
    ]
    assert codes(doc) == []


def test_anthropic_server_tool_blocks_are_not_client_calls() -> None:
    doc = [
        user(),
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                text("found it"),
            ],
        },
        user(),
    ]
    assert codes(doc) == []


def test_responses_interleaved_calls_and_outputs() -> None:
    assert codes([user(), fc("call_1"), fco("call_1"), fc("call_2"), fco("call_2")]) == []


def test_responses_reasoning_before_calls_is_fine() -> None:
    doc = [user(), {"type": "reasoning", "summary": []}, fc("call_1"), fco("call_1")]
    assert codes(doc) == []


def test_responses_missing_output() -> None:
    doc = [user(), fc("call_1"), fc("call_2"), fco("call_1"), user("next")]
    problems = check_conversation(doc)
    assert [(p.code, p.position) for p in problems] == [("missing-tool-result", 2)]


def test_responses_pending_output() -> None:
    assert codes([user(), fc("call_1")]) == ["pending-tool-results"]


def test_responses_unknown_call_id() -> None:
    assert codes([user(), fc("call_1"), fco("call_1"), fco("call_7")]) == ["unknown-tool-call-id"]


def test_responses_orphan_output() -> None:
    assert codes([user(), fco("call_1")]) == ["orphan-tool-result"]


def test_responses_out_of_order() -> None:
    doc = [user(), fc("call_1"), fc("call_2"), fco("call_2"), fco("call_1")]
    assert codes(doc) == ["tool-results-out-of-order"]


def test_conversation_without_tools_is_clean() -> None:
    assert codes([{"role": "system", "content": "be brief"}, user(), asst_text()]) == []


def asst_text() -> dict[str, Any]:
    return {"role": "assistant", "content": "hello"}


# -- check: request bodies and garbage --------------------------------------------


def test_openai_request_body_is_accepted() -> None:
    body = {"model": "gpt-4o", "messages": [user(), asst(tc("call_1")), tool("call_1")]}
    assert check_conversation(body) == []


def test_anthropic_request_body_with_system_is_accepted() -> None:
    body = {
        "model": "claude",
        "system": "be brief",
        "messages": [
            user(),
            {"role": "assistant", "content": [tool_use("toolu_1")]},
            {"role": "user", "content": [tool_result("toolu_1")]},
        ],
    }
    assert check_conversation(body) == []


def test_responses_request_body_is_accepted() -> None:
    body = {"model": "gpt-4.1", "input": [user(), fc("call_1"), fco("call_1")]}
    assert check_conversation(body) == []


def test_responses_plain_string_input_is_clean() -> None:
    assert check_conversation({"model": "gpt-4.1", "input": "hello"}) == []


def test_problem_paths_name_the_input_array() -> None:
    problems = check_conversation({"input": [user(), fco("call_1")]})
    assert problems[0].message.startswith("input[1]")


@pytest.mark.parametrize(
    "doc",
    [
        42,
        "messages",
        None,
        {"messages": "not a list"},
        {"input": 3},
        {"model": "gpt-4o"},
        [user(), 7],
        [{"role": "model", "parts": []}],
        [{"content": "no role"}],
        [{"role": "assistant", "tool_calls": {"id": "x"}}],
        [{"role": "assistant", "tool_calls": ["x"]}],
        [{"role": "assistant", "tool_calls": [{"id": "x", "type": "function"}]}],
        [{"role": "user", "content": ["not a block"]}],
    ],
)
def test_garbage_raises_history_error(doc: Any) -> None:
    with pytest.raises(HistoryError):
        check_conversation(doc)


def test_load_conversation_rejects_non_json() -> None:
    with pytest.raises(HistoryError, match="not JSON"):
        load_conversation("{'messages': []}")
    assert load_conversation(b'{"messages": []}') == {"messages": []}


# -- check: output for people, JSON and the exit status -------------------------


def test_format_problems_lists_each_and_counts() -> None:
    problems = check_conversation(
        [asst(tc("call_1"), tc("call_2")), tool("call_2"), tool("call_1"), user(), tool("x")]
    )
    out = format_problems(problems)
    assert "tool-results-out-of-order" in out and "orphan-tool-result" in out
    assert out.splitlines()[-1] == "1 error, 1 warning"


def test_format_problems_when_clean() -> None:
    assert format_problems([]).startswith("no problems")


def test_problems_json() -> None:
    problems = check_conversation([user(), tool("call_1")])
    doc = problems_json(problems)
    assert doc["ok"] is False and doc["errors"] == 1 and doc["warnings"] == 0
    assert doc["problems"][0]["code"] == "orphan-tool-result"
    assert set(doc["problems"][0]) == {"code", "severity", "position", "message"}
    json.dumps(doc)
    assert problems_json([]) == {"ok": True, "errors": 0, "warnings": 0, "problems": []}


def test_exit_code() -> None:
    warning = Problem("tool-results-out-of-order", "warning", 0, "x")
    assert exit_code([]) == 0
    assert exit_code([warning]) == 1
    assert EXIT_UNREADABLE == 2


def test_problem_is_frozen() -> None:
    problem = Problem("orphan-tool-result", "error", 1, "x")
    with pytest.raises(AttributeError):
        problem.code = "other"  # type: ignore[misc]


def test_every_code_is_documented() -> None:
    notes = (Path(__file__).parent.parent / "docs" / "history.md").read_text()
    for code, (severity, _) in PROBLEM_CODES.items():
        assert f"`{code}` | {severity}" in notes, code


# -- build -------------------------------------------------------------------------


def test_build_openai_chat_message() -> None:
    rep = report(call(0, arguments={"city": "Zürich", "days": 2}), text="Checking.")
    out = build_history(rep)
    assert out["shape"] == "openai-chat"
    assert out["messages"] == [
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Zürich","days":2}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": ""},
    ]
    assert out["notes"] == []


def test_build_openai_chat_without_text_has_null_content() -> None:
    out = build_history(report(call(0)))
    assert out["messages"][0]["content"] is None


def test_build_empty_arguments_are_an_empty_object() -> None:
    out = build_history(report(call(0, status="empty")))
    assert out["messages"][0]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_build_anthropic_message() -> None:
    rep = report(call(0), call(1, name="get_time", status="empty"), text="Sure.", fmt="anthropic")
    out = build_history(rep)
    assert out["shape"] == "anthropic"
    assert out["messages"] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Sure."},
                {
                    "type": "tool_use",
                    "id": "call_0",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
                {"type": "tool_use", "id": "call_1", "name": "get_time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_0", "content": ""},
                {"type": "tool_result", "tool_use_id": "call_1", "content": ""},
            ],
        },
    ]


def test_build_responses_items() -> None:
    out = build_history(report(call(0), text="Sure.", fmt="openai-responses"))
    assert out["shape"] == "openai-responses"
    assert out["messages"] == [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sure."}],
        },
        {
            "type": "function_call",
            "call_id": "call_0",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_0", "output": ""},
    ]


@pytest.mark.parametrize(
    ("fmt", "shape"),
    [
        ("openai-chat", "openai-chat"),
        ("anthropic", "anthropic"),
        ("openai-responses", "openai-responses"),
        ("gemini", "openai-chat"),
        ("cohere", "openai-chat"),
        ("dashscope", "openai-chat"),
    ],
)
def test_build_default_shape_follows_the_format(fmt: str, shape: str) -> None:
    assert build_history(report(call(0), fmt=fmt))["shape"] == shape


def test_build_shape_can_be_forced() -> None:
    out = build_history(report(call(0), fmt="gemini"), shape="anthropic")
    assert out["messages"][0]["content"][0]["type"] == "tool_use"


def test_build_unknown_shape_raises() -> None:
    with pytest.raises(HistoryError, match="unknown shape"):
        build_history(report(call(0)), shape="gemini")


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {"format": "openai-chat"},
        {"calls": [1]},
        {"calls": [], "text": []},
        {"calls": [], "text": {"0": 5}},
    ],
)
def test_build_rejects_what_is_not_a_report(bad: Any) -> None:
    with pytest.raises(HistoryError):
        build_history(bad)


def test_build_leaves_broken_calls_out_and_says_so() -> None:
    rep = report(call(0), call(1, status="truncated", arguments={"q": "caf"}, raw='{"q": "caf'))
    out = build_history(rep)
    assert [t["id"] for t in out["messages"][0]["tool_calls"]] == ["call_0"]
    assert [m["tool_call_id"] for m in out["messages"][1:]] == ["call_0"]
    assert out["notes"] == [
        (
            "call 1 (get_weather, truncated) left out: its status is truncated; "
            "include broken calls to add it"
        )
    ]


def test_build_leaves_repaired_calls_out_by_default() -> None:
    out = build_history(report(call(0, status="repaired")))
    assert out["messages"] == []
    assert "call 0 (get_weather, repaired) left out" in out["notes"][0]


def test_build_include_broken_uses_raw_text_for_openai_chat() -> None:
    rep = report(call(0), call(1, status="truncated", arguments={"q": "caf"}, raw='{"q": "caf'))
    out = build_history(rep, include_broken=True)
    calls = out["messages"][0]["tool_calls"]
    assert calls[1]["function"]["arguments"] == '{"q": "caf'
    assert len(out["messages"]) == 3
    assert out["notes"] == [
        (
            "call 1 (get_weather, truncated): included although its arguments are not intact; "
            "arguments are the raw text as received"
        )
    ]


def test_build_include_broken_repaired_uses_the_repaired_value() -> None:
    rep = report(call(0, status="repaired", arguments={"a": 1}, raw="{'a': 1,}"))
    out = build_history(rep, include_broken=True)
    assert out["messages"][0]["tool_calls"][0]["function"]["arguments"] == '{"a":1}'
    assert out["notes"] == ["call 0 (get_weather, repaired): included with its repaired arguments"]


def test_build_include_broken_anthropic_input_is_the_best_effort_object() -> None:
    rep = report(call(0, status="truncated", arguments={"q": "caf"}, raw='{"q": "caf'))
    out = build_history(rep, shape="anthropic", include_broken=True)
    assert out["messages"][0]["content"][0]["input"] == {"q": "caf"}
    assert "best-effort value" in out["notes"][0]


def test_build_include_broken_anthropic_without_a_value_sends_empty_input() -> None:
    rep = report(call(0, status="invalid", arguments=None, raw="city=Paris"))
    rep["calls"][0]["arguments"] = None
    out = build_history(rep, shape="anthropic", include_broken=True)
    assert out["messages"][0]["content"][0]["input"] == {}
    assert "input set to {}" in out["notes"][0]


def test_build_call_without_name_is_broken() -> None:
    rep = report(call(0, name=""))
    assert build_history(rep)["messages"] == []
    out = build_history(rep, include_broken=True)
    assert out["messages"][0]["tool_calls"][0]["function"]["name"] == ""
    assert "included with an empty name" in out["notes"][0]


def test_build_uses_synthesized_ids_and_says_so() -> None:
    out = build_history(report(call(0, id=None)))
    assert out["messages"][0]["tool_calls"][0]["id"] == "fraglens_0_0"
    assert out["messages"][1]["tool_call_id"] == "fraglens_0_0"
    assert out["notes"] == [
        "call 0 (get_weather, ok): the stream sent no id; using the synthesized id 'fraglens_0_0'"
    ]


def test_build_renames_a_repeated_id() -> None:
    out = build_history(report(call(0, id="call_x"), call(1, id="call_x")))
    assert [t["id"] for t in out["messages"][0]["tool_calls"]] == ["call_x", "call_x_2"]
    assert "renamed 'call_x_2'" in out["notes"][0]


def test_build_picks_the_choice() -> None:
    rep = report(call(0, choice=0), call(1, choice=1, name="other"))
    rep["text"] = {"0": "zero", "1": "one"}
    out = build_history(rep, choice=1)
    assert out["messages"][0]["content"] == "one"
    assert [t["function"]["name"] for t in out["messages"][0]["tool_calls"]] == ["other"]


def test_build_text_only_has_no_tool_calls_key() -> None:
    out = build_history(report(text="Just text."))
    assert out["messages"] == [{"role": "assistant", "content": "Just text."}]


def test_build_nothing_to_send_back() -> None:
    out = build_history(report())
    assert out["messages"] == []
    assert out["notes"] == ["choice 0 has no text and no tool call to send back"]


def test_build_anthropic_drops_whitespace_only_text() -> None:
    out = build_history(report(call(0), text="\n\n", fmt="anthropic"))
    assert [b["type"] for b in out["messages"][0]["content"]] == ["tool_use"]
    assert "only whitespace" in out["notes"][0]


def test_assistant_message_is_just_the_assistant_turn() -> None:
    rep = report(call(0), text="Sure.")
    message = assistant_message(rep)
    assert message == build_history(rep)["messages"][0]
    assert isinstance(assistant_message(rep, shape="anthropic"), dict)


def test_assistant_message_for_responses_is_a_list_of_items() -> None:
    items = assistant_message(report(call(0), text="Sure."), shape="openai-responses")
    assert isinstance(items, list)
    assert [i["type"] for i in items] == ["message", "function_call"]


def test_assistant_message_none_when_nothing_to_send() -> None:
    assert assistant_message(report()) is None


# -- round trip: whatever build_history makes, check_conversation accepts ---------

REPORTS = {
    "ok": report(call(0), call(1, name="get_time", arguments={"tz": "UTC"})),
    "ok-with-text": report(call(0), text="Let me check."),
    "empty": report(call(0, status="empty"), text="Checking."),
    "synthesized-ids": report(call(0, id=None), call(1, id=None, status="empty")),
    "repeated-ids": report(call(0, id="call_x"), call(1, id="call_x")),
    "mixed-with-broken-left-out": report(
        call(0), call(1, status="truncated", raw='{"q": "caf', arguments={"q": "caf"})
    ),
    "text-only": report(text="No tools needed."),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(REPORTS))
def test_round_trip(shape: str, name: str) -> None:
    messages = build_history(REPORTS[name], shape=shape)["messages"]
    assert messages
    assert check_conversation([user(), *messages]) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip_include_broken_repaired(shape: str) -> None:
    rep = report(call(0), call(1, status="repaired", arguments={"a": 1}, raw="{'a': 1}"), text="ok")
    messages = build_history(rep, shape=shape, include_broken=True)["messages"]
    assert check_conversation([user(), *messages]) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip_include_broken_truncated(shape: str) -> None:
    # the raw text of a cut-off call goes back as it came (a string shape has
    # nowhere else to put it); the check then names exactly that call, nothing else
    rep = report(call(0), call(1, status="truncated", arguments={"q": "caf"}, raw='{"q": "caf'))
    messages = build_history(rep, shape=shape, include_broken=True)["messages"]
    problems = check_conversation([user(), *messages])
    if shape == "anthropic":
        assert problems == []
    else:
        assert [p.code for p in problems] == ["arguments-invalid-json"]
        assert ("tool_calls[1]" if shape == "openai-chat" else "input[2]") in problems[0].message


# -- round trip as a property -----------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def reports(draw: st.DrawFn) -> dict[str, Any]:
    calls = []
    for position in range(draw(st.integers(0, 4))):
        status = draw(
            st.sampled_from(["ok", "empty", "repaired", "truncated", "invalid", "aborted"])
        )
        arguments = draw(st.dictionaries(st.text(max_size=5), json_values, max_size=3))
        raw = json.dumps(arguments)
        if status in ("truncated", "invalid", "aborted"):
            raw = raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
            arguments = draw(st.none() | st.just(arguments))
        calls.append(
            call(
                position,
                name=draw(st.sampled_from(["get_weather", "search", ""])),
                status=status,
                arguments=arguments,
                raw=raw,
                id=draw(st.sampled_from(["auto", None, "call_same"])),
                choice=draw(st.sampled_from([0, 0, 1])),
            )
        )
    rep = report(*calls, text=draw(st.sampled_from(["", "Sure.", " "])))
    return rep


@given(rep=reports(), shape=st.sampled_from(SHAPES), include_broken=st.booleans())
def test_round_trip_property(rep: dict[str, Any], shape: str, include_broken: bool) -> None:
    out = build_history(rep, shape=shape, include_broken=include_broken)
    problems = check_conversation([user(), *out["messages"]])
    # the only thing check may find is raw broken text that went back as it came
    assert {p.code for p in problems} <= {"arguments-invalid-json"}
    if problems:
        assert include_broken and shape != "anthropic"


def test_build_anthropic_non_object_arguments_become_empty_input() -> None:
    out = build_history(report(call(0, arguments=["a", "b"])), shape="anthropic")
    assert out["messages"][0]["content"][0]["input"] == {}
    assert out["notes"] == [
        "call 0 (get_weather, ok): the arguments are an array, not an object; input set to {}"
    ]
