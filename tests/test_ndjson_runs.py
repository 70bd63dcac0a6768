"""Ollama's runs of text lines, read in bulk, read exactly as line by line.

``stream_from_bytes`` reads an NDJSON capture with ``fraglens.reading.ndjson_runs``
(runs of lines that only add text taken at once); ``frame`` +
``stream_from_framed`` reads the same bytes one line at a time. For any
capture both must give the same events (kind, text, span, payload range), the
same type labels, the same text and reasoning records per choice (timing reads
them), the same calls and the same report, whatever breaks a run: a tool call,
another field, another key order, blank lines, line ends, escapes, non-ASCII
text, lone surrogates, a time stamp of another length, a line cut anywhere.
"""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.adapters.ollama import OllamaAdapter
from fraglens.engine.reassembler import Reassembler
from fraglens.framing.detect import ndjson_start, read_stream
from fraglens.framing.events import FramingError
from fraglens.reading import ndjson_runs, readers
from fraglens.reading.capture import stream_from_bytes, stream_from_framed
from fraglens.reading.findings import report_replaced_bytes
from fraglens.reading.readers import frame
from fraglens.reading.stream import Stream
from fraglens.report.document import build_report

from .conftest import SAMPLES, examples

# -- captures -------------------------------------------------------------------

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _time(k: int) -> str:
    # Ollama's clock: nanosecond fractions with trailing zeros cut, so the
    # stamp's length varies from line to line
    return f"2025-09-12T11:05:{k % 60:02d}.{(k * 7919) % 1_000_000:d}Z"


def _text_line(piece: str, k: int = 0, channel: str = "content") -> str:
    message = ({"role": "assistant", "content": piece} if channel == "content"
               else {"role": "assistant", "content": "", "thinking": piece})
    return _DUMPS({"model": "qwen3:8b", "created_at": _time(k), "message": message,
                   "done": False})


def _call_line(k: int) -> str:
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris", "n": k}}}
    return _DUMPS({"model": "qwen3:8b", "created_at": _time(k),
                   "message": {"role": "assistant", "content": "", "tool_calls": [call]},
                   "done": False})


def _done_line(k: int = 0) -> str:
    return _DUMPS({"model": "qwen3:8b", "created_at": _time(k),
                   "message": {"role": "assistant", "content": ""}, "done": True,
                   "done_reason": "stop", "eval_count": 9})


def _capture(lines: list[str], eol: str = "\n") -> bytes:
    return "".join(line + eol for line in lines).encode("utf-8", "surrogatepass")


def _pieces(n: int, size: int = 7) -> list[str]:
    text = "".join(f'row {i}: "déjà vu" \\ tab\t€ 😀\n' for i in range(n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _answer(pieces: list[str], channel: str = "content") -> list[str]:
    return [*(_text_line(p, k, channel) for k, p in enumerate(pieces)), _call_line(1),
            _done_line(2)]


# -- what must agree ------------------------------------------------------------


def _one_by_one(data: bytes, **kwargs):
    stream = stream_from_framed(frame(data, "capture"), **kwargs)
    report_replaced_bytes(stream, data)
    return stream


def _state(stream) -> tuple:
    # each event's text is read from its payload's range: a wrong range shows
    events = [(e.kind, e.data, e.event, e.id, e.span, e.at) for e in stream.events]
    r = stream.reassembler
    choices = {n: (list(c.text), list(c.reasoning), list(c.finishes))
               for n, c in r.choices.items()}
    frags = [(c.seq, list(c.frag_event), list(c.frag_end), c.text) for c in r.calls]
    report = json.dumps(build_report(stream), sort_keys=True)
    return events, list(stream.labels), choices, frags, report, stream.framing


def _agree(data: bytes, **kwargs) -> None:
    expected = _state(_one_by_one(data, **kwargs))
    bulk, framed = stream_from_bytes(data, "capture", **kwargs)
    assert _state(bulk) == expected
    assert framed.framing == "ndjson"


@pytest.fixture
def taken(monkeypatch):
    """How many lines each bulk read took."""
    counts: list[int] = []
    real = Stream.take_text_run

    def spy(self, choice, channel, texts, *rest):
        counts.append(len(texts))
        return real(self, choice, channel, texts, *rest)

    monkeypatch.setattr(Stream, "take_text_run", spy)
    return counts


# -- tests ----------------------------------------------------------------------


@pytest.mark.parametrize("channel", ["content", "reasoning"])
def test_a_long_answer_is_read_in_runs_and_agrees(taken, channel):
    pieces = _pieces(800)
    _agree(_capture(_answer(pieces, channel)))
    # nearly every text line came in a run, though every line has its own time
    assert sum(taken) > 0.95 * len(pieces)


def test_lines_with_one_time_stamp_run_too(taken):
    pieces = _pieces(300)
    lines = [_DUMPS({"model": "m", "created_at": "2025-01-01T00:00:00Z",
                     "message": {"role": "assistant", "content": p}, "done": False})
             for p in pieces]
    _agree(_capture(lines))
    assert sum(taken) > 0.95 * len(pieces)


def test_lines_without_a_time_stamp_run_on_the_piece_alone(taken):
    pieces = _pieces(300)
    lines = [_DUMPS({"message": {"role": "assistant", "content": p}, "done": False})
             for p in pieces]
    _agree(_capture(lines))
    assert sum(taken) > 0.95 * len(pieces)


def test_a_run_keeps_the_label_its_lines_have(taken):
    # a relay that adds a type: the stream view shows it for every line of the run
    pieces = _pieces(100)
    lines = [_DUMPS({"object": "chat.piece", "created_at": _time(k),
                     "message": {"role": "assistant", "content": p}, "done": False})
             for k, p in enumerate(pieces)]
    _agree(_capture(lines))
    assert sum(taken) > 0.9 * len(pieces)
    stream, _ = stream_from_bytes(_capture(lines))
    assert set(stream.labels) == {"chat.piece"}


def test_blank_lines_between_text_lines(taken):
    lines = [_text_line(p, k) for k, p in enumerate(_pieces(100))]
    for at in range(5, len(lines), 37):
        lines[at:at] = ["", "  "]
    _agree(_capture(lines))
    assert sum(taken) > 0.9 * 100


@pytest.mark.parametrize("eol", ["\n", "\r\n", " \n", "\t\r\n"])
def test_line_ends(eol):
    _agree(_capture(_answer(_pieces(200)), eol))


def test_runs_longer_than_one_bulk_read(monkeypatch, taken):
    monkeypatch.setattr(ndjson_runs, "MAX_RUN", 7)
    _agree(_capture(_answer(_pieces(200))))
    assert max(taken) == 7


@pytest.mark.parametrize("budget", [61, 4096, 1 << 19, 1 << 22])
def test_any_budget_a_read_goes_by(monkeypatch, budget):
    # a long line after the run, which a budget cuts: the search for the run's
    # lines stops at it in one step (a search that went on one byte at a time
    # would take minutes on this megabyte line: quadratic)
    lines = [_text_line(p, k) for k, p in enumerate(_pieces(300))]
    call = {"function": {"name": "f", "arguments": {"blob": "x" * 1_000_000}}}
    lines.append(_DUMPS({"model": "m", "created_at": "t",
                         "message": {"role": "assistant", "content": "", "tool_calls": [call]},
                         "done": False}))
    lines += [_text_line(p, k) for k, p in enumerate(_pieces(30))]
    monkeypatch.setattr(readers, "DRAIN_BUDGET", budget)
    _agree(_capture(lines))


_INTERRUPTIONS = [
    "",  # a blank line
    "   ",
    "  " + _text_line("indented"),
    _call_line(5),
    _done_line(6),  # a done line in the middle
    _text_line(""),  # an empty piece: a line that adds nothing
    _text_line("", 3, "reasoning"),
    _text_line("thought", 3, "reasoning"),
    '{"model":"qwen3:8b","created_at":"x","message":{"content":"order","role":"assistant"},'
    '"done":false}',
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"assistant","content":"more"},'
    '"done":false,"error":null}',
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"user","content":"role"},'
    '"done":false}',
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"assistant","content":"twins",'
    '"content":"second"},"done":false}',
    '{"model":"qwen3:8b","created_at":"x","created_at":"y","message":{"role":"assistant",'
    '"content":"twin stamps"},"done":false}',
    '{"model":"qwen3:8b","created_at":7,"message":{"role":"assistant","content":"number"},'
    '"done":false}',
    '{"model":"qwen3:8b","created_at":"x", "message":{"role":"assistant","content":"space"},'
    '"done":false}',
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"assistant","content":"esc \\u00e9 '
    '\\ud83d\\ude00 \\ud800 \\/ \\" \\\\"},"done":false}',
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"assistant","content":"bad \\x"},'
    '"done":false}',
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"assistant","content":"ctl \x01"},'
    '"done":false}',
    '{"model":"qwen3:8b","created_at":"\\u00e9\\ud800","message":{"role":"assistant",'
    '"content":"escaped stamp"},"done":false}',
    '{"error":"model crashed"}',
    "not json at all",
    '{"model":"qwen3:8b","created_at":"x","message":{"role":"assistant","content":"cut',
]


@pytest.mark.parametrize("extra", _INTERRUPTIONS, ids=range(len(_INTERRUPTIONS)))
def test_interruptions_end_a_run_and_reading_goes_on(extra):
    lines = _answer(_pieces(60))
    for at in (0, 1, 40, len(lines) - 2):
        mixed = [*lines[:at], extra, *lines[at:]]
        if ndjson_start(_capture(mixed)) is None:
            continue  # no longer NDJSON (a first line that is not JSON): not this reader's
        _agree(_capture(mixed))


def test_a_capture_cut_anywhere(monkeypatch):
    monkeypatch.setattr(ndjson_runs, "_FIRST_SLICE", 1)
    data = _capture(_answer(_pieces(20)))
    for cut in range(0, len(data), 13):
        part = data[:cut]
        if ndjson_start(part) is None:
            continue  # one line or none: a body, or nothing
        _agree(part)


def test_a_capture_with_no_last_newline():
    _agree(_capture(_answer(_pieces(50)))[:-1])
    lines = [_text_line(p, k) for k, p in enumerate(_pieces(50))]
    _agree("\n".join(lines).encode())  # the last line, a text line, has none


def _replaced(stream) -> list[int]:
    return [d.event for d in stream.reassembler.diagnostics() if d.code == "bytes-replaced"]


def test_a_byte_that_is_not_utf8_is_replaced_in_its_line_and_the_rest_read():
    lines = _answer(_pieces(50))
    bad = next(k for k, line in enumerate(lines) if "déjà" in line)
    data = _capture(lines).replace("déjà".encode(), b"d\xe9j\xe0", 1)
    assert ndjson_start(data) is not None
    _agree(data)
    stream, _ = stream_from_bytes(data, "capture")
    assert _replaced(stream) == [bad]  # only the line that holds them, as in SSE
    doc = build_report(stream)
    assert doc["end"] == "terminal-event" and len(doc["calls"]) == 1
    assert "d\ufffdj\ufffd" in doc["text"]["0"]


def test_a_capture_cut_mid_character_is_read_to_the_cut():
    data = _capture(_answer(_pieces(30)))
    cut = data.index("😀".encode()) + 2  # two of the emoji's four bytes
    stream, framed = stream_from_bytes(data[:cut], "capture")
    assert framed.framing == "ndjson" and _replaced(stream) == [len(stream.events) - 1]
    _agree(data[:cut])


def test_a_bom_and_blank_lines_before_the_first_line():
    _agree(b"\xef\xbb\xbf\n\n  " + _capture(_answer(_pieces(50))))


def test_a_forced_format_reads_line_by_line(taken):
    data = _capture(_answer(_pieces(100)))
    _agree(data, format="openai-chat")
    assert taken == []  # that adapter has no text continuation


@pytest.mark.parametrize(
    "path", sorted(p for p in SAMPLES.iterdir() if p.suffix == ".ndjson"), ids=lambda p: p.name
)
def test_every_sample_agrees(path):
    _agree(path.read_bytes())


# -- the framing decision -------------------------------------------------------


def _old_read_ndjson(data: bytes, start: int) -> list[tuple] | None:
    """The line reader as it was before it could frame a slice at a time."""
    lines = data[start:].split(b"\n")
    content = [line for line in lines if line.strip()]
    if len(content) < 2:
        return None
    try:
        json.loads(content[0])
    except (ValueError, RecursionError):
        return None
    out, pos = [], start
    for line in lines:
        end = pos + len(line) + 1
        body = line.strip()
        if body:
            at = pos + len(line) - len(line.lstrip())
            out.append(((pos, min(end, len(data))), (at, at + len(body))))
        pos = end
    return out


def _framing(data: bytes) -> str | None:
    try:
        return read_stream(data).framing
    except FramingError:
        return None


_LINE_BITS = st.sampled_from([
    "{}", '{"a":1}', "[1]", "{", "}", "x", " ", "\t", "\r", "\x0b", "\x0c", '"s"', "1",
    '{"message":{"role":"assistant","content":"hi"},"done":false}', "\u00e9", "\ufeff",
    "data: {}", '{"fraglens":"recording"}',
])


@settings(max_examples=examples(300), deadline=None)
@given(lines=st.lists(st.lists(_LINE_BITS, max_size=3).map("".join), max_size=5),
       bom=st.booleans(), bad=st.booleans())
def test_ndjson_start_is_read_streams_decision(lines, bom, bad):
    data = ("\ufeff" if bom else "").encode() + "\n".join(lines).encode()
    if bad:
        data += b"\n\xff"
    start = ndjson_start(data)
    if start is not None:
        framed = read_stream(data)
        assert framed.framing == "ndjson"
        assert data[start : start + 1] == b"{"
        old = _old_read_ndjson(data, start)
        assert old == [(e.span, e.at) for e in framed.events]
    elif data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        assert _framing(data) != "ndjson"


# -- the adapter and the engine -------------------------------------------------


_PAYLOADS = st.fixed_dictionaries(
    {"done": st.sampled_from([False, True, None, 0])},
    optional={
        "created_at": st.one_of(st.text(max_size=5), st.integers()),
        "error": st.sampled_from([None, "", "boom", {}]),
        "message": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "role": st.sampled_from(["assistant", "user", None]),
                    "content": st.one_of(st.text(max_size=4), st.none(), st.integers()),
                    "thinking": st.one_of(st.text(max_size=4), st.none()),
                    "tool_calls": st.just([{"function": {"name": "f", "arguments": {}}}]),
                },
            ),
        ),
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(payload=_PAYLOADS, stamp=st.text(max_size=5))
def test_the_text_continuation_is_what_feed_reads(payload, stamp):
    found = OllamaAdapter.text_continuation(payload)
    ops = OllamaAdapter().feed(payload)
    if found is not None:
        choice, channel, text = found
        assert [(op.choice, op.text, op.channel) for op in ops] == (
            [(choice, text, channel)] if text else [])
    # the time stamp is read by nothing: another one, the same ops
    other = {**payload, "created_at": stamp}
    assert OllamaAdapter().feed(other) == ops
    assert OllamaAdapter.text_continuation(other) == found


def test_a_run_of_empty_pieces_makes_no_choice():
    r = Reassembler()
    r.text_run(3, 0, "content", ["", ""])
    assert r.choices == {}
    r.text_run(5, 0, "reasoning", ["", "a", "", "b"])
    assert r.choices[0].reasoning == [(6, "a"), (8, "b")]
    assert r.choices[0].text == []


# -- any capture ----------------------------------------------------------------

_PIECE = st.text(
    alphabet=st.sampled_from(list('ab {}[]":,\\\n\t\x00\x1f\u00e9\u2028\U0001f600')
                             + ["\ud83d", "\ude00"]),
    max_size=10,
)
_STAMP = st.one_of(st.integers(min_value=0, max_value=10**6).map(_time),
                   st.text(alphabet="0123456789:TZ.-\u00e9", max_size=30))
_LINE = st.one_of(
    st.tuples(st.just("text"), _PIECE, _STAMP),
    st.tuples(st.just("think"), _PIECE, _STAMP),
    st.tuples(st.just("call"), st.just(""), _STAMP),
    st.tuples(st.just("blank"), st.just(""), st.just("")),
    st.tuples(st.just("raw"), st.sampled_from(["oops", "{", '{"error":"e"}', "[]"]), st.just("")),
)


def _line(kind: str, piece: str, stamp: str, dumps=_DUMPS) -> str:
    if kind in ("text", "think"):
        channel = "content" if kind == "text" else "reasoning"
        message = ({"role": "assistant", "content": piece} if channel == "content"
                   else {"role": "assistant", "content": "", "thinking": piece})
        return dumps({"model": "m", "created_at": stamp, "message": message, "done": False})
    if kind == "call":
        return _call_line(len(stamp))
    return piece  # a blank line, or one that is not a text line


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(_LINE, min_size=2, max_size=60),
    runs=st.lists(st.tuples(st.integers(min_value=0, max_value=59),
                            st.integers(min_value=1, max_value=40), _STAMP), max_size=3),
    eol=st.sampled_from(["\n", "\r\n"]),
    ascii_only=st.booleans(),
    cut=st.one_of(st.none(), st.integers(min_value=0)),
    first=st.sampled_from([1, 100, 4096]),
    most=st.sampled_from([3, 1 << 15]),
    fewest=st.sampled_from([1, 8]),
    bad=st.sampled_from([b"", b"\xff", b"\xc3", b"\xe2\x82"]),
    bad_at=st.integers(min_value=0),
)
def test_any_capture_agrees(lines, runs, eol, ascii_only, cut, first, most, fewest, bad, bad_at):
    # long stretches of text lines among the random ones, so that runs happen
    for at, length, stamp in runs:
        lines[at:at] = [("text", f"p{k}", stamp if k % 3 else _time(k)) for k in range(length)]
    # escaped, a lone surrogate is JSON; raw, it is no UTF-8, replaced in its line
    dumps = json.JSONEncoder(ensure_ascii=ascii_only, separators=(",", ":")).encode
    text = eol.join(_line(*line, dumps) for line in lines) + eol
    data = text.encode("utf-8", "surrogatepass")
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    at = bad_at % (len(data) + 1)
    data = data[:at] + bad + data[at:]  # a byte that is not UTF-8, or half a character
    if ndjson_start(data) is None:
        return  # not NDJSON: the other readers' business
    # runs from the first lines on (a whole read frames 4 KiB line by line first)
    with mock.patch.object(ndjson_runs, "_FIRST_SLICE", first), \
            mock.patch.object(ndjson_runs, "MAX_RUN", most), \
            mock.patch.object(ndjson_runs, "_FEWEST", fewest):
        _agree(data)


def test_a_run_of_lines_that_each_hold_a_bad_byte_is_read_as_its_lines():
    # the bad byte sits before the piece in every line: offsets learned from
    # the line's text, where it is three bytes, would cut each piece wrongly
    lines = [_text_line(f"ab{k}", k) for k in range(40)] + [_done_line(41)]
    data = _capture(lines).replace(b"qwen3:8b", b"qwen3\xff8b")
    _agree(data)
    stream, _ = stream_from_bytes(data, "capture")
    assert build_report(stream)["text"]["0"] == "".join(f"ab{k}" for k in range(40))


_LINES = st.lists(st.sampled_from([
    '{"a": 1}', '{"a": [1,\n 2]}', "{", "}", '"x"', "[1]", "", " ", "\x0b", "\x0c", "\t",
    '{"b": "d\\u00e9j\\u00e0"}', "not json", "{}  ", "\r", '{"c": {}}\r',
    '{"fraglens": "recording", "version": 1}', '{"x": 1, "fraglens": "recording"}',
    '{"fraglens": "other"}',
]), min_size=1, max_size=5)


@settings(max_examples=examples(300))
@given(lines=_LINES, bom=st.booleans(), end=st.sampled_from(["", "\n", " \n"]))
def test_the_bulk_reader_takes_what_read_stream_reads_as_ndjson(lines, bom, end):
    # ndjson_start makes read_stream's choice without decoding the input
    # whole: it never takes one JSON value spread over lines, or one line
    # followed by whitespace only, and takes every NDJSON capture of objects
    data = ("\ufeff" if bom else "").encode() + ("\n".join(lines) + end).encode()
    try:
        framing = read_stream(data).framing
    except FramingError:
        framing = None
    start = ndjson_start(data)
    if start is not None:
        assert framing == "ndjson"
    elif framing == "ndjson":
        assert data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"{"  # lines of arrays
