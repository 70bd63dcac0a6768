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
from itertools import accumulate, compress, repeat
from operator import not_, sub

from ..framing.events import EventLog

#: what ends a line, and so may end an event
_EOL = frozenset(b"\r\n")
_LINE_END = re.compile(rb"\r\n?|\n")
#: the ends of an event's blank line that end in a line feed (never held)
_BLANK = (b"\n\n", b"\r\n\r\n")


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
        size = len(body)
        spans = log.span_ends(start)
        # the commonest event ends in a blank line whose last byte is a line
        # feed: completed by the read that holds that byte, found in C for all
        plain = list(map(body.endswith, repeat(_BLANK), repeat(0), spans))
        if spans and min(spans) < 0:  # an event with no span (-1 would count from the end)
            plain = [p and e >= 0 for p, e in zip(plain, spans, strict=True)]
        later = [*times, end_time]
        out: list[float | None] = list(map(
            later.__getitem__, map(bisect_right, repeat(ends), map(sub, spans, repeat(1)))
        ))
        for k in compress(range(len(out)), map(not_, plain)):
            end = spans[k] if spans[k] >= 0 else size
            if log.kind(start + k) == "comment":
                # the line after it ended it: its terminator's last byte
                found = _LINE_END.search(body, end)
                last = found.end() - 1 if found is not None else -1
            else:
                last = end - 1
                if last >= 0 and (body[last] not in _EOL or not _blank_line_ends(body, end)):
                    last = -1
            if last < 0:
                out[k] = end_time  # no line end, or no blank line, ended it: the end did
                continue
            r = bisect_right(ends, last)  # the read that holds the last byte
            if body[last] == 0x0D and ends[r] == last + 1:
                r = bisect_right(ends, last + 1)  # held: the next read with bytes completes it
            out[k] = times[r] if r < len(times) else end_time
        return out


def _blank_line_ends(body: bytes, end: int) -> bool:
    """``body[:end]`` ends with a blank line: a line end right after another."""
    i = end - 1
    if body[i] == 0x0A and i > 0 and body[i - 1] == 0x0D:
        i -= 1
    return i > 0 and body[i - 1] in _EOL
