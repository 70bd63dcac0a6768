"""Tool calls that leaked into the text, and calls a provider refused: each
markup family read back into the call the model meant, judged like a real
call, listed under ``leaked`` and never counted as a call."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.cli import main
from fraglens.engine import Reassembler, StreamError, TextDelta, leaks
from fraglens.engine.fragments import Finish
from fraglens.engine.leaks import FAMILIES, MAX_LEAKED, OPENER_CHARS, judge, scan
from fraglens.reading.capture import load_stream
from fraglens.report.document import build_report
from fraglens.report.text import leaked_lines

from .conftest import SAMPLES, examples

DS = {"calls": "<｜tool▁calls▁begin｜>", "call": "<｜tool▁call▁begin｜>", "sep": "<｜tool▁sep｜>",
      "end": "<｜tool▁call▁end｜>", "calls_end": "<｜tool▁calls▁end｜>"}


def read(text: str) -> list[tuple[str | None, str | None, str, object]]:
    """(family, name, status, value) of each call read out of ``text``."""
    _, pieces = scan(text)
    out = []
    for piece in pieces:
        found = judge(piece, "text", 0, 0)
        out.append((piece.family, piece.name, found.result.status, found.result.arguments))
    return out


def stream_of(*pieces: str, finish: str = "stop") -> Reassembler:
    r = Reassembler()
    for event, piece in enumerate(pieces):
        r.apply(event, [TextDelta(0, piece)])
    r.apply(len(pieces), [Finish(0, finish, finish)])
    r.close(len(pieces))
    return r


def test_deepseek_v3_with_fullwidth_bars_and_a_json_fence_is_read():
    text = (f"{DS['calls']}{DS['call']}function{DS['sep']}get_weather\n```json\n"
            f'{{"location": "Beijing"}}\n```{DS["end"]}{DS["calls_end"]}')
    assert read(text) == [("deepseek_v3", "get_weather", "ok", {"location": "Beijing"})]


def test_deepseek_v31_without_type_and_fence_is_read():
    text = (f'{DS["calls"]}{DS["call"]}get_time{DS["sep"]}{{"tz": "UTC"}}'
            f'{DS["end"]}{DS["calls_end"]}')
    assert read(text) == [("deepseek_v31", "get_time", "ok", {"tz": "UTC"})]


def test_deepseek_cut_inside_its_arguments_is_truncated_never_repaired():
    text = f'{DS["calls"]}{DS["call"]}get_time{DS["sep"]}{{"tz": "UT'
    assert read(text) == [("deepseek_v31", "get_time", "truncated", {"tz": "UT"})]


@pytest.mark.parametrize("text", [
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
    '<|message|>{"city": "Oslo"}<|call|>',
    '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>'
    '{"city": "Oslo"}<|call|>',
    # the closing token is a special one, often dropped: whole JSON is still whole
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}',
])
def test_harmony_is_read_with_the_recipient_in_either_place(text):
    assert read(text) == [("harmony", "get_weather", "ok", {"city": "Oslo"})]


def test_prose_that_mentions_to_functions_is_no_call():
    assert scan("send it to=functions.x later, no message follows") == ([], [])


def test_a_bare_mention_of_a_tag_in_prose_is_not_flagged():
    assert scan("Wrap each call in a <tool_call> tag, then wait.") == ([], [])


def test_a_json_answer_with_a_name_is_no_call_but_one_with_parameters_is():
    assert read('{"name": "Ada", "born": 1815}') == []
    assert read('{"name": "f", "parameters": {"x": 1}}') == [("llama3_json", "f", "ok", {"x": 1})]
    # only the start of the text counts: a JSON object later in prose is not a call
    assert read('Example: {"name": "f", "parameters": {"x": 1}}') == []


def test_damaged_arguments_get_the_engines_own_verdicts():
    repaired = read('<tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>')
    assert repaired == [("hermes", "f", "repaired", {"a": 1})]
    invalid = read("<function=f>a=1, b=2</function>")
    assert invalid == [("llama_function", "f", "invalid", None)]


def test_xml_pairs_keep_json_types_and_strings():
    text = ("<tool_call>\n<function=run>\n<parameter=cmd>\nls -la\n</parameter>\n"
            "<parameter=timeout>\n30\n</parameter>\n</function>\n</tool_call>")
    assert read(text) == [("qwen3_coder", "run", "ok", {"cmd": "ls -la", "timeout": 30})]


def test_xml_pairs_cut_off_are_truncated_with_the_pairs_so_far():
    text = "<tool_call>f\n<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>b</arg_key><arg_va"
    assert read(text) == [("glm45", "f", "truncated", {"a": 1})]


def test_every_family_has_an_opener_a_shape_and_a_fix():
    for family in FAMILIES:
        assert family.shape and family.fix, family.key
    reachable = {o for f in FAMILIES for o in f.opens}
    assert "<｜tool▁calls▁begin｜>" in reachable and "to=functions." in reachable


def test_a_text_without_the_openers_characters_holds_no_opener():
    """The scan skips text holding none of OPENER_CHARS: each opener of
    running text holds one, so no such text can hold an opener."""
    for family in FAMILIES:
        if not family.at_start:
            for opener in family.opens:
                assert any(c in opener for c in OPENER_CHARS), opener
    assert scan("prose " * 1000) == ([], [])
    assert scan("[TOOL_CALLS]f[ARGS]{}")[1]


@settings(max_examples=examples(300), deadline=None)
@given(text=st.lists(st.sampled_from(
    [o for f in FAMILIES for o in f.opens] + ["ab", " ", "<", "[", "=", "✿", "{", '"name": "f"',
                                             '{"a": 1}', "</tool_call>", "\n"]),
    max_size=8).map("".join))
def test_the_skip_finds_what_the_search_finds(text):
    assert scan(text) == _scanned_whole(text)


def _scanned_whole(text: str):
    """What scan finds with the search run whatever the text holds."""
    saved = leaks.OPENER_CHARS
    leaks.OPENER_CHARS = text[:1]  # a character the text holds: never skipped
    try:
        return scan(text)
    finally:
        leaks.OPENER_CHARS = saved


def test_calls_read_from_one_text_are_capped():
    text = "".join(f'[TOOL_CALLS]f{k}[ARGS]{{"k": {k}}}' for k in range(MAX_LEAKED + 10))
    marks, pieces = scan(text)
    assert len(pieces) == MAX_LEAKED and len(marks) == MAX_LEAKED
    # openers that hold no call are capped too: what a scan keeps is bounded
    marks, pieces = scan("<tool_call>{}</tool_call>" * (MAX_LEAKED * 100))
    assert len(marks) == MAX_LEAKED and pieces == []


def test_the_engine_lists_leaked_calls_and_makes_none():
    r = stream_of("I'll check. ", DS["calls"], DS["call"], "get_weather", DS["sep"],
                  '{"city": ', '"Paris"}', DS["end"], DS["calls_end"])
    assert r.calls == []
    [found] = r.leaked
    assert (found.piece.name, found.result.status, found.choice) == ("get_weather", "ok", 0)
    # offset: where the call's markup begins in the text; event: the one that carried it
    assert found.piece.start == len("I'll check. ") + len(DS["calls"]) and found.event == 2
    [diag] = [d for d in r.diagnostics() if d.code == "tool-markup-in-content"]
    assert "deepseek_v31" in diag.message and diag.event == 1  # where the opener completed


def test_groq_failed_generation_is_read_beside_the_error():
    r = Reassembler()
    r.apply(0, [StreamError("Failed to call a function.",
                            '{"name": "read_file", "arguments": {"path": "a.py"}}')])
    r.close(0)
    [found] = r.leaked
    assert (found.source, found.choice, found.event) == ("error", None, 0)
    assert (found.piece.name, found.result.arguments) == ("read_file", {"path": "a.py"})
    assert {d.code for d in r.diagnostics()} == {"error-event", "tool-call-rejected"}


def test_a_refused_generation_holding_no_call_is_kept_whole_without_a_name():
    r = Reassembler()
    r.apply(0, [StreamError("Tool choice is required", "I'm ready to extract the data")])
    r.close(0)
    [found] = r.leaked
    assert found.piece.family is None and found.piece.name is None
    assert found.piece.raw == "I'm ready to extract the data"


def test_the_groq_sample_reads_failed_generation_from_the_error_event():
    stream, _ = load_stream(str(SAMPLES / "groq_tool_use_failed.sse"))
    doc = build_report(stream)
    assert doc["calls"] == []
    [leaked] = doc["leaked"]
    assert leaked["source"] == "error" and leaked["event"] == doc["errors"][0]["event"]
    assert leaked["error"] == doc["errors"][0]["message"]
    assert leaked["arguments"] == {"city": "Paris", "unit": "celsius"}


def test_only_a_refused_tool_call_is_read_from_a_groq_error():
    from fraglens.adapters.openai_chat import OpenAIChatAdapter

    def generation(code: str) -> str | None:
        [op] = OpenAIChatAdapter().feed({"error": {
            "message": "m", "code": code, "failed_generation": '{"answer": 1}'}})
        return op.generation

    assert generation("tool_use_failed") == '{"answer": 1}'
    # a JSON answer that missed its response_format schema: no call in it
    assert generation("json_validate_failed") is None


def test_leaked_is_always_in_the_report_even_empty():
    stream, _ = load_stream(str(SAMPLES / "seed_interleaved_two_calls.sse"))
    assert build_report(stream)["leaked"] == []


def test_a_leaked_call_does_not_change_the_exit_status(capsys):
    # a warning: exit 0 when nothing else is wrong, for every family's sample
    for path in sorted(SAMPLES.glob("leaked_*.sse")):
        code = main(["check", "--json", str(path)])
        out = json.loads(capsys.readouterr().out)
        assert out["calls"] == [] and out["leaked"], path.name
        errors = [d for d in out["diagnostics"] if d["severity"] == "error"]
        assert code == (1 if errors else 0), path.name


def test_the_text_report_shows_each_leaked_call():
    stream, _ = load_stream(str(SAMPLES / "leaked_deepseek_v3.sse"))
    lines = [line.plain for line in leaked_lines(build_report(stream))]
    assert lines[0].startswith("2 leaked calls, not made")
    assert "get_weather ok" in lines[1] and "deepseek_v3" in lines[1]


#: a text that is hard on a scanner: every family's opener, closers missing
#: or far, markup nested in markup
HOSTILE = (
    '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * 20 + "</tool_call>"
    + f"{DS['calls']}{DS['call']}g{DS['sep']}{{" + "<arg_key>k</arg_key><arg_value>v"
    + " [TOOL_CALLS]h[ARGS]{\"b\": [1, " + "to=functions.k <|message|>{" + "<|python_tag|>{"
    + "<tool_call>glm\n<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"
)


def _searched(text: str) -> int:
    """How many characters the scan's closer searches cross in ``text``."""
    import fraglens.engine.leaks as leaks

    crossed = 0
    original = leaks._until

    def counting(text, closers, start, end):
        nonlocal crossed
        found = original(text, closers, start, end)
        crossed += found[1] - start
        return found

    leaks._until = counting
    try:
        scan(text)
    finally:
        leaks._until = original
    return crossed


@pytest.mark.parametrize("unit", [HOSTILE, HOSTILE + "</tool_call>" + DS["calls_end"]])
def test_the_scan_crosses_the_text_a_bounded_number_of_times(unit):
    # what the closer searches cross grows with the text, not with its square
    for n in (50, 500):
        assert _searched(unit * n) <= 3 * len(unit * n)


async def test_the_parse_pane_shows_a_leaked_call_from_its_event_on():
    from fraglens.app.app import FraglensApp
    from fraglens.app.widgets.parse import LeakedCalls

    path = SAMPLES / "leaked_deepseek_v31.sse"
    stream, _ = load_stream(str(path))
    [found] = stream.reassembler.leaked
    app = FraglensApp(stream, source=str(path), step=found.event - 1)
    async with app.run_test(size=(120, 36)) as pilot:
        widget = app.query_one(LeakedCalls)
        assert not widget.display  # not there yet
        await pilot.press("n")
        assert widget.display
        text = str(widget.render())
        assert "search_flights ✔ ok" in text and '"from": "PEK"' in text and "not a call" in text


def test_no_real_capture_is_taken_for_a_leaked_call():
    # 59 captures from real providers, calls and text and reasoning: none of
    # their text is markup, so none may raise the code or list a leaked call
    from .conftest import shared_or_skip

    captures = [p for p in sorted((shared_or_skip() / "real_streams").rglob("*"))
                if p.is_file() and p.suffix not in (".md", ".json") and p.name != "NOTICE"]
    assert len(captures) >= 50
    for path in captures:
        stream, _ = load_stream(str(path))
        doc = build_report(stream)
        codes = {d["code"] for d in doc["diagnostics"]}
        assert doc["leaked"] == [] and "tool-markup-in-content" not in codes, path.name


def test_the_family_table_reads_plainly_in_explain_and_as_markdown_in_the_docs():
    from fraglens.app.screens.explain import ExplainScreen
    from fraglens.engine.explanations import EXPLANATIONS, explain

    # Markdown needs the bars inside cells escaped; people reading it need them plain
    assert "<\\|tool_calls_section_begin\\|>" in EXPLANATIONS["tool-markup-in-content"].means
    for shown in (explain("tool-markup-in-content"),
                  ExplainScreen("tool-markup-in-content")._text().plain):
        assert "\\|" not in shown and "<|tool_calls_section_begin|>" in shown
        assert "--tool-call-parser deepseek_v31" in shown and "gpt-oss harmony" in shown


#: the pieces markup is made of, so that random texts are mostly near-markup
_PARTS = [o for f in FAMILIES for o in f.opens] + [
    "</tool_call>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "[ARGS]",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<|message|>", "<|call|>",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<parameter=", "</parameter>",
    "</function>", "\n```json\n", '{"name": "f", ', '"arguments": ', '{"a": ', "[1, ", "}", "]",
    '"', "\\", "x", " ", "\n", "functions.f:0", "get", "✿ARGS✿: ", "\ud800",
]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=40))
def test_any_text_scans_without_error_into_calls_inside_it(parts):
    text = "".join(parts)
    marks, pieces = scan(text)
    assert len(marks) <= MAX_LEAKED and len(pieces) <= MAX_LEAKED
    for piece in pieces:
        assert 0 <= piece.start < len(text)
        # the arguments as written, or (a list's item, a repeated key) their value re-written
        assert piece.raw in text or piece.built is not None or _is_json(piece.raw)
        found = judge(piece, "text", 0, 0)
        assert found.result.status in ("ok", "empty", "repaired", "truncated", "invalid")
