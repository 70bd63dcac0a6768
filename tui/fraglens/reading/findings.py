"""What a read adds when it ends: the framing's problems, a recording's own
findings, and the events whose bytes were not UTF-8, as diagnostics.

Every reader of the table (``readers.py``) ends a read here, whole or in
slices, so the same capture gets the same findings however it was read.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from typing import Any

from ..engine.plural import counted
from ..framing.events import EventLog, FramingProblem
from .stream import Stream


def finish_stream(stream: Stream, problems: Iterable[FramingProblem], meta: dict[str, Any]) -> None:
    """Close a stream read from a capture and add what the framing met on the
    way (``problems``) and what a recording says of itself (``meta``): the
    one ending for a whole read and for the app's read in slices."""
    stream.close()
    last = max(len(stream.events) - 1, 0)
    for problem in problems:
        event = last if problem.event is None else min(problem.event, last)
        stream.reassembler.diag(problem.code, problem.message, event)
    if stream.framing in ("recording", "websocket"):
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
            were = "was" if skipped == 1 else "were"
            what.append(f"{counted(skipped, 'line')} could not be read and {were} left out")
        if cut and (meta.get("version") or 0) >= 3:  # reads written raw, timed after
            what.append("the recording stops mid-write (the recorder was killed): its last "
                        "reads are here, without their times")
        elif cut:
            what.append("the last line is cut off (the recorder stopped mid-write)")
        r.diag("recording-damaged", "; ".join(what), last)
    end = meta.get("end")
    if isinstance(end, dict) and isinstance(end.get("t"), float):  # finite: parse_recording
        stream.ended_at = end["t"]
    if isinstance(end, dict) and (end.get("end") == "error" or end.get("error")):
        error = end.get("error")
        said = f": {error}" if isinstance(error, str) and error else ""
        r.diag("recording-error", f"the recording ends with an error{said}", last)


def report_replaced_bytes(stream: Stream, data: bytes, valid: Iterable[range] = (),
                          utf8: bool = False) -> None:
    """Events whose bytes are not UTF-8 were decoded with U+FFFD in their place:
    say so at each such event (what arrived is in the raw bytes, not the text).
    One strict pass over the input, and a look at an event only then. A
    recording keeps such reads as base64, so its own lines are UTF-8: the
    response body its chunks make up is what is checked (the spans index it).
    ``valid``: events (in order) a reader found valid UTF-8, not looked at
    again: of a text capture their whole bytes (then only the bytes between
    them are read), of a binary frame its payload. Of a binary frame only the
    payload is text: its prelude and CRCs are not read as UTF-8. ``utf8``: the
    reader knows ``data`` is UTF-8 (a recording's body, from its reads:
    recording_runs.py)."""
    if utf8:
        return
    if stream.framing == "recording" and stream.events.source is None:
        if not any("\ufffd" in ev.data for ev in stream.events):
            return
        # imported here: only a recording needs it (an SSE check never loads it)
        from ..framing.recording import recording_to_sse

        data = recording_to_sse(data)
    events = stream.events
    binary = stream.framing == "eventstream"
    valid = list(valid)
    if _is_utf8_outside(events, data, valid) if valid and not binary else is_utf8(data):
        return
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


def is_utf8(data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether ``data[start:end]`` is valid UTF-8, without building the
    decoded text: a whole-input ``decode`` made a second copy of a 20 MB
    capture (and a third of its peak memory) only to be thrown away. In
    steps of 64 KiB: below the allocator's threshold for a mapping of its
    own, so each step's text reuses the memory the one before freed (steps
    of a megabyte were each a fresh mapping, faulted in page by page: three
    times the time)."""
    end = len(data) if end is None else end
    if start == 0 and end == len(data) and data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    step = 1 << 16
    try:
        for at in range(start, end, step):
            decoder.decode(view[at : min(at + step, end)])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _is_utf8_outside(events: EventLog, data: bytes, valid: list[range]) -> bool:
    """Whether the bytes around the events of ``valid`` (in order) are valid
    UTF-8: every event outside them lies there. The bytes of an SSE run's
    events were proved UTF-8 as they were read (reading/sse_runs.py), and a
    long call's are most of a capture: only what lies between runs is read
    again. False, too, when an event of ``valid`` has no span (then each
    event outside them is looked at)."""
    at = 0
    for run in valid:
        if not run:
            continue
        first, last = events.span(run.start), events.span(run.stop - 1)
        if first is None or last is None or first[0] < at:
            return False
        if first[0] > at and not is_utf8(data, at, first[0]):
            return False
        at = last[1]
    return at >= len(data) or is_utf8(data, at)
