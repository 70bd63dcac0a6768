"""An NDJSON capture read into a stream a slice of lines at a time, runs of text lines in bulk.

Ollama's ``/api/chat`` streams a long answer as thousands of lines that each
add one piece of text and nothing else, and that repeat one another byte for
byte but for the piece and the time the server stamped (``created_at``).
Read one at a time, each line costs a split, a JSON decode, the adapter and
the engine: three times what the least reader of the format spends on it.
Here, once the stream has read a line the adapter takes as text only
(``text_continuation``), that line's own bytes around its piece, and around
its time stamp, become one regular expression, which finds in C how many of
the next lines repeat them; the pieces are decoded by one ``json.loads`` of
them all, and the event records, labels and text records are extended at
once (``Stream.take_text_run``). No Python code runs per line of a run.

Why this is exact. A run is looked for only once the format is decided and
the last event read is a line the adapter took as text only. It is made of
the whole lines from where reading stands (blank lines, which are no events,
skipped) that lie end to end and whose bytes are exactly that line's but in
its holes, newline included; from the first line that is not such a line,
the lines are framed one by one again. A hole holds one JSON string's
contents with nothing json's scanner refuses, so by JSON's grammar
(adapters/envelope.py) each line decodes to the learned one with other
strings in those places: a probe read back at the adapter's ``text_paths``
proves the piece's hole, and a probe read back at one of its
``unread_fields``, which neither the adapter nor the stream's labels read,
proves the time's. The adapter reads the piece as any string and keeps no
state for such a line, so every line of the run is the text continuation the
learned one was, with its own piece. A line is learned only when its text
encoded again is its bytes (a line with bytes that are not UTF-8 is read on
its own, U+FFFD in their place), so its offsets are those of its text; a
run's pieces are decoded strictly, and a run holding such bytes is read line
by line instead.
Property tests (tests/test_ndjson_runs.py) hold every read to the line-by-line one.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from ..adapters.envelope import Envelope, Envelopes
from ..framing.detect import add_ndjson_lines
from .sse_runs import REST, SliceReader, next_window
from .stream import Stream, label_of

#: lines taken in one run at most: a bound on the lists a run builds, and so on
#: what a run holds while it is read (a few hundred bytes an event, let go
#: after it); a window holds about so many (sse_runs.next_window)
MAX_RUN = 1 << 12
#: the fewest lines taken as a run (unless the budget or MAX_RUN cut it): the
#: few text lines between two others cost less read one by one
_FEWEST = 8
#: bytes framed line by line after a run before the next is looked for (one
#: line: what ended a run is often one line between two runs), doubled after
#: every slice that ends in no run, up to the caller's budget
_FIRST_SLICE = 1
_MAX_SLICE = 8 * 1024 * 1024
#: bytes searched for a run's lines at once at first (sse_runs.next_window)
_FIRST_WINDOW = 64 * 1024
#: a JSON string's contents that json's scanner accepts, maybe empty (an
#: unrolled loop, which backtracks in linear time where a line differs)
_STRING = rb'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
#: lines that ``bytes.strip`` leaves empty, newline included
_BLANK_LINES = re.compile(rb"(?:[ \t\r\x0b\x0c]*\n)*")



class _Run:
    """A learned line's bytes around its holes, as expressions: the piece's
    hole alone, or the piece's and the time's in the order they come."""

    __slots__ = ("channel", "choice", "label", "line", "lines", "parts", "payload_at",
                 "payload_end", "piece")

    def __init__(self, parts: tuple[bytes, ...], piece: int, choice: int, channel: str,
                 label: str, payload_at: int, payload_end: int) -> None:
        #: the constant bytes: one more than the holes
        self.parts = parts
        #: which hole holds the piece
        self.piece = piece
        self.choice, self.channel, self.label = choice, channel, label
        #: where the payload starts in a line, and how far before its end it stops
        self.payload_at, self.payload_end = payload_at, payload_end
        # the piece's hole is the one group
        holes = [_STRING] * (len(parts) - 1)
        holes[piece] = b"(" + _STRING + b")"
        line = re.escape(parts[0]) + b"".join(
            hole + re.escape(part) for hole, part in zip(holes, parts[1:], strict=True))
        self.line = re.compile(line)
        #: lines of the learned kind from a line's start, end to end: each
        #: whole (group 1, ended by the learned line's own newline) and its
        #: piece (group 2); or else the rest of the search, in one step (empty
        #: groups), from the first other line on
        self.lines = re.compile(b"(" + line + b")|" + REST)


class NDJSONReader(SliceReader):
    """``data``, a capture ``ndjson_start`` says is NDJSON from ``start``, read
    into ``stream`` (made over ``data``, with ``source=data``, and empty).
    Call :meth:`advance` until :attr:`done`."""

    first_slice = _FIRST_SLICE
    max_slice = _MAX_SLICE

    def __init__(self, stream: Stream, data: bytes, start: int) -> None:
        if stream.events or stream.events.source is not data:
            raise ValueError("the stream must be empty and made over the capture's bytes")
        super().__init__()
        self._budget = _MAX_SLICE
        self._window = _FIRST_WINDOW
        self.stream = stream
        self.data = data
        #: bytes read so far: always where a line starts
        self.pos = start
        self.done = start >= len(data)
        self._runs: dict[tuple[Any, ...], _Run] = {}
        #: the run learned last
        self._last: _Run | None = None

    def _slice_once(self, size: int) -> None:
        """Frame and read the lines of about ``size`` bytes, one by one."""
        data, pos, stream = self.data, self.pos, self.stream
        end = len(data)
        if pos + size < end:
            newline = data.find(b"\n", pos + size)
            if newline >= 0:
                end = newline + 1
        first = len(stream.events)
        add_ndjson_lines(data, pos, end, stream.events)
        stream.take_logged(first)
        self.pos = end
        self.done = end == len(data)

    def _take_run(self) -> bool:
        data, stream = self.data, self.stream
        run = self._run_of_last()
        if run is None:
            return False
        # blank lines are no events: a run goes on after them
        blank = _BLANK_LINES.match(data, self.pos)
        assert blank is not None  # it matches no line as well
        pos = self.pos = blank.end()
        self.done = pos == len(data)
        if run.line.match(data, pos) is None:
            return False
        end = min(len(data), pos + min(self._window, self._budget))
        # the lines from here that are the learned one but in its holes, found
        # in C up to the first that is not (a line the window cuts is left to
        # the next run)
        lines = run.lines.findall(data, pos, end)
        if lines and not lines[-1][0]:
            lines.pop()  # the rest, from the first other line on
        full = len(lines) > MAX_RUN
        del lines[MAX_RUN:]
        if not lines:
            return False
        whole, pieces = zip(*lines, strict=True)
        starts = list(accumulate(map(len, whole), initial=pos))
        stop = starts[-1]
        self._window = next_window(self._window, stop - pos, len(lines), end - stop, full,
                                   _FIRST_WINDOW, _MAX_SLICE)
        if len(lines) < _FEWEST and run.line.match(data, stop) is None:
            return False  # a few lines, not cut by the window or MAX_RUN
        try:
            # decoded strictly first: json.loads would let encoded surrogates through
            texts: list[str] = json.loads((b'["' + b'","'.join(pieces) + b'"]').decode("utf-8"))
        except ValueError:
            return False
        stream.take_text_run(run.choice, run.channel, texts, run.label, starts,
                             run.payload_at, run.payload_end)
        self.pos = stop
        self.done = stop == len(data)
        return True

    def _run_of_last(self) -> _Run | None:
        """The expressions of the last event's line, when the adapter read it
        as text only."""
        stream = self.stream
        log, adapter = stream.events, stream.adapter
        continuation = getattr(adapter, "text_continuation", None)
        if continuation is None or not log:
            return None
        last = len(log) - 1
        span, at = log.span(last), log.at(last)
        if span is None or at is None or log.kind(last) != "data":
            return None
        known = self._last
        if known is not None and known.line.fullmatch(self.data, span[0], span[1]):
            return known  # a line of the last run's kind: proved when it was learned
        text = log.data(last)
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):
            return None
        found = continuation(payload)
        if found is None:
            return None
        choice, channel, piece = found
        label = stream.labels[last]
        path = getattr(adapter, "text_paths", {}).get(channel)
        envelopes = [(None if path is None else _hole(text, path, piece, label), True)]
        if envelopes[0][0] is None:
            return None
        for field in getattr(adapter, "unread_fields", ()):
            value = payload.get(field)
            if type(value) is str:
                envelopes.append((_hole(text, (field,), value, label), False))
                break
        data = self.data
        raw = text.encode("utf-8")
        if raw != data[at[0] : at[1]]:
            return None  # bytes that are not UTF-8, replaced: no offsets to learn from
        # the holes as byte offsets in the line, in the order they come
        line_at = at[0] - span[0]
        cuts: list[tuple[int, int, bool]] = []
        for env, is_piece in envelopes:
            if env is not None:
                start = len(env.prefix.encode("utf-8"))
                stop = len(raw) - len(env.suffix.encode("utf-8")) - 1
                cuts.append((line_at + start, line_at + stop, is_piece))
        cuts.sort()
        line = data[span[0] : span[1]]
        parts, prev = [], 0
        for start, stop, _ in cuts:
            parts.append(line[prev:start])
            prev = stop
        parts.append(line[prev:])
        payload_end = span[1] - at[1]
        key = (tuple(parts), choice, channel, label, line_at, payload_end)
        run = self._runs.get(key)
        if run is None:
            if len(self._runs) >= 64:  # a stream has a few kinds of text line
                self._runs.clear()
            piece_at = [is_piece for _, _, is_piece in cuts].index(True)
            run = self._runs[key] = _Run(tuple(parts), piece_at, choice, channel, label,
                                         line_at, payload_end)
        self._last = run
        return run


def _hole(text: str, path: tuple[str | int, ...], value: str, label: str) -> Envelope | None:
    """The envelope of the string ``value`` at ``path`` in the payload ``text``,
    proved with a probe (adapters/envelope.py), or None."""
    envelopes = Envelopes(path, label_of)
    envelopes.learn(text, 0, 0, value, label)
    return envelopes.items[0] if envelopes.items else None
