"""``fraglens diff``: a provider capture against the AG-UI stream an agent made of it."""

from __future__ import annotations

import json

import pytest
from ag_ui.core import (
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from fraglens.cli import main
from fraglens.report.diff import ADDED, REMOVED, diff_doc, value_changes

from .conftest import SAMPLES

PROVIDER = SAMPLES / "seed_interleaved_two_calls.sse"


def _chunks(sse: str) -> list[dict]:
    return [
        json.loads(line[6:])
        for line in sse.splitlines()
        if line.startswith("data: {")
    ]


def agui_from_openai(sse: str) -> str:
    """What an agent framework sends its UI for an OpenAI chat stream: each
    call's START when its id arrives, an ARGS per argument piece (interleaved
    as the provider interleaved them), every END at the finish."""
    enc = EventEncoder()
    out = [RunStartedEvent(thread_id="t1", run_id="r1")]
    ids: dict[int, str] = {}
    for chunk in _chunks(sse):
        for choice in chunk.get("choices", []):
            delta = choice.get("delta") or {}
            for entry in delta.get("tool_calls") or []:
                fn = entry.get("function") or {}
                if entry.get("id"):
                    ids[entry["index"]] = entry["id"]
                    out.append(ToolCallStartEvent(tool_call_id=entry["id"],
                                                  tool_call_name=fn["name"]))
                if fn.get("arguments"):
                    out.append(ToolCallArgsEvent(tool_call_id=ids[entry["index"]],
                                                 delta=fn["arguments"]))
            if choice.get("finish_reason"):
                out.extend(ToolCallEndEvent(tool_call_id=cid) for cid in ids.values())
    out.append(RunFinishedEvent(thread_id="t1", run_id="r1"))
    return "".join(enc.encode(e) for e in out)


def _upstream_change(provider: str) -> str:
    """The capture with the piece that starts call 1's city ("上") made "北":
    its value reads 北海 instead of 上海."""
    piece = 'ty\\":\\"上"'
    assert provider.count(piece) == 1
    return provider.replace(piece, 'ty\\":\\"北"')


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_provider_capture_and_the_agui_stream_built_from_it_are_the_same(tmp_path, capsys):
    agui = tmp_path / "agui.sse"
    agui.write_text(agui_from_openai(PROVIDER.read_text(encoding="utf-8")), encoding="utf-8")
    code, out, _ = _run(capsys, "--json", str(PROVIDER), str(agui))
    doc = json.loads(out)
    assert code == 0
    assert doc["a"]["format"] == "openai-chat" and doc["b"]["format"] == "ag-ui"
    assert doc["same"] is True
    assert [(c["id"], c["matched_by"], c["differs"]) for c in doc["calls"]] == [
        ("call_a1", "id", []), ("call_b2", "id", []),
    ]


def test_one_argument_changed_upstream_of_the_ui_is_named_by_call_and_key(tmp_path, capsys):
    provider = PROVIDER.read_text(encoding="utf-8")
    agui = tmp_path / "agui.sse"
    agui.write_text(agui_from_openai(provider), encoding="utf-8")
    # upstream of the UI, the second call's city is one character other
    changed = tmp_path / "changed.sse"
    changed.write_text(_upstream_change(provider), encoding="utf-8")
    code, out, _ = _run(capsys, "--json", str(changed), str(agui))
    doc = json.loads(out)
    assert code == 1
    assert doc["same"] is False
    differing = [c for c in doc["calls"] if c["differs"]]
    assert [(c["id"], c["differs"]) for c in differing] == [("call_b2", ["arguments"])]
    assert differing[0]["changes"] == [
        {"path": "/city", "change": "changed", "a": "北海", "b": "上海"}
    ]
    code, text, _ = _run(capsys, str(changed), str(agui))
    assert code == 1
    assert "call_b2" in text and '/city: "北海" -> "上海"' in text


def test_a_missing_call_and_a_different_verdict_are_reported(tmp_path, capsys):
    a = SAMPLES / "native_ag_ui_args_misrouted.sse"
    b = tmp_path / "b.sse"
    # B: call A alone, with its own arguments only
    b.write_text(
        "".join(
            EventEncoder().encode(e)
            for e in (
                RunStartedEvent(thread_id="t", run_id="r"),
                ToolCallStartEvent(tool_call_id="call_A", tool_call_name="get_weather"),
                ToolCallArgsEvent(tool_call_id="call_A", delta='{"city": "Paris"}'),
                ToolCallEndEvent(tool_call_id="call_A"),
                RunFinishedEvent(thread_id="t", run_id="r"),
            )
        ),
        encoding="utf-8",
    )
    code, out, _ = _run(capsys, "--json", str(a), str(b))
    doc = json.loads(out)
    assert code == 1
    (pair,) = doc["calls"]
    assert pair["id"] == "call_A"
    # A holds two glued values (no value): compared as text, and its verdict differs
    assert pair["differs"] == ["arguments", "verdict"]
    assert pair["status"] == {"a": "invalid", "b": "ok"}
    assert [c["id"] for c in doc["missing_in_b"]] == ["call_B"]
    assert doc["extra_in_b"] == []


def test_an_unreadable_capture_exits_2_in_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.sse"
    empty.write_text("", encoding="utf-8")
    code, out, err = _run(capsys, str(PROVIDER), str(empty))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "empty.sse" in err
    code, _, err = _run(capsys, str(PROVIDER), str(tmp_path / "nope.sse"))
    assert code == 2 and "nope.sse" in err


def _call(position, id, name, args, status="ok"):
    return {"position": position, "id": id, "name": name, "arguments": args,
            "arguments_raw": json.dumps(args), "status": status}


def test_calls_match_by_id_then_by_order_among_the_same_name_then_by_order():
    a = {"calls": [_call(0, "x1", "search", {"q": 1}), _call(1, "x2", "fetch", {"u": 1}),
                   _call(2, "x3", "old_name", {"k": 1})]}
    # B renamed every id, put fetch first, and renamed the third tool
    b = {"calls": [_call(0, "y2", "fetch", {"u": 1}), _call(1, "y1", "search", {"q": 1}),
                   _call(2, "y3", "new_name", {"k": 1})]}
    doc = diff_doc("a", a, "b", b)
    assert [(c["a"], c["b"], c["matched_by"], c["differs"]) for c in doc["calls"]] == [
        (0, 1, "order", []), (1, 0, "order", []), (2, 2, "order", ["name"]),
    ]
    assert doc["same"] is False  # a name changed


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ({"a": 1}, {"a": 1.0}, []),
        ({"a": 1}, {"a": True}, [("/a", "changed")]),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1]}}, [("/a/b/1", "removed")]),
        ({"x/y": 1}, {"x/y": 1, "n": None}, [("/n", "added")]),
        ([1], {"a": 1}, [("/", "changed")]),
    ],
)
def test_value_changes_name_each_key_path(a, b, want):
    assert [(c["path"], c["change"]) for c in value_changes(a, b)] == want


async def test_the_app_shows_both_captures_with_the_difference_marked(tmp_path):
    from textual.widgets import Static

    from fraglens.app.screens.diff import DiffApp, DiffScreen
    from fraglens.app.widgets.stream_list import StreamList
    from fraglens.cli.diff import read
    from fraglens.engine.reassembler import DEFAULT_MAX_ARG_BYTES

    provider = PROVIDER.read_text(encoding="utf-8")
    agui = tmp_path / "agui.sse"
    agui.write_text(agui_from_openai(provider), encoding="utf-8")
    changed = tmp_path / "changed.sse"
    changed.write_text(_upstream_change(provider), encoding="utf-8")
    a_stream, a_doc = read(str(changed), None, DEFAULT_MAX_ARG_BYTES)
    b_stream, b_doc = read(str(agui), None, DEFAULT_MAX_ARG_BYTES)
    doc = diff_doc(str(changed), a_doc, str(agui), b_doc)
    app = DiffApp(doc, (str(changed), a_stream, a_doc), (str(agui), b_stream, b_doc))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.query_one("#diff-A").query_one(Static)
        left, right = (group.renderables for group in app.screen.sides)
        shown_left = "\n".join(t.plain for t in left)
        shown_right = "\n".join(t.plain for t in right)
        assert "= #0 get_weather" in shown_left and "= #0 get_weather" in shown_right
        assert "≠ #1 get_weather" in shown_left and "≠ #1 get_weather" in shown_right
        assert '/city: "北海" -> "上海"' in shown_left
        # the one character that differs is marked on each side, nothing else
        marked_a = [t.plain[s.start:s.end] for t in left for s in t.spans if s.style == REMOVED]
        marked_b = [t.plain[s.start:s.end] for t in right for s in t.spans if s.style == ADDED]
        assert (marked_a, marked_b) == (["北"], ["上"])
        await pilot.press("b")  # B in the three panes
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)
        assert app.stream is b_stream and app.query_one(StreamList)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)


def test_long_arguments_are_named_by_key_path_not_printed_whole(tmp_path, capsys):
    def capture(city: str) -> str:
        events = [
            RunStartedEvent(thread_id="t", run_id="r"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="write_file"),
            ToolCallArgsEvent(tool_call_id="c1",
                              delta=json.dumps({"city": city, "body": "x" * 10_000})),
            ToolCallEndEvent(tool_call_id="c1"),
            RunFinishedEvent(thread_id="t", run_id="r"),
        ]
        return "".join(EventEncoder().encode(e) for e in events)

    a, b = tmp_path / "a.sse", tmp_path / "b.sse"
    a.write_text(capture("Oslo"), encoding="utf-8")
    b.write_text(capture("Bergen"), encoding="utf-8")
    code, out, _ = _run(capsys, str(a), str(b))
    assert code == 1
    assert '/city: "Oslo" -> "Bergen"' in out
    assert "x" * 100 not in out and "(both in --json)" in out
