"""Repairs: the exact comma readings, the walk that lists json-repair's
changes, and the lenient reading of the nesting that keeps a cut text
``truncated`` after a defect.

Offsets in expected change lists are counted by hand in the text as sent (the
comments show the count); a comma put in is listed at the offset of the value
it goes before.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fraglens.engine.changes import normalize, walk
from fraglens.engine.commas import MAX_EDITS, Reading, read_commas
from fraglens.engine.finalize import _open_in
from fraglens.engine.fragments import Finish, ToolDelta
from fraglens.engine.reassembler import Reassembler

from .conftest import examples
from .test_properties import values


def verdict(text: str, finish: str = "tool_calls"):
    r = Reassembler()
    r.apply(0, [ToolDelta(index=0, id="c", name="f", args=text)])
    r.apply(1, [Finish(0, finish, finish)])
    r.close(1)
    return r.calls[0].result


def commas(text: str) -> Reading | None:
    """The comma reading of a text the strict parser refuses, as finalize asks."""
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return read_commas(text, e)
    raise AssertionError(f"{text!r} is JSON")


def separators(raw: str) -> list[int]:
    """Offsets of the commas between members: the commas outside strings."""
    in_string = escaped = False
    found = []
    for k, ch in enumerate(raw):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == ",":
            found.append(k)
    return found


def without(raw: str, offsets: list[int]) -> str:
    for at in sorted(offsets, reverse=True):
        raw = raw[:at] + raw[at + 1 :]
    return raw


#: objects and arrays with at least two members somewhere
containers = (st.dictionaries(st.text(max_size=4), values, min_size=1, max_size=4)
              | st.lists(values, min_size=1, max_size=4))
#: a container whose members are all single is drawn and passed over, often
CHECKS = [HealthCheck.too_slow, HealthCheck.filter_too_much]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=CHECKS)
@given(containers, st.data())
def test_missing_commas_are_put_back_exactly_where_they_were(value, data):
    """json.dumps writes ", " between members: with up to MAX_EDITS of
    those commas gone, the call is repaired to the very value, and the
    changes name each comma at the offset of the value after it (the space
    before that value stays, so the comma removed at k, the j-th one gone,
    goes back before the value at k - j + 1)."""
    raw = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    spots = separators(raw)
    assume(spots)  # one member at every level: no comma to leave out
    gone = data.draw(st.lists(st.sampled_from(spots), min_size=1, max_size=MAX_EDITS,
                              unique=True))
    broken = without(raw, gone)
    result = verdict(broken)
    assert (result.status, result.arguments) == ("repaired", value), (broken, result)
    want = tuple(f'added "," at {k - j + 1}' for j, k in enumerate(sorted(gone)))
    assert result.repairs == want, broken
    assert result.findings == (("args-repaired", "; ".join(want[:3])),)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=CHECKS)
@given(containers, st.data())
def test_a_missing_comma_in_a_cut_text_is_truncated(value, data):
    """The comma reading never closes what the text left open: cut anywhere
    after the missing comma and before the end, the call is truncated."""
    raw = json.dumps(value)
    spots = separators(raw)
    assume(spots)
    gone = data.draw(st.sampled_from(spots))
    broken = without(raw, [gone])
    cut = data.draw(st.integers(gone + 1, len(broken) - 1))
    assert verdict(broken[:cut]).status == "truncated", broken[:cut]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=CHECKS)
@given(containers, st.data())
def test_a_value_touching_the_one_before_gets_no_comma(value, data):
    """Compact JSON has no space after its commas: with one gone, a comma is
    put in only after a closing brace or bracket; after a string, a number
    or a literal the next value touches it, and the reading is left to
    json-repair."""
    raw = json.dumps(value, separators=(",", ":"))
    spots = separators(raw)
    assume(spots)
    gone = data.draw(st.sampled_from(spots))
    broken = without(raw, [gone])
    assume(not _is_json(broken))  # [1,0] without its comma is [10]: no defect at all
    reading = commas(broken)
    if raw[gone - 1] in "}]":
        assert reading is not None and reading.value == value
        assert reading.listed == [f'added "," at {gone}']
    else:
        assert reading is None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_texts_where_a_comma_would_be_a_guess_are_left_to_json_repair():
    for text in (
        '{"dates": [2024-01-02]}',  # a date without quotes, not 2024, -0, 1, -0, 2
        '{"q": ["say "1" now"]}',  # quotes not escaped inside a string
        '["a""b"]',  # two strings, or one with a doubled quote
        '[true"x"]',
        '{"a": "x" "y"}',  # a comma would leave "y" a key without a value
        '{"a": 1 -}',  # no value starts after the 1
        "{'a': 1 'b': 2}",  # not JSON for other reasons too
    ):
        assert commas(text) is None, text


def test_the_number_of_commas_put_in_is_bounded():
    eight = "[" + " ".join(str(k) for k in range(9)) + "]"  # 8 commas missing
    nine = "[" + " ".join(str(k) for k in range(10)) + "]"
    reading = commas(eight)
    assert reading is not None and reading.value == list(range(9))
    # "[0 1 2": the values the commas go before sit at 3, 5, 7 ...
    assert reading.listed == [f'added "," at {k}' for k in range(3, 18, 2)]
    assert commas(nine) is None
    # past the bound json-repair reads it, and the walk finds the same commas
    result = verdict(nine)
    assert (result.status, result.arguments) == ("repaired", list(range(10)))
    assert len(result.repairs) == 9


def test_trailing_and_missing_commas_are_listed_at_their_offsets_in_the_text_sent():
    # {"a": [1, 2,] "b": 3}: the comma after 2 is at 11, "b" opens at 14
    result = verdict('{"a": [1, 2,] "b": 3}')
    assert (result.status, result.arguments) == ("repaired", {"a": [1, 2], "b": 3})
    assert result.repairs == ('removed "," at 11', 'added "," at 14')
    # [[1,] [2,] [3,]]: trailing commas at 3, 8, 13; the arrays open at 6, 11
    result = verdict("[[1,] [2,] [3,]]")
    assert result.arguments == [[1], [2], [3]]
    assert result.repairs == (
        'removed "," at 3', 'added "," at 6', 'removed "," at 8', 'added "," at 11',
        'removed "," at 13',
    )


def test_past_the_bound_trailing_commas_are_dropped_in_one_pass():
    # 5 trailing commas and 5 missing ones: 10 edits one parse at a time is
    # past the bound, so the trailing ones go in one pass and 5 are put in.
    # "[[0,] [1,] ...": the k-th inner array opens at 1 + 5k, its comma at 3 + 5k
    text = "[" + " ".join(f"[{k},]" for k in range(6)) + "]"
    result = verdict(text)
    assert (result.status, result.arguments) == ("repaired", [[k] for k in range(6)])
    want = sorted([(3 + 5 * k, f'removed "," at {3 + 5 * k}') for k in range(6)]
                  + [(1 + 5 * k, f'added "," at {1 + 5 * k}') for k in range(1, 6)])
    assert result.repairs == tuple(words for _, words in want)


def test_a_doubled_comma_is_not_read_as_a_trailing_one():
    assert commas("[1,,]") is None  # which comma is the slip is a guess
    assert commas("[,]").listed == ['removed "," at 1']  # the container is empty


def test_trailing_commas_are_not_bounded_but_their_listing_is():
    text = "[" + " ".join("[1,]," for _ in range(60)) + " [1]]"
    result = verdict(text)
    assert (result.status, result.arguments) == ("repaired", [[1]] * 61)
    assert len(result.repairs) == 41 and result.repairs[-1] == "… more changes not listed"


def test_a_missing_comma_when_the_stream_says_the_call_was_cut_is_truncated():
    # {"a": 1 "b": 2}: "b" opens at 8
    result = verdict('{"a": 1 "b": 2}', finish="length")
    assert (result.status, result.arguments) == ("truncated", {"a": 1, "b": 2})
    assert result.repairs == ('added "," at 8',)
    assert [code for code, _ in result.findings] == ["args-truncated"]


def test_a_repair_by_json_repair_lists_its_changes_at_offsets_past_whitespace():
    # {"a": 1, b: 2}: b is at 9, its colon at 10
    result = verdict('{"a": 1, b: 2}')
    assert (result.status, result.arguments) == ("repaired", {"a": 1, "b": 2})
    assert result.repairs == ('added "\\"" at 9', 'added "\\"" at 10')


def test_normalize_drops_layout_and_maps_each_character_back():
    raw = '{ "a" :\n "\\u00e9x" }'
    # { 0, "a" 2-4, : 6, the string's quote 9, \u00e9 10-15, x 16, quote 17, } 19
    text, where = normalize(raw)
    assert text == '{"a":"éx"}'
    assert [where[i] for i in range(len(text))] == [0, 2, 3, 4, 6, 9, 10, 16, 17, 19]


def test_an_escaped_backslash_before_u_is_not_an_escape():
    # the value holds a backslash and "u0041": its JSON spells the backslash
    # twice, as the text did, so there is nothing to list
    assert walk('{"a": "\\\\u0041"}', {"a": "\\u0041"}).listed == []
    # and a real escape is a character, not a change
    assert walk('{"a": "\\u0041"}', {"a": "A"}).listed == []


def test_the_lenient_nesting_reading():
    assert _open_in('{"a": [1 2') == "depth 2"
    assert _open_in('{"a": "}]"') == "depth 1"  # brackets inside strings do not count
    assert _open_in('{"a": "x') == "an open string"
    assert _open_in('{"a": "x\\"}') == "an open string"  # the quote is escaped
    assert _open_in("{'a': 'b") == "an open string"  # single quotes where a value starts
    assert _open_in("{a: it's}") is None  # an apostrophe inside a bare word
    assert _open_in("{'a': 'b'}") is None
    # a closer with nothing open is passed over: the brace after it is open
    assert _open_in('{"a": 1}]] {') == "depth 1"
    assert _open_in("[1, 2]]") is None
    assert _open_in('{"a": [}') == "depth 1"  # a closer closes whatever is open


def test_nan_and_infinity_are_not_json() -> None:
    # Python's json reads them as floats; JSON.parse refuses them
    for text, word, at in (('{"v": NaN}', "NaN", 6), ("[1, -Infinity]", "-Infinity", 4),
                           ('{"v": Infinity}', "Infinity", 6)):
        result = verdict(text)
        assert result.status == "invalid" and not result.has_value, text
        assert result.findings == (
            ("args-invalid", f"{word} at {at} is not JSON (Python's json reads it as a float)"),)
    # the same words in strings are text, and an escaped quote does not end one
    assert verdict('{"v": "NaN", "w": "a \\" Infinity"}').status == "ok"


def test_nan_beside_another_defect_is_no_repair() -> None:
    # the comma would be read exactly, and json-repair would quote the NaN:
    # either way the value would hold something the text does not say
    for text, at in (('{"v": NaN "w": 1}', 6), ('{"v": NaN, w: 1}', 6), ('{"v": [NaN,]}', 7)):
        result = verdict(text)
        assert result.status == "invalid" and not result.has_value, text
        assert f"NaN at {at} is not JSON" in result.findings[-1][1]


def test_a_cut_text_with_nan_is_still_truncated() -> None:
    assert verdict('{"v": NaN, "w": "cut').status == "truncated"


def test_nan_in_a_single_quoted_string_is_text() -> None:
    result = verdict("{'a': 'NaN', 'b': 'Infinity'}")
    assert result.status == "repaired"
    assert result.arguments == {"a": "NaN", "b": "Infinity"}
