"""A long call's runs of events, read in bulk, read exactly as one by one.

``fraglens.reading.sse_runs`` reads an SSE capture with runs of identical events taken in
bulk; ``frame`` + ``stream_from_framed`` reads the same bytes one event at a
time. For any capture both must give the same events (kind, text, name, id,
span), the same type labels, the same per-fragment records and the same
report, whatever breaks a run: another event, a comment, an ``id:`` line, an
empty piece, a control character, bytes that are not UTF-8, line ends that
change, the size limit, a capture cut anywhere.
"""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraglens.reading import progressive as loading
from fraglens.reading import sse_runs as runs
from fraglens.reading.capture import stream_from_bytes, stream_from_framed
from fraglens.reading.findings import report_replaced_bytes
from fraglens.reading.progressive import Loading
from fraglens.reading.readers import frame
from fraglens.reading.sse_runs import incremental_sse
from fraglens.report.document import build_report

from .conftest import ROOT, SAMPLES, examples, shared_or_skip

# -- captures -------------------------------------------------------------------


def _anthropic(pieces: list[str], index: int = 0) -> list[tuple[str | None, dict]]:
    events: list[tuple[str | None, dict]] = [
        ("message_start", {"type": "message_start", "message": {"id": "m", "role": "assistant",
                                                                "content": []}}),
        ("content_block_start", {"type": "content_block_start", "index": index,
                                 "content_block": {"type": "tool_use", "id": "t1", "name": "f",
                                                   "input": {}}}),
    ]
    for p in pieces:
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": p}}))
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _chat(pieces: list[str]) -> list[tuple[str | None, dict]]:
    def chunk(tc: dict) -> dict:
        return {"id": "c", "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]}

    events: list[tuple[str | None, dict]] = [
        (None, chunk({"index": 0, "id": "call_1", "type": "function",
                      "function": {"name": "f", "arguments": ""}}))
    ]
    events += [(None, chunk({"index": 0, "function": {"arguments": p}})) for p in pieces]
    events.append((None, {"id": "c", "object": "chat.completion.chunk",
                          "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
    return events


def _sse(events: list[tuple[str | None, dict]], eol: str = "\n") -> bytes:
    out = []
    for name, payload in events:
        head = f"event: {name}{eol}" if name else ""
        out.append(f"{head}data: {json.dumps(payload, separators=(',', ':'))}{eol}{eol}")
    return "".join(out).encode("utf-8", "surrogatepass")


def _args_pieces(n: int, size: int = 10) -> list[str]:
    text = json.dumps({"rows": [{"line": i, "text": f"word {i}, d\u00e9j\u00e0 \"vu\"\n"}
                                for i in range(n)]})
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- what must agree ------------------------------------------------------------


def _one_by_one(data: bytes, **kwargs):
    stream = stream_from_framed(frame(data, "capture"), **kwargs)
    report_replaced_bytes(stream, data)
    return stream


def _state(stream) -> tuple:
    # the text each event reads from its payload's range (or kept text), so a
    # wrong range shows as wrong text
    events = [(e.kind, e.data, e.event, e.id, e.span) for e in stream.events]
    frags = [
        (c.seq, list(c.frag_event), list(c.frag_end), c.text) for c in stream.reassembler.calls
    ]
    report = json.dumps(build_report(stream), sort_keys=True)
    # every event's usage, as the app's filter and a WebSocket's responses read it
    usage = list(stream.reassembler.usage)
    return events, list(stream.labels), frags, report, usage


def _agree(data: bytes, **kwargs) -> None:
    expected = _state(_one_by_one(data, **kwargs))
    bulk, _ = stream_from_bytes(data, "capture", **kwargs)
    assert _state(bulk) == expected


# -- tests ----------------------------------------------------------------------


def test_a_long_call_is_read_in_runs_and_agrees():
    data = _sse(_anthropic(_args_pieces(3000)))
    taken = []
    real = runs.Stream.take_run

    def spy(self, env, texts, *rest):
        n = real(self, env, texts, *rest)
        taken.append(n)
        return n

    runs.Stream.take_run = spy  # type: ignore[method-assign]
    try:
        _agree(data)
    finally:
        runs.Stream.take_run = real  # type: ignore[method-assign]
    # nearly every delta came in a run, not one by one
    assert sum(taken) > 0.9 * len(_args_pieces(3000))


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("build", [_anthropic, _chat])
def test_line_ends_and_formats(eol, build):
    _agree(_sse(build(_args_pieces(400)), eol))


def test_runs_longer_than_one_bulk_read(monkeypatch):
    monkeypatch.setattr(runs, "MAX_RUN", 7)
    monkeypatch.setattr(runs, "_FIRST_WINDOW", 300)
    monkeypatch.setattr(runs, "_MAX_WINDOW", 1000)
    _agree(_sse(_anthropic(_args_pieces(300))))


def test_the_size_limit_falls_inside_a_run():
    pieces = _args_pieces(500)
    data = _sse(_anthropic(pieces))
    for limit in (4000, 4 * 1024, 9999):
        _agree(data, max_arg_bytes=limit)
        stream, _ = stream_from_bytes(data, max_arg_bytes=limit)
        assert stream.reassembler.calls[0].over_limit


def test_interruptions_end_a_run_and_reading_goes_on():
    events = _anthropic(_args_pieces(200))
    data = _sse(events)
    blocks = data.split(b"\n\n")
    interruptions = [
        b": keep-alive",
        b'event: ping\ndata: {"type":"ping"}',
        b'id: 7\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"x"}}',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":""}}',
        b'event: content_block_delta\ndata:{"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"no space"}}',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"bad \xff byte"}}',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"ctl \x01 char"}}',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"lone \\ud83d"}}',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"surrogate \xed\xa0\x80"}}',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"\\x bad escape"}}',
    ]
    for k, extra in enumerate(interruptions):
        at = 40 + 7 * k
        mixed = b"\n\n".join(blocks[:at] + [extra] + blocks[at:])
        _agree(mixed)


def test_bytes_that_are_not_utf8_in_a_runs_lines_are_reported_as_one_by_one():
    # a run's events are not read again for bytes that are not UTF-8 (only
    # the bytes between runs are): events whose lines hold such bytes make no
    # run, and each one whose payload holds U+FFFD is reported as one by one
    pieces = _args_pieces(100)
    data = _sse(_anthropic(pieces)).replace(
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"',
        b'event: content_block_delta\xff\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"\xef\xbf\xbd')
    _agree(data)
    bulk, _ = stream_from_bytes(data, "capture")
    replaced = [d for d in bulk.reassembler.diagnostics() if d.code == "bytes-replaced"]
    assert len(replaced) == len(pieces)
    # and one such event between two runs is reported, the runs' events not
    clean = _sse(_anthropic(_args_pieces(300))).split(b"\n\n")
    clean[150] = clean[150].replace(b'"partial_json":"', b'"partial_json":"\xff')
    _agree(b"\n\n".join(clean))
    bulk, _ = stream_from_bytes(b"\n\n".join(clean), "capture")
    assert [d.code for d in bulk.reassembler.diagnostics()].count("bytes-replaced") == 1


def test_a_capture_cut_anywhere_in_a_run():
    data = _sse(_anthropic(_args_pieces(60)))
    for cut in range(len(data) // 3, len(data), 97):
        _agree(data[:cut])


def test_the_app_reads_runs_in_slices_as_check_does(monkeypatch):
    data = _sse(_anthropic(_args_pieces(2000)))
    expected = _state(_one_by_one(data))
    for budget in (61, 4096, 1 << 20):
        monkeypatch.setattr(loading, "SLICE_BYTES", budget)
        job = Loading(data, "capture")
        while not job.done:
            job.advance()
        assert _state(job.stream) == expected


@pytest.mark.parametrize(
    "path",
    # the samples read as SSE in one pass (the others are framed whole, as before)
    sorted(
        p for p in SAMPLES.iterdir()
        if p.suffix not in (".json", ".md") and incremental_sse(p.read_bytes())
    ),
    ids=lambda p: p.name,
)
def test_every_sample_agrees(path):
    _agree(path.read_bytes())


def test_every_real_capture_agrees():
    shared = shared_or_skip()
    read = 0
    for path in sorted((shared / "real_streams").rglob("*")):
        if not path.is_file() or path.suffix in (".md", ".json") or path.name == "NOTICE":
            continue
        data = path.read_bytes()
        if incremental_sse(data):
            _agree(data)
            read += 1
    assert read > 20  # most real captures are SSE


_PIECE_CHARS = st.text(
    alphabet=st.sampled_from(list('ab {}[]":,\\\n\t\u00e9\u2028\U0001f600') + ["\ud83d", "\ude00"]),
    max_size=12,
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(_PIECE_CHARS, min_size=1, max_size=80),
    build=st.sampled_from([_anthropic, _chat]),
    eol=st.sampled_from(["\n", "\r\n"]),
    limit=st.sampled_from([64, 200, 10_000_000]),
    cut=st.one_of(st.none(), st.integers(min_value=0)),
)
def test_any_pieces_agree(pieces, build, eol, limit, cut):
    data = _sse(build(pieces), eol)
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    if _refused_by_both(data, limit):
        return
    _agree(data, max_arg_bytes=limit)


_LONG = _sse(_anthropic(_args_pieces(120)))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(_LONG) - 1),
            st.sampled_from(["flip", "insert", "delete"]),
            st.binary(min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_damaged_run_agrees(edits):
    # bytes flipped, put in or taken out anywhere in a long run (a quote, a
    # backslash, a line end, a byte that is not UTF-8...): the bulk read still
    # reads what the one-by-one read reads
    data = bytearray(_LONG)
    for at, how, blob in sorted(edits, reverse=True):
        if how == "flip":
            data[at] = blob[0]
        elif how == "insert":
            data[at:at] = blob
        else:
            del data[at : at + len(blob)]
    _agree(bytes(data))


# -- the envelopes real streams send: a field that varies, padding ----------------
#
# Real continuations differ outside their piece (adapters/envelope.py's holes):
# Chat Completions' "obfuscation", Responses' "sequence_number" and
# "obfuscation", Anthropic's spaces before the last brace. The bulk read and
# the one-by-one read take them from the same learned pattern, so both are
# also held to the full path, with no envelope at all.

_NOISE = st.one_of(
    st.text(alphabet="abcXYZ019", max_size=16),  # what OpenAI sends
    st.text(alphabet='a\u00e9"\\\x01/', max_size=4),  # escapes, non-ASCII: one by one only
    st.integers(-3, 3), st.none(), st.floats(0, 2),  # another type: no hole takes it
)


def _real_chat(pieces: list[str], noise: list, calls: int = 1) -> list[tuple[str | None, str]]:
    head = ('{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
            '"choices":[{"index":0,"delta":')

    def chunk(delta: dict, k: int) -> str:
        tail = ',"logprobs":null,"finish_reason":null}],"usage":null'
        extra = noise[k % len(noise)] if noise else "x"
        return (f"{head}{json.dumps(delta, separators=(',', ':'))}{tail},"
                f'"obfuscation":{json.dumps(extra)}}}')

    out = [(None, chunk({"tool_calls": [{"index": c, "id": f"call_{c}", "type": "function",
                                         "function": {"name": "f", "arguments": ""}}]}, c))
           for c in range(calls)]
    for k, p in enumerate(pieces):
        for c in range(calls):  # interleaved when there are several
            out.append((None, chunk({"tool_calls": [{"index": c, "function": {"arguments": p}}]},
                                    k)))
    out.append((None, chunk({}, 0).replace('"finish_reason":null', '"finish_reason":"tool_calls"')))
    return out


def _real_responses(pieces: list[str], noise: list) -> list[tuple[str | None, str]]:
    def ev(payload: dict, k: int) -> tuple[str, str]:
        odd = noise[k % len(noise)] if noise else k
        number = odd if odd is None or type(odd) is float else k  # sometimes not a whole number
        numbered = {"type": payload["type"], "sequence_number": number, **payload}
        if noise and payload["type"].endswith(".delta"):
            numbered["obfuscation"] = noise[k % len(noise)]
        return payload["type"], json.dumps(numbered, separators=(",", ":"))

    out = [ev({"type": "response.output_item.added", "output_index": 0, "item": {
        "type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": ""}},
        0)]
    out += [ev({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                "output_index": 0, "delta": p}, k + 1) for k, p in enumerate(pieces)]
    out.append(ev({"type": "response.completed", "response": {"id": "r",
                                                               "status": "completed"}}, 0))
    return out


def _real_anthropic(pieces: list[str], noise: list) -> list[tuple[str | None, str]]:
    out = []
    for k, (name, payload) in enumerate(_anthropic(pieces)):
        text = json.dumps(payload, separators=(",", ":"))
        pad = " " * (sum(map(ord, str(noise[k % len(noise)]))) % 16) if noise else ""
        out.append((name, text[:-1] + pad + "}"))
    return out


def _real_ai_sdk(pieces: list[str], noise: list, calls: int = 3) -> list[tuple[str | None, str]]:
    """Parallel calls of the AI SDK's UI stream, their deltas in turns (the
    adapter keeps each call's pieces for its closing check: continued_run)."""
    def ev(payload: dict) -> tuple[None, str]:
        return None, json.dumps(payload, separators=(",", ":"))

    out = [ev({"type": "tool-input-start", "toolCallId": f"c{c}", "toolName": "f"})
           for c in range(calls)]
    for k, p in enumerate(pieces):
        for c in range(calls):
            if noise and k % (len(noise) + 2) == c:
                continue  # a call skips a turn now and then
            out.append(ev({"type": "tool-input-delta", "toolCallId": f"c{c}",
                           "inputTextDelta": p}))
    joined = "".join(pieces)
    try:
        value = json.loads(joined)
    except ValueError:
        value = {"raw": joined}
    out += [ev({"type": "tool-input-available", "toolCallId": f"c{c}", "toolName": "f",
                "input": value}) for c in range(calls)]
    out.append(ev({"type": "finish"}))
    return out


def _real_sse(events: list[tuple[str | None, str]], eol: str = "\n") -> bytes:
    return "".join((f"event: {name}{eol}" if name else "") + f"data: {text}{eol}{eol}"
                   for name, text in events).encode("utf-8", "surrogatepass")


def _agree_with_the_full_path(data: bytes, monkeypatch, **kwargs) -> None:
    _agree(data, **kwargs)
    bulk, _ = stream_from_bytes(data, "capture", **kwargs)
    with monkeypatch.context() as m:
        m.setattr(runs.Stream, "_envelopes_for", lambda self: None)
        assert _state(_one_by_one(data, **kwargs)) == _state(bulk)
        # and with no shortcut at all: every event through the adapter's feed
        m.setattr(runs.Stream, "_shortcut", lambda self: None)
        assert _state(_one_by_one(data, **kwargs)) == _state(bulk)


REAL_SHAPES = {
    "chat": _real_chat,
    "chat, 2 calls": lambda p, n: _real_chat(p, n, calls=2),
    "responses": _real_responses,
    "anthropic": _real_anthropic,
    "ai-sdk, 3 calls": _real_ai_sdk,
}


@pytest.mark.parametrize("shape", list(REAL_SHAPES))
def test_real_envelopes_are_read_in_runs(shape, monkeypatch):
    """Every event differs from the last outside its piece, and still nearly
    all are taken in runs, one call's or several calls' in turns: the holes
    and the runs of calls in turns are not vacuous."""
    rnd = __import__("random").Random(24)
    noise = ["".join(rnd.choices("abcXYZ019", k=rnd.randint(1, 16))) for _ in range(97)]
    data = _real_sse(REAL_SHAPES[shape](_args_pieces(600), noise))
    taken = []
    for method in ("take_run", "take_mixed_run"):
        real = getattr(runs.Stream, method)
        monkeypatch.setattr(runs.Stream, method, lambda self, *a, real=real: taken.append(
            (real.__name__, real(self, *a))) or taken[-1][1])
    _agree_with_the_full_path(data, monkeypatch)
    calls = 3 if "3 calls" in shape else 2 if "2 calls" in shape else 1
    assert sum(n for _, n in taken) > 0.9 * calls * len(_args_pieces(600))
    # several calls in turns make runs of all their envelopes at once
    assert {how for how, n in taken if n} == {"take_mixed_run" if calls > 1 else "take_run"}


def _refused_by_both(data: bytes, limit: int) -> bool:
    """Whether the one-by-one reading refuses ``data`` whole; if it does, the
    bulk read must refuse it too (asserted here)."""
    try:
        _one_by_one(data)
    except Exception:  # noqa: BLE001 - a capture refused whole: the bulk read must refuse it too
        with pytest.raises(Exception):  # noqa: B017
            stream_from_bytes(data, "capture", max_arg_bytes=limit)
        return True
    return False


def _agree_or_both_refuse(data: bytes, monkeypatch, limit: int) -> None:
    """The bulk read of ``data`` agrees with the full path, or refuses it as the
    one-by-one reading does."""
    if _refused_by_both(data, limit):
        return
    _agree_with_the_full_path(data, monkeypatch, max_arg_bytes=limit)


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(_PIECE_CHARS, min_size=1, max_size=80),
    noise=st.lists(_NOISE, max_size=6),
    shape=st.sampled_from(list(REAL_SHAPES)),
    eol=st.sampled_from(["\n", "\r\n"]),
    limit=st.sampled_from([64, 200, 10_000_000]),
    cut=st.one_of(st.none(), st.integers(min_value=0)),
)
def test_any_real_envelope_agrees(pieces, noise, shape, eol, limit, cut, monkeypatch):
    data = _real_sse(REAL_SHAPES[shape](pieces * 3, noise), eol)
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _agree_or_both_refuse(data, monkeypatch, limit)


# -- the shapes the benchmarks time (bench/shapes.py) ----------------------------
#
# bench/real.py times check on streams shaped as providers send them; the same
# generators, at a small size, are held here to the one-by-one read: every
# format whose events are read in runs (SSE, an AWS event stream, NDJSON), one
# call and several (interleaved or in turns, as the wire carries them).


def _bench_shapes():
    spec = importlib.util.spec_from_file_location("bench_shapes", ROOT / "bench" / "shapes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SHAPES = _bench_shapes()
#: the formats whose continuations are read in runs
_RUN_FORMATS = ("openai-chat", "openai-responses", "anthropic", "cohere", "ai-sdk",
                "bedrock-converse", "bedrock-invoke", "ollama")


@pytest.mark.parametrize("calls", [1, 3])
@pytest.mark.parametrize("fmt", _RUN_FORMATS)
def test_the_benchmarks_real_shapes_are_read_in_runs_and_agree(fmt, calls, monkeypatch):
    data = _SHAPES.real_shape(fmt, calls, 3000)
    taken: list[int] = []
    for method in ("take_run", "take_mixed_run", "take_text_run"):
        real = getattr(runs.Stream, method)

        def spy(self, *args, real=real, method=method):
            n = real(self, *args)
            taken.append(len(args[2]) if method == "take_text_run" else n)
            return n
        monkeypatch.setattr(runs.Stream, method, spy)
    _agree(data)
    bulk, _ = stream_from_bytes(data, "capture")
    doc = build_report(bulk)
    assert [c["status"] for c in doc["calls"]] == ["ok"] * calls
    assert [json.loads(c["arguments_raw"]) for c in doc["calls"]] == [
        json.loads(_SHAPES.args_text(c, 3000)) for c in range(calls)]
    # nearly every piece came in a run: Ollama's are its text lines
    pieces = len(bulk.events) - (20 if fmt != "ollama" else 2)
    assert sum(taken) > 0.9 * pieces


@settings(max_examples=examples(500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    fmt=st.sampled_from(_RUN_FORMATS),
    calls=st.integers(1, 3),
    size=st.integers(1, 400),
    frag=st.integers(1, 12),
    seed=st.integers(0, 1 << 16),
    edit=st.one_of(st.none(), st.tuples(st.sampled_from(["cut", "flip", "drop"]),
                                        st.integers(min_value=0))),
    limit=st.sampled_from([300, 10_000_000]),
)
def test_any_benchmark_shape_agrees(fmt, calls, size, frag, seed, edit, limit):
    # the real shapes at any size, cut into pieces of any length, with the
    # capture cut, a byte flipped or a byte dropped anywhere: the bulk read is
    # the one-by-one read (or both refuse the capture)
    data = _SHAPES.real_shape(fmt, calls, size, frag, seed)
    if edit is not None:
        how, at = edit
        at %= len(data)
        if how == "cut":
            data = data[:at]
        elif how == "flip":
            data = data[:at] + bytes([data[at] ^ (1 << (seed % 8))]) + data[at + 1 :]
        else:
            data = data[:at] + data[at + 1 :]
    try:
        _one_by_one(data, max_arg_bytes=limit)
    except Exception:  # noqa: BLE001 - a capture refused whole: the bulk read must refuse it too
        with pytest.raises(Exception):  # noqa: B017
            stream_from_bytes(data, "capture", max_arg_bytes=limit)
        return
    _agree(data, max_arg_bytes=limit)


def test_two_indexes_of_one_call_in_turns_keep_its_pieces_in_order():
    # the first call's start lost (its data line unreadable): both indexes'
    # pieces go to one call, one by one in their order, and so in a run
    data = _SHAPES.real_shape("openai-chat", 2, 300, 1, 0)
    data = b"Data" + data[4:]
    _agree(data)
    bulk, _ = stream_from_bytes(data, "capture")
    (call,) = bulk.reassembler.calls
    assert list(call.frag_event) == sorted(call.frag_event)


def test_two_envelopes_of_one_call_in_turns_keep_its_pieces_in_order(monkeypatch):
    # one call's deltas in two spellings (its keys in another order) in turns
    # with another call's: three envelopes, two calls, each call's pieces put
    # together in their order before the engine and the adapter take them
    def delta(cid: str, piece: str, flip: bool) -> tuple[None, str]:
        payload = ({"toolCallId": cid, "type": "tool-input-delta", "inputTextDelta": piece}
                   if flip else
                   {"type": "tool-input-delta", "toolCallId": cid, "inputTextDelta": piece})
        return None, json.dumps(payload, separators=(",", ":"))
    pieces = _args_pieces(150)
    events = [(None, json.dumps({"type": "tool-input-start", "toolCallId": c, "toolName": "f"}))
              for c in ("a", "b")]
    for k, piece in enumerate(pieces):
        events += [delta("a", piece, k % 3 == 1), delta("b", piece, False)]
    data = _real_sse(events)
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(data, monkeypatch)
    assert sum(n for how, n in taken if how == "take_mixed_run") > 0.9 * len(events)
    bulk, _ = stream_from_bytes(data, "capture")
    assert [c.text for c in bulk.reassembler.calls] == ["".join(pieces)] * 2
    # what the adapter keeps to compare with the input restated at the end
    assert {cid: "".join(kept) for cid, kept in bulk.adapter._pieces.items()} == {
        "a": "".join(pieces), "b": "".join(pieces)}


@pytest.mark.parametrize("ids", [["a1", "a2", "a3"], ["call_1", "call_12", "call_1b", "x"],
                                 ["k", "kk", "kkk"], ["1_z", "2_z"]])
def test_ids_that_share_bytes_tell_calls_in_turns_apart(ids, monkeypatch):
    # the bytes all ids share before and after where they differ are out of
    # the group that says whose an event is: ids one of which opens or ends
    # another still tell each event's call
    made = []
    real = runs._turns
    monkeypatch.setattr(runs, "_turns", lambda *a: made.append(real(*a)) or made[-1])

    def ev(payload: dict) -> tuple[None, str]:
        return None, json.dumps(payload, separators=(",", ":"))
    pieces = _args_pieces(100)
    events = [ev({"type": "tool-input-start", "toolCallId": c, "toolName": "f"}) for c in ids]
    for k, piece in enumerate(pieces):
        events += [ev({"type": "tool-input-delta", "toolCallId": c, "inputTextDelta": piece})
                   for c in (ids if k % 5 else ids[::-1])]
    data = _real_sse(events)
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(data, monkeypatch)
    assert any(made) and sum(n for how, n in taken if how == "take_mixed_run") > 0.9 * len(
        pieces) * len(ids)
    bulk, _ = stream_from_bytes(data, "capture")
    assert [(c.id, c.text) for c in bulk.reassembler.calls] == [(c, "".join(pieces)) for c in ids]


# -- Vertex's streamed arguments and DashScope: usage on every event, ids, comments --
#
# Vertex sends one ``partialArgs`` entry a chunk (a string leaf in pieces, a
# number, the empty piece that ends a string) with ``usageMetadata`` whose
# token count grows; DashScope an ``id:`` line counting up, a comment line and
# a growing ``usage`` on every event. The usage is read (the report, the app's
# filter, a WebSocket response's own), so it comes from holes that are read,
# and the ids and comments are events' own: all held to the full path.

#: what a noise value puts in a Vertex or DashScope stream besides usage
_ODD = (0, 1, -1, 2, -2, 3)


def _vertex(pieces: list[str], noise: list, calls: int = 1, eol: str = "\r\n") -> bytes:
    """``calls`` Vertex calls streaming rows of a number and a string cut in
    ``pieces``; ``noise`` puts in what real streams do now and then: another
    usage field, a value given twice, a path out of order or unreadable,
    a boolean, a null, an entry with more keys, two entries in a chunk."""
    tokens = iter(range(1, 1 << 40))

    def chunk(call: dict, k: int, finish: bool = False) -> str:
        cand: dict = {"content": {"role": "model", "parts": [{"functionCall": call}]}}
        if finish:
            cand["finishReason"] = "STOP"
        usage: dict = {"promptTokenCount": 29, "candidatesTokenCount": next(tokens),
                       "trafficType": "ON_DEMAND"}
        odd = noise[k % len(noise)] if noise else "plain"
        if odd is None or type(odd) is float:  # a field no hole takes, now and then
            usage["totalTokenCount"] = odd
        elif type(odd) is int and odd not in _ODD:  # a count past what a hole keeps
            usage["totalTokenCount"] = odd << 62
        return json.dumps({"candidates": [cand], "usageMetadata": usage,
                           "modelVersion": "gemini-3.1-pro-preview", "responseId": "r1"},
                          separators=(",", ":"), ensure_ascii=False)

    def entries(c: int) -> list[list[dict]]:
        out: list[list[dict]] = []
        row, k = 0, 0
        while k < len(pieces):
            odd = noise[(row + c) % len(noise)] if noise else "plain"
            base = f"$.rows[{row}]"
            out.append([{"jsonPath": f"{base}.line", "numberValue": row}])
            if odd == 0:  # the same value again: args-multiple-values when it differs
                out.append([{"jsonPath": f"{base}.line", "numberValue": row + 1}])
            elif odd == 1:  # a path out of document order: the value restated whole
                out.append([{"jsonPath": "$.rows[0].line", "numberValue": 7}])
            elif odd == -1:
                out.append([{"jsonPath": "rows", "stringValue": "x"}])  # no readable path
            elif odd == 2:
                out.append([{"jsonPath": f"{base}.ok", "boolValue": True},
                            {"jsonPath": f"{base}.none", "nullValue": None}])
            elif odd == -2:
                out.append([{"jsonPath": f"{base}.tag", "stringValue": "t", "extra": 1}])
            for piece in pieces[k : k + 4]:
                out.append([{"jsonPath": f"{base}.text", "stringValue": piece,
                             "willContinue": True}])
            out.append([{"jsonPath": f"{base}.text", "stringValue": ""}])
            row, k = row + 1, k + 4
        return out

    events: list[str] = []
    for c in range(calls):
        events.append(chunk({"name": f"tool_{c}", "willContinue": True}, len(events)))
        for group in entries(c):
            events.append(chunk({"partialArgs": group, "willContinue": True}, len(events)))
        events.append(chunk({}, len(events), finish=c == calls - 1))
    return "".join(f"data: {e}{eol}{eol}" for e in events).encode("utf-8", "surrogatepass")


def _dashscope(pieces: list[str], noise: list, calls: int = 1) -> bytes:
    """DashScope's native stream, ``incremental_output``: ``calls`` calls in
    turns, each event with an ``id:`` line counting up, ``event:result``, the
    ``:HTTP_STATUS/200`` comment and a growing usage; ``noise`` now and then
    skips an id, spaces it, gives no comment or two lines of it, or usage
    numbers no hole keeps (past 64 bits, a fraction)."""
    out: list[str] = []
    counter = iter(range(1, 1 << 40))

    def event(message: dict, k: int, finish: str = "null") -> None:
        n = next(counter)
        odd = noise[k % len(noise)] if noise else None
        usage: dict = {"total_tokens": 268 + n, "output_tokens": n, "input_tokens": 268}
        if odd == 0:
            n = next(counter)  # an id skipped
        if type(odd) is float:
            usage["output_tokens"] = odd
        elif odd == 3:
            usage["output_tokens"] = 1 << 70
        head = f"id: {n}" if odd == 1 else f"id:{n}"
        comment = {-1: "", -2: ":HTTP_STATUS/200\n: again\n"}.get(odd, ":HTTP_STATUS/200\n")  # type: ignore[arg-type]
        payload = {"output": {"choices": [{"message": message, "finish_reason": finish}]},
                   "usage": usage, "request_id": "3aba7d41"}
        out.append(f"{head}\nevent:result\n{comment}data:"
                   f"{json.dumps(payload, separators=(',', ':'), ensure_ascii=False)}\n\n")

    for k, piece in enumerate(pieces):
        for c in range(calls):
            fn = {"name": f"tool_{c}", "arguments": piece} if k == 0 else {"arguments": piece}
            tc: dict = {"function": fn, "index": c}
            if k == 0:
                tc.update(id=f"call_{c}", type="function")
            event({"content": "", "tool_calls": [tc], "role": "assistant"}, k * calls + c)
    event({"content": "", "role": "assistant"}, 0, finish="tool_calls")
    return "".join(out).encode("utf-8", "surrogatepass")


BULK_SHAPES = {
    "vertex": lambda p, n: _vertex(p, n),
    "vertex, 2 calls": lambda p, n: _vertex(p, n, calls=2),
    "vertex, LF": lambda p, n: _vertex(p, n, eol="\n"),
    "dashscope": lambda p, n: _dashscope(p, n),
    "dashscope, 3 calls": lambda p, n: _dashscope(p, n, calls=3),
}


def _counting_runs(monkeypatch) -> list[tuple[str, int]]:
    taken: list[tuple[str, int]] = []
    for method in ("take_run", "take_mixed_run", "take_entries"):
        real = getattr(runs.Stream, method)
        monkeypatch.setattr(runs.Stream, method, lambda self, *a, real=real: taken.append(
            (real.__name__, real(self, *a))) or taken[-1][1])
    return taken


@pytest.mark.parametrize("shape", list(BULK_SHAPES))
def test_vertex_and_dashscope_are_read_in_runs(shape, monkeypatch):
    """Every event carries usage that grows (and an id that counts, a
    comment), and still nearly all are taken in bulk: the read holes, the
    lines and the entry runs are not vacuous."""
    pieces = _args_pieces(300)
    data = BULK_SHAPES[shape](pieces, [])
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(data, monkeypatch)
    calls = 3 if "3 calls" in shape else 2 if "2 calls" in shape else 1
    events = calls * len(pieces) * (6 / 4 if "vertex" in shape else 1)
    assert sum(n for _, n in taken) > 0.9 * events
    want = ("take_entries" if "vertex" in shape
            else "take_mixed_run" if calls > 1 else "take_run")
    assert {how for how, n in taken if n} == {want}
    bulk, _ = stream_from_bytes(data, "capture")
    assert len(bulk.reassembler.usage) > 0.9 * events  # every event's usage, kept


@pytest.mark.parametrize("odd", _ODD)
@pytest.mark.parametrize("shape", list(BULK_SHAPES))
def test_what_a_run_meets_now_and_then_is_read_as_one_by_one(shape, odd, monkeypatch):
    """A value given twice, a path out of order or unreadable, more entries
    or keys than the commonest chunk has (Vertex); an id skipped or spaced,
    no comment or two lines of it, a count past 64 bits (DashScope): every
    few events, inside long runs, which must still be taken."""
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(BULK_SHAPES[shape](_args_pieces(300), [odd, *"abcdefghij" * 5]),
                              monkeypatch)
    assert sum(n for _, n in taken) > 200


@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(_PIECE_CHARS, min_size=1, max_size=60),
    noise=st.lists(st.one_of(st.sampled_from(_ODD), _NOISE), max_size=5),
    shape=st.sampled_from(list(BULK_SHAPES)),
    limit=st.sampled_from([64, 200, 10_000_000]),
    cut=st.one_of(st.none(), st.integers(min_value=0)),
)
def test_any_vertex_or_dashscope_stream_agrees(pieces, noise, shape, limit, cut, monkeypatch):
    data = BULK_SHAPES[shape](pieces * 3, noise)
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _agree_or_both_refuse(data, monkeypatch, limit)


def _bench_shape(fmt: str, calls: int, arg_bytes: int, frag: int, seed: int) -> bytes:
    return _SHAPES.real_shape(fmt, calls, arg_bytes, frag, seed)  # bench/shapes.py


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    fmt=st.sampled_from(["gemini", "gemini-long", "dashscope"]),
    calls=st.integers(1, 3),
    arg_bytes=st.integers(50, 3000),
    frag=st.integers(1, 30),
    seed=st.integers(0, 1 << 16),
)
def test_the_benchmarks_real_shapes_agree(fmt, calls, arg_bytes, frag, seed, monkeypatch):
    """bench/shapes.py's streams, as the benchmarks time them, at small sizes:
    the bulk read is the full path's, event by event."""
    _agree_with_the_full_path(_bench_shape(fmt, calls, arg_bytes, frag, seed), monkeypatch)


@pytest.mark.parametrize("fmt", ["gemini", "gemini-long"])
def test_a_long_string_is_read_a_piece_at_a_time_and_rows_an_entry_at_a_time(fmt, monkeypatch):
    """One long string value (``gemini-long``) comes in runs of its pieces
    alone, rows of values (``gemini``) in runs of whole entries: each path
    is taken where it should be, and agrees."""
    from fraglens.adapters.gemini import GeminiAdapter

    read: dict[str, int] = {"read_pieces": 0, "read_entries": 0}
    for name in read:
        real = getattr(GeminiAdapter, name)
        monkeypatch.setattr(GeminiAdapter, name, lambda self, n, values, real=real, name=name: (
            read.__setitem__(name, read[name] + len(values)) or real(self, n, values)))
    data = _bench_shape(fmt, 1, 20_000, 10, 24)
    _agree_with_the_full_path(data, monkeypatch)
    events = data.count(b"\r\n\r\n")
    mine, other = ("read_pieces", "read_entries") if fmt == "gemini-long" else (
        "read_entries", "read_pieces")
    assert read[mine] > 0.9 * events and read[other] == 0


def test_a_run_is_given_up_unsearched_only_where_none_starts(monkeypatch):
    """A run's expressions are compiled when first searched, and not searched
    where the first event or the ``FEWEST``-th does not open with the bytes
    all its events open with (``_Run.may_start``): that saves compiling one
    for each short string of a Vertex row and each call in turns, and must
    never hide a run."""
    said: list[bool] = []
    real = runs._Run.may_start

    def spy(self, data, pos):
        may = real(self, data, pos)
        if not may:
            assert self.fewest.match(data, pos) is None
        said.append(may)
        return may
    monkeypatch.setattr(runs._Run, "may_start", spy)
    for fmt, calls in [("gemini", 1), ("gemini", 3), ("gemini-long", 2), ("ai-sdk", 3),
                       ("openai-chat", 3), ("openai-responses", 1), ("dashscope", 3)]:
        stream_from_bytes(_bench_shape(fmt, calls, 20_000, 10, 24), "capture")
    stream_from_bytes(_vertex(_args_pieces(300), [1, 2, -2, *"abc"]), "capture")
    assert said.count(False) > 20 and said.count(True) > 20


@pytest.mark.parametrize("digits", [18, 19, 20, 21, 400, 5000])
@pytest.mark.parametrize("fmt", ["gemini", "dashscope"])
def test_a_usage_number_of_any_length_inside_a_run(fmt, digits, monkeypatch):
    # a run stops before a usage number 64 bits cannot keep (then read one
    # by one); one of more digits than Python turns into an int from text
    # (4300) is no JSON to the full path either, and never a traceback
    data = _bench_shape(fmt, 1, 20_000, 10, 24)
    key = b'"candidatesTokenCount":' if fmt == "gemini" else b'"output_tokens":'
    at = data.index(key, len(data) // 2) + len(key)
    end = at + len(data[at:at + 30]) - len(data[at:at + 30].lstrip(b"0123456789"))
    data = data[:at] + b"9" * digits + data[end:]
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(data, monkeypatch)
    assert sum(n for _, n in taken) > 0.9 * data.count(b"data:")


@pytest.mark.parametrize("digits", [1, 17, 18, 19, 5000])
def test_ids_of_any_length_in_a_run(digits, monkeypatch):
    # DashScope's ids count up: a run keeps the first as a number, so ids
    # longer than 64 bits hold are read one by one, never a traceback
    data = _bench_shape("dashscope", 2, 20_000, 10, 24)
    data = re.sub(rb"(?m)^id:", b"id:" + b"1" * digits, data)
    _agree_with_the_full_path(data, monkeypatch)


@pytest.mark.parametrize(("shape", "padded"), [
    ("ai-sdk", False), ("gemini", False), ("openai-chat", False), ("dashscope", False),
    ("openai-responses", False), ("anthropic", True)])
def test_a_run_is_searched_without_copying_its_events_unless_their_padding_varies(
        shape, padded, monkeypatch):
    """Where each event of a run tells its width by its groups (its holes,
    its piece, the spaces between its tokens the learned event's), no event
    is copied whole to say where it starts; Anthropic's padding of 0-15
    spaces takes the search that copies each one. Both read what one by
    one reads."""
    wholes: list[bool] = []
    real = runs._Searches.whole
    monkeypatch.setattr(runs._Searches, "whole", lambda self: wholes.append(True) or real(self))
    data = _bench_shape(shape, 3 if shape in ("ai-sdk", "openai-chat", "dashscope") else 1,
                        20_000, 10, 24)
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(data, monkeypatch)
    assert bool(wholes) == padded
    assert sum(n for _, n in taken) > 0.9 * data.count(b"data:") - 40


@pytest.mark.parametrize(("data", "rows"), [
    (_bench_shape("gemini", 2, 20_000, 10, 24), True),
    (_bench_shape("gemini-long", 1, 20_000, 10, 24), False),
    (_bench_shape("gemini", 1, 5_000, 40, 3), False),
    (_vertex(_args_pieces(300), [1, 2, -2, *"abc"]), False)],
    ids=["rows", "one string", "long pieces", "noise"])
def test_a_run_of_pieces_is_learned_only_where_the_event_further_on_continues_it(
        data, rows, monkeypatch):
    """Before it learns the envelope of a piece of a Vertex string (a proof
    and an expression: costly), the reader looks at the event a run of
    ``FEWEST`` would end with: a row's short string is not learned, and a run
    is never missed for it (the same runs as without the look)."""
    from fraglens.adapters import envelope
    from fraglens.adapters.gemini import GeminiAdapter

    def read(look: bool) -> tuple[int, int, tuple]:
        learned, pieces = [0], [0]
        real_learn, real_read = envelope.value_envelope, GeminiAdapter.read_pieces
        with monkeypatch.context() as m:
            m.setattr("fraglens.reading.stream.value_envelope",
                      lambda *a: learned.__setitem__(0, learned[0] + 1) or real_learn(*a))
            m.setattr(GeminiAdapter, "read_pieces", lambda self, n, p: pieces.__setitem__(
                0, pieces[0] + len(p)) or real_read(self, n, p))
            if not look:
                m.setattr(runs.SSEReader, "_ahead", lambda self: None)
            bulk, _ = stream_from_bytes(data, "capture")
        return learned[0], pieces[0], _state(bulk)
    (learned, pieces, state), (unlooked, all_pieces, same) = read(True), read(False)
    assert pieces == all_pieces and state == same
    assert learned <= unlooked
    if rows:  # rows of short strings: no piece envelope learned (the one is the entries')
        assert learned == 1 < unlooked


@pytest.mark.parametrize("shape", ["chat, 2 calls", "ai-sdk, 3 calls", "dashscope, 3 calls"])
@pytest.mark.parametrize("one_expression", [True, False])
def test_calls_in_turns_are_read_with_one_expression_or_an_alternative_each(
        shape, one_expression, monkeypatch):
    """Envelopes of several calls that differ only in plain text (an index,
    an id) make one expression with a group where they differ; others (here:
    forced) one alternative per envelope. Both read what one by one reads."""
    turns = []
    real = runs._turns
    monkeypatch.setattr(runs, "_turns", lambda *a: turns.append(real(*a)) or (
        turns[-1] if one_expression else None))
    data = (_real_sse(REAL_SHAPES[shape](_args_pieces(300), [])) if shape in REAL_SHAPES
            else BULK_SHAPES[shape](_args_pieces(300), []))
    taken = _counting_runs(monkeypatch)
    _agree_with_the_full_path(data, monkeypatch)
    assert any(turns) and sum(n for how, n in taken if how == "take_mixed_run") > 500
