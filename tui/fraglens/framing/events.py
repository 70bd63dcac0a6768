"""What a framing reader hands on: one record per event of the stream.

Framing knows bytes and lines (SSE, NDJSON, a JSON array, a single JSON body,
a HAR export, a fraglens recording) and nothing of JSON chunk meaning.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from operator import sub
from typing import TYPE_CHECKING, Any, Literal, overload

from ..engine import int64s
from ..records import FrozenRecord, Record

if TYPE_CHECKING:
    from typing import Final

#: data     - an SSE event with data, or one NDJSON line / array item / body
#: done     - the ``data: [DONE]`` sentinel
#: comment  - an SSE comment line (``: keep-alive``); ``data`` holds its text
#: damaged  - binary framing that did not hold (a bad CRC, a message cut off);
#:            ``data`` says what, ``event`` which kind (``crc`` or ``cut``; a
#:            WebSocket message refused for its size: ``too-large``)
#: sent     - a WebSocket text message the client sent (``framing/websocket.py``)
#: binary   - a binary WebSocket message: ``data`` its bytes in base64, ``event`` its sender
#: close    - a WebSocket close: ``data`` is ``{"code", "reason", "from"}`` as JSON
EventKind = Literal["data", "done", "comment", "damaged", "sent", "binary", "close"]


# Made once per event of 100k-event streams: a record that may change, since
# one that stopped it would cost more to make. Treat it as immutable.
class RawEvent(Record):
    __slots__ = ("number", "kind", "data", "event", "id", "time", "span", "at")
    _compared = ("number", "kind", "data", "event", "id", "time", "span")
    number: int
    kind: EventKind
    data: str
    #: the SSE ``event:`` field, if any
    event: str | None
    #: the SSE ``id:`` field, if any
    id: str | None
    #: seconds since the request was sent, when a recording says so
    time: float | None
    #: (start, end) byte offsets in the source this event was read from
    span: tuple[int, int] | None
    #: (start, end) byte offsets of the payload itself in that source, when
    #: ``data`` is exactly those bytes decoded (one SSE data line, an NDJSON
    #: line, a binary message's payload): an ``EventLog`` over the source then
    #: keeps the offsets instead of the text. Not part of what the event is
    #: (not in ``_compared``): two events that say the same are equal wherever
    #: their payloads lie.
    at: tuple[int, int] | None

    def __init__(
        self, number: int, kind: EventKind, data: str, event: str | None = None,
        id: str | None = None, time: float | None = None,
        span: tuple[int, int] | None = None, at: tuple[int, int] | None = None,
    ) -> None:
        self.number = number
        self.kind = kind
        self.data = data
        self.event = event
        self.id = id
        self.time = time
        self.span = span
        self.at = at


_NO_TIME = float("nan")
_COMMENT_DATA = bytes((2, 0))  # a comment's kind and a data event's, in EventLog._kinds
#: an event's payload kept as text, or lying where its span cannot say
_TEXT, _FAR = -1, -2
#: the farthest a payload's ends may lie from its span's in the arrays
_WIDEST = (1 << 31) - 1
#: late times worked out at once by a loop over the events, as it reaches them
_SETTLE_AHEAD = 4096
#: the first and the last event's times, and the wide gaps: (event after, earlier, later)
WideGaps = tuple[float, float, list[tuple[int, float, float]]]


class RunLines(Record):
    """What the events of a run read in bulk carry besides their one data
    line, where it varies from event to event (reading/sse_runs.py), in
    absolute offsets of the source, one entry per event."""

    __slots__ = ("payloads", "comments", "first_id")
    #: where each payload starts (its lines before it vary in length)
    payloads: Sequence[int] | None
    #: a one-line comment before each event's data line, which the decoder
    #: makes an event of its own before it: its span and its text's range
    comments: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]] | None
    #: the first event's ``id:``, each next one's counting up by one
    first_id: int | None

    def __init__(
        self, payloads: Sequence[int] | None = None,
        comments: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]] | None = None,
        first_id: int | None = None,
    ) -> None:
        self.payloads, self.comments, self.first_id = payloads, comments, first_id


class EventLog(Sequence[RawEvent]):
    """A stream's events, kept compactly: what a 100k-event capture is made of.

    A ``RawEvent`` per event, its span and its payload string cost about 250
    bytes plus the payload, more than the input itself for small events. Here
    an event is a few array entries: its kind, its name (an index into the
    names seen), its span, and - when it came from ``source``, the bytes the
    reader was given - the byte range of its payload (as its distances from
    the span's ends: a run of events read in bulk shares them), decoded again
    when something asks for it (a step shown, a search). A payload that is no
    slice of the source (several data lines joined, a comment, a live event, a
    re-encoded array item) is kept as text. Items are ``RawEvent`` records
    made on demand, equal to the ones appended; ``number`` is the position.
    """

    def __init__(self, source: bytes | None = None) -> None:
        #: the bytes spans and payload ranges index, when they are kept
        self.source = source
        self._kind = bytearray()  # index into _kinds
        self._kinds: list[EventKind] = ["data", "done", "comment", "damaged"]
        self._name = array("i")  # index into _names; -1: no name
        self._names: list[str] = []
        self._name_code: dict[str, int] = {}
        self._span = array("q")  # start, end per event; -1, -1: no span
        #: per event, where its payload starts after the span's start and how
        #: far before its end it stops; _TEXT: the text in _texts; _FAR: a
        #: range these cannot say (no span, or far from it), in _far
        self._lead = array("i")
        self._trail = array("i")
        self._far: dict[int, tuple[int, int]] = {}
        self._texts: dict[int, str] = {}
        self._ids: dict[int, str] = {}
        #: ids of runs, counting up: (first event, events apart, how many, first id)
        self._id_runs: list[tuple[int, int, int, int]] = []
        self._times: array[float] | None = None
        #: a reader that works out its events' times when they are asked for
        #: (``time_later``), and how many of them are in _times so far
        self._late: Callable[[EventLog, int, int], Sequence[float]] | None = None
        self._settled = 0
        #: what that reader tells of the times without working each out (``wide_gaps``)
        self._gaps: Callable[[EventLog, float], WideGaps | None] | None = None

    def append(self, ev: RawEvent) -> None:
        n = len(self._kind)
        if ev.at is not None and self.source is not None:
            at, at_end = ev.at
        else:
            at, at_end = -1, -1
            self._texts[n] = ev.data
        if ev.id is not None:
            self._ids[n] = ev.id
        start, end = ev.span if ev.span is not None else (-1, -1)
        self.add(ev.kind, ev.event, start, end, at, at_end, ev.time)

    def add(
        self, kind: EventKind, name: str | None, start: int, end: int, at: int, at_end: int,
        time: float | None,
    ) -> None:
        """An event whose payload is ``source[at:at_end]`` decoded (``-1, -1``: the
        text ``append`` kept), without making it first: what a decoder over the
        whole source adds (see SSEDecoder). The kind goes in last: its length is
        the log's, so that a reader on another thread (the proxy's views) never
        sees an event half added."""
        if kind not in self._kinds:  # a kind no reader makes today: kept all the same
            self._kinds.append(kind)
        if at < 0:
            lead = trail = _TEXT
        else:
            lead, trail = at - start, end - at_end
            if start < 0 or not (0 <= lead <= _WIDEST and 0 <= trail <= _WIDEST):
                lead = trail = _FAR
                self._far[len(self._kind)] = (at, at_end)
        if name is None:
            self._name.append(-1)
        else:
            code = self._name_code.get(name)
            if code is None:
                code = self._name_code[name] = len(self._names)
                self._names.append(name)
            self._name.append(code)
        self._span.extend((start, end))
        self._lead.append(lead)
        self._trail.append(trail)
        if time is not None and self._times is None:
            self._times = array("d", [_NO_TIME]) * len(self._kind)
        if self._times is not None:
            self._times.append(_NO_TIME if time is None else time)
        self._kind.append(0 if kind == "data" else self._kinds.index(kind))

    def add_run(
        self, name: str | None, starts: Sequence[int], count: int, lead: int, trail: int,
        lines: RunLines | None = None,
    ) -> None:
        """``count`` data events named ``name`` at once, with no time (a run
        of a long call's events, read in bulk: see reading/sse_runs.py): event
        k spans ``starts[k]`` to ``starts[k + 1]``, and its payload lies
        ``lead`` bytes after its start (or where ``lines.payloads`` says) to
        ``trail`` bytes before its end; ``lines`` says what else they carry
        (each one a comment event before it, ids). The arrays are extended in
        C: each field put in place by one slice assignment, the rest repeated."""
        if not count:
            return
        if not (0 <= lead <= _WIDEST and 0 <= trail <= _WIDEST):
            raise ValueError("a run's payloads lie within its events")
        code = -1
        if name is not None:
            code = self._name_code.get(name, -1)
            if code < 0:
                code = self._name_code[name] = len(self._names)
                self._names.append(name)
        comments = lines.comments if lines is not None else None
        payloads = lines.payloads if lines is not None else None
        per = 1 if comments is None else 2  # events a run's event makes
        width = 2 * per
        bounds = int64s.of(starts[: count + 1])
        spans = self._span
        at = len(spans)
        spans.frombytes(bytes(width * count * spans.itemsize))
        # the data event's span, after its comment's when it has one
        spans[at + width - 2 :: width] = bounds[:count]
        spans[at + width - 1 :: width] = bounds[1:]
        leads = array("i", (lead,)) * count if payloads is None else array(
            "i", map(sub, islice(payloads, count), bounds[:count]))
        trails = array("i", (trail,)) * count
        if comments is not None:
            c_start, c_end, t_start, t_end = (int64s.of(c[:count]) for c in comments)
            spans[at::width] = c_start
            spans[at + 1 :: width] = c_end
            # the comment's text range, then the payload's, each from its own span
            both = array("i", bytes(2 * count * leads.itemsize))
            both[0::2], both[1::2] = array("i", map(sub, t_start, c_start)), leads
            leads = both
            both = array("i", bytes(2 * count * trails.itemsize))
            both[0::2], both[1::2] = array("i", map(sub, c_end, t_end)), trails
            trails = both
            self._name.extend(array("i", (-1, code)) * count)
        else:
            self._name.extend(array("i", (code,)) * count)
        if lines is not None and lines.first_id is not None:
            self._id_runs.append((len(self) + per - 1, per, count, lines.first_id))
        self._lead.extend(leads)
        self._trail.extend(trails)
        if self._times is not None:
            self._times.extend(array("d", (_NO_TIME,)) * (per * count))
        # last, as in add: 0 is "data"
        self._kind.extend(_COMMENT_DATA * count if comments is not None else bytes(count))

    def stamp(self, times: Sequence[float | None]) -> None:
        """Every event's time at once (None: no time), replacing what it had:
        a recording's body read whole, each event then given the time of the
        read it was completed in."""
        self._late = self._gaps = None
        self._times = array("d", (_NO_TIME if t is None else t for t in times))

    def time_later(self, times: Callable[[EventLog, int, int], Sequence[float]],
                   gaps: Callable[[EventLog, float], WideGaps | None] | None = None) -> None:
        """Let ``times(log, start, stop)`` give the times of the events from
        the first not stamped yet on, when they are asked for: those of events
        ``start`` to ``stop`` it can tell so far, as an array (NaN: none),
        fewer when the rest are not known yet. A recording's reader
        (reading/recording_runs.py): working out 1M events' times took a
        quarter of a second that the app spent before anyone looked at one.
        Each event's time must depend on nothing but the reads, so that one
        asked for alone, a slice's and all at once agree. ``gaps``, when
        given, is what ``wide_gaps`` (below) asks."""
        self._late = times
        self._settled = len(self)
        self._gaps = gaps

    def _settle(self, stop: int | None = None) -> None:
        """The late times of the events before ``stop`` (all), as far as they are known, kept."""
        late = self._late
        if late is None:
            return
        stop = len(self) if stop is None else min(stop, len(self))
        if self._settled < stop:
            times = late(self, self._settled, stop)
            if len(times):
                self.stamp_from(self._settled, times)
                self._settled += len(times)

    def stamp_from(self, start: int, times: Sequence[float | None]) -> None:
        """The times of the events from ``start`` on (as many as are given: an
        array of them, NaN for none, or floats and None), the others kept: a
        recording's events, stamped as their times are asked for and known
        (``time_later``)."""
        if self._times is None:
            self._times = array("d", [_NO_TIME]) * len(self._kind)
        if not isinstance(times, array):
            times = array("d", (_NO_TIME if t is None else t for t in times))
        self._times[start : start + len(times)] = times

    def kind(self, i: int) -> EventKind:
        return self._kinds[self._kind[i]]

    def unlike(self, kinds: tuple[EventKind, ...], start: int = 0,
               stop: int | None = None) -> list[int]:
        """The numbers of the events from ``start`` on (to ``stop``) whose kind is
        none of ``kinds``, found in C (a recording's comments among 100k data events)."""
        table = bytes(0 if k in kinds else 1 for k in self._kinds).ljust(256, b"\1")
        marks = self._kind[start:stop].translate(table)
        out: list[int] = []
        at = marks.find(1)
        while at >= 0:
            out.append(start + at)
            at = marks.find(1, at + 1)
        return out

    def span(self, i: int) -> tuple[int, int] | None:
        """Where event ``i`` lies in the source, blank line included."""
        start = self._span[2 * i]
        return None if start < 0 else (start, self._span[2 * i + 1])

    def span_ends(self, start: int = 0, stop: int | None = None) -> array[int]:
        """Where each event from ``start`` on (to ``stop``) ends in the source (-1: no span)."""
        return self._span[2 * start + 1 : None if stop is None else 2 * stop : 2]

    def at(self, i: int) -> tuple[int, int] | None:
        """Where event ``i``'s payload lies in the source, when it is a slice of it."""
        lead = self._lead[i]
        if lead < 0:
            return None if lead == _TEXT or self.source is None else self._far[i]
        if self.source is None:
            return None
        return self._span[2 * i] + lead, self._span[2 * i + 1] - self._trail[i]

    def id(self, i: int) -> str | None:
        """Event ``i``'s own ``id:`` field, if it had one."""
        found = self._ids.get(i)
        if found is not None or not self._id_runs:
            return found
        runs = self._id_runs
        k = bisect_right(runs, (i, 1 << 62)) - 1
        if k < 0:
            return None
        first, per, count, value = runs[k]
        step, off = divmod(i - first, per)
        return str(value + step) if off == 0 and step < count else None

    def name(self, i: int) -> str | None:
        code = self._name[i]
        return None if code < 0 else self._names[code]

    def data(self, i: int) -> str:
        """The payload of event ``i`` (decoded from the source, or as kept)."""
        lead, source = self._lead[i], self.source
        if source is None or lead == _TEXT:
            return self._texts[i]
        if lead == _FAR:
            start, end = self._far[i]
            return source[start:end].decode("utf-8", "replace")
        return source[self._span[2 * i] + lead : self._span[2 * i + 1] - self._trail[i]].decode(
            "utf-8", "replace")

    @property
    def timed(self) -> bool:
        """Whether any event has a time (a capture with none has no timing to
        report: said without a list as long as the log)."""
        if self._late is not None and len(self) and self.time_of(0) is not None:
            return True  # a recording's events: the first one tells, alone
        self._settle()
        times = self._times
        return times is not None and any(t == t for t in times)  # NaN: no time

    def times(self) -> list[float | None]:
        """Every event's time (None where it has none), without making the events."""
        self._settle()
        times = self._times
        if times is None:
            return [None] * len(self)
        return [None if t != t else t for t in times[: len(self)]]  # NaN: no time

    def time_array(self) -> array[float]:
        """Every event's time, NaN where it has none: ``times`` without a
        float object per event, for a pass over them in C."""
        self._settle()
        times = self._times
        if times is None:
            return array("d", [_NO_TIME]) * len(self)
        return times[: len(self)]

    def time_of(self, i: int) -> float | None:
        """Event ``i``'s time (None: none), without working out the others'."""
        if self._late is not None and i >= self._settled:
            late = self._late(self, i, i + 1)
            return late[0] if len(late) and late[0] == late[0] else None
        times = self._times
        return None if times is None or times[i] != times[i] else times[i]

    def wide_gaps(self, ms: float) -> WideGaps | None:
        """The first and the last event's times, and every gap between two
        neighbouring events wider than ``ms`` milliseconds (``(later -
        earlier) * 1000 > ms``): the number of the event after it, and the
        two times; when every event has a time, told without every event's
        time (a recording's reads tell it: reading/recording_times.py). None
        when that is not told so (the caller reads ``time_array``), as once
        the times are all worked out."""
        gaps = self._gaps
        if gaps is None or self._settled >= len(self):
            return None
        return gaps(self, ms)

    def replaced(self, i: int) -> bool:
        """Whether event ``i``'s payload holds U+FFFD (bytes that were not
        UTF-8 read as it, or the character itself): an ASCII range cannot."""
        at = self.at(i)
        source = self.source
        if at is not None and source is not None:
            raw = source[at[0] : at[1]]
            if raw.isascii():
                return False
            return "\ufffd" in raw.decode("utf-8", "replace")
        return "\ufffd" in self._texts[i]

    def __len__(self) -> int:
        return len(self._kind)

    @overload
    def __getitem__(self, i: int) -> RawEvent: ...
    @overload
    def __getitem__(self, i: slice) -> list[RawEvent]: ...
    def __getitem__(self, i: int | slice) -> RawEvent | list[RawEvent]:
        if isinstance(i, slice):
            numbers = range(*i.indices(len(self)))
            if numbers:
                self._settle(max(numbers) + 1)  # the first 64 events, say: at once
            return [self._event(k) for k in numbers]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("event number out of range")
        return self._event(i)

    def __iter__(self) -> Iterator[RawEvent]:
        # late times worked out a stretch ahead as they are reached: a loop
        # that stops at the first data event (the app's, on every redraw)
        # works out a few, not all
        ahead = self._late is not None
        for k in range(len(self)):
            if ahead and k >= self._settled:
                self._settle(k + _SETTLE_AHEAD)
                # the ones the reads cannot tell yet are the last few: each alone
                ahead = self._settled > k
            yield self._event(k)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EventLog, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"EventLog({list(self)!r})"

    def _event(self, i: int) -> RawEvent:
        start, end = self._span[2 * i], self._span[2 * i + 1]
        return RawEvent(
            i,
            self._kinds[self._kind[i]],
            self.data(i),
            self.name(i),
            self.id(i),
            # one event shown, not yet stamped: its time alone, worked out and not kept
            self.time_of(i),
            None if start < 0 else (start, end),
            self.at(i),
        )


class FramingProblem(FrozenRecord):
    """Something a reader met in the bytes and could not read as events: the
    stream reports it as a diagnostic (``code`` is a diagnostic code) at
    ``event``, the number of the event it happened before (None: at the end)."""

    __slots__ = ("code", "message", "event")
    code: Final[str]
    message: Final[str]
    event: Final[int | None]

    def __init__(self, code: str, message: str, event: int | None = None) -> None:
        self.code = code
        self.message = message
        self.event = event


class Framed(Record):
    """A whole stream after framing."""

    __slots__ = ("framing", "events", "meta", "problems")
    #: sse | ndjson | json-array | json-body | eventstream | recording | har
    framing: str
    #: a list, or an EventLog (compact) for the readers of whole large inputs
    events: Sequence[RawEvent]
    #: recording/HAR metadata: request, response (already redacted), etc.
    meta: dict[str, Any]
    #: what could not be read, in stream order
    problems: list[FramingProblem]

    def __init__(
        self, framing: str, events: Sequence[RawEvent], meta: dict[str, Any] | None = None,
        problems: list[FramingProblem] | None = None,
    ) -> None:
        self.framing = framing
        self.events = events
        self.meta = {} if meta is None else meta
        self.problems = [] if problems is None else problems


class FramingError(ValueError):
    """The bytes are no stream fraglens can read; the message says why in one line.

    It lives here, next to what framing hands on, so that every reader
    (detect, recording, HAR) can raise it without importing one another.
    """


class FrameTooLarge(FramingError):
    """A line or an event grew past the decoder's limit.

    The peer misbehaved (a line that never ends, an event without end): the
    decoder stops there rather than buffer without bound. ``events`` are the
    events completed by the feed that hit the limit, before it; ``offset`` is
    where the overlong line or event began, so the caller can keep the bytes
    from there on as raw. The decoder stays failed: feeding it again raises
    this again, with no events.
    """

    def __init__(self, what: str, offset: int, limit: int, events: list[RawEvent]) -> None:
        super().__init__(
            f"{what} starting at byte {offset} is longer than the {limit:,}-byte limit; "
            "nothing after it was read"
        )
        self.offset = offset
        self.limit = limit
        self.events = events


class DecoderMisuse(RuntimeError):
    """The caller broke the decoder's contract (fed it after ``close()``): a bug
    in the caller, not a problem with the stream, so not a FramingError."""
