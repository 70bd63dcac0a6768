"""json-repair on the damaged member alone (engine/local_repair.py).

The oracle is the value the text meant before a defect was put in: a key
without quotes, a string in single quotes, a Python literal. Reading only the
damaged member must give that value wherever json-repair on the whole text
does (it also gives it where json-repair, reading the good members around the
defect, turns a number before an unquoted key into a string), and json-repair
must see the damaged member only, not the text around it.
"""

from __future__ import annotations

import json
from typing import Any

import json_repair
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fraglens.engine.fragments import Finish, ToolDelta
from fraglens.engine.local_repair import MAX_WINDOWS, repair_locally
from fraglens.engine.reassembler import Reassembler

from .conftest import examples


def whole(text: str) -> Any:
    return json_repair.repair_json(text, return_objects=True, skip_json_loads=True)


def local(text: str, seen: list[str] | None = None) -> Any:
    def repair(t: str) -> Any:
        if seen is not None:
            seen.append(t)
        return whole(t)

    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return repair_locally(text, e.pos, repair)
    raise AssertionError(f"{text!r} is JSON")


def verdict(text: str):
    r = Reassembler()
    r.apply(0, [ToolDelta(index=0, id="c", name="f", args=text)])
    r.apply(1, [Finish(0, "tool_calls", "tool_calls")])
    r.close(1)
    return r.calls[0].result


# Keys json-repair reads without quotes (it drops a leading underscore), and
# string contents with the characters a window's end is looked for at.
KEYS = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
WORDS = st.text(alphabet="abcXY z09,:}]{[-.", max_size=10)
SCALARS = st.one_of(st.integers(-10**6, 10**6), WORDS, st.booleans(), st.none(), st.just(1.5))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=25,
)
MARK = "\x01mark\x01"


def _spots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every member of every container in ``value``."""
    out: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()
    for k, v in items:
        out.append((*path, k))
        out.extend(_spots(v, (*path, k)))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        value = value[k]
    return value


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, Any, str]:
    """(text with one defect, the value it meant, the defect's kind)."""
    meant = draw(st.one_of(st.dictionaries(KEYS, VALUES, min_size=1, max_size=6),
                           st.lists(VALUES, min_size=1, max_size=6)))
    spots = _spots(meant)
    path = draw(st.sampled_from(spots))
    parent, last = _at(meant, path[:-1]), path[-1]
    member = parent[last]
    kinds = ["single-quoted"] if isinstance(member, str) and "'" not in member else []
    kinds += ["python-literal"] if member is True or member is None else []
    kinds += ["unquoted-key"] if isinstance(parent, dict) else []
    assume(kinds)
    kind = draw(st.sampled_from(kinds))
    sep = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    value = json.loads(json.dumps(meant))  # a copy to put the mark in
    target = _at(value, path[:-1])
    if kind == "unquoted-key":
        items = list(target.items())
        target.clear()
        target.update((MARK if k == last else k, v) for k, v in items)
        wire = last
    else:
        target[last] = MARK
        wire = {"single-quoted": f"'{member}'", "python-literal": str(member)}[kind]
    text = json.dumps(value, separators=sep).replace(json.dumps(MARK), wire)
    return text, meant, kind


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_the_damaged_member_alone_reads_what_the_text_meant(case: tuple[str, Any, str]) -> None:
    text, meant, kind = case
    assume(text != json.dumps(meant))
    got = local(text)
    # never worse than json-repair on the whole text, and right on the
    # defects json-repair reads right alone: a literal, a quoted string with
    # none of the characters it might end at (it reads '{,}' in an object as
    # an empty string, on the whole text too)
    if whole(text) == meant:
        assert got == meant, (text, got)
    if kind == "python-literal" or (kind == "single-quoted" and not set(",}]") & set(text)):
        assert got == meant, (text, got)


def test_json_repair_sees_the_damaged_member_only() -> None:
    rows = [{"line": k, "text": f"word {k} of the call, {{x}}: [y]"} for k in range(2000)]
    text = json.dumps({"rows": rows}, separators=(",", ":"))
    text = text.replace('{"line":1000,', "{line:1000,")
    seen: list[str] = []
    assert local(text, seen) == {"rows": rows}
    assert seen == ["{line:1000}"]


def test_a_number_before_an_unquoted_key_stays_a_number() -> None:
    # json-repair on the whole text turns the 3180 into "3180"
    text = '{"hdg":3180,aed:true,"b":[1,2]}'
    assert whole(text) == {"hdg": "3180", "aed": True, "b": [1, 2]}
    assert local(text) == {"hdg": 3180, "aed": True, "b": [1, 2]}
    result = verdict(text)
    assert result.status == "repaired"
    assert result.arguments == {"hdg": 3180, "aed": True, "b": [1, 2]}
    # the quotes put around the key, at its offsets (12 and 15 in the text)
    assert result.repairs == ('added "\\"" at 12', 'added "\\"" at 15')


def test_an_end_inside_the_damaged_string_is_passed_over() -> None:
    # the comma inside 'x, y' is no end: the rest from there is not JSON
    assert local("""{"a": 'x, y', "b": 1}""") == {"a": "x, y", "b": 1}
    assert local("""['a], [b', 2]""") == ["a], [b", 2]


def test_a_closer_missing_inside_is_mended_a_level_up() -> None:
    # read at the array's level, "y" would look like its next element
    assert local('{"x": [1, 2, 3}, "y": 4}') == {"x": [1, 2, 3], "y": 4}


def test_each_defect_gets_its_own_window() -> None:
    meant = {f"k{i}": list(range(i, i + 20)) for i in range(40)}
    text = json.dumps(meant).replace('"k5"', "k5").replace('"k30"', "k30")
    seen: list[str] = []
    assert local(text, seen) == meant
    assert len(seen) == 2 and all(len(t) < 100 for t in seen)


def test_past_the_windows_limit_the_whole_text_is_read() -> None:
    # a sound member between each two damaged ones, else they share a window
    meant = {f"{name}{i}": i for i in range(MAX_WINDOWS + 1) for name in ("bad", "good")}
    text = json.dumps(meant)
    for i in range(MAX_WINDOWS + 1):
        text = text.replace(f'"bad{i}"', f"bad{i}")
    assert local(text) is None
    result = verdict(text)  # finalize gives json-repair the whole text then
    assert result.status == "repaired"
    assert result.arguments == meant


def test_damaged_members_side_by_side_share_a_window() -> None:
    seen: list[str] = []
    assert local("{a: 1, b: 2, c: 3}", seen) == {"a": 1, "b": 2, "c": 3}
    assert seen == ["{a: 1, b: 2, c: 3}"]


def test_damage_outside_any_container_is_not_held_to_a_member() -> None:
    assert local("tru") is None
    assert local("'just a string'") is None
    assert local('{"a": 1} x') is None  # after the top-level value


def test_json_repair_is_given_at_most_twice_the_text() -> None:
    # a window json-repair cannot read as members is tried a level out, and
    # again: eleven windows here, each longer, past twice the text in all;
    # past that allowance the whole text is left to the caller
    text = '{"a":' * 10 + "{x:1}" + "}" * 10
    seen: list[str] = []

    def unreadable(t: str) -> Any:
        seen.append(t)
        return "not a container"

    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        assert repair_locally(text, e.pos, unreadable) is None
    assert seen[:2] == ["{x:1}", '{"a":{x:1}}']
    # the eleven windows, wrapped: "{x:1}", then 6 characters more a level
    every_window = sum(5 + 6 * k for k in range(11))
    assert sum(map(len, seen)) <= 2 * len(text) < every_window
