"""A long call's runs of event-stream frames, read in bulk, read exactly as one by one.

``fraglens.reading.eventstream_runs`` reads an AWS event-stream capture with runs of
identical frames taken in bulk; ``frame`` + ``stream_from_framed`` reads the
same bytes one frame at a time. For any capture both must give the same
events (kind, text, name, id, span), the same type labels, the same
per-fragment records and the same report, whatever breaks a run: another
event, a damaged CRC, a wrong length, other headers, garbage between frames,
an empty piece, a control character, bytes that are not UTF-8, the size
limit, a capture cut anywhere.
"""

from __future__ import annotations

import base64
import json
import random
import re
import zlib
from collections.abc import Iterator
from itertools import cycle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.adapters.bedrock import BedrockConverseAdapter
from fraglens.framing.eventstream import PRELUDE, EventStreamDecoder, encode_message
from fraglens.reading import eventstream_runs
from fraglens.reading.capture import stream_from_bytes
from fraglens.reading.eventstream_runs import EventStreamReader
from fraglens.reading.findings import finish_stream, report_replaced_bytes
from fraglens.reading.stream import Stream

from .conftest import SAMPLES, examples
from .test_runs import (
    _SHAPES,
    _agree,
    _anthropic,
    _args_pieces,
    _one_by_one,
    _refused_by_both,
    _state,
)

# -- captures -------------------------------------------------------------------

EVENT = {":event-type": "contentBlockDelta", ":message-type": "event"}


def _frame(name: str, payload: dict, ascii_only: bool = False, **headers: str) -> bytes:
    text = json.dumps(payload, ensure_ascii=ascii_only, separators=(",", ":"))
    return encode_message({":event-type": name, ":message-type": "event", **headers},
                          text.encode("utf-8", "surrogatepass"))


def _delta(piece: str, index: int = 0, ascii_only: bool = False, pad: str | None = None) -> bytes:
    payload: dict = {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}
    if pad is not None:
        payload["p"] = pad
    return _frame("contentBlockDelta", payload, ascii_only)


#: what real Bedrock pads a payload with: a prefix of this, of varying length
PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _pads(seed: int = 14) -> Iterator[str]:
    """Padding as Bedrock sends it, a prefix of PAD of a random length per message."""
    lengths = random.Random(seed).randint
    while True:
        yield PAD[: lengths(1, len(PAD))]


def _converse(pieces: list[str], ascii_only: bool = False,
              pads: Iterator[str] | None = None) -> list[bytes]:
    """A ConverseStream call, frame by frame (every payload padded, with ``pads``)."""
    def padded(payload: dict) -> dict:
        return payload if pads is None else {**payload, "p": next(pads)}

    return [
        _frame("messageStart", padded({"role": "assistant"})),
        _frame("contentBlockStart", padded({"contentBlockIndex": 0, "start": {"toolUse": {
            "toolUseId": "tooluse_1", "name": "f"}}})),
        *(_delta(p, 0, ascii_only, None if pads is None else next(pads)) for p in pieces),
        _frame("contentBlockStop", padded({"contentBlockIndex": 0})),
        _frame("messageStop", padded({"stopReason": "tool_use"})),
    ]


def _chunk(raw: bytes, spacing: tuple[str, str] = (",", ":"), **extra: str) -> bytes:
    """An InvokeModel chunk whose base64 holds ``raw``."""
    body = json.dumps({"bytes": base64.b64encode(raw).decode(), **extra}, separators=spacing)
    return encode_message({":event-type": "chunk", ":message-type": "event"}, body.encode())


def _inner(payload: dict, ascii_only: bool = False) -> bytes:
    text = json.dumps(payload, ensure_ascii=ascii_only, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def _invoke(pieces: list[str], ascii_only: bool = False, spacing: tuple[str, str] = (",", ":"),
            pads: Iterator[str] | None = None) -> list[bytes]:
    """An InvokeModelWithResponseStream call of Claude, chunk by chunk (every
    chunk padded, with ``pads``)."""
    if pads is None:
        return [_chunk(_inner(payload, ascii_only), spacing) for _, payload in _anthropic(pieces)]
    return [_chunk(_inner(payload, ascii_only), spacing, p=next(pads))
            for _, payload in _anthropic(pieces)]


def _taken_in_runs(data: bytes) -> int:
    """How many events the bulk read took in runs."""
    stream = Stream(source=data, framing="eventstream")
    reader = EventStreamReader(stream, data)
    while not reader.done:
        reader.advance(1 << 22)
    return sum(map(len, reader.runs))


# -- tests ----------------------------------------------------------------------


def test_a_long_call_is_read_in_runs_and_agrees():
    pieces = _args_pieces(3000)
    data = b"".join(_converse(pieces))
    _agree(data)
    # nearly every delta came in a run, not one by one
    assert _taken_in_runs(data) > 0.9 * len(pieces)
    stream, _ = stream_from_bytes(data)
    assert stream.format == "bedrock-converse"
    assert stream.reassembler.calls[0].text == "".join(pieces)


def test_runs_longer_than_one_bulk_read(monkeypatch):
    monkeypatch.setattr(eventstream_runs, "MAX_RUN", 7)
    monkeypatch.setattr(eventstream_runs, "_FIRST_WINDOW", 300)
    monkeypatch.setattr(eventstream_runs, "_MAX_WINDOW", 1000)
    data = b"".join(_converse(_args_pieces(300)))
    _agree(data)
    assert _taken_in_runs(data) > 0.8 * len(_args_pieces(300))


@pytest.mark.parametrize("padded", [False, True], ids=["bare", "padded"])
def test_the_size_limit_falls_inside_a_run(padded):
    data = b"".join(_converse(_args_pieces(500), pads=_pads() if padded else None))
    for limit in (4000, 4 * 1024, 9999):
        _agree(data, max_arg_bytes=limit)
        stream, _ = stream_from_bytes(data, max_arg_bytes=limit)
        assert stream.reassembler.calls[0].over_limit


def _with_crc(frame: bytes) -> bytes:
    """``frame`` with its message CRC made to hold again (after an edit)."""
    body = frame[:-4]
    return body + zlib.crc32(body).to_bytes(4, "big")


def _damaged_message_crc(frame: bytes) -> bytes:
    return frame[:-1] + bytes([frame[-1] ^ 0x55])


def _damaged_prelude_crc(frame: bytes) -> bytes:
    return frame[:8] + bytes([frame[8] ^ 0x01]) + frame[9:]


def _wrong_total(frame: bytes) -> bytes:
    """The total length one byte short, both CRCs made to hold: the decoder
    reads a message that ends a byte early, whose CRC then fails."""
    total = (int.from_bytes(frame[:4], "big") - 1).to_bytes(4, "big")
    lengths = total + frame[4:8]
    return _with_crc(lengths + zlib.crc32(lengths).to_bytes(4, "big") + frame[12:])


def _raw_piece(raw: bytes) -> bytes:
    payload = b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"' + raw + b'"}}}'
    return encode_message(EVENT, payload)


def _bytes_typed(name: str, payload: bytes) -> bytes:
    """A message whose ``:event-type`` is a bytes-typed header (type 6), not a string."""
    head = b"\x0b:event-type\x06" + len(name).to_bytes(2, "big") + name.encode()
    total = PRELUDE + len(head) + len(payload) + 4
    lengths = total.to_bytes(4, "big") + len(head).to_bytes(4, "big")
    return _with_crc(lengths + zlib.crc32(lengths).to_bytes(4, "big") + head + payload + b"\0" * 4)


_DELTA_BYTES = b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"x"}}}'
#: messages with no usable event name, each holding a delta's payload
ODD_HEADERS = {
    "exception without its type": encode_message({":message-type": "exception"}, _DELTA_BYTES),
    "event without its type": encode_message({":message-type": "event"}, _DELTA_BYTES),
    "no headers": encode_message({}, _DELTA_BYTES),
    "bytes-typed event type": _bytes_typed("contentBlockDelta", _DELTA_BYTES),
    "error without its code": encode_message({":message-type": "error"}, _DELTA_BYTES),
    "empty error without its code": encode_message(
        {":message-type": "error", ":error-message": "it broke"}, b""),
}


INTERRUPTIONS = {
    **ODD_HEADERS,
    "text delta": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
    "other index": _delta("x", index=1),
    "ascii escapes": _delta("d\u00e9j\u00e0 \ud83d", ascii_only=True),
    "extra header": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "toolUse": {"input": "x"}}}, **{":content-type": "application/json"}),
    "other event name": _frame("contentBlockDeltaX", {"contentBlockIndex": 0, "delta": {
        "toolUse": {"input": "x"}}}),
    "padding": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "toolUse": {"input": "x"}}, "p": "abcdefgh"}),
    "empty piece": _delta(""),
    "error message": encode_message({":message-type": "error", ":error-code": "Boom",
                                     ":error-message": "it broke"}, b""),
    "exception": _frame("throttlingException", {"message": "slow down"},
                        **{":message-type": "exception", ":exception-type": "throttlingException"}),
    "exception shaped like a delta": _frame(
        "throttlingException", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "x"}}},
        **{":message-type": "exception", ":exception-type": "throttlingException"}),
    "bad byte": _raw_piece(b"bad \xff byte"),
    "encoded surrogate": _raw_piece(b"surrogate \xed\xa0\x80"),
    "control character": _raw_piece(b"ctl \x01 char"),
    "bad escape": _raw_piece(b"\\x bad escape"),
    # a run's pieces are decoded as one string with NUL escapes between them
    "NUL escape": _delta("a\x00b"),
    "escaped backslash before u0000": _raw_piece(b"a\\\\u0000b"),
    "unicode escape cut short": _raw_piece(b"ab\\u12"),
    "unicode escape at the end": _raw_piece(b"ab\\u00e9"),
    "lone high surrogate escaped": _delta("\ud83d", ascii_only=True),
    "literal U+FFFD": _delta("a \ufffd b"),
    "garbage": b"\x00\x01garbage between frames\xff",
    "message crc": _damaged_message_crc(_delta("x")),
    "prelude crc": _damaged_prelude_crc(_delta("x")),
    "wrong total": _wrong_total(_delta("x")),
}


def _agree_compared(data: bytes, **kwargs) -> None:
    """The bulk read agrees with the frame-by-frame one, and so does the read
    ``check --compare`` makes (which keeps what naive clients see, and never
    takes a shortcut): the same events, calls and verdict."""
    _agree(data, **kwargs)
    compared, _ = stream_from_bytes(data, "capture", keep_naive=True, **kwargs)
    assert _state(compared) == _state(_one_by_one(data, **kwargs))


@pytest.mark.parametrize("extra", INTERRUPTIONS.values(), ids=INTERRUPTIONS.keys())
def test_interruptions_end_a_run_and_reading_goes_on(extra):
    frames = _converse(_args_pieces(200))
    for at in (40, 41, len(frames) - 3):
        _agree_compared(b"".join(frames[:at] + [extra] + frames[at:]))


@pytest.mark.parametrize("extra", ODD_HEADERS.values(), ids=ODD_HEADERS.keys())
def test_a_message_with_no_usable_event_name_is_never_argument_text(extra):
    pieces = _args_pieces(200)
    frames = _converse(pieces)
    stream, _ = stream_from_bytes(b"".join(frames[:40] + [extra] + frames[40:]))
    (call,) = stream.reassembler.calls
    assert call.text == "".join(pieces)  # the "x" it holds went to no call
    codes = {d.code for d in stream.reassembler.diagnostics()}
    # an exception or an error says so; an event nothing names is named as unread
    assert codes & {"error-event", "chunk-unreadable"}


@pytest.mark.parametrize("edit", [_damaged_message_crc, _damaged_prelude_crc, _wrong_total])
@pytest.mark.parametrize("padded", [False, True], ids=["bare", "padded"])
def test_a_damaged_frame_inside_a_run_is_reported_as_one_by_one(edit, padded):
    frames = _converse(_args_pieces(200), pads=_pads() if padded else None)
    frames[60] = edit(frames[60])
    data = b"".join(frames)
    _agree(data)
    stream, _ = stream_from_bytes(data)
    codes = [d.code for d in stream.reassembler.diagnostics()]
    assert "frame-damaged" in codes
    # runs were taken on both sides of the damage
    assert _taken_in_runs(data) > 0.8 * len(frames)


@pytest.mark.parametrize("padded", [False, True], ids=["bare", "padded"])
def test_a_capture_cut_anywhere_in_a_run(padded):
    data = b"".join(_converse(_args_pieces(60), pads=_pads() if padded else None))
    for cut in range(PRELUDE, len(data), 37):
        _agree(data[:cut])


def _read_in_slices(data: bytes, budget: int, **kwargs) -> Stream:
    """``data`` read by EventStreamReader ``budget`` bytes at a time (a budget
    of 1: a run looked for after every frame, learned from each)."""
    stream = Stream(source=data, framing="eventstream", **kwargs)
    reader = EventStreamReader(stream, data)
    while not reader.done:
        reader.advance(budget)
    finish_stream(stream, reader.problems, {})
    report_replaced_bytes(stream, data, reader.runs)
    return stream


@pytest.mark.parametrize("padded", [False, True], ids=["bare", "padded"])
def test_reading_in_slices_of_any_budget_agrees(padded):
    frames = _converse(_args_pieces(400), pads=_pads() if padded else None)
    frames[150] = _damaged_message_crc(frames[150])
    data = b"".join(frames)
    expected = _state(_one_by_one(data))
    for budget in (1, 61, 4096, 1 << 20):
        assert _state(_read_in_slices(data, budget)) == expected


def test_parallel_calls_read_as_one_by_one():
    frames = _converse([])
    start = _frame("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {
        "toolUseId": "tooluse_2", "name": "g"}}})
    pieces = _args_pieces(100)
    # a block of one call's deltas, then the other's, then one each in turn
    body = ([_delta(p, 0) for p in pieces[:50]] + [start]
            + [_delta(p, 1) for p in pieces[:50]]
            + [_delta(p, k % 2) for k, p in enumerate(pieces[50:])])
    _agree(b"".join(frames[:2] + body + frames[2:]))


def test_a_payload_s_bytes_are_what_is_read_as_text():
    # a literal U+FFFD is text, not a sign of bytes replaced: the binary prelude
    # is not read as UTF-8
    data = b"".join(_converse(["a \ufffd b"] * 3))
    stream, _ = stream_from_bytes(data)
    assert "bytes-replaced" not in [d.code for d in stream.reassembler.diagnostics()]
    # a byte that is not UTF-8 is reported where it lies in the payload
    frames = _converse(["ab"] * 3)
    frames[3] = _raw_piece(b"x\xffy")
    data = b"".join(frames)
    stream, _ = stream_from_bytes(data)
    found = [d for d in stream.reassembler.diagnostics() if d.code == "bytes-replaced"]
    assert len(found) == 1 and found[0].event == 3
    bad = data.index(b"x\xffy") + 1
    assert f"ff at byte {bad})" in found[0].message


def test_the_decoder_says_when_it_is_between_messages():
    one, two = _delta("a"), _delta("b")
    decoder = EventStreamDecoder(base=100)
    assert decoder.between_messages == 100
    decoder.feed(b"junk" * 5)  # looking for a prelude past bad bytes
    assert decoder.between_messages is None
    # the damage and the message read, the next one's first bytes held
    items = decoder.feed(one + two[:5])
    assert [type(i).__name__ for i in items] == ["Damage", "Message"]
    assert decoder.between_messages == 100 + 20 + len(one)
    # a valid prelude found past bad bytes: the bad bytes are damage, and its
    # message is waited for from where it starts
    decoder = EventStreamDecoder()
    decoder.feed(b"junk" + one[:20])
    assert decoder.between_messages == 4


@pytest.mark.parametrize("spacing", [(",", ":"), (", ", ": ")])
def test_a_long_invoke_call_is_read_in_runs_and_agrees(spacing):
    pieces = _args_pieces(2000)
    data = b"".join(_invoke(pieces, spacing=spacing))
    _agree(data)
    assert _taken_in_runs(data) > 0.9 * len(pieces)
    stream, _ = stream_from_bytes(data)
    assert stream.format == "bedrock-invoke"
    assert stream.reassembler.calls[0].text == "".join(pieces)


def _inner_delta(piece: str, index: int = 0) -> dict:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": piece}}


_RAW_DELTA = (b'{"type":"content_block_delta","index":0,"delta":'
              b'{"type":"input_json_delta","partial_json":"%s"}}')

INVOKE_INTERRUPTIONS = {
    "other index": _chunk(_inner(_inner_delta("x", 1))),
    "ascii escapes": _chunk(_inner(_inner_delta("d\u00e9j\u00e0 \ud83d"), ascii_only=True)),
    "inner spacing": _chunk(json.dumps(_inner_delta("x")).encode()),
    "outer spacing": _chunk(_inner(_inner_delta("x")), (", ", ": ")),
    "padding": _chunk(_inner(_inner_delta("x")), p="abcdefgh"),
    "empty piece": _chunk(_inner(_inner_delta(""))),
    "bad inner byte": _chunk(_RAW_DELTA % b"a\xffb"),
    "encoded surrogate": _chunk(_RAW_DELTA % b"\xed\xa0\x80"),
    "inner not JSON": _chunk(b"not json"),
    # base64 that a2b_base64 reads unless in strict mode, as b64decode(validate=True) is
    "excess padding": encode_message(
        {":event-type": "chunk", ":message-type": "event"},
        # an event of 3k + 2 bytes: its base64 ends with one "=", here two
        b'{"bytes":"%s="}' % base64.b64encode(next(
            raw for raw in map(_inner, map(_inner_delta, ("x", "xy", "xyz"))) if len(raw) % 3 == 2
        ))),
    "bad base64": encode_message({":event-type": "chunk", ":message-type": "event"},
                                 b'{"bytes":"eyJ0eXBlIjoi="}'),
    "escaped slash": encode_message(
        {":event-type": "chunk", ":message-type": "event"},
        json.dumps({"bytes": base64.b64encode(_inner(_inner_delta("???"))).decode()},
                   separators=(",", ":")).replace("/", "\\/").encode()),
    "ping": _chunk(_inner({"type": "ping"})),
    # the pieces are cut out of the events, then decoded as one string with
    # NUL escapes between them
    "NUL escape": _chunk(_inner(_inner_delta("a\x00b"))),
    "escaped backslash before u0000": _chunk(_RAW_DELTA % b"a\\\\u0000b"),
    "piece ending with a backslash": _chunk(_RAW_DELTA % b"ab\\"),
    "unicode escape cut short": _chunk(_RAW_DELTA % b"ab\\u12"),
    "control character": _chunk(_RAW_DELTA % b"a\x01b"),
    "message crc": _damaged_message_crc(_chunk(_inner(_inner_delta("x")))),
}


@pytest.mark.parametrize("extra", INVOKE_INTERRUPTIONS.values(), ids=INVOKE_INTERRUPTIONS.keys())
def test_invoke_interruptions_end_a_run_and_reading_goes_on(extra):
    assert b"\\/" in INVOKE_INTERRUPTIONS["escaped slash"]  # JSON's escape of a slash
    assert b'=="}' in INVOKE_INTERRUPTIONS["excess padding"]
    frames = _invoke(_args_pieces(150))
    for at in (40, len(frames) - 4):
        _agree(b"".join(frames[:at] + [extra] + frames[at:]))


def test_the_bytes_of_a_chunk_that_does_not_agree_end_its_run():
    # the eighth chunk's base64 holds an event whose bytes are not the run's
    # (a piece that is not UTF-8): the run stops there, the rest is read on
    frames = _invoke(_args_pieces(100))
    frames[50] = INVOKE_INTERRUPTIONS["bad inner byte"]
    data = b"".join(frames)
    _agree(data)
    assert _taken_in_runs(data) > 0.5 * len(frames)


@pytest.mark.parametrize(
    "path",
    sorted(p for p in SAMPLES.iterdir() if p.suffix == ".eventstream"),
    ids=lambda p: p.name,
)
def test_every_sample_agrees(path):
    _agree(path.read_bytes())


_PIECE_CHARS = st.text(
    alphabet=st.sampled_from(list('ab {}[]":,\\\n\t\u00e9\u2028\U0001f600\ufffd')
                             + ["\ud83d", "\ude00"]),
    max_size=12,
)
_EDITS = st.sampled_from(["none", "flip", "cut", "garbage", "message crc", "prelude crc",
                          "wrong total", "other headers", *ODD_HEADERS])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(_PIECE_CHARS, min_size=1, max_size=80),
    invoke=st.booleans(),
    ascii_only=st.booleans(),
    limit=st.sampled_from([64, 200, 10_000_000]),
    edit=_EDITS,
    where=st.integers(min_value=0),
)
def test_any_pieces_agree(pieces, invoke, ascii_only, limit, edit, where):
    frames = (_invoke if invoke else _converse)(pieces, ascii_only)
    _agree_edited(frames, pieces, ascii_only, limit, edit, where)


#: the damages made to one frame alone, by name
_DAMAGES = {"message crc": _damaged_message_crc, "prelude crc": _damaged_prelude_crc,
            "wrong total": _wrong_total}


def _agree_edited(frames: list[bytes], pieces: list[str], ascii_only: bool, limit: int,
                  edit: str, where: int, sliced: bool = False) -> None:
    """``frames`` with ``edit`` made at a place ``where`` picks: the bulk read
    agrees with the frame-by-frame one (and, if ``sliced``, so does a bulk
    read that looks for a run after every frame), or both refuse the capture."""
    k = where % len(frames)
    if edit in _DAMAGES:
        frames[k] = _DAMAGES[edit](frames[k])
    elif edit == "other headers":
        frames[k] = _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
            "toolUse": {"input": pieces[k % len(pieces)] or "x"}}}, ascii_only, extra="1")
    elif edit == "garbage":
        frames.insert(k, b"\x07" * (where % 30 + 1))
    elif edit in ODD_HEADERS:
        frames.insert(k, ODD_HEADERS[edit])
    data = b"".join(frames)
    if edit == "flip":
        at = where % len(data)
        data = data[:at] + bytes([data[at] ^ (1 << (where % 8))]) + data[at + 1 :]
    elif edit == "cut":
        data = data[: where % (len(data) + 1)]
    if not data:
        return
    if _refused_by_both(data, limit):
        return
    _agree_compared(data, max_arg_bytes=limit)
    if sliced:
        expected = _state(_one_by_one(data, max_arg_bytes=limit))
        assert _state(_read_in_slices(data, 1, max_arg_bytes=limit)) == expected


# -- padding: real Bedrock's "p" field ------------------------------------------


def _padded_raw(piece: bytes = b"x", pad: bytes = b"abc") -> bytes:
    """A padded delta written byte for byte (what json.dumps would not write)."""
    payload = b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"%s"}},"p":"%s"}'
    return encode_message(EVENT, payload % (piece, pad))


def test_the_converse_shortcut_reads_a_padded_delta_as_a_bare_one():
    bare = {"contentBlockIndex": 2, "delta": {"toolUse": {"input": "x"}}}
    assert BedrockConverseAdapter.continuation({**bare, "p": "abc"}) == (0, 2, "x")
    # another third field is something the full path may read: no shortcut
    assert BedrockConverseAdapter.continuation({**bare, "q": "abc"}) is None
    assert BedrockConverseAdapter.continuation({**bare, "p": "a", "q": "b"}) is None


@pytest.mark.parametrize("invoke", [False, True], ids=["converse", "invoke"])
def test_a_padded_long_call_is_read_in_runs_and_agrees(invoke):
    pieces = _args_pieces(2000)
    data = b"".join((_invoke if invoke else _converse)(pieces, pads=_pads()))
    _agree(data)
    # every frame padded to a length of its own, and nearly every delta in a run
    assert len(set(map(len, _invoke(pieces[:200], pads=_pads())))) > 50
    assert _taken_in_runs(data) > 0.9 * len(pieces)
    stream, _ = stream_from_bytes(data)
    assert stream.format == ("bedrock-invoke" if invoke else "bedrock-converse")
    assert stream.reassembler.calls[0].text == "".join(pieces)


def _pad_read_too(payload: dict) -> tuple[int, int, str] | None:
    """The converse shortcut, were it to read the padding (as the piece's end)."""
    found = _READ_PADDING(payload)
    return None if found is None else (found[0], found[1], found[2] + payload.get("p", ""))


_READ_PADDING = BedrockConverseAdapter.continuation


def test_padding_the_shortcut_reads_is_no_hole(monkeypatch):
    # with another string there the shortcut reads another continuation: the
    # padding is not proved unread, so no frame after it is taken in a run
    monkeypatch.setattr(BedrockConverseAdapter, "continuation", staticmethod(_pad_read_too))
    data = b"".join(_converse(_args_pieces(300), pads=_pads()))
    _agree(data)
    assert _taken_in_runs(data) == 0


class _ReadsPadding(BedrockConverseAdapter):
    """A converse adapter whose shortcut would read the padding's length."""

    @staticmethod
    def continuation(payload: dict) -> tuple[int, int, str] | None:
        found = _READ_PADDING(payload)
        return None if found is None else (found[0], len(payload.get("p", "")), found[2])


def test_padding_is_a_hole_only_where_the_shortcut_reads_the_same():
    text = '{"contentBlockIndex":0,"delta":{"toolUse":{"input":"x"}},"p":"abc"}'
    doc = json.loads(text)
    hole = eventstream_runs._padding(text, doc, BedrockConverseAdapter(), (0, 0, "x"))
    assert hole is not None
    assert (hole.prefix, hole.suffix) == (text[: -len('abc"}')], "}")
    # the same field, read: another string there would be another continuation
    reads = _ReadsPadding()
    assert eventstream_runs._padding(text, doc, reads, reads.continuation(doc)) is None


def test_padding_the_adapter_does_not_name_unread_is_no_hole(monkeypatch):
    monkeypatch.setattr(BedrockConverseAdapter, "unread_fields", ())
    pieces = _args_pieces(300)
    data = b"".join(_converse(pieces, pads=_pads()))
    _agree(data)
    # read frame by frame, but where two frames in a row happen to share their
    # padding (and so one envelope), one chance in 62
    assert _taken_in_runs(data) < 0.05 * len(pieces)


PADDED_INTERRUPTIONS = {
    "no padding": _delta("x"),
    "empty padding": _delta("x", pad=""),
    "padding with escapes": _delta("x", pad='a"b\\c\n'),
    "padding with a control character": _delta("x", pad="a\x01b"),
    "padding past ASCII": _delta("x", pad="d\u00e9j\u00e0 \U0001f600"),
    "padding past ASCII escaped": _delta("x", ascii_only=True, pad="d\u00e9j\u00e0"),
    "padding with DEL": _padded_raw(pad=b"a\x7fb"),
    "padding not UTF-8": _padded_raw(pad=b"a\xffb"),
    "padding an encoded surrogate": _padded_raw(pad=b"\xed\xa0\x80"),
    "padding a lone surrogate escaped": _padded_raw(pad=b"\\ud83d"),
    "padding a number": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "toolUse": {"input": "x"}}, "p": 5}),
    "padding first": encode_message(
        EVENT, b'{"p":"abc","contentBlockIndex":0,"delta":{"toolUse":{"input":"x"}}}'),
    "padding inside the delta": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "toolUse": {"input": "x"}, "p": "abc"}}),
    "padding twice": encode_message(
        EVENT, b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"x"}},"p":"ab","p":"abc"}'),
    "another field": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "toolUse": {"input": "x"}}, "q": "abc"}),
    "other index": _delta("x", index=1, pad="abc"),
    "text delta": _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"},
                                               "p": "abcd"}),
    "empty piece": _delta("", pad="abc"),
    "piece not UTF-8": _padded_raw(piece=b"bad \xff byte"),
    "spaced": encode_message(
        EVENT, b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"x"}}, "p":"abc"}'),
    "message crc": _damaged_message_crc(_delta("x", pad="abcdef")),
    "prelude crc": _damaged_prelude_crc(_delta("x", pad="abcdef")),
    "wrong total": _wrong_total(_delta("x", pad="abcdef")),
}


@pytest.mark.parametrize("extra", PADDED_INTERRUPTIONS.values(), ids=PADDED_INTERRUPTIONS.keys())
def test_padded_interruptions_end_a_run_and_reading_goes_on(extra):
    frames = _converse(_args_pieces(200), pads=_pads())
    for at in (40, 41, len(frames) - 3):
        data = b"".join(frames[:at] + [extra] + frames[at:])
        _agree(data)
        # a run looked for after every frame: one is learned from this one too
        assert _state(_read_in_slices(data, 1)) == _state(_one_by_one(data))


PADDED_INVOKE_INTERRUPTIONS = {
    "no padding": _chunk(_inner(_inner_delta("x"))),
    "empty padding": _chunk(_inner(_inner_delta("x")), p=""),
    "padding with escapes": _chunk(_inner(_inner_delta("x")), p='a"b\\c'),
    "padding past ASCII": _chunk(_inner(_inner_delta("x")), p="d\u00e9j\u00e0"),
    "padding first": encode_message(
        {":event-type": "chunk", ":message-type": "event"},
        json.dumps({"p": "abc", "bytes": base64.b64encode(_inner(_inner_delta("x"))).decode()},
                   separators=(",", ":")).encode()),
    "outer spacing": _chunk(_inner(_inner_delta("x")), (", ", ": "), p="abc"),
    "other index": _chunk(_inner(_inner_delta("x", 1)), p="abc"),
    "message crc": _damaged_message_crc(_chunk(_inner(_inner_delta("x")), p="abc")),
}


@pytest.mark.parametrize("extra", PADDED_INVOKE_INTERRUPTIONS.values(),
                         ids=PADDED_INVOKE_INTERRUPTIONS.keys())
def test_padded_invoke_interruptions_end_a_run_and_reading_goes_on(extra):
    frames = _invoke(_args_pieces(150), pads=_pads())
    for at in (40, len(frames) - 4):
        data = b"".join(frames[:at] + [extra] + frames[at:])
        _agree(data)
        assert _state(_read_in_slices(data, 1)) == _state(_one_by_one(data))


#: padding: mostly Bedrock's, but any string, escapes and all
_PADDING = st.one_of(
    st.integers(min_value=0, max_value=len(PAD)).map(lambda n: PAD[:n]),
    st.text(alphabet=st.sampled_from(list('aZ9 "\\/\x01\x7f\u00e9\u2028\U0001f600') + ["\ud83d"]),
            max_size=6),
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(_PIECE_CHARS, min_size=1, max_size=60),
    pads=st.lists(_PADDING, min_size=1, max_size=8),
    invoke=st.booleans(),
    ascii_only=st.booleans(),
    limit=st.sampled_from([64, 200, 10_000_000]),
    edit=_EDITS,
    where=st.integers(min_value=0),
)
def test_any_padding_agrees(pieces, pads, invoke, ascii_only, limit, edit, where):
    frames = (_invoke if invoke else _converse)(pieces, ascii_only, pads=cycle(pads))
    _agree_edited(frames, pieces, ascii_only, limit, edit, where, sliced=True)


def test_an_exception_is_never_read_as_argument_text():
    # its name says what it is, whatever its payload looks like
    frames = _converse(_args_pieces(200))
    extra = INTERRUPTIONS["exception shaped like a delta"]
    stream, _ = stream_from_bytes(b"".join(frames[:40] + [extra] + frames[40:]))
    (call,) = stream.reassembler.calls
    assert call.text == "".join(_args_pieces(200))
    assert "error-event" in {d.code for d in stream.reassembler.diagnostics()}


def test_an_invoke_exception_is_never_read_as_a_chunk():
    # InvokeModel: a message named as an exception holding a chunk's bytes
    frames = _invoke(_args_pieces(200))
    chunk = json.loads(frames[40][frames[40].index(b"{"):-4])
    extra = _frame("modelStreamErrorException", chunk,
                   **{":message-type": "exception",
                      ":exception-type": "modelStreamErrorException"})
    data = b"".join(frames[:40] + [extra] + frames[40:])
    _agree(data)
    stream, _ = stream_from_bytes(data)
    (call,) = stream.reassembler.calls
    assert call.text == "".join(_args_pieces(200))
    assert "error-event" in {d.code for d in stream.reassembler.diagnostics()}


# -- what the bulk read proves at once --------------------------------------------


def test_a_piece_cut_after_a_backslash_and_one_that_spells_a_nul_are_not_read_as_a_pair():
    # cut out of their events, "ab\" and "b\u0000c" joined with a NUL escape
    # between them would read as two texts ("ab\u0000b" and "c"): the pieces
    # are searched for the escape's bytes first, and read one by one
    frames = _invoke(_args_pieces(150))
    pair = [_chunk(_RAW_DELTA % b"ab\\"), _chunk(_RAW_DELTA % b"b\\u0000c")]
    for at in (40, 41, len(frames) - 4):
        _agree(b"".join(frames[:at] + pair + frames[at:]))


def _frames_of(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        total = int.from_bytes(data[pos : pos + 4], "big")
        out.append(data[pos : pos + total])
        pos += total
    return out


@pytest.mark.parametrize("invoke", [False, True], ids=["converse", "invoke"])
def test_damage_anywhere_in_a_window_ends_the_run_there(invoke, monkeypatch):
    # small windows and comparisons: the damaged frame falls first, second,
    # in the middle, last of a window, of a match of two frames, of a
    # comparison of several
    monkeypatch.setattr(eventstream_runs, "MAX_RUN", 9)
    monkeypatch.setattr(eventstream_runs, "_COMPARED", 4)
    monkeypatch.setattr(eventstream_runs, "_FIRST_WINDOW", 600)
    pieces = _args_pieces(40)
    frames = (_invoke if invoke else _converse)(pieces, pads=_pads())
    for k in range(3, 40):
        for edit in (_damaged_message_crc, _damaged_prelude_crc, _wrong_total):
            damaged = list(frames)
            damaged[k] = edit(damaged[k])
            _agree(b"".join(damaged))


@settings(max_examples=examples(120), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    fmt=st.sampled_from(["bedrock-converse", "bedrock-invoke"]),
    calls=st.integers(1, 3),
    size=st.integers(1, 300),
    frag=st.integers(1, 12),
    seed=st.integers(0, 1 << 16),
    edit=st.sampled_from(["message crc", "prelude crc", "wrong total", "cut", "drop",
                          "twice", "padding", "none"]),
    where=st.integers(min_value=0),
    pad=_PADDING,
    window=st.sampled_from([(4096, 64), (7, 3)]),
)
def test_any_real_shape_damaged_agrees(fmt, calls, size, frag, seed, edit, where, pad, window,
                                       monkeypatch):
    """bench/shapes.py's Bedrock streams (a padding of its own on every
    message), with one frame damaged, cut, dropped, sent twice or padded
    otherwise (its CRCs made to hold), anywhere: the bulk read is the frame by
    frame one (or both refuse the capture)."""
    monkeypatch.setattr(eventstream_runs, "MAX_RUN", window[0])
    monkeypatch.setattr(eventstream_runs, "_COMPARED", window[1])
    frames = _frames_of(_SHAPES.real_shape(fmt, calls, size, frag, seed))
    k = where % len(frames)
    if edit in _DAMAGES:
        frames[k] = _DAMAGES[edit](frames[k])
    elif edit == "cut":
        frames[k] = frames[k][: where % len(frames[k])]
        del frames[k + 1 : k + 1 + where % 3]
    elif edit == "drop":
        del frames[k]
    elif edit == "twice":
        frames.insert(k, frames[k])
    elif edit == "padding":
        frames[k] = _repadded(frames[k], pad)
    data = b"".join(frames)
    try:
        _one_by_one(data)
    except Exception:  # noqa: BLE001 - a capture refused whole: the bulk read must refuse it too
        with pytest.raises(Exception):  # noqa: B017
            stream_from_bytes(data, "capture")
        return
    _agree(data)


def _repadded(frame: bytes, pad: str) -> bytes:
    """``frame`` with its payload's ``"p"`` string replaced by ``pad``
    (encoded as JSON), both CRCs and the length made to hold."""
    headers = int.from_bytes(frame[4:8], "big")
    payload = frame[PRELUDE + headers : -4]
    at = payload.rfind(b',"p":"')
    if at < 0:
        return frame
    payload = payload[:at] + b',"p":' + json.dumps(pad).encode("utf-8", "surrogatepass") + b"}"
    head = frame[PRELUDE : PRELUDE + headers]
    total = PRELUDE + headers + len(payload) + 4
    lengths = total.to_bytes(4, "big") + headers.to_bytes(4, "big")
    return _with_crc(lengths + zlib.crc32(lengths).to_bytes(4, "big") + head + payload + b"\0" * 4)


_DECODED_BYTES = st.lists(
    st.sampled_from([b"a", b" ", b'"', b"\\", b"u", b"0", b"00", b"d83d", b"de00", b"e9", b"n",
                     b"/", b"\x01", b"\x7f", b"\xc3\xa9", b"\xff", b"\\u0000", b"\\\\", b'\\"',
                     b"\\ud83d", b"\\ude00", b"\\u12"]),
    max_size=6,
).map(b"".join)


#: a piece as the frame's expression takes it
_TAKEN = re.compile(eventstream_runs._STRING, re.S)


def _one_piece(piece: bytes) -> str | None:
    try:
        return json.loads(b'"' + piece + b'"')
    except ValueError:
        return None


@settings(max_examples=examples(400), deadline=None)
@given(pieces=st.lists(_DECODED_BYTES, min_size=1, max_size=8))
def test_pieces_decoded_at_once_are_each_decoded_alone(pieces):
    """``_decoded``: the texts of pieces cut out of events (``whole`` False:
    anything at all) and of pieces the frame's expression took (``whole``
    True: each backslash takes the byte after it), decoded as one string,
    are what decoding each as a JSON string gives, or None when one is none."""
    texts = [_one_piece(p) for p in pieces]
    expected = None if None in texts else texts
    assert eventstream_runs._decoded(list(pieces), False) == expected
    if all(_TAKEN.fullmatch(p) for p in pieces):
        assert eventstream_runs._decoded(list(pieces), True) == expected
