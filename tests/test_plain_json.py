"""JSON read knowing whether it holds a float, and written by msgspec
(engine/plain_json.py), against the standard library.

``strict_loads`` must read what ``json.loads`` reads, raise what it raises,
and say "no float" exactly when the value holds none, whatever the numbers'
spelling (fractions, exponents, ``-0``, ``NaN``, ``Infinity``, ``1e999``,
integers past 64 bits). The writers must write, for any value without a
float, exactly json's bytes (compact or with json's spaces), or say None,
which they may only do for a string with a lone surrogate.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.engine.plain_json import compact_text, strict_loads, utf8

from .conftest import examples

#: strings of every kind of character: controls, quotes and backslashes, DEL,
#: U+2028, non-ASCII, astral characters and lone surrogates
TEXT = st.text(st.one_of(
    st.characters(codec=None),
    st.sampled_from(['"', "\\", "/", "\x7f", "\u2028", "\u2029", "\x00", "\x1f", "\b", "\f",
                     "\ud800", "\udfff", "é", "😀"]),
), max_size=12)
INTS = st.one_of(st.integers(), st.integers(min_value=-(10**40), max_value=10**40),
                 st.sampled_from([0, -1, 2**63, -(2**63) - 1, 2**64, 10**300]))
FLOATS = st.one_of(st.floats(), st.sampled_from(
    [1e16, 1e-05, 1.5e300, 5e-324, -0.0, 100000.0, 0.1, float("nan"), float("inf")]))


def _values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)), max_leaves=24)


FLOATLESS = _values(st.one_of(st.none(), st.booleans(), INTS, TEXT))
ANY = _values(st.one_of(st.none(), st.booleans(), INTS, TEXT, FLOATS))


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(map(_has_float, value))
    if isinstance(value, dict):
        return any(map(_has_float, value.values()))
    return False


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, and of the same types throughout."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _json_outcome(text: str) -> tuple[str, Any]:
    try:
        return "value", json.loads(text)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))


def _agrees(text: str) -> None:
    kind, expected = _json_outcome(text)
    try:
        value, no_floats = strict_loads(text)
    except (ValueError, RecursionError) as exc:
        assert (kind, expected) == ("error", (type(exc), str(exc)))
        return
    assert kind == "value"
    assert _same(value, expected)
    assert no_floats is not _has_float(value)


# -- reading ------------------------------------------------------------------------

#: number spellings json reads, and some it refuses
NUMBERS = ["0", "-0", "1", "-1", "1.0", "-0.0", "0.5", "1e5", "1E5", "1e+5", "1e-5", "1.5E-7",
           "1e999", "-1e999", "1" + "0" * 400, "1" + "0" * 400 + ".0", "18446744073709551616",
           "NaN", "Infinity", "-Infinity", "01", ".5", "1.", "+1", "-", "1e", "0x1"]


@settings(max_examples=examples(400), deadline=None)
@given(value=ANY, spaced=st.booleans(), ascii_only=st.booleans())
def test_strict_loads_reads_what_json_reads_and_knows_its_floats(value, spaced, ascii_only):
    separators = None if spaced else (",", ":")
    _agrees(json.dumps(value, ensure_ascii=ascii_only, separators=separators))


@settings(max_examples=examples(400), deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(NUMBERS), st.sampled_from(
    ["[", "]", "{", "}", ",", ":", '"a"', '"1.5"', '"NaN"', " ", "\ufeff", "true", "null",
     '"\\ud800"', '"\\u00e9"', "x"])), max_size=12))
def test_strict_loads_agrees_on_any_text(parts):
    _agrees("".join(parts))


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("shape", ["{}", '{{"a":[1,{}]}}', "[{}, 2]", '[2, "x", {}]'])
def test_every_number_spelling_in_every_place(number, shape):
    _agrees(shape.format(number))


def test_an_error_after_a_float_is_json_own_error():
    _agrees('{"a": 1.5, "b": }')
    _agrees('[1.5] x')
    _agrees("\ufeff[1]")


def test_nesting_too_deep_raises_as_json_does():
    _agrees("[" * 100_000 + "]" * 100_000)
    _agrees("[1.5, " + "[" * 100_000 + "]" * 100_000 + "]")


# -- writing ------------------------------------------------------------------------

def _lone_surrogate(value: Any) -> bool:
    """A string or key of ``value`` holds a lone surrogate (json writes it as
    it is, with ``ensure_ascii=False``)."""
    return any("\ud800" <= c <= "\udfff" for c in json.dumps(value, ensure_ascii=False))


@settings(max_examples=examples(500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(value=FLOATLESS)
def test_msgspec_writes_json_own_text_of_values_without_floats(value):
    compact = compact_text(value)
    spaced = utf8(value)
    if _lone_surrogate(value):
        assert compact is None and spaced is None
        return
    assert compact == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert spaced == json.dumps(value, ensure_ascii=False).encode("utf-8")


@settings(max_examples=examples(300), deadline=None)
@given(text=TEXT, ascii_only=st.booleans(), times=st.integers(1, 3))
def test_any_string_is_written_as_json_writes_it(text, ascii_only, times):
    if ascii_only:
        text = text.encode("ascii", "ignore").decode("ascii")
    text *= times
    expected = json.dumps(text, ensure_ascii=False)
    if _lone_surrogate(text):
        assert utf8(text) is None
    else:
        assert utf8(text) == expected.encode("utf-8")


def test_a_string_written_keeps_no_copy_of_its_utf8():
    import sys

    text = "déjà vu " * 10_000
    size = sys.getsizeof(text)
    assert utf8(text) == json.dumps(text, ensure_ascii=False).encode("utf-8")
    assert sys.getsizeof(text) == size


@pytest.mark.parametrize("value", [1e16, 1e-05, float("nan"), float("inf"), [0.5, 1e22]])
def test_floats_are_what_must_never_reach_msgspec(value):
    """The reason the writers take only values read with no float: msgspec
    spells these otherwise than json, or not at all."""
    import msgspec

    assert msgspec.json.encode(value) != json.dumps(value, separators=(",", ":")).encode()
    assert strict_loads(json.dumps([value]))[1] is False
