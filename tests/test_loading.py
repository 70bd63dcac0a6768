"""A capture read a slice at a time gives the stream a whole read gives.

The app shows a capture while it loads (``fraglens.reading.progressive``); what it ends up
showing must be exactly what ``check`` reports, whatever the slice size cuts
through (an event, a line end, a UTF-8 character).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fraglens.reading import progressive as loading
from fraglens.reading.capture import LoadError, stream_from_bytes
from fraglens.reading.progressive import Loading
from fraglens.reading.sse_runs import incremental_sse
from fraglens.report.document import build_report

from .conftest import SAMPLES, shared_or_skip


def _captures() -> list[Path]:
    return sorted(
        p
        for p in SAMPLES.iterdir()
        if p.suffix != ".json" and not p.name.startswith((".", "README"))
    )


def _read_in_slices(data: bytes) -> tuple[Loading, list[int]]:
    job = Loading(data, "capture")
    seen = []
    while not job.done:
        job.advance()
        seen.append(len(job.stream.events))
    return job, seen


def whole_meta(data: bytes) -> dict:
    return stream_from_bytes(data)[1].meta


def _same_report(data: bytes, job: Loading) -> None:
    whole, _ = stream_from_bytes(data)
    assert json.dumps(build_report(job.stream), sort_keys=True) == json.dumps(
        build_report(whole), sort_keys=True
    )
    # times too: a recording read in slices stamps each slice's events as they come
    assert [(e.kind, e.data, e.span, e.time) for e in job.stream.events] == [
        (e.kind, e.data, e.span, e.time) for e in whole.events
    ]
    assert job.meta == whole_meta(data)


@pytest.mark.parametrize("path", _captures(), ids=lambda p: p.name)
def test_sample_read_in_slices_reports_as_read_whole(path, monkeypatch):
    # 61 bytes / 3 events a slice: cuts fall everywhere, CRLF pairs included
    monkeypatch.setattr(loading, "SLICE_BYTES", 61)
    monkeypatch.setattr(loading, "SLICE_EVENTS", 3)
    data = path.read_bytes()
    try:
        stream_from_bytes(data, "capture")
    except LoadError as whole:  # a capture refused whole is refused in slices, in the same words
        with pytest.raises(LoadError) as sliced:
            _read_in_slices(data)
        assert str(sliced.value) == str(whole)
        return
    job, seen = _read_in_slices(data)
    _same_report(data, job)
    assert seen == sorted(seen)
    assert job.fraction == 1.0


def test_real_streams_read_in_slices_report_as_read_whole(monkeypatch):
    shared = shared_or_skip()
    monkeypatch.setattr(loading, "SLICE_BYTES", 997)
    for path in sorted((shared / "real_streams").rglob("*.sse")):
        data = path.read_bytes()
        job, _ = _read_in_slices(data)
        _same_report(data, job)


def test_sse_is_usable_between_slices(monkeypatch):
    """Events and calls are there before the end; the stream closes only at the end."""
    monkeypatch.setattr(loading, "SLICE_BYTES", 200)
    data = (SAMPLES / "backend_fireworks_id_name_resent.sse").read_bytes()
    assert incremental_sse(data)
    job = Loading(data)
    while not job.stream.events:
        job.advance()
    assert not job.stream.closed
    assert 0 < job.fraction < 1
    while not job.done:
        job.advance()
    assert job.stream.closed
    assert job.advance() == 0


def test_json_captures_take_the_whole_path():
    assert not incremental_sse(b'{"choices": []}')
    assert not incremental_sse(b'[{"a": 1}]\n')
    assert not incremental_sse(b"\xef\xbb\xbf  {}")
    assert incremental_sse(b"\xef\xbb\xbf: hi\n\ndata: {}\n\n")
    assert incremental_sse(b"event: x\ndata: {}\n\n")


def test_not_a_stream_fails_at_once():
    with pytest.raises(LoadError, match="capture: not a stream"):
        Loading(b"hello there", "capture")


def test_an_overlong_line_read_in_slices_reports_as_read_whole(monkeypatch):
    """The app's read stops where a whole read stops, with the same error, and
    never raises out of a slice."""
    from fraglens.framing.sse import DEFAULT_MAX_LINE

    good = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    data = good + b"\0data: 1\n\n" + b"data: " + b"q" * (DEFAULT_MAX_LINE + 10) + b"\n\n"
    job, _ = _read_in_slices(data)
    _same_report(data, job)
    codes = [d.code for d in job.stream.reassembler.diagnostics()]
    assert "frame-too-large" in codes and "stray-bytes" in codes
    assert job.fraction == 1.0


@pytest.mark.parametrize(
    "data, valid",
    [
        (b"plain ascii", True),
        ("é€😀".encode(), True),
        (b"\xff", False),
        ("é".encode()[:1], False),  # cut inside a character at the very end
        (("x" * ((1 << 16) - 1) + "é").encode(), True),  # a character across the 64 KiB step
        (("x" * ((1 << 16) - 1)).encode() + b"\xc3(", False),
        (("x" * ((1 << 20) - 2) + "€").encode(), True),  # across a later step
        (("é" * (1 << 16)).encode() + b"\xe2\x82", False),  # cut at the end of a step
    ],
)
def test_utf8_is_checked_in_steps_without_decoding_the_whole_input(data, valid):
    from fraglens.reading.findings import is_utf8

    assert is_utf8(data) is valid


def _many_objects_capture() -> bytes:
    """A call whose arguments parse into some 30,000 containers."""
    args = json.dumps({"rows": [{"n": i, "t": [i]} for i in range(15_000)]})
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": args}}]},
        "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    return f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode()


def test_what_a_read_made_is_old_and_walked_by_no_young_collection():
    import gc

    data = _many_objects_capture()
    walks: list[int] = []

    def counted(phase, info):
        if phase == "start" and info["generation"] < 2:
            walks.append(info["generation"])

    # an earlier test in this process may have run cli.main, which freezes the
    # heap at exit: with objects frozen the read leaves the counts alone (the
    # next test), so they go back first
    gc.unfreeze()
    gc.collect()
    threshold = gc.get_threshold()
    gc.set_threshold(20_000, 50, 50)  # fewer than the read makes, as check's 100,000 on 10 MB
    gc.callbacks.append(counted)
    try:
        stream, _ = stream_from_bytes(data, "capture")
        made = [object() for _ in range(3)] + [[] for _ in range(100)]  # allocations after it
    finally:
        gc.callbacks.remove(counted)
        gc.set_threshold(*threshold)
    assert stream.reassembler.calls[0].result.status == "ok" and made
    assert walks == []
    assert gc.get_count()[0] < 1_000


def test_objects_someone_froze_stay_frozen_through_a_read(monkeypatch):
    import gc

    # the read neither freezes nor unfreezes (the count itself may shrink
    # as frozen objects die during the read, so the calls are what is watched)
    called: list[str] = []
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        monkeypatch.setattr(gc, "freeze", lambda: called.append("freeze"))
        monkeypatch.setattr(gc, "unfreeze", lambda: called.append("unfreeze"))
        stream_from_bytes(_many_objects_capture(), "capture")
        monkeypatch.undo()
        assert called == [] and gc.get_freeze_count() > frozen // 2
    finally:
        gc.unfreeze()
