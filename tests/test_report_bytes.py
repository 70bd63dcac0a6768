"""The one-line report with its large values written by msgspec and spliced
in (report/json_bytes.py), byte for byte against json's writing of it.

Every sample, every real shape of every format and generated reports (large
strings with lone surrogates, keys and strings that are the splice's marker
or hold its text, arguments with floats that are not declared exact) must
come out as ``json.dumps(doc, ensure_ascii=False) + "\\n"`` encoded as UTF-8,
or, where that cannot be encoded, as the same with ``ensure_ascii=True``.
And Ollama's arguments objects, written by msgspec when a large line holds
no float (``Stream._PLAIN_AT``, ``OllamaAdapter.feed_plain``), must give
the stream and the report json's writing gives.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.adapters.base import dump
from fraglens.engine import finalize as finalize_module
from fraglens.reading import stream as stream_module
from fraglens.reading.capture import load_stream, stream_from_bytes
from fraglens.report import json_bytes
from fraglens.report.document import build_report, exact_arguments, utf8_parts

from .conftest import ROOT, SAMPLES, examples
from .test_plain_json import ANY, FLOATLESS, TEXT

sys.path.insert(0, str(ROOT / "bench"))
from shapes import FORMATS, real_shape  # noqa: E402

ALL = sorted([*SAMPLES.glob("*.sse"), *SAMPLES.glob("*.ndjson"), *SAMPLES.glob("*.eventstream"),
              *SAMPLES.glob("recording_*.jsonl"), *SAMPLES.glob("websocket_*.jsonl")])


def _json_bytes(doc: Any) -> bytes:
    """How the report was written before any of it was spliced."""
    try:
        return (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(doc, ensure_ascii=True) + "\n").encode("utf-8")


@pytest.fixture
def splice_all(monkeypatch):
    """Every string and exact value spliced, however short, msgspec loaded or not."""
    monkeypatch.setattr(json_bytes, "_LEAST", 1)
    monkeypatch.setattr(json_bytes, "_WORTH_LOADING", 0)


def _written(doc: Any, exact: list[Any]) -> tuple[bytes, int]:
    parts = utf8_parts(doc, pretty=False, exact=exact)
    return b"".join(parts), len(parts)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_sample_is_written_as_json_writes_it(splice_all, path):
    try:
        stream, _ = load_stream(str(path), keep_naive=True)
    except Exception:  # a sample check refuses: no report to write
        pytest.skip("check refuses this sample")
    doc = build_report(stream, compare=True)
    written, parts = _written(doc, exact_arguments(stream))
    assert written == _json_bytes(doc)
    large = any(c["arguments_raw"] for c in doc["calls"]) or any(doc["text"].values())
    if large and b"\\ud" not in written:  # a lone surrogate: json writes it whole
        assert parts > 2  # spliced, not written whole by json (its text and line end)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("calls", [1, 3])
def test_every_real_shape_is_written_as_json_writes_it(monkeypatch, fmt, calls):
    import msgspec  # noqa: F401  (loaded: large values are spliced whatever their size)

    stream, _ = stream_from_bytes(real_shape(fmt, calls, 40_000), "capture")
    doc = build_report(stream)
    exact = exact_arguments(stream)
    assert len(exact) == calls  # their arguments hold no float
    written_values: list[Any] = []
    real_utf8 = json_bytes.utf8

    def spy(value: Any) -> bytes | None:
        written_values.append(value)
        return real_utf8(value)

    monkeypatch.setattr(json_bytes, "utf8", spy)
    written, parts = _written(doc, exact)
    assert written == _json_bytes(doc)
    # each call's arguments and their text were written by msgspec
    for call in doc["calls"]:
        assert any(v is call["arguments"] for v in written_values)
        assert any(v is call["arguments_raw"] for v in written_values)
    assert parts == 2 * len(written_values) + 1


def test_large_values_are_spliced_once_msgspec_is_loaded():
    import msgspec  # noqa: F401

    stream, _ = stream_from_bytes(real_shape("openai-chat", 1, 20_000), "capture")
    doc = build_report(stream)
    assert len(utf8_parts(doc, pretty=False, exact=exact_arguments(stream))) > 2


# -- generated reports --------------------------------------------------------------

MARKER = "\x00fraglens-spliced-0"
STRINGS = st.one_of(TEXT, st.sampled_from([
    MARKER, "\x00fraglens-spliced-1", f'x"{MARKER}', f"{MARKER}\"", f'"{MARKER}"', "\ud800",
    "déjà vu " * 3]))


@st.composite
def _reports(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any]]:
    """A report-shaped document: text, calls with arguments parsed and raw,
    floats where the report has them; the exact values among the arguments."""
    exact: list[Any] = []
    calls = []
    for position in range(draw(st.integers(0, 3))):
        floatless = draw(st.booleans())
        args = draw(FLOATLESS if floatless else ANY)
        if floatless and draw(st.booleans()):
            exact.append(args)
        call: dict[str, Any] = {"position": position, draw(STRINGS): draw(STRINGS),
                                "arguments_raw": draw(STRINGS), "arguments": args}
        if draw(st.booleans()):
            call["arguments_streamed"] = draw(STRINGS)
        calls.append(call)
    doc = {
        "fraglens": 2,
        "text": draw(st.dictionaries(st.sampled_from(["0", "1", MARKER]), STRINGS, max_size=2)),
        "cost": {"total": draw(st.floats())},
        "calls": calls,
        draw(STRINGS): draw(ANY),
    }
    if draw(st.booleans()):
        doc["reasoning"] = {"0": draw(STRINGS)}
    return doc, exact


@settings(max_examples=examples(500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(report=_reports())
def test_any_report_is_written_as_json_writes_it(splice_all, report):
    doc, exact = report
    assert _written(doc, exact)[0] == _json_bytes(doc)


def test_a_value_that_is_the_marker_writes_the_report_whole(splice_all):
    doc = {"text": {"0": "déjà vu"}, "calls": [{"name": MARKER, "arguments_raw": "{}"}]}
    assert _written(doc, [])[1] == 2  # written whole: its text and line end
    assert _written(doc, [])[0] == _json_bytes(doc)


def test_a_lone_surrogate_escapes_the_whole_report_as_before(splice_all):
    doc = {"text": {"0": "déjà vu"}, "calls": [{"arguments_raw": "a\ud800b", "x": "é"}]}
    assert _written(doc, [])[0] == _json_bytes(doc)
    assert b"\\u00e9" in _written(doc, [])[0]


def test_arguments_not_known_exact_are_written_by_json(splice_all):
    args = {"n": 1e16, "m": 0.00001}
    doc = {"calls": [{"arguments_raw": json.dumps(args), "arguments": args}]}
    assert _written(doc, [])[0] == _json_bytes(doc)
    assert b"1e+16" in _written(doc, [])[0]


# -- Ollama's arguments objects ----------------------------------------------------

def _ollama(arguments: Any, text: str = "hi") -> bytes:
    lines = [
        {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": text},
         "done": False},
        {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": "",
         "tool_calls": [{"function": {"name": "f", "arguments": arguments}}]}, "done": False},
        {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": ""},
         "done": True, "done_reason": "stop", "eval_count": 9},
    ]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: sent as its escape
        return "".join(json.dumps(line) + "\n" for line in lines).encode("ascii")


def _read(data: bytes, plain_at: int, monkeypatch) -> tuple[Any, bytes, list[str]]:
    monkeypatch.setattr(stream_module, "_PLAIN_AT", plain_at)
    stream, _ = stream_from_bytes(data, "capture")
    doc = build_report(stream)
    written = b"".join(utf8_parts(doc, pretty=False, exact=exact_arguments(stream)))
    return doc, written, [c.final_text for c in stream.reassembler.calls]


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(arguments=st.one_of(ANY, st.dictionaries(TEXT, ANY)))
def test_ollama_arguments_written_by_msgspec_are_dumps_own(monkeypatch, splice_all, arguments):
    data = _ollama(arguments)
    plain = _read(data, 0, monkeypatch)  # every line read knowing its floats
    assert plain == _read(data, 1 << 40, monkeypatch)  # no line
    doc, written, texts = plain
    if arguments is not None and not isinstance(arguments, str):  # no key; text as it is
        assert texts == [dump(arguments)]
    assert written == _json_bytes(doc)


def test_a_large_ollama_line_is_written_by_msgspec(monkeypatch):
    arguments = {"rows": [{"line": i, "text": f"word {i}, déjà vu"} for i in range(40_000)]}
    data = _ollama(arguments)
    assert len(data) > stream_module._PLAIN_AT
    seen: list[str] = []
    real = stream_module.Stream._apply

    def spy(self, number, payload, event, plain=False):
        if plain:
            seen.append("plain")
        return real(self, number, payload, event, plain)

    monkeypatch.setattr(stream_module.Stream, "_apply", spy)
    parsed: list[str] = []
    real_loads = finalize_module.strict_loads
    monkeypatch.setattr(finalize_module, "strict_loads",
                        lambda text: parsed.append(text) or real_loads(text))
    stream, _ = stream_from_bytes(data, "capture")
    assert seen == ["plain"]
    assert stream.reassembler.calls[0].final_text == dump(arguments)
    # finalize took the line's value for the text msgspec wrote of it: not read again
    assert parsed == []
    assert stream.reassembler.calls[0].result.arguments == arguments
    doc = build_report(stream)
    assert b"".join(utf8_parts(doc, pretty=False, exact=exact_arguments(stream))) == _json_bytes(
        doc)
