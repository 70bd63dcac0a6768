"""When the stream arrived: time to the first event and the first tool byte, each
call's span, output tokens per second, and the stalls.

Every event a recording, a live call or the proxy produces carries the time of
the network read that completed it (``RawEvent.time``, seconds since the
request was sent). That is all this module reads, so it works the same on a
closed capture and on a stream still arriving. A read that carried only part of
an event is not seen on its own: a stall is measured from one completed event
to the next, which is what a client waiting on its SSE parser waits for. A
keep-alive comment is an event, so a server that keeps talking does not stall.

A HAR keeps each body whole, so its events all carry the time the body ended:
only the duration is known there, and nothing finer is made up.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, count, islice, repeat
from math import isfinite
from operator import gt, mul, sub
from typing import Any

from ..reading.stream import Stream
from .usage import tokens

__all__ = ["DEFAULT_STALL_MS", "stream_timing"]

DEFAULT_STALL_MS = 1000.0


def _ms(seconds: float) -> float:
    # recordings keep microseconds; a tenth of a millisecond reads better
    return round(seconds * 1000, 1)


def stream_timing(stream: Stream, stall_ms: float = DEFAULT_STALL_MS) -> dict[str, Any] | None:
    """The ``timing`` object of ``check --json``, or None for a capture without times.

    ``calls`` name each call by its engine ``seq`` (as engine diagnostics do);
    the report turns that into the position in its ``calls`` list. ``stalls``
    lists every gap longer than ``stall_ms`` between two events' receive times,
    with the number of the event that ended it. One pass over the events, or
    none: a recording's reads tell the stalls and the first and the last
    event's times with a few events' times (``EventLog.wide_gaps``).
    """
    events = stream.events
    if not events.timed:
        return None
    told = events.wide_gaps(stall_ms) if stream.framing != "har" else None
    if told is not None:
        # a recording whose reads show every event timed: its stalls, and the
        # few times read below, worked out alone
        first, last, wide = told
        return _report(stream, stall_ms, first, last,
                       [{"gap_ms": _ms(later - earlier), "event": number}
                        for number, earlier, later in wide], events.time_of)
    times = events.time_array()  # NaN: no time
    # every event timed (the sum of the times is no NaN, nor infinite): the
    # passes below run in C, with no float object made per event
    whole = isfinite(sum(times))
    timed = times if whole else [t for t in times if t == t]
    if not timed:
        return None
    r = stream.reassembler
    if stream.framing == "har":
        return {
            "first_event_ms": None,
            "first_tool_byte_ms": None,
            "duration_ms": _ms(max(timed)),
            "output_tokens_per_s": None,
            "calls": [{"call": c.seq, "first_ms": None, "last_ms": None} for c in r.calls],
            "stalls": None,
            "note": "a HAR keeps the body whole: only when it ended is known",
        }

    def time_of(event: int) -> float | None:
        t = times[event]
        return None if t != t else t

    stalls: list[dict[str, Any]] = []
    if whole:
        # the gaps between neighbours; a stall only where the widest is one
        # (x * 1000 rounds monotonically, so the widest gap tells for all)
        if len(times) > 1 and max(map(sub, islice(times, 1, None), times)) * 1000 > stall_ms:
            gaps = map(gt, map(mul, map(sub, islice(times, 1, None), times), repeat(1000)),
                       repeat(stall_ms))
            for number in compress(count(1), gaps):
                stalls.append({"gap_ms": _ms(times[number] - times[number - 1]),
                               "event": number})
    else:
        previous: float | None = None
        for number, t in enumerate(times):
            if t != t:  # NaN: no time
                continue
            if previous is not None and (t - previous) * 1000 > stall_ms:
                stalls.append({"gap_ms": _ms(t - previous), "event": number})
            previous = t
    return _report(stream, stall_ms, timed[0], timed[-1], stalls, time_of)


def _report(
    stream: Stream, stall_ms: float, first: float, last: float, stalls: list[dict[str, Any]],
    time_of: Callable[[int], float | None],
) -> dict[str, Any]:
    """The ``timing`` object, given the first and the last timed event's times,
    the stalls between events, and each event's time (``time_of``)."""
    r = stream.reassembler
    used = tokens(r.usage[-1][1]) if r.usage else None
    generated = used.output if used is not None else None
    numbered = len(stream.events)

    def at(event: int) -> float | None:
        t = time_of(event) if 0 <= event < numbered else None
        return None if t is None else _ms(t)

    ended = stream.ended_at
    if ended is not None and ended > last:
        # the wait after the last event until the stream ended (a read timeout,
        # a client that gave up): the stall that matters most, with no event to end it
        if (ended - last) * 1000 > stall_ms:
            stalls.append({"gap_ms": _ms(ended - last), "event": None})
    else:
        ended = last
    starts = [c.first_event for c in r.calls]
    rate = None
    # generation speed: the tokens over the time from the first event to the last
    if generated is not None and last > first:
        rate = round(generated / (last - first), 1)
    return {
        "first_event_ms": _ms(first),
        "first_tool_byte_ms": at(min(starts)) if starts else None,
        "duration_ms": _ms(ended),
        "output_tokens_per_s": rate,
        "calls": [
            {
                "call": c.seq,
                "first_ms": at(c.first_event),
                "last_ms": at(max(c.first_event, c.last_event)),
            }
            for c in r.calls
        ],
        "stalls": stalls,
    }
