"""When each event of a recording's body was completed: its time.

A recording keeps every network read with its time (framing/recording.py).
Read one read at a time, each through the SSE decoder, a recording of a long
call costs what an SSE capture did before runs: 100k events took 1.8 s where
the same body as plain SSE takes 0.3 s. So ``check`` joins the reads into the
body and reads it with the SSE run reader (load.py, runs.py), then gives each
event here the time the read-by-read decoder would have given it: the time
of the read in which it was completed.

When that is. The decoder completes an event when it is fed the byte that
ends the line that ends it: for a data event its blank line, the last byte
of its span; for a comment (consecutive comment lines are one event) the
line after its span, which shows that no comment line follows - so a
comment whose next line, blank or not, arrives in a later read gets that
read's time, in ``check`` of a recording as in ``live`` and the app, which
read with the decoder. A carriage return that ends a read is held until the
next byte shows whether a line feed follows, so a line whose end is such a
CR is completed by the next read that holds any bytes, or by the end of the
stream. What is still open at the end (a last event with no line after it)
is completed by the end. The end's time is the recording's end line's, else
the last read's. ``tests/test_recording_runs.py`` holds every event, time
and verdict to the read-by-read reading.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from ..framing.events import EventLog

#: what ends a line, and so may end an event
_EOL = frozenset(b"\r\n")
_LINE_END = re.compile(rb"\r\n?|\n")


class EventTimes:
    """The times of a recording's events, from its reads: ``chunks`` (each
    read's time and bytes, ``body`` their join) and the end's time."""

    def __init__(self, body: bytes, chunks: list[tuple[float | None, bytes]],
                 end_time: float | None) -> None:
        self._body = body
        self._ends = list(accumulate(len(chunk) for _, chunk in chunks))
        self._times = [t for t, _ in chunks]
        self._end_time = end_time

    def of(self, log: EventLog, start: int = 0) -> list[float | None]:
        """The time of each event of ``log`` (read from the body) from ``start``
        on: that of the read its last byte came in (see the module's docstring
        for the held carriage return and the end). Each event's time depends
        on its own span alone, so a log read in slices is stamped a slice at
        a time."""
        body, ends, times, end_time = self._body, self._ends, self._times, self._end_time
        out: list[float | None] = []
        size = len(body)
        for i in range(start, len(log)):
            span = log.span(i)
            end = span[1] if span is not None else size
            if log.kind(i) == "comment":
                # the line after it ended it: its terminator's last byte
                found = _LINE_END.search(body, end)
                last = found.end() - 1 if found is not None else -1
            else:
                last = end - 1
                if last >= 0 and (body[last] not in _EOL or not _blank_line_ends(body, end)):
                    last = -1
            if last < 0:
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
