"""The incremental JSON scanner agrees with json.loads, at every split."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.engine.calls import Call
from fraglens.engine.scanner import Scanner

from .conftest import examples

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)


def scan(*pieces: str):
    s = Scanner()
    for p in pieces:
        s.feed(p)
    return s


@given(json_values, st.booleans(), st.lists(st.integers(min_value=0), max_size=6))
@settings(max_examples=examples(300))
def test_any_json_split_anywhere_is_complete_and_valid(value, ascii_only, cuts):
    text = json.dumps({"v": value}, ensure_ascii=ascii_only)
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces, prev = [], 0
    for p in points + [len(text)]:
        pieces.append(text[prev:p])
        prev = p
    state = scan(*pieces).state()
    assert state.valid and state.complete and state.depth == 0
    assert state.offset == len(text)


def _structure(text: str) -> tuple[int, bool, bool]:
    """(depth, in_string, in_escape) of a prefix of valid JSON, counted the
    slow obvious way."""
    depth, in_string, escape = 0, False, 0  # escape: -1 after "\\", else hex digits left
    for ch in text:
        if in_string:
            if escape == -1:
                escape = 4 if ch == "u" else 0
            elif escape:
                escape -= 1
            elif ch == "\\":
                escape = -1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth, in_string, in_string and escape != 0


@given(json_values, st.booleans())
@settings(max_examples=examples(200))
def test_every_prefix_of_valid_json_is_a_valid_prefix(value, ascii_only):
    text = json.dumps({"v": value, "w": [1, "x\u00e9"]}, ensure_ascii=ascii_only)
    s = Scanner()
    for i, ch in enumerate(text):
        s.feed(ch)
        st_ = s.state()
        assert st_.valid, (text, i)
        assert st_.complete == (i == len(text) - 1)
        assert (st_.depth, st_.in_string, st_.in_escape) == _structure(text[: i + 1]), (text, i)


# near-JSON text: mostly structure, escapes, numbers and literals, often broken
near_json = st.text(alphabet='{}[]",: \\u0aF1-+.eEtrufalsn\n\x01', max_size=24)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@given(st.one_of(near_json, json_values.map(json.dumps)), st.lists(st.integers(0), max_size=6))
@settings(max_examples=examples(500))
def test_state_after_any_split_is_the_state_after_the_whole_text(text, cuts):
    whole = scan(text)
    split = scan(*_split(text, cuts))
    assert split.state() == whole.state()


@given(st.one_of(near_json, json_values.map(json.dumps)))
@settings(max_examples=examples(500))
def test_complete_exactly_when_json_loads_accepts(text):
    try:
        json.loads(text)
        accepted = True
    except ValueError:
        accepted = False
    # a space ends a top-level number, which could otherwise still grow
    assert scan(text + " ").state().complete == accepted, text


@given(near_json)
@settings(max_examples=examples(500))
def test_bad_offset_is_the_first_impossible_character(text):
    state = scan(text).state()
    if state.valid:
        return
    bad = state.bad_offset
    assert scan(text[:bad]).state().valid, (text, bad)
    assert not scan(text[: bad + 1]).state().valid, (text, bad)


@pytest.mark.parametrize(
    "text,bad",
    [
        ('{"a":1,}', 7),  # trailing comma
        ("{'a':1}", 1),  # single quotes
        ('{"a":tru}', 8),
        ('{"a":01}', 6),
        ('{"a":1.}', 7),
        ('{"a":"\\x"}', 7),
        ('{"a":1}{"a":1}', 7),  # a second value is not part of one JSON text
        ('{"a":"x\ny"}', 7),  # raw control character in a string
        ("```json", 0),
    ],
)
def test_first_impossible_character_is_located(text, bad):
    state = scan(text).state()
    assert not state.valid
    assert state.bad_offset == bad
    with pytest.raises(ValueError):
        json.loads(text)


def test_state_inside_a_string_and_an_escape():
    state = scan('{"city":"a\\').state()
    assert state.in_string and state.in_escape and state.depth == 1 and state.valid


def test_escape_split_across_fragments_is_fine():
    state = scan('{"u":"\\', '"x"}').state()
    assert state.valid and state.complete


def test_surrogate_pair_split_across_fragments_is_noticed():
    s = scan('{"e":"\\ud83d', '\\ude80"}')
    assert s.surrogate_split and s.state().complete


def test_surrogate_pair_in_one_fragment_is_not_a_split():
    s = scan('{"e":"\\ud83d\\ude80"}')
    assert not s.surrogate_split


def test_large_text_in_many_fragments_is_linear_enough():
    # 200k characters in 20k fragments: a quadratic scanner would take minutes
    text = json.dumps({"data": ["x" * 8] * 20000})
    s = Scanner()
    for i in range(0, len(text), 10):
        s.feed(text[i : i + 10])
    assert s.state().complete


@given(st.one_of(near_json, json_values.map(json.dumps)), st.lists(st.integers(0), max_size=8))
@settings(max_examples=examples(300))
def test_a_calls_state_at_each_step_is_a_fresh_scan_of_that_prefix(text, cuts):
    # what the app shows at step k comes from the per-fragment records; it must
    # be what scanning the text up to there says (the bad offset only once reached)
    call = Call(seq=0, choice=0, first_event=0)
    pieces = _split(text, cuts)
    for event, piece in enumerate(pieces):
        call.append(event, piece)
    for event in range(len(pieces)):
        prefix = "".join(pieces[: event + 1])
        assert call.scan_at(event) == scan(prefix).state(), (pieces, event)


@given(
    st.one_of(near_json, json_values.map(json.dumps)),
    st.lists(st.integers(0), max_size=10),
    st.lists(st.sampled_from(["append", "extend", "text", "scan"]), min_size=1, max_size=10),
    st.randoms(use_true_random=False),
)
@settings(max_examples=examples(300))
def test_a_call_grown_in_runs_scans_as_one_grown_piece_by_piece(text, cuts, moves, rnd):
    # runs read in bulk keep their fragments joined in one chunk; the scanner
    # reads each fragment from its chunk, whenever it is asked, with the text
    # joined in between or not: every step's state, and where a surrogate pair
    # was split, are what a call fed piece by piece records
    pieces = _split(text, cuts) + [""] * rnd.randint(0, 2)
    rnd.shuffle(pieces) if rnd.random() < 0.2 else None
    one, bulk = Call(seq=0, choice=0, first_event=0), Call(seq=0, choice=0, first_event=0)
    for event, piece in enumerate(pieces):
        one.append(event, piece)
    at, moves = 0, iter(moves * 3)
    while at < len(pieces):
        move = next(moves, "extend")
        if move == "append":
            bulk.append(at, pieces[at])
            at += 1
        elif move == "extend":
            n = rnd.randint(1, 4)
            bulk.extend(at, pieces[at : at + n])
            at += len(pieces[at : at + n])
        elif move == "text":
            assert bulk.text == "".join(pieces[:at])
        elif at:
            step = rnd.randrange(at)
            assert bulk.scan_at(step) == one.scan_at(step)
    assert bulk.text == one.text and list(bulk.frag_end) == list(one.frag_end)
    for event in range(len(pieces)):
        assert bulk.scan_at(event) == one.scan_at(event), (pieces, event)
    assert bulk.surrogate_split_at == one.surrogate_split_at
