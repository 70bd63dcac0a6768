"""The reassembler, fed normalized fragments directly: one quirk per test."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.engine.fragments import (
    ArgsFinal,
    ArgsParsed,
    Finish,
    StreamError,
    TextDelta,
    ToolDelta,
)
from fraglens.engine.reassembler import Reassembler

from .conftest import examples


def run(*events, finish="tool_calls", max_arg_bytes=None) -> Reassembler:
    """Each positional item is one event: a ToolDelta or a list of ops."""
    r = Reassembler(max_arg_bytes) if max_arg_bytes else Reassembler()
    n = 0
    for n, ev in enumerate(events):
        r.apply(n, ev if isinstance(ev, list) else [ev])
    if finish:
        n += 1
        r.apply(n, [Finish(0, finish, finish)])
    r.close(n)
    return r


def T(index=None, id=None, name=None, args=None, choice=0, **kw) -> ToolDelta:
    return ToolDelta(choice=choice, index=index, id=id, name=name, args=args, **kw)


def codes(r: Reassembler) -> list[str]:
    return [d.code for d in r.diagnostics()]


def summary(r: Reassembler):
    return [(c.name, c.result.status, c.result.arguments) for c in r.calls]


SEED = [
    T(0, "call_a1", "get_weather", ""),
    T(1, "call_b2", "get_weather", ""),
    T(0, args='{"ci'),
    T(1, args='{"ci'),
    T(0, args='ty":"深'),
    T(1, args='ty":"上'),
    T(0, args='圳"}'),
    T(1, args='海","unit":"\\"'),
    T(1, args='u\\""}'),
]


def test_interleaved_calls_are_keyed_by_index_not_id():
    r = run(*SEED)
    assert summary(r) == [
        ("get_weather", "ok", {"city": "深圳"}),
        ("get_weather", "ok", {"city": "上海", "unit": '"u"'}),
    ]
    assert [c.id for c in r.calls] == ["call_a1", "call_b2"]
    assert codes(r) == []


def test_state_at_a_step_is_the_prefix_after_that_event():
    r = run(*SEED)
    first = r.calls[0]
    assert first.text[: first.length_at(2)] == '{"ci'
    assert first.text[: first.length_at(1)] == ""
    assert first.result_at(5) is None  # still streaming
    assert first.result_at(9).status == "ok"
    assert first.scan_at(4).in_string and first.scan_at(4).depth == 1


def test_q01_no_index_resolves_by_id_then_name_then_only_open_call():
    r = run(
        T(id="c1", name="a", args='{"x":'),
        T(args="1}"),
        T(id="c2", name="b", args='{"y":2}'),
    )
    assert summary(r) == [("a", "ok", {"x": 1}), ("b", "ok", {"y": 2})]
    assert "index-missing" in codes(r)


def test_q01_continuation_with_two_open_calls_is_unattributed_not_guessed():
    r = run(T(id="c1", name="a", args='{"x":'), T(id="c2", name="b", args='{"y":'), T(args="1}"))
    assert "unattributed-fragment" in codes(r)
    assert [d.args for _, d in r.unattributed] == ["1}"]
    assert [c.result.status for c in r.calls] == ["truncated", "truncated"]


def test_q02_first_index_one_is_keyed_by_value():
    r = run(T(1, "t1", "read_file", ""), T(1, args='{"path": "a.txt"}'))
    assert summary(r) == [("read_file", "ok", {"path": "a.txt"})]
    assert r.calls[0].index == 1
    assert "index-nonzero-start" in codes(r)


def test_q03_same_id_under_a_second_index_stays_one_call():
    r = run(T(0, "c1", "f", '{"a":'), T(1, "c1", None, "1}"))
    assert summary(r) == [("f", "ok", {"a": 1})]
    assert "index-changed" in codes(r)


def test_q04_all_calls_on_index_zero_with_new_ids_are_split():
    r = run(T(0, "c1", "add_numbers", '{"a":1}'), T(0, "c2", "get_weather", '{"city":"x"}'))
    assert summary(r) == [("add_numbers", "ok", {"a": 1}), ("get_weather", "ok", {"city": "x"})]
    assert "index-collision" in codes(r)


def test_q04_new_name_after_complete_arguments_without_ids_starts_a_call():
    r = run(T(0, None, "a", '{"x":1}'), T(0, None, "b", '{"y":2}'))
    assert [c.name for c in r.calls] == ["a", "b"]
    assert "index-collision" in codes(r)


def test_q05_two_entries_with_one_index_in_one_delta_are_applied_in_order():
    r = run([T(0, "c1", "f", '{"a"'), T(0, None, None, ":1}")])
    assert summary(r) == [("f", "ok", {"a": 1})]
    assert "duplicate-index-in-chunk" in codes(r)


def test_q06_repeated_id_is_not_appended():
    r = run(T(0, "c1", "f", '{"a"'), T(0, "c1", None, ":1}"))
    assert r.calls[0].id == "c1"
    assert "id-repeated" in codes(r)


def test_q07_blank_ids_are_absent():
    r = run(T(0, "c1", "f", '{"a"'), T(0, "", None, ":"), T(0, "null", None, "1"), T(0, "None",
                                                                                   None, "}"))
    assert r.calls[0].id == "c1" and len(r.calls) == 1
    assert summary(r) == [("f", "ok", {"a": 1})]


def test_q08_different_id_without_name_is_an_alias():
    r = run(T(0, "c1", "f", '{"a"'), T(0, "c9", None, ":1}"))
    assert len(r.calls) == 1 and r.calls[0].aliases == ["c9"]
    assert "id-changed" in codes(r)


def test_q09_missing_id_is_synthesized_and_said():
    r = run(T(0, None, "f", "{}"))
    assert r.calls[0].synthetic_id == "call_fraglens_0_0"
    assert "id-missing" in codes(r)


def test_q09_duplicate_ids_are_flagged():
    r = run(T(0, "same", "f", "{}"), T(1, "same", "g", "{}"))
    assert [c.name for c in r.calls] == ["f", "g"]
    assert "id-duplicate" in codes(r)


def test_q10_repeated_name_is_a_no_op():
    r = run(T(0, "c1", "read_file", '{"p":'), T(0, None, "read_file", '"x"}'))
    assert summary(r) == [("read_file", "ok", {"p": "x"})]
    assert "name-repeated" in codes(r)


def test_q11_split_name_is_appended():
    r = run(T(0, "c1", "edit_", ""), T(0, None, "existing_file", "{}"))
    assert r.calls[0].name == "edit_existing_file"
    assert "name-split" in codes(r)


def test_q12_late_name_lands_and_missing_name_is_an_error():
    r = run(T(0, "c1", "", '{"a":'), T(0, None, "late", "1}"), T(1, "c2", None, "{}"))
    assert [c.name for c in r.calls] == ["late", None]
    assert "name-late" in codes(r) and "name-missing" in codes(r)


def test_q13_whole_call_and_finish_in_one_chunk_is_merged_first():
    r = Reassembler()
    r.apply(0, [Finish(0, "tool_calls", "tool_calls"), T(None, "x", "f", '{"a":1}')])
    r.close(0)
    assert summary(r) == [("f", "ok", {"a": 1})]


def test_q14_arguments_resent_after_deltas_are_repaired_and_said():
    r = run(T(0, "c1", "f", '{"a":'), T(0, None, None, "1}"), T(0, None, None, '{"a":1}'))
    assert summary(r) == [("f", "repaired", {"a": 1})]
    assert "args-duplicated" in codes(r)


def test_q14b_different_values_are_not_silently_merged():
    r = run(T(0, "c1", "f", '{"city":"Paris"}{"city":"Rome"}'))
    call = r.calls[0]
    assert call.result.status == "invalid"
    assert call.result.values == ({"city": "Paris"}, {"city": "Rome"})
    assert "args-multiple-values" in codes(r)


def test_q15_object_arguments_are_merged_as_objects():
    r = run(T(0, "c1", "f", args_obj={"a": 1}), T(0, None, None, args_obj={"b": 2}))
    assert summary(r) == [("f", "ok", {"a": 1, "b": 2})]
    assert "args-object" in codes(r)


def test_q16_null_arguments_are_skipped():
    r = run(T(0, "c1", "f", None, args_null=True), T(0, None, None, "{}"))
    assert summary(r) == [("f", "ok", {})]
    assert "args-null" in codes(r)


def test_q17_no_arguments_is_empty_not_truncated():
    r = run(T(0, "c1", "f", ""))
    assert summary(r) == [("f", "empty", {})]
    assert "args-empty" in codes(r)


def test_q18_double_encoded_arguments_are_decoded_once_more():
    r = run(T(0, "c1", "f", '"{\\"a\\": 1}"'))
    assert summary(r) == [("f", "repaired", {"a": 1})]
    assert "args-double-encoded" in codes(r)


def test_q22_text_ending_inside_a_string_is_truncated_never_repaired():
    r = run(T(0, "c1", "f", '{"a": "hel'), finish="length")
    call = r.calls[0]
    assert call.result.status == "truncated"
    assert call.result.arguments == {"a": "hel"}  # best effort, flagged
    assert any("added" in change for change in call.result.repairs)
    assert {"args-truncated", "finish-length"} <= set(codes(r))


def test_malformed_middle_is_repaired_and_every_change_listed():
    r = run(T(0, "c1", "f", '{"a": 1, "b": [1, 2,],}'))
    call = r.calls[0]
    assert call.result.status == "repaired"
    assert call.result.arguments == {"a": 1, "b": [1, 2]}
    assert call.result.repairs == ('removed "," at 19', 'removed "," at 21')
    assert "args-repaired" in codes(r)


def test_single_quotes_are_reported_as_quoting():
    r = run(T(0, "c1", "f", "{'a': 'b'}"))
    assert r.calls[0].result.arguments == {"a": "b"}
    assert all(change.startswith("quoted") for change in r.calls[0].result.repairs)


def test_truncation_wins_over_repair_after_an_earlier_defect():
    # a raw newline stops the strict scanner at offset 7; the text still ends
    # inside an open string, so no closing quote and brace may be called a repair
    r = run(T(0, "c1", "f", '{"a":"x\ny", "b": "unfinished'))
    call = r.calls[0]
    assert call.result.status == "truncated"
    assert call.result.arguments == {"a": "x\ny", "b": "unfinished"}  # best effort, labelled
    assert 'added "\\"}" at the end' in call.result.repairs
    assert "args-truncated" in codes(r) and "args-repaired" not in codes(r)


def test_a_trailing_comma_before_the_cut_is_still_truncated():
    r = run(T(0, "c1", "f", '{"a": [1, 2,], "b": [3'))
    assert r.calls[0].result.status == "truncated"


def test_a_repair_that_changes_the_top_level_type_is_a_guess_not_a_repair():
    r = run(T(0, "c1", "f", "{[1, 2]}"))  # json-repair makes it [[1, 2]]
    result = r.calls[0].result
    assert (result.status, result.arguments, result.has_value) == ("invalid", None, False)
    assert result.repaired_text == "[[1,2]]"  # kept for showing, labelled a guess
    assert any("turns the object into an array" in d.message for d in r.diagnostics())


def test_a_repair_that_drops_a_key_or_makes_up_a_value_is_a_guess():
    dropped = run(T(0, "c1", "f", '{"a": 1, "b"}')).calls[0].result  # json-repair: {"a": 1}
    made_up = run(T(0, "c1", "f", '{"a": 1, "key": }')).calls[0].result  # {"key": ""}
    assert dropped.status == made_up.status == "invalid"
    assert dropped.repaired_text == '{"a":1}'
    assert made_up.repaired_text == '{"a":1,"key":""}'


def test_a_repair_that_drops_text_is_a_guess():
    r = run(T(0, "c1", "f", '{"a": 1} and then some words'))
    assert r.calls[0].result.status == "invalid"
    assert "drops" in [d.message for d in r.diagnostics() if d.code == "args-invalid"][0]


def test_text_past_the_repair_limit_is_too_large_to_repair():
    from fraglens.engine.finalize import REPAIR_LIMIT

    text = '{"a": "' + "x" * REPAIR_LIMIT + '",}'
    r = run(T(0, "c1", "f", text))
    assert r.calls[0].result.status == "invalid"
    message = [d.message for d in r.diagnostics() if d.code == "args-invalid"][0]
    assert "too large to repair" in message


def test_changes_past_the_listed_limit_are_summarized():
    text = "{" + ", ".join(f"'k{i}': {i}" for i in range(30)) + "}"
    result = run(T(0, "c1", "f", text)).calls[0].result
    assert result.status == "repaired"
    assert result.arguments == {f"k{i}": i for i in range(30)}
    assert len(result.repairs) == 41 and result.repairs[-1] == "… more changes not listed"


def test_hopeless_text_is_invalid():
    r = run(T(0, "c1", "f", "I will now call the tool"))
    assert r.calls[0].result.status == "invalid"
    assert "args-invalid" in codes(r)


def test_q42_lone_surrogates_are_joined():
    r = run(T(0, "c1", "f", '{"e":"\ud83d'), T(0, None, None, '\ude80"}'))
    assert summary(r) == [("f", "ok", {"e": "🚀"})]
    assert "args-surrogate-split" in codes(r)


def test_q42_split_surrogate_escapes_parse_and_are_noted():
    r = run(T(0, "c1", "f", '{"e":"\\ud83d'), T(0, None, None, '\\ude80"}'))
    assert summary(r) == [("f", "ok", {"e": "🚀"})]
    assert "args-surrogate-split" in codes(r)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(st.one_of(st.characters(codec=None),
                              st.sampled_from("é\u00ff\u0100€\ud800\udfff"))))
def test_a_lone_surrogate_is_found_in_text_of_every_width(text):
    import re

    from fraglens.engine.finalize import _has_lone_surrogate

    assert _has_lone_surrogate(text) is (re.search("[\ud800-\udfff]", text) is not None)


def test_a_known_value_is_taken_only_for_the_very_text_it_was_written_as():
    """``ToolDelta.args_value``: finalize takes it instead of reading the text
    when that text is the call's whole text; any other text is read."""
    value = {"a": [1, "x"]}
    whole = run(ToolDelta(0, 0, "c1", "f", json.dumps(value), args_value=value))
    assert whole.calls[0].result.arguments is value
    assert summary(whole) == summary(run(T(0, "c1", "f", json.dumps(value))))
    two = run(ToolDelta(0, 0, "c1", "f", '{"a": ', args_value={"b": 2}),
              T(0, None, None, '[1, "x"]}'))
    assert two.calls[0].result.arguments == value


def test_q20_finish_stop_with_calls_is_a_mismatch():
    r = run(T(0, "c1", "f", "{}"), finish="stop")
    assert "finish-reason-mismatch" in codes(r)


def test_q21_several_finishes_finalize_once_and_are_noted():
    r = Reassembler()
    r.apply(0, [T(0, "c1", "f", "{}")])
    r.apply(1, [Finish(0, "tool_calls", "tool_calls")])
    r.apply(2, [Finish(0, "tool_calls", "tool_calls")])
    r.close(2)
    assert len(r.calls[0].results) == 1
    assert "multiple-finish" in codes(r)


def test_q27_error_while_a_call_is_open_aborts_it_and_keeps_the_text():
    r = Reassembler()
    r.apply(0, [T(0, "c1", "f", '{"a":')])
    r.apply(1, [StreamError("overloaded")])
    r.close(1)
    assert r.calls[0].result.status == "aborted"
    assert r.calls[0].text == '{"a":'
    assert "error-event" in codes(r)


def test_q31_text_with_calls_and_leaked_markup_are_noted():
    r = run([TextDelta(0, "Sure <tool_call>{...}</tool_call>"), T(0, "c1", "f", "{}")])
    assert {"text-with-tool-calls", "tool-markup-in-content"} <= set(codes(r))
    assert len(r.calls) == 1  # no call invented from the markup


def test_over_limit_keeps_the_prefix_and_says_so():
    r = run(T(0, "c1", "f", '{"a":"' + "x" * 100), T(0, None, None, "y" * 50 + '"}'),
            max_arg_bytes=64)
    call = r.calls[0]
    assert call.length == 64 and call.over_limit
    assert call.result.status == "truncated"
    assert "args-over-limit" in codes(r)


def test_args_final_fills_a_call_with_no_deltas():
    r = Reassembler()
    r.apply(0, [T(0, "c1", "f", None)])
    r.apply(1, [ArgsFinal(0, 0, '{"a":1}')])
    r.close(1)
    assert summary(r) == [("f", "ok", {"a": 1})]


def test_args_final_that_differs_from_deltas_is_reported():
    r = Reassembler()
    r.apply(0, [T(0, "c1", "f", '{"a":1}')])
    r.apply(1, [ArgsFinal(0, 0, '{"a":2}')])
    r.close(1)
    assert r.calls[0].result.arguments == {"a": 1}
    assert "args-multiple-values" in codes(r)


def test_calls_are_kept_per_choice():
    r = run(T(0, "a", "f", "{}", choice=0), T(0, "b", "g", "{}", choice=1))
    assert [(c.choice, c.name) for c in r.calls] == [(0, "f"), (1, "g")]
    assert "choice-index-unstable" not in codes(r)  # each choice kept its index (n=2)


def test_a_native_block_index_after_text_is_not_a_nonzero_start():
    r = run(T(1, "toolu_1", "f", "", native_index=True), T(1, args="{}", native_index=True))
    assert summary(r) == [("f", "ok", {})]
    assert "index-nonzero-start" not in codes(r)


def test_q12_a_late_name_after_complete_arguments_lands_on_its_call():
    r = run(T(0, "c1", None, '{"a":1}'), T(0, None, "late", None))
    assert summary(r) == [("late", "ok", {"a": 1})]
    assert "index-collision" not in codes(r)


def test_an_error_aborts_only_the_call_still_open():
    r = Reassembler()
    r.apply(0, [T(0, "c1", "f", '{"a":1}')])
    r.apply(1, [T(1, "c2", "g", '{"b":')])
    r.apply(2, [StreamError("overloaded_error")])
    r.close(2)
    assert [c.result.status for c in r.calls] == ["ok", "aborted"]


def test_truncated_inside_a_string_lists_only_what_was_added():
    r = run(T(0, "c1", "f", '{"lines": ["a b", "1. Add up box'), finish="length")
    assert r.calls[0].result.repairs == ('added "\\"]}" at the end',)


def test_the_size_limit_counts_utf8_bytes_and_never_cuts_a_character():
    r = run(T(0, "c1", "f", '{"a":"' + "深" * 10), max_arg_bytes=16)  # 6 + 30 bytes
    call = r.calls[0]
    assert call.text == '{"a":"深深深'  # 6 + 9 bytes; a 4th would make 18
    assert call.dropped_bytes == 21
    assert "args-over-limit" in codes(r)


# -- a value restated at the end, an id restated at the end (issue: verdicts) --


def test_a_restatement_is_the_arguments_when_the_streamed_pieces_are_not_json():
    r = run(T(0, "c1", "f", ""), T(0, args="qZ1x9Lk0"), [ArgsFinal(0, 0, '{"a": 1}')])
    call = r.calls[0]
    assert (call.result.status, call.result.arguments) == ("ok", {"a": 1})
    assert call.text == "qZ1x9Lk0" and call.final_text == '{"a": 1}'  # both kept raw
    assert codes(r) == ["args-restated"]


def test_two_valid_values_that_differ_stay_multiple_values():
    r = run(T(0, "c1", "f", '{"a": 1}'), [ArgsFinal(0, 0, '{"a": 2}')])
    assert r.calls[0].result.arguments == {"a": 1}
    assert "args-multiple-values" in codes(r) and "args-restated" not in codes(r)


def test_the_same_value_spelled_differently_is_no_finding():
    r = run(T(0, "c1", "f", '{"a": 1, "b": [1,2]}'), [ArgsFinal(0, 0, '{"b":[1, 2],"a":1}')])
    assert codes(r) == []


def test_an_id_restated_differently_at_the_end_becomes_the_id_and_the_first_an_alias():
    r = run(T(0, "call_tmp", "f", '{"a": 1}'), [ArgsFinal(0, 0, "", id="call_real")])
    call = r.calls[0]
    assert (call.id, call.aliases) == ("call_real", ["call_tmp"])
    assert codes(r) == ["id-changed"]
    # a later fragment that still uses the first id finds the same call
    r2 = run(T(0, "call_tmp", "f", '{"a": '), [ArgsFinal(0, 0, "", id="call_real")],
             T(None, "call_tmp", None, "1}"))
    assert len(r2.calls) == 1 and r2.calls[0].result.arguments == {"a": 1}


def test_a_parallel_wrapper_is_kept_and_its_calls_shown():
    wrapped = ('{"tool_uses": [{"recipient_name": "functions.get_weather", "parameters": '
               '{"city": "Oslo"}}, {"recipient_name": "functions.get_time", "parameters": {}}]}')
    r = run(T(0, "call_1", "multi_tool_use.parallel", wrapped))
    call = r.calls[0]
    assert (call.name, call.result.status) == ("multi_tool_use.parallel", "ok")  # as received
    assert call.inner_calls == [
        {"name": "get_weather", "recipient_name": "functions.get_weather",
         "arguments": {"city": "Oslo"}},
        {"name": "get_time", "recipient_name": "functions.get_time", "arguments": {}},
    ]
    assert codes(r) == ["parallel-wrapper"]


def test_a_call_of_that_name_in_another_shape_is_left_alone():
    r = run(T(0, "call_1", "multi_tool_use.parallel", '{"tool_uses": "nope"}'))
    assert r.calls[0].inner_calls is None and codes(r) == []


def test_n2_choices_that_keep_their_index_are_not_unstable():
    r = run(T(0, "a", "f", '{"x":', choice=0), T(0, "b", "f", '{"x":', choice=1),
            T(0, args="1}", choice=0), T(0, args="2}", choice=1))
    assert [c.result.arguments for c in r.calls] == [{"x": 1}, {"x": 2}]
    assert "choice-index-unstable" not in codes(r)


def test_a_call_whose_pieces_move_to_another_choice_is_unstable():
    # n=1: the continuation arrives under choice 1, which no call opened
    r = run(T(0, "a", "f", '{"x":', choice=0), T(0, args="1}", choice=1))
    assert "choice-index-unstable" in codes(r)
    # the same id under two choices
    r = run(T(0, "a", "f", '{"x":1}', choice=0), T(0, "a", "f", '{"x":1}', choice=1))
    assert "choice-index-unstable" in codes(r)


def test_text_after_object_arguments_is_not_dropped():
    r = run(T(0, "c1", "f", args_obj={"a": 1}), T(0, None, None, '{"b": 2}'))
    result = r.calls[0].result
    assert result.status == "invalid" and result.values == ({"a": 1}, {"b": 2})
    assert "args-multiple-values" in codes(r)


def test_object_arguments_alone_are_still_their_value():
    r = run(T(0, "c1", "f", args_obj={"a": 1}), T(0, None, None, args_obj={"b": 2}))
    assert summary(r) == [("f", "ok", {"a": 1, "b": 2})]


def test_text_findings_sit_at_the_event_that_made_them_true():
    r = run([TextDelta(0, "Let me check. ")], T(0, "c1", "f", "{}"),
            [TextDelta(0, "<tool_")], [TextDelta(0, "call>{}")])
    at = {d.code: d.event for d in r.diagnostics()}
    assert at["text-with-tool-calls"] == 1  # the text came at 0, the call at 1
    assert at["tool-markup-in-content"] == 3  # the markup was complete at event 3


def test_a_cut_text_past_the_repair_limit_is_truncated_without_a_guess():
    from fraglens.engine.finalize import REPAIR_LIMIT

    r = run(T(0, "c1", "f", '{"a": "' + "x" * REPAIR_LIMIT), finish="length")
    result = r.calls[0].result
    assert (result.status, result.has_value) == ("truncated", False)
    assert "too many to build one" in result.repairs[0]
    # and a call cut at the size limit the same way
    r = run(T(0, "c1", "f", '{"a": "' + "x" * (REPAIR_LIMIT + 10)),
            max_arg_bytes=REPAIR_LIMIT + 5)
    assert (r.calls[0].result.status, r.calls[0].result.has_value) == ("truncated", False)


# -- servers that number choices, indexes or names wrongly ------------------------


def test_a_choice_index_counted_up_every_chunk_is_one_call_and_flagged():
    r = run(
        T(0, "c1", "get_weather", "", choice=0),
        T(0, args='{"city":', choice=1),
        T(0, args='"Paris"}', choice=2),
        [Finish(3, "tool_calls", "tool_calls")],
        finish=None,
    )
    assert summary(r) == [("get_weather", "ok", {"city": "Paris"})]
    assert "choice-index-unstable" in codes(r)
    assert list(r.choices) == [0] and r.choices[0].finish == "tool_calls"
    assert "finish-reason-mismatch" not in codes(r)


def test_n2_choices_that_each_open_their_call_are_not_drift():
    r = run(
        T(0, "c1", "f", "", choice=0), T(0, "c2", "f", "", choice=1),
        T(0, args='{"a":1}', choice=0), T(0, args='{"a":2}', choice=1),
    )
    assert [(c.choice, c.result.arguments) for c in r.calls] == [(0, {"a": 1}), (1, {"a": 2})]
    assert "choice-index-unstable" not in codes(r)


def _moved(r: Reassembler) -> set[int]:
    return {d.call for d in r.diagnostics() if d.code == "index-changed"}


def test_a_call_opened_at_its_tool_position_then_streamed_at_its_ordinal():
    # tools [get_time, get_weather]; the model calls get_weather, then get_time
    r = run(
        T(1, "a", "get_weather", ""), T(0, args='{"city":'), T(0, args='"Paris"}'),
        T(0, "b", "get_time", ""), T(1, args='{"tz":"UTC"}'),
    )
    assert summary(r) == [
        ("get_weather", "ok", {"city": "Paris"}), ("get_time", "ok", {"tz": "UTC"}),
    ]
    assert _moved(r) == {0, 1}
    assert "index-collision" not in codes(r)


def test_a_call_opened_at_its_ordinal_then_streamed_at_its_tool_position():
    r = run(
        T(0, "a", "get_weather", ""), T(1, args='{"city":"Paris"}'),
        T(1, "b", "get_time", ""), T(0, args='{"tz":'), T(0, args='"UTC"}'),
    )
    assert summary(r) == [
        ("get_weather", "ok", {"city": "Paris"}), ("get_time", "ok", {"tz": "UTC"}),
    ]
    assert _moved(r) == {0, 1}
    assert "name-late" not in codes(r)


def test_a_late_name_on_a_new_index_is_still_a_new_call():
    # LM Studio: the second call's text comes before its name; the first is whole
    r = run(T(0, "a", "f", '{"x":1}'), T(1, args='{"y":'), T(1, None, "g", "2}"))
    assert summary(r) == [("f", "ok", {"x": 1}), ("g", "ok", {"y": 2})]
    assert "index-changed" not in codes(r)


def test_a_name_resent_as_null_mid_call_is_said_and_the_name_kept():
    r = run(T(0, "c1", "read_file", '{"path":'), T(0, None, "null", '"a.txt"}'))
    assert summary(r) == [("read_file", "ok", {"path": "a.txt"})]
    assert "name-changed" in codes(r)


def test_a_different_name_mid_call_is_a_change_not_a_piece():
    r = run(T(0, "c1", "read_file", '{"path":'), T(0, None, "write_file", '"a.txt"}'))
    assert r.calls[0].name == "read_file"
    assert "name-changed" in codes(r) and "name-split" not in codes(r)


def test_a_blank_name_before_any_text_is_no_name():
    r = run(T(0, "c1", "null", ""), T(0, None, "f", "{}"))
    assert summary(r) == [("f", "ok", {})]
    assert "name-changed" not in codes(r)


@settings(max_examples=examples(300), deadline=None)
@given(
    values=st.lists(st.dictionaries(st.sampled_from("abc"), st.one_of(
        st.integers(), st.text(max_size=6), st.dictionaries(st.just("x"), st.integers()))),
        min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=1, max_value=30), max_size=8),
    order=st.randoms(use_true_random=False),
    first=st.sampled_from([0, 1]),
)
def test_well_formed_parallel_calls_never_look_switched(values, cuts, order, first):
    # each call: its header (index, id, name), then its text in pieces under
    # that index; the calls interleaved in any order that keeps each one's own
    streams = []
    for k, value in enumerate(values):
        text = json.dumps(value)
        points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
        pieces = [text[a:b] for a, b in zip(points, points[1:], strict=False)]
        index = first + k
        streams.append([T(index, f"c{k}", f"f{k}", ""), *(T(index, args=p) for p in pieces)])
    events = []
    while any(streams):
        stream = order.choice([s for s in streams if s])
        events.append(stream.pop(0))
    r = run(*events)
    # listed in the order they opened: by name, each has its own value
    assert sorted((c.name, json.dumps(c.result.arguments)) for c in r.calls) == [
        (f"f{k}", json.dumps(value)) for k, value in enumerate(values)
    ]
    assert not {"index-changed", "name-changed", "choice-index-unstable"} & set(codes(r))


@pytest.mark.parametrize("no_floats", [True, False])
def test_a_value_an_adapter_parsed_is_the_verdicts_while_the_text_is_the_one_parsed(no_floats):
    # ArgsParsed: the value json.loads made of the call's text (the AI SDK
    # adapter parses it to weigh tool-input-available), kept for the verdict
    # rather than parsed again, with whether it holds no float: only for that
    # very text (one piece after it, and it is read anew)
    text = '{"a": [1, 2]}'
    kept = {"a": [1, 2]}
    r = run(T(0, "c", "f", text[:5]), T(0, args=text[5:]),
            [ArgsParsed(0, 0, text, kept, no_floats)])
    assert r.calls[0].result.arguments is kept
    assert r.calls[0].result.no_floats is no_floats and r.calls[0].text is text
    # another text (here: a piece short), or a piece after it: parsed anew
    for events in ([T(0, "c", "f", text[:5]), [ArgsParsed(0, 0, text, kept)]],
                   [T(0, "c", "f", text), [ArgsParsed(0, 0, text, kept)], T(0, args=" ")]):
        r = run(*events)
        assert r.calls[0].result.arguments is not kept
    r = run(T(0, "c", "f", text), [ArgsParsed(0, 0, text, kept)])
    assert r.calls[0].result.arguments == kept
    # a value restated in place of the text: the restatement is what is judged
    r = run(T(0, "c", "f", "x9Qk"), [ArgsParsed(0, 0, "x9Qk", "not it")],
            [ArgsFinal(0, 0, text, id="c")])
    assert summary(r) == [("f", "ok", kept)]


def test_a_call_takes_an_equal_text_as_its_own_told_without_joining_its_chunks():
    from fraglens.engine.calls import Call

    def made() -> Call:
        call = Call(0, 0, 0, 0)
        call.extend(1, ['{"a": ', '"x', 'y"'])
        call.extend_at([5, 7], [', "b"', ': 2}'])
        call.scan_at(5)  # stepped through: the scanner has read into the second chunk
        return call
    call, joined = made(), made()
    assert not call.is_text('{"a": "xy", "b": 3}') and not call.is_text('{"a": "xy"')
    text = "".join(['{"a": "xy", ', '"b": 2}'])  # equal, another string
    assert call.is_text(text) and call.text is text and joined.text == text
    # stepping and the scanner read what a call that joined its own reads
    for step in range(9):
        assert call.boundaries_at(step) == joined.boundaries_at(step)
        assert call.scan_at(step) == joined.scan_at(step)
    assert call.scan_state() == joined.scan_state()


@given(st.integers(1, 5).flatmap(lambda owners: st.tuples(
    st.just(owners), st.lists(st.integers(0, owners - 1), max_size=60))), st.booleans())
def test_by_owner_shares_items_out_in_order_however_many_owners(case, as_bytes):
    # a pass of compress each for two or three owners, one of appends for more
    from fraglens.engine.calls import by_owner
    owners, owner = case
    items = [f"i{k}" for k in range(len(owner))]
    want = [[item for item, o in zip(items, owner, strict=True) if o == k] for k in range(owners)]
    assert by_owner(bytes(owner) if as_bytes else owner, iter(items), owners) == want
    assert by_owner(owner, range(len(owner)), owners) == [
        [k for k, o in enumerate(owner) if o == j] for j in range(owners)]
