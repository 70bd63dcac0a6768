"""Reading a stream from a path or stdin into a closed ``Stream``.

The only place the command line touches files for reading streams; the
framing and the engine below it stay sans-I/O.
"""

from __future__ import annotations

import codecs
import gc
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, TypeVar

from .engine.reassembler import DEFAULT_MAX_ARG_BYTES
from .eventstream_runs import EventStreamReader
from .framing.detect import FramingError, ndjson_start, read_stream
from .framing.events import EventLog, Framed, FramingProblem
from .framing.eventstream import looks_like_eventstream
from .ndjson_runs import NDJSONReader
from .runs import SSEReader, incremental_sse
from .stream import FORMATS, Stream


class LoadError(Exception):
    """The input could not be read as a stream: a one-line reason."""


#: the most a capture may hold: reading stops one byte past it, so that
#: ``check /dev/zero`` or an endless pipe ends with a one-line error instead
#: of reading until memory runs out (a 100k-event capture is about 50 MB)
MAX_INPUT_BYTES = 1 << 30
#: bytes of an SSE or NDJSON capture framed at a time at most, between two runs
_SSE_BUDGET = 1 << 22


def read_bytes(path: str) -> bytes:
    """The whole input, at most ``MAX_INPUT_BYTES``; a one-line LoadError past it."""
    limit = MAX_INPUT_BYTES
    try:
        if path == "-":
            data = _read_capped(sys.stdin.buffer, limit)
        else:
            with open(path, "rb") as f:  # not pathlib: it would cost check start-up time
                data = _read_capped(f, limit)
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise LoadError(f"{path}: is a directory") from None
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None
    if data is None:
        name = "stdin" if path == "-" else path
        raise LoadError(f"{name}: more than {limit} bytes, the most one capture may hold; not read")
    return data


def _read_capped(f: BinaryIO, limit: int) -> bytes | None:
    """A regular file whole (its size is known first); a pipe or a device a
    mebibyte at a time. None when there is more than ``limit`` bytes."""
    try:
        info = os.fstat(f.fileno())
    except (OSError, ValueError):  # no descriptor (a test's stdin): read it in pieces
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        return f.read() if info.st_size <= limit else None
    pieces: list[bytes] = []
    total = 0
    while total <= limit:
        piece = f.read(min(1 << 20, limit + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
    return b"".join(pieces) if total <= limit else None


def demo_bytes() -> bytes:
    """The bundled demo recording the app opens with no argument."""
    from importlib import resources  # with pathlib and tempfile: only for the demo

    return resources.files("fraglens.demo").joinpath("demo.sse").read_bytes()


def frame(data: bytes, name: str = "input") -> Framed:
    try:
        framed = read_stream(data)
    except FramingError as exc:
        raise LoadError(f"{name}: {exc}") from None
    if not framed.events and framed.problems:  # nothing to show but why
        raise LoadError(f"{name}: {framed.problems[0].message}")
    return framed


def known_format(fmt: str | None) -> str | None:
    """``fmt`` when fraglens reads it (or None); else a one-line LoadError.
    Only a recording's header can name one here: ``--format`` is checked
    by the command line."""
    if fmt is not None and fmt not in FORMATS:
        known = ", ".join(FORMATS)
        raise LoadError(f"the recording's header names the format {fmt!r}, which is not one "
                        f"fraglens reads ({known})")
    return fmt


def stream_from_framed(
    framed: Framed,
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> Stream:
    fmt = known_format(format or framed.meta.get("format"))
    stream = Stream(
        format=fmt,
        framing=framed.framing,
        max_arg_bytes=max_arg_bytes,
        keep_naive=keep_naive,
        sse_body=(framed.meta.get("body_framing") or framed.framing) == "sse",
    )
    if isinstance(framed.events, EventLog):
        stream.read_log(framed.events)  # the stream keeps the compact log itself
    else:
        for ev in framed.events:
            stream.feed(ev)
    finish_stream(stream, framed.problems, framed.meta)
    return stream


def finish_stream(
    stream: Stream, problems: Iterable[FramingProblem], meta: dict[str, Any]
) -> None:
    """Close a stream read from a capture and add what the framing met on the
    way (``problems``) and what a recording says of itself (``meta``): the
    one ending for a whole read and for the app's read in slices."""
    stream.close()
    last = max(len(stream.events) - 1, 0)
    for problem in problems:
        event = last if problem.event is None else min(problem.event, last)
        stream.reassembler.diag(problem.code, problem.message, event)
    if stream.framing == "recording":
        _recording_findings(stream, meta, last)


def _recording_findings(stream: Stream, meta: dict[str, Any], last: int) -> None:
    """What a recording itself says went wrong, as diagnostics at its last
    event: lines that could not be read, a last line cut off, an end line
    that records an error."""
    r = stream.reassembler
    skipped, cut = meta.get("skipped_lines") or 0, bool(meta.get("truncated"))
    if skipped or cut:
        what = []
        if skipped:
            what.append(f"{skipped} line(s) could not be read and were left out")
        if cut:
            what.append("the last line is cut off (the recorder stopped mid-write)")
        r.diag("recording-damaged", "; ".join(what), last)
    end = meta.get("end")
    if isinstance(end, dict) and isinstance(end.get("t"), (int, float)):
        stream.ended_at = float(end["t"])
    if isinstance(end, dict) and (end.get("end") == "error" or end.get("error")):
        error = end.get("error")
        said = f": {error}" if isinstance(error, str) and error else ""
        r.diag("recording-error", f"the recording ends with an error{said}", last)


@contextmanager
def _bulk() -> Iterator[None]:
    """Reading a capture makes a few objects per event and frees none of them
    until the end, and none of them form cycles: the cyclic garbage collector
    would only re-scan them over and over (a third of the time on 100k-event
    captures). It is paused while a whole capture is read."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def stream_from_bytes(data: bytes, name: str = "input", **kwargs) -> tuple[Stream, Framed]:
    """A whole capture, framed and read: what ``check`` and the app open."""
    with _bulk():
        if looks_like_eventstream(data):  # first, as framing/detect.py tells it
            return _read_eventstream(data, **kwargs)
        if data[:1] == b"{" and (read := _read_recording(data, **kwargs)) is not None:
            stream, framed, body = read
            report_replaced_bytes(stream, body)
            return stream, framed
        if incremental_sse(data):
            stream, framed = _read_sse(data, name, **kwargs)
        elif (ndjson := ndjson_start(data)) is not None:
            stream, framed = _read_ndjson(data, ndjson, **kwargs)
        else:
            framed = frame(data, name)
            stream = stream_from_framed(framed, **kwargs)
        report_replaced_bytes(stream, data)
        return stream, framed


_Reader = TypeVar("_Reader", SSEReader, NDJSONReader, EventStreamReader)


def _drained(reader: _Reader) -> _Reader:
    """``reader`` once it has read its whole input, in slices of the budget."""
    while not reader.done:
        reader.advance(_SSE_BUDGET)
    return reader


def _read_sse(
    data: bytes,
    name: str,
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> tuple[Stream, Framed]:
    """An SSE capture, framed and read in one pass (runs.py): long calls' runs
    of identical events are read in bulk."""
    stream = Stream(format=format, max_arg_bytes=max_arg_bytes, keep_naive=keep_naive,
                    source=data)
    reader = _drained(SSEReader(stream, data))
    if not stream.events and reader.problems:  # nothing to show but why (as frame())
        raise LoadError(f"{name}: {reader.problems[0].message}")
    finish_stream(stream, reader.problems, {})
    return stream, Framed("sse", stream.events, problems=reader.problems)


def _read_recording(
    data: bytes,
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> tuple[Stream, Framed, bytes] | None:
    """A fraglens recording whose body is SSE, its body read in one pass as an
    SSE capture is (runs.py), each event given the time of the read that
    completed it (recording_times.py); and the body. None for anything else
    (another body, a damaged header, no recording at all), which is framed
    whole."""
    from .framing.recording import is_recording, parse_recording

    if not is_recording(data):
        return None
    try:
        rec = parse_recording(data)
    except FramingError:
        return None  # framed whole, which says what is wrong in one line
    body = rec.body
    if not incremental_sse(body) or looks_like_eventstream(body):
        return None
    from .recording_times import event_times

    stream = Stream(format=known_format(format or rec.format), framing="recording",
                    max_arg_bytes=max_arg_bytes, keep_naive=keep_naive, sse_body=True,
                    source=body)
    reader = _drained(SSEReader(stream, body))
    stream.events.stamp(event_times(stream.events, body, rec.chunks, rec.end_time))
    meta = rec.meta("sse")
    finish_stream(stream, reader.problems, meta)
    return stream, Framed("recording", stream.events, meta, reader.problems), body


def _read_ndjson(
    data: bytes,
    start: int,
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> tuple[Stream, Framed]:
    """An NDJSON capture (from ``start``, where ``ndjson_start`` found it),
    framed and read in one pass (ndjson_runs.py): runs of text lines are read
    in bulk."""
    stream = Stream(format=known_format(format), framing="ndjson", max_arg_bytes=max_arg_bytes,
                    keep_naive=keep_naive, sse_body=False, source=data)
    _drained(NDJSONReader(stream, data, start))
    finish_stream(stream, [], {})
    return stream, Framed("ndjson", stream.events)


def _read_eventstream(
    data: bytes,
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> tuple[Stream, Framed]:
    """An AWS event-stream capture, framed and read in one pass
    (eventstream_runs.py): long calls' runs of identical frames are read in
    bulk. Damage is read as events, so there is always something to show."""
    stream = Stream(format=known_format(format), framing="eventstream",
                    max_arg_bytes=max_arg_bytes,
                    keep_naive=keep_naive, source=data)
    reader = _drained(EventStreamReader(stream, data))
    finish_stream(stream, reader.problems, {})
    report_replaced_bytes(stream, data, reader.runs)
    return stream, Framed("eventstream", stream.events, problems=reader.problems)


def report_replaced_bytes(stream: Stream, data: bytes, valid: Iterable[range] = ()) -> None:
    """Events whose bytes are not UTF-8 were decoded with U+FFFD in their place:
    say so at each such event (what arrived is in the raw bytes, not the text).
    One strict pass over the input, and a look at an event only then. A
    recording keeps such reads as base64, so its own lines are UTF-8: the
    response body its chunks make up is what is checked (the spans index it).
    ``valid``: events (in order) whose payloads a reader found valid UTF-8, not
    looked at again. Of a binary frame only the payload is text: its prelude
    and CRCs are not read as UTF-8."""
    if stream.framing == "recording" and stream.events.source is None:
        if not any("\ufffd" in ev.data for ev in stream.events):
            return
        # imported here: only a recording needs it (an SSE check never loads it)
        from .framing.recording import recording_to_sse

        data = recording_to_sse(data)
    if _is_utf8(data):
        return
    events = stream.events
    binary = stream.framing == "eventstream"
    for number in _outside(len(events), valid):
        if not events.replaced(number):
            continue
        ev = events[number]
        where = ev.at if binary and ev.at is not None else ev.span
        if where is None:
            continue
        raw = data[where[0] : where[1]]
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.end]
            stream.reassembler.diag(
                "bytes-replaced",
                f"bytes that are not UTF-8 ({bad.hex(' ')} at byte {where[0] + exc.start}) "
                "were read as U+FFFD",
                ev.number,
            )


def _outside(count: int, skipped: Iterable[range]) -> Iterator[int]:
    """The numbers below ``count`` in none of the ranges ``skipped`` (in order)."""
    at = 0
    for gap in skipped:
        yield from range(at, gap.start)
        at = gap.stop
    yield from range(at, count)


def _is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8, without building the decoded text: a
    whole-input ``decode`` made a second copy of a 20 MB capture (and a third
    of its peak memory) only to be thrown away."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    step = 1 << 20
    try:
        for start in range(0, len(data), step):
            decoder.decode(view[start : start + step])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def load_stream(path: str, **kwargs) -> tuple[Stream, Framed]:
    data = demo_bytes() if path == ":demo:" else read_bytes(path)
    return stream_from_bytes(data, "demo" if path == ":demo:" else path, **kwargs)
