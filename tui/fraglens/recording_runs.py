"""A fraglens recording whose body is SSE, read as one capture: in runs.

A recording keeps every network read with its time (framing/recording.py).
Read one read at a time, each through the SSE decoder, a recording of a long
call costs what an SSE capture did before runs: 100k events took 1.8 s where
the same body as plain SSE takes 0.3 s. Here the reads' bytes are joined into
the body and read by the SSE run reader (runs.py), as ``check`` reads a plain
capture, and each event is then given the time the read-by-read decoder
would have given it: the time of the read in which it was completed.

When that is. The decoder completes an event (a blank line, a comment's or
``[DONE]``'s line) when it is fed the byte that ends it - the last byte of
its span - with one exception: a carriage return that ends a read is held
until the next byte shows whether a line feed follows, so an event whose
last byte is such a CR is completed by the next read that holds any bytes,
or by the end of the stream. What is still open at the end (a last event
with no blank line after it) is completed by the end. The end's time is the
recording's end line's, else the last read's. ``tests/test_recording_runs.py``
holds every event, time and verdict to the read-by-read reading.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Any

from .framing.detect import looks_like_eventstream
from .framing.events import FramingProblem
from .framing.recording import Recording
from .runs import SSEReader, incremental_sse
from .stream import Stream

#: bytes read at a time (as load.py reads a plain capture)
_BUDGET = 1 << 20
#: what ends a line, and so may end an event
_EOL = frozenset(b"\r\n")


def read_recording(rec: Recording, format: str | None, **kwargs: Any) -> (
        tuple[Stream, list[FramingProblem], dict[str, Any]] | None):
    """The stream of ``rec``'s body read in runs, the framing's problems and
    the recording's metadata (as detect.py's ``Framed.meta`` has it); None
    when its body is not SSE (the caller reads it whole, as before)."""
    body = rec.body
    if not incremental_sse(body) or looks_like_eventstream(body):
        return None
    stream = Stream(format=format, framing="recording", sse_body=True, source=body, **kwargs)
    reader = SSEReader(stream, body)
    while not reader.done:
        reader.advance(_BUDGET)
    stream.events.stamp(_times(stream, body, rec.chunks, rec.end_time))
    return stream, reader.problems, rec.meta("sse")


def _times(stream: Stream, body: bytes, chunks: list[tuple[float | None, bytes]],
           end_time: float | None) -> list[float | None]:
    """Each event's time: that of the read its last byte came in (see the
    module's docstring for the held carriage return and the end)."""
    ends = list(accumulate(len(chunk) for _, chunk in chunks))
    times = [t for t, _ in chunks]
    log = stream.events
    out: list[float | None] = []
    size = len(body)
    for i in range(len(log)):
        span = log.span(i)
        end = span[1] if span is not None else size
        last = end - 1
        if last < 0 or body[last] not in _EOL or (
                log.kind(i) != "comment" and not _blank_line_ends(body, end)):
            out.append(end_time)  # no line end, or no blank line, ended it: the end did
            continue
        k = bisect_right(ends, last)  # the read that holds the last byte
        if body[last] == 0x0D and ends[k] == last + 1:
            k = bisect_right(ends, last + 1)  # held: the next read with bytes completes it
        out.append(times[k] if k < len(times) else end_time)
    return out


def _blank_line_ends(body: bytes, end: int) -> bool:
    """``body[:end]`` ends with a blank line: a line end right after another."""
    i = end - 1
    if body[i] == 0x0A and i > 0 and body[i - 1] == 0x0D:
        i -= 1
    return i > 0 and body[i - 1] in _EOL
