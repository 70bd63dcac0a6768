"""When each event of a recording's body was completed: its time.

A recording keeps every network read with its time (framing/recording.py).
Read one read at a time, each through the SSE decoder, a recording of a long
call costs what an SSE capture did before runs: 100k events took 1.8 s where
the same body as plain SSE takes 0.3 s. So the reads make up the body, which
the SSE run reader reads (recording_runs.py, sse_runs.py), and each event is
given here the time the read-by-read decoder would have given it: the time
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
and verdict to the read-by-read reading (``tests/test_recording_reads.py``
too, read in slices while the lines are parsed).

Where the body has no carriage return, every data event but one the end
closed ends in a blank line of line feeds and takes the time of the read its
last byte came in: the events that end in each read are counted in C (a
binary search per read), and only comments and the last event take the rule
above one by one.

The report's timing needs no event's time but a few: the first, the last,
each call's, and those either side of a stall. ``wide_gaps`` finds them
from the reads, without the time of every event (see there).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate, chain, compress, islice, repeat
from math import isfinite
from operator import not_, sub

from ..framing.events import EventLog, WideGaps

#: what ends a line, and so may end an event
_EOL = frozenset(b"\r\n")
_LINE_END = re.compile(rb"\r\n?|\n")
#: the ends of an event's blank line that end in a line feed (never held)
_BLANK = (b"\n\n", b"\r\n\r\n")
#: no time (as ``EventLog`` keeps it)
_NONE = float("nan")
#: events timed at a time by ``_by_reads``
_RUN = 256
#: the widest window ``wide_gaps`` looks in for an event, as a share of the stall: under
#: half, so that a gap wider than a stall holds a whole window (rounding aside)
_WINDOW = 0.45
#: at most this many windows a read, and this many more: past that, working out
#: every event's time costs less
_WINDOWS_A_READ, _WINDOWS = 0.25, 64
#: at most this many windows searched for the events around them (each a few
#: dozen events' times): past that, so is every event's time
_SEARCHES = 64


class EventTimes:
    """The times of a recording's events, from its reads, given as they are
    parsed (:meth:`add`): each read's time and length, and the body they
    make up as far as it is read (:meth:`grow`), until :meth:`finish` gives
    the end's time. Until then, an event whose time depends on what comes
    next (a comment's next line, a held carriage return that ends the reads
    so far) is not stamped yet: ``of`` stops before it."""

    def __init__(self) -> None:
        self._body = b""
        #: where each read ends in the body (8 bytes a read, not 36 as a list's
        #: int), and its time (NaN: none)
        self._ends = array("q")
        self._times = array("d")
        self._end_time = _NONE
        self._complete = False

    def add(self, times: Sequence[float | None], sizes: Sequence[int]) -> None:
        """The next reads: each one's time (None or NaN: none) and size."""
        ends = accumulate(sizes, initial=self._ends[-1] if self._ends else 0)
        self._ends.fromlist(list(islice(ends, 1, None)))
        # an array of them (version 3's) as it is, a list made one
        try:
            self._times.extend(
                times if isinstance(times, array) else array("d", times)  # type: ignore[arg-type]
            )
        except TypeError:  # a read with no time (None), none added
            self._times.extend(_NONE if t is None else t for t in times)

    def bounds(self, first: int, last: int) -> tuple[int, int]:
        """Where reads ``first`` to ``last`` (both included) lie in the body."""
        return (self._ends[first - 1] if first else 0), self._ends[last]

    def grow(self, body: bytes) -> None:
        """The body as far as it is read now (it starts with the one before)."""
        self._body = body

    def finish(self, body: bytes, end_time: float | None) -> None:
        """Every read is in: ``body`` whole, and the end's time (the end line's, else
        the last read's)."""
        self._body = body
        self._end_time = _NONE if end_time is None else end_time
        self._complete = True

    def of(self, log: EventLog, start: int = 0, stop: int | None = None) -> array[float]:
        """The time of each event of ``log`` (read from the body) from ``start``
        on, to ``stop`` (NaN: none): that of the read its last byte came in
        (see the module's docstring for the held carriage return and the end).
        Each event's time depends on its own span and what follows it alone,
        so the times of any events may be asked for, in any order (the log
        asks when they are read: ``EventLog.time_later``); before the end, the
        times stop at the first event whose time the reads so far cannot tell."""
        if stop == start + 1:
            one = self._one(log, start)
            if one is not None:
                return one
        body, ends, times = self._body, self._ends, self._times
        last = len(log) - 1
        spans = log.span_ends(start, stop)
        if not times or not spans:  # no read yet: no event either, but for the end's
            return array("d", repeat(self._end_time, len(spans) if self._complete else 0))
        ending = spans.tolist()
        spanned = min(ending) >= 0  # -1: an event with no span
        if spanned and body.find(b"\r", max(0, ending[0] - 4), ending[-1]) < 0:
            # no carriage return: every data event but one the end closed ends in a
            # blank line of line feeds, and takes the time of the read its last byte
            # came in; the events of each read counted in C, read by read
            out = self._by_reads(ending)
            other = log.unlike(("data", "done"), start, stop)
            # the log's last event, when every read is in, may have been closed by the end
            if (self._complete and start + len(spans) - 1 == last
                    and (not other or other[-1] != last)):
                other.append(last)
            other = [k - start for k in other]
        else:
            # the commonest event ends in a blank line whose last byte is a line
            # feed: completed by the read that holds that byte, found in C for all
            plain = list(map(body.endswith, repeat(_BLANK), repeat(0), ending))
            if spanned:
                out = self._by_reads(ending)
            else:  # an event with no span (-1 would count from the end)
                plain = [p and e >= 0 for p, e in zip(plain, ending, strict=True)]
                out = array("d", map(
                    times.__getitem__, map(bisect_right, repeat(ends), map(sub, ending, repeat(1)))
                ))
            other = list(compress(range(len(out)), map(not_, plain)))
        for k in other:
            t = self._other(log.kind(start + k) == "comment", spans[k])
            if t is None:
                del out[k:]
                break
            out[k] = t
        return out

    def wide_gaps(self, log: EventLog, ms: float) -> WideGaps | None:
        """The times of the first and the last event of ``log``, and each gap
        between two neighbouring events wider than ``ms`` milliseconds
        (``(later - earlier) * 1000 > ms``) as the number of the event after
        it and the two times, when every event has a time; told from the
        reads, with the time of a few events worked out, not of every one
        (what the report's timing asks of a long call). None when the reads do
        not show that at a glance: the caller then reads every event's time.

        Why it holds. Every read is in, the reads' times are finite and never
        go back, nor does the end's: then each event's time is one of them, and
        they never go back from one event to the next (a held carriage return,
        a comment and the end only give an event a later read's time than its
        last byte's, never one later than the next event's). The span from
        the first event's time to the last one's is cut into windows under
        half of ``ms`` wide: a gap wider than that between two neighbouring
        events holds a whole window in which no event has its time. So each
        window is shown to hold an event's time (the first event completed in
        the reads of the window, whose time is its last byte's read's), or
        else the events around it are found by their times, a binary search."""
        n, times, ends, body = len(log), self._times, self._ends, self._body
        if not (self._complete and n and times and ms > 0 and isfinite(ms)):
            return None
        end = self._end_time
        reads = times.tolist()
        # finite and never going back: the sum of finite times may overflow, then None
        if not (isfinite(sum(reads)) and end >= reads[-1] and sorted(reads) == reads):
            return None
        spans = log.span_ends()
        if b"\xff" * 8 in spans.tobytes():  # an event with no span (-1; offsets are < 2**56)
            return None
        first_time, last_time = self._at(log, 0), self._at(log, n - 1)
        step = _WINDOW * ms / 1000
        windows = (last_time - first_time) / step
        if windows > _WINDOWS_A_READ * len(reads) + _WINDOWS or step <= abs(last_time) * 1e-9:
            return None
        edges = [first_time + k * step for k in range(int(windows) + 1)]
        edges.append(max(last_time, first_time + len(edges) * step))
        # each window's reads: from the first at or after its start to the last
        # at or before its end; where they lie in the body (read k from bounds[k])
        bounds = array("q", (0,)) + ends
        starts = map(bounds.__getitem__, map(bisect_left, repeat(reads), edges[:-1]))
        stops = map(bounds.__getitem__, map(bisect_right, repeat(reads), edges[1:]))
        # the first event whose last byte lies at or after the start of each window's reads
        firsts = map(bisect_right, repeat(spans), starts)
        kinds = ("data", "done")
        gaps: list[tuple[int, float, float]] = []
        searches = 0
        after = first_time  # the time of the event after the last gap found
        for k, last, start, stop in zip(firsts, stops, edges[:-1], edges[1:], strict=True):
            if start <= first_time <= stop or start <= last_time <= stop or stop < after:
                continue  # the first or the last event's time lies in it, or a gap found spans it
            # it ends in the window's reads (with none, last is at or before their start)
            if k < n and spans[k] <= last:
                if k != n - 1 and log.kind(k) in kinds and body.endswith(_BLANK, 0, spans[k]):
                    continue  # its time is its last byte's read's, in the window
                if start <= self._at(log, k) <= stop:
                    continue
            # no event shown in the window: the first one at or after its start
            searches += 1
            if searches > _SEARCHES:
                return None
            lo, hi = 1, n - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if self._at(log, mid) < start:
                    lo = mid + 1
                else:
                    hi = mid
            after = self._at(log, lo)
            if after <= stop:
                continue  # it lies in the window after all
            before = self._at(log, lo - 1)
            if (after - before) * 1000 > ms:
                gaps.append((lo, before, after))
        return first_time, last_time, gaps

    def _at(self, log: EventLog, i: int) -> float:
        """Event ``i``'s time, once every read is in."""
        return self.of(log, i, i + 1)[0]

    def _one(self, log: EventLog, i: int) -> array[float] | None:
        """The time of event ``i`` alone (a row the app shows) where it is the
        commonest, a data event that ends in a line feed's blank line and is
        not the last one the end may have closed: the time of the read its
        last byte came in; None for any other, which ``of`` works out."""
        span = log.span(i)
        if span is None or not self._times or log.kind(i) not in ("data", "done"):
            return None
        if (self._complete and i == len(log) - 1) or not self._body.endswith(_BLANK, 0, span[1]):
            return None
        return array("d", (self._times[bisect_right(self._ends, span[1] - 1)],))

    def _by_reads(self, spans: list[int]) -> array[float]:
        """The time of the read each event's last byte came in, for events
        that end at ``spans`` (in order): the events that end within each read
        counted in C, each read's time repeated so many times. A few hundred
        events at a time: each count a binary search among as many, not among
        all of them (a third less time over 100k events)."""
        ends, times = self._ends, self._times
        out = array("d")
        for at in range(0, len(spans), _RUN):
            part = spans[at : at + _RUN]
            lo = bisect_right(ends, part[0] - 1)
            hi = bisect_right(ends, part[-1] - 1) + 1
            # the events whose last byte lies before each read's end
            before = list(map(bisect_right, repeat(part), ends[lo:hi]))
            counts = map(sub, before, chain((0,), before))
            out.fromlist(list(chain.from_iterable(map(repeat, times[lo:hi].tolist(), counts))))
        return out

    def _other(self, comment: bool, end: int) -> float | None:
        """The time of an event that does not end in a line feed's blank line,
        which ends at ``end`` (-1: it has no span); None when it is not known
        yet."""
        body, ends, times, complete = self._body, self._ends, self._times, self._complete
        if end < 0:
            if not complete:
                return None
            end = len(body)
        if comment:
            # the line after it ended it: its terminator's last byte (a carriage
            # return that ends the body so far may be half of a CRLF)
            found = _LINE_END.search(body, end)
            if found is None or (not complete and found.end() == len(body)
                                 and body[-1] == 0x0D):
                return self._end_time if complete else None
            last = found.end() - 1
        else:
            last = end - 1
            if last < 0 or body[last] not in _EOL or not _blank_line_ends(body, end):
                # no line end, or no blank line, ended it: the end did (only
                # closing the decoder dispatches such an event)
                return self._end_time if complete else None
        r = bisect_right(ends, last)  # the read that holds the last byte
        if body[last] == 0x0D and ends[r] == last + 1:
            r = bisect_right(ends, last + 1)  # held: the next read with bytes completes it
        if r < len(times):
            return times[r]
        return self._end_time if complete else None


def _blank_line_ends(body: bytes, end: int) -> bool:
    """``body[:end]`` ends with a blank line: a line end right after another."""
    i = end - 1
    if body[i] == 0x0A and i > 0 and body[i - 1] == 0x0D:
        i -= 1
    return i > 0 and body[i - 1] in _EOL
