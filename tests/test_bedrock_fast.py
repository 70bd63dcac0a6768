"""The InvokeModel chunk's inner JSON read without json.loads's layers
(adapters/bedrock.py ``_loads``) reads every input as json.loads does."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from fraglens.adapters.bedrock import _loads

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=6,
)
encodings = st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])


def _outcome(fn, raw: bytes):
    try:
        return "value", fn(raw)
    except (ValueError, RecursionError) as exc:
        return "error", type(exc).__name__


@given(values.map(lambda v: {"v": v}), encodings, st.sampled_from(["", " ", "\n", "x", "{}"]))
@example({"v": "\ud800"}, "utf-8", "")  # a lone surrogate, escaped
def test_inner_json_reads_as_json_loads_reads_it(value, encoding, tail):
    raw = (json.dumps(value) + tail).encode(encoding, "surrogatepass")
    assert _outcome(_loads, raw) == _outcome(json.loads, raw)


@given(st.binary(max_size=12).map(lambda b: b"{" + b))
@example(b'{"a": "\xed\xa0\x80"}')  # a surrogate in raw UTF-8: passed through, as json does
@example(b'{"a": "\xff"}')
def test_any_bytes_read_as_json_loads_reads_them(raw):
    assert _outcome(_loads, raw) == _outcome(json.loads, raw)
