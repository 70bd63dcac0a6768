"""A choice's text kept compactly (engine/text_pieces.py) reads as the list of
``(event, piece)`` it stands for, however it grew: pieces appended one by
one, runs read in bulk (with empty pieces, which add nothing), the whole text
asked for in between."""

from __future__ import annotations

from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fraglens.engine.text_pieces import TextPieces

from .conftest import examples

_PIECES = st.text(alphabet=st.sampled_from(list("ab \n\u00e9\U0001f600")), max_size=4)
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), _PIECES),
        st.tuples(st.just("run"), st.lists(_PIECES, max_size=6)),
        st.tuples(st.just("text"), st.none()),
    ),
    max_size=12,
)


def _grown(steps: list) -> tuple[TextPieces, list[tuple[int, str]]]:
    kept, plain, event = TextPieces(), [], 0
    for how, what in steps:
        if how == "append":
            kept.append((event, what))
            plain.append((event, what))
            event += 1
        elif how == "run":
            kept.extend_run(event, what)
            plain.extend((event + k, p) for k, p in enumerate(what) if p)
            event += len(what)
        else:
            assert kept.text == "".join(p for _, p in plain)
    return kept, plain


@settings(max_examples=examples(300))
@given(steps=_STEPS)
def test_the_pieces_read_as_the_list_they_stand_for(steps):
    kept, plain = _grown(steps)
    assert kept == plain and list(kept) == plain and len(kept) == len(plain)
    assert [kept[i] for i in range(len(plain))] == plain
    assert kept[1:-1] == plain[1:-1] and kept[::2] == plain[::2]
    if plain:
        assert kept[-1] == plain[-1]
    assert list(kept.events) == [e for e, _ in plain]
    text = "".join(p for _, p in plain)
    assert kept.text == text and kept.length == len(text)
    assert kept == plain  # the text joined keeps every piece as it was


@settings(max_examples=examples(300))
@given(steps=_STEPS, step=st.integers(-1, 30))
def test_the_text_by_a_step_and_the_event_of_a_character(steps, step):
    kept, plain = _grown(steps)
    assert kept.text_upto(step) == "".join(p for e, p in plain if e <= step)
    ends = [sum(len(p) for _, p in plain[: k + 1]) for k in range(len(plain))]
    for offset in range(len(kept.text)):
        assert kept.event_at(offset) == plain[bisect_right(ends, offset)][0]


def test_a_run_is_kept_as_one_chunk():
    kept = TextPieces()
    kept.extend_run(3, ["ab", "", "c", "d\u00e9"])
    kept.append((7, "e"))
    assert kept._chunks == ["abcd\u00e9", "e"] and list(kept.ends) == [2, 3, 5, 6]
    assert kept == [(3, "ab"), (5, "c"), (6, "d\u00e9"), (7, "e")]
    assert kept.text == "abcd\u00e9e" and kept._chunks == ["abcd\u00e9e"]


def test_an_index_past_the_end_is_refused():
    kept = TextPieces([(0, "a")])
    with pytest.raises(IndexError):
        kept[1]
    with pytest.raises(IndexError):
        kept[-2]

