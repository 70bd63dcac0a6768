"""An AWS event-stream capture read into a stream a slice at a time, a long call's runs in bulk.

Bedrock's ``ConverseStream`` streams a call as one ``contentBlockDelta``
message per piece, and in a run of them only the piece and three integers
change: every frame is

    total(4) headers_len(4) prelude_crc(4) headers payload message_crc(4)

with the same header bytes, a payload that is the same envelope
(``adapters/envelope.py``) around another piece, and the total length and
both CRCs those bytes make. Read one at a time (``framing/eventstream.py``),
each frame costs two CRCs and a few Python calls in the framing, the envelope
and the engine. Here, as sse_runs.py does for SSE, once the stream has read
a message as a continuation in an envelope, the frames after it are found in
C, end to end, by one expression of that frame's bytes with the piece as a
hole, two frames a match (``_Run``): it steps over where the prelude and the
head lie and where the message CRC lies (as many bytes as the learned
frame's, whatever they hold) and takes the body (the piece and the bytes
after it) and the piece, up to the first frame it does not match. The frames
those bodies make (the prelude each one's length makes, the learned head,
the body, and the CRC of these bytes: ``zlib.crc32`` mapped over the bodies,
from the CRC of the prelude and head) are then joined and compared with the
input, a few dozen at a time: where they are the input, the frames found
are those frames, and the run ends at the first that differs. The pieces
are decoded as one JSON string (``_decoded``), and the event records and the
call's records extended at once (``Stream.take_run``). No Python code runs
per frame of a run.

Why this is exact. A run is taken only at a message boundary with no damage
pending, and only as many frames as the input holds byte for byte as built:
each one's total length is its own length, its prelude CRC and message CRC
hold, its headers length and header bytes are the learned frame's, and its
payload is the envelope with a piece that is one JSON string's contents the
scanner accepts (in valid UTF-8, or the run is not taken). The one-by-one
reader reads each such frame as a message with those headers and that
payload. The first frame that differs ends the run, and the one-by-one reader
reads on from it: a damaged frame, a cut one, other headers, another event,
keep what they are read as today. Frames found in a search window (at most
8 MiB) cannot exceed the decoder's message limit. A run's events are what
the decoder makes of them, with the payload the envelope's with another
piece, which the envelope proves is the same continuation; the engine takes
the pieces as continuations, stopping short of the size limit, where the
frames left go one by one again. Property tests
(tests/test_eventstream_runs.py) hold every read to the frame-by-frame one.

``InvokeModelWithResponseStream`` chunks wrap the model's own event as
base64 in ``{"bytes":"..."}``: there the frame's piece is the base64, the
run's chunks are decoded in bulk, and each wrapped event must be the learned
wrapped event's bytes around another piece (``_wrapped``, ``_unwrapped``):
each event is cut where the learned one's piece lies, and the events are
compared with those the pieces make at once. Its base64 must open with that
of the bytes before its piece (their whole 3-byte groups), so the expression
itself stops at the first chunk that wraps another event (the next call's):
nothing past a call is decoded.

Padding. Real Bedrock ends every payload with a ``"p"`` field whose string
is a prefix of ``a-zA-Z0-9...`` of a random length, so that a message's size
does not give its content away (e.g. ``{"contentBlockIndex":0,"delta":
{"toolUse":{"input":"..."}},"p":"abcdefghijklmnopqrstu"}``, and a chunk's
``{"bytes":"...","p":"abcdefghijk"}``, as AI21's Python SDK tests and
golem-llm's Bedrock client logs show them). No two padded payloads share an
envelope, and every frame's length differs, so the stream's own envelopes
(which hold the padding) do not start a run: the envelope is learned here,
from the last event when the adapter's shortcut reads it as a continuation.
That is the first reading the stream tries on every event (its envelopes read
what it reads), so each frame of the run is read as that one was, with its
own piece, and the engine takes each piece or not as it would one by one
(``continue_run`` decides as ``continue_call``). Such a frame has a second hole:
its bytes are the learned frame's but for the piece and the padding's string,
found by the same expression (the piece, the bytes between, then the padding,
the tail). The frame's length, prelude CRC and message CRC are made from its
body (piece, bytes between, padding) as above, and the same comparisons
prove the run. The padding is a hole only where that is proved unread
(``_padding``): the adapter names the field among its ``unread_fields``, a
probe in the string's place is read back at that top-level field (so another
string there changes that value and nothing else), and the shortcut reads the
same continuation with another string there. The hole takes printable ASCII
but the quote and the backslash, maybe empty (valid UTF-8 as it is); padding
with anything else, padding before the piece, twice or nested, ends the run,
and those frames are read one by one.
"""

from __future__ import annotations

import binascii
import json
import re
import struct
import sys
import zlib
from collections.abc import Callable
from functools import partial
from itertools import accumulate, chain, repeat
from operator import add, eq, getitem
from typing import Any, cast

from ..adapters.base import Continuation
from ..adapters.envelope import Envelope, Envelopes, scanstring
from ..framing.events import FramingProblem
from ..framing.eventstream import (
    PRELUDE,
    TRAILER,
    EventStreamDecoder,
    HeaderValue,
    log_items,
    read_sound,
)
from .sse_runs import PIECE, REST, next_window
from .stream import Stream, label_of

#: frames taken in one run at most: a bound on the lists a run builds, and so on
#: what a run holds while it is read (a few hundred bytes an event, let go
#: after it); a window holds about so many (sse_runs.next_window)
MAX_RUN = 1 << 12
#: bytes read one frame at a time after a run before the next is looked for
#: (a few frames: a call's first continuation is read one by one, and then its
#: run can start); doubled after every slice not followed by runs at least as
#: long, up to the caller's budget
_FIRST_SLICE = 512
#: bytes searched for a run's frames at once: at first, and the least and
#: the most (sse_runs.next_window: a capture damaged every few frames costs a
#: few searches of the bytes it has, not of a large window). The most stays
#: below the decoder's MAX_MESSAGE, so no frame found is too long
_FIRST_WINDOW = 16 * 1024
_MAX_WINDOW = 8 * 1024 * 1024

_U32 = struct.Struct(">I")
#: put between pieces decoded as one string (``_decoded``)
_NUL_ESCAPE = b"\\u0000"
_LENGTHS = struct.Struct(">II")
#: frames joined and compared with the input at a time (``_Run.holding``)
_COMPARED = 64
#: what the string of a field the adapter never reads (padding) may hold in a
#: run: printable ASCII but the quote and the backslash, maybe empty. Bedrock
#: pads with letters and digits; a string with anything else (an escape, a
#: byte past ASCII) is read frame by frame. ASCII is valid UTF-8 as it is, and
#: one class is the quickest thing to scan
_PADDING = rb"[ !#-\[\]-~]*"
#: base64 that ``b64decode(..., validate=True)`` may accept, at least one character
_BASE64 = rb"[A-Za-z0-9+/]+={0,2}"
#: a piece's contents in a frame: a JSON string's the scanner accepts (PIECE)
_STRING = PIECE
if sys.version_info >= (3, 11):
    # The same, possessive: each repeat is followed by a byte it does not take
    # (a quote, or a backslash inside a piece), so giving any back never makes
    # a match, and without it the search keeps no state to backtrack with
    # (a sixth of a converse frame's instructions). A piece's escapes are a
    # backslash and any byte, as far as finding where it ends goes (its first
    # quote outside an escape); the scanner that decodes the pieces refuses
    # the escapes it does not read (``_decoded``), and an empty piece ends a
    # run in the engine, as it is no continuation one by one.
    _PADDING = rb"[ !#-\[\]-~]*+"
    _BASE64 = rb"[A-Za-z0-9+/]++={0,2}+"
    _STRING = rb'[^"\\\x00-\x1f]*+(?:\\.[^"\\\x00-\x1f]*+)*+'
_BASE64_ONLY = re.compile(_BASE64)
_PIECE_ONLY = re.compile(PIECE)
#: bytes' slice (``operator.getitem``, typed for bytes)
_cut = cast(Callable[[bytes, slice], bytes], getitem)
# what the adapter's b64decode(validate=True) is: a2b_base64 in strict mode
# since 3.11, after a check of the alphabet that _BASE64 makes before
_a2b: Callable[[bytes], bytes]
if sys.version_info >= (3, 11):
    _a2b = partial(binascii.a2b_base64, strict_mode=True)
else:
    _a2b = binascii.a2b_base64


#: a wrapped event's bytes before its piece and after it
_Inner = tuple[bytes, bytes]


class _Run:
    """The learned frame's bytes around its piece (and its padding's string,
    when it has one), as an expression, and the preludes and CRCs of frames
    that repeat them."""

    __slots__ = ("bases", "fixed", "frame", "head", "headers_length", "payload_at", "starts")

    def __init__(self, headers_length: int, head: bytes, tail: bytes, piece: bytes,
                 mid: bytes | None = None) -> None:
        #: the header bytes and the envelope up to the piece
        self.head = head
        self.headers_length = headers_length
        #: where the payload starts in a frame
        self.payload_at = PRELUDE + headers_length
        #: a frame's length but its body's and its tail's
        self.fixed = PRELUDE + len(head) + TRAILER
        # A frame as two groups: its body and tail (the piece, or the piece,
        # ``mid`` and the padding's string; then ``tail``, what follows them,
        # as it is), and the piece in it. What lies where the prelude and the
        # head would be, and where the message CRC would be, is skipped here
        # and checked after (``holding``): one comparison in C of the window
        # with the frames the bodies make, where the expression would test the
        # head byte by byte and a group apiece would make an object a frame.
        # Two frames a match, the second if it is there (each match costs the
        # search as much again as a frame). Or else the rest of the window, in
        # one step: found from a frame's start, such frames lie end to end,
        # then at most one rest (empty groups) from the first other frame on.
        # The piece (``piece``: a JSON string's contents, or base64) stops at
        # the latest at the next quote, as the padding's string does: the
        # search stays linear.
        body = b"(%s)" % piece
        if mid is not None:
            body += re.escape(mid) + _PADDING
        frame = b"(?s:.{%d}(%s%s).{4})" % (PRELUDE + len(head), body, re.escape(tail))
        self.frame = re.compile(b"%s(?:%s)?|%s" % (frame, frame, REST))
        #: body-and-tail length -> the bytes before them in a frame that
        #: carries such a body (the prelude its length makes, the head), and
        #: their CRC, which the message CRC goes on from
        self.starts: dict[int, bytes] = {}
        self.bases: dict[int, int] = {}

    def learn(self, lengths: set[int]) -> None:
        """The starts of frames with bodies and tails of these lengths."""
        if len(self.starts) > 4096:  # a run's bodies come in a few lengths
            self.starts.clear()
            self.bases.clear()
        for length in lengths - self.starts.keys():
            sizes = _LENGTHS.pack(self.fixed + length, self.headers_length)
            start = sizes + _U32.pack(zlib.crc32(sizes)) + self.head
            self.starts[length] = start
            self.bases[length] = zlib.crc32(start)

    def find(self, data: bytes, pos: int, end: int) -> tuple[list[bytes], list[bytes], bool]:
        """The bodies and the pieces of the frames found end to end from
        ``pos`` on (before ``end``), at most ``MAX_RUN``; and whether more
        were found."""
        found = self.frame.findall(data, pos, end)
        if found and not found[-1][0]:
            found.pop()  # the rest, from the first other frame on
        if not found:
            return [], [], False
        # body, piece, body, piece: the second pair empty when a match held one frame
        found_all: list[bytes] = list(chain.from_iterable(found))
        bodies, pieces = found_all[0::2], found_all[1::2]
        if not bodies[-1]:
            bodies.pop()
            pieces.pop()
        full = len(bodies) > MAX_RUN
        del bodies[MAX_RUN:], pieces[MAX_RUN:]
        return bodies, pieces, full

    def holding(self, data: bytes, pos: int, bodies: list[bytes], lengths: list[int]) -> int:
        """How many of the frames found end to end from ``pos`` with these
        bodies (of these lengths) are, from the first, exactly the frames
        they make: the prelude their length makes, the head, the body, and
        the CRC of those bytes. The frames made are joined and compared with
        the input a few dozen at a time (what is joined stays in the cache
        while it is compared); only where they differ, frame by frame, to
        say where."""
        self.learn(set(lengths))
        made = list(map(self.starts.__getitem__, lengths))
        sums = list(map(_U32.pack, map(zlib.crc32, bodies, map(self.bases.__getitem__, lengths))))
        parts: list[bytes] = [b""] * (3 * len(bodies))
        parts[0::3] = made
        parts[1::3] = bodies
        parts[2::3] = sums
        join, at = b"".join, pos
        for first in range(0, len(parts), 3 * _COMPARED):
            frames = join(parts[first : first + 3 * _COMPARED])
            if not data.startswith(frames, at):
                break
            at += len(frames)
        else:
            return len(bodies)
        whole = list(map(join, zip(made, bodies, sums, strict=True)))
        same = list(map(data.startswith, whole, accumulate(map(len, whole), initial=pos)))
        return same.index(False)


class EventStreamReader:
    """``data``, an event-stream capture, read into ``stream`` (made over
    ``data``, with ``source=data``, and empty). Call :meth:`advance` until
    :attr:`done`."""

    def __init__(self, stream: Stream, data: bytes) -> None:
        if stream.events or stream.events.source is not data:
            raise ValueError("the stream must be empty and made over the capture's bytes")
        self.stream = stream
        self.data = data
        #: bytes read so far
        self.pos = 0
        self.done = False
        #: what the framing met on the way: damage is read as events, so none
        self.problems: list[FramingProblem] = []
        #: the events read in runs, in order: their payloads are valid UTF-8
        self.runs: list[range] = []
        #: reading past a frame that does not hold, until it finds one again
        self._decoder: EventStreamDecoder | None = None
        self._damage_at = 0
        self._known: dict[bytes, dict[str, HeaderValue]] = {}
        self._slice = _FIRST_SLICE
        self._window = _FIRST_WINDOW
        self._budget = _MAX_WINDOW
        self._runs: dict[tuple[bytes, bytes, bytes, bytes | None], _Run] = {}
        #: what the last run repeated, and its last event's number: when the
        #: last event is that one, the next run repeats the same
        self._repeated: tuple[Envelope, _Run, _Inner | None] | None = None
        self._repeated_at = -1

    def advance(self, budget: int) -> None:
        """Read about ``budget`` bytes more (at least one slice, or a run)."""
        stop = self.pos + budget
        self._budget = budget
        if self._repeated_at == len(self.stream.events) - 1:
            # the last read stopped inside a run: it goes on in bulk, before
            # anything is read one by one
            while self.pos < stop and not self.done and self._take_run():
                pass
            if self.pos >= stop:
                return
        while not self.done:
            self._slice_once(min(self._slice, budget))
            before = self.pos
            while self.pos < stop and not self.done and self._take_run():
                pass
            # runs that took less than a slice (a capture damaged every few
            # frames) are not worth a search after every slice: read more first
            took = self.pos - before >= self._slice
            self._slice = _FIRST_SLICE if took else min(2 * self._slice, _MAX_WINDOW)
            if self.pos >= stop:
                return

    def _slice_once(self, size: int) -> None:
        data, pos, stream = self.data, self.pos, self.stream
        log = stream.events
        first = len(log)
        decoder = self._decoder
        if decoder is None:
            end = read_sound(data, log, pos, pos + size, self._known)
            stream.take_logged(first)
            self.pos = end
            if end < pos + size and end < len(data):
                # a frame that does not hold: the decoder says what, and finds the next
                self._decoder, self._damage_at = EventStreamDecoder(base=end), end
            elif end >= len(data):
                self.done = True
            return
        end = min(len(data), pos + max(size, 1))
        log_items(log, decoder.feed(data[pos:end]))
        self.pos = end
        if end == len(data):
            log_items(log, decoder.close())
            self.done = True
        else:
            at = decoder.between_messages
            if at is not None and at > self._damage_at:
                # past the damage, at a boundary: what the decoder holds from
                # there on is read again, frame by frame or in runs
                self._decoder, self.pos = None, at
        stream.take_logged(first)

    def _take_run(self) -> bool:
        data, pos, stream = self.data, self.pos, self.stream
        if self._decoder is not None:
            return False
        learned = self._learned()
        if learned is None:
            return False
        env, run, inner = learned
        end = min(len(data), pos + min(self._window, self._budget))
        bodies, pieces, full = run.find(data, pos, end)
        if not bodies:
            return False
        lengths = list(map(len, bodies))
        # where the frames the bodies make are the input's, the frames are
        # the run's (else it ends at the first that differs)
        good = run.holding(data, pos, bodies, lengths)
        starts = list(accumulate(map(add, lengths[:good], repeat(run.fixed)), initial=pos))
        del pieces[good:]
        if inner is not None and pieces:
            pieces = _unwrapped(pieces, *inner)
        if len(pieces) < len(bodies):  # the run ends at the first frame that does not hold
            full = False
            del starts[len(pieces) + 1 :]
        self._window = next_window(self._window, starts[-1] - pos, len(pieces),
                                   end - starts[-1], full, _FIRST_WINDOW, _MAX_WINDOW)
        if not pieces:
            return False
        texts = _decoded(pieces, inner is None)
        if texts is None:
            return False
        log = stream.events
        first = len(log)
        taken = stream.take_run(env, texts, log.name(first - 1), starts, run.payload_at, TRAILER)
        if not taken:
            return False
        self.runs.append(range(first, first + taken))
        self._repeated, self._repeated_at = learned, first + taken - 1
        self.pos = starts[taken]
        return True

    def _learned(self) -> tuple[Envelope, _Run, _Inner | None] | None:
        """What a run after the last event repeats: the envelope it was read
        in as a continuation, the expression of its frame, and for a chunk
        that wraps the model's event in base64, that event's bytes around its
        piece (and their expression)."""
        stream = self.stream
        if self._repeated_at == len(stream.events) - 1:
            # the last event was read in a run, as the event it was learned
            # from: what it repeats is learned again from it
            return self._repeated
        padded = self._padded()
        if padded is not None:
            return padded
        env = stream.run_envelope()
        if env is not None:
            lead, trail = env.encoded()
            run = self._run_of(lead, trail, _STRING)
            return None if run is None else (env, run, None)
        return self._wrapped()

    def _last_payload(self, named: bool) -> tuple[str, Any] | None:
        """The last event's payload as text and decoded, when it is a data
        event (with a name, if ``named``) whose payload is strict UTF-8 JSON:
        its bytes are then exactly its text encoded."""
        log = self.stream.events
        last = len(log) - 1
        if last < 0:
            return None
        at = log.at(last)
        if log.kind(last) != "data" or at is None or (named and log.name(last) is None):
            return None
        try:
            text = self.data[at[0] : at[1]].decode("utf-8")
            return text, json.loads(text)
        except (ValueError, RecursionError):  # not UTF-8, not JSON: no continuation
            return None

    def _padded(self) -> tuple[Envelope, _Run, None] | None:
        """For a ConverseStream, when the last event is a continuation the
        adapter's shortcut reads with a field of padding after its piece
        (``_padding``): its envelope, learned here (the stream's own envelopes
        hold the padding in their bytes, so no padded event after it shares
        one), and the expression of frames that repeat it with another piece
        and other padding. The shortcut is the first thing the stream tries
        on every event (its envelopes read what it reads), so each of those
        frames is read as this one was, with its own piece, whatever came
        before: the engine then takes the piece or not (``continue_run``
        decides as ``continue_call`` would)."""
        stream = self.stream
        adapter = stream.adapter
        path = getattr(adapter, "continuation_path", None)
        shortcut = adapter.continuation if adapter is not None else None
        if (path is None or shortcut is None or stream.naive_log is not None
                or not getattr(adapter, "unread_fields", ())):
            return None
        last = self._last_payload(named=False)
        log = stream.events
        if last is None or not stream.continues_under(log.name(len(log) - 1)):
            return None  # the stream reads no message under another name as a continuation
        text, doc = last
        found = shortcut(doc)
        if found is None:
            return None
        padding = _padding(text, doc, adapter, found)
        if padding is None:
            return None
        envelopes = Envelopes(path, label_of)
        envelopes.learn(text, *found, label_of(doc))
        if not envelopes.items:
            return None
        env = envelopes.items[0]
        cut = _around(text, env, padding)
        run = None if cut is None else self._run_of(cut[0], cut[2], _STRING, cut[1])
        return None if run is None else (env, run, None)

    def _wrapped(self) -> tuple[Envelope, _Run, _Inner] | None:
        """For an InvokeModel stream, when the last chunk is ``{"bytes":"..."}``
        (padded or not) whose base64 holds an event the wrapped model's
        shortcut reads as a continuation: that event's envelope
        (``adapters/envelope.py``, proved as the stream proves its own). The
        shortcut is the first thing the stream tries on every chunk, and an
        envelope's events are read by it as this one was, whatever came before."""
        stream = self.stream
        adapter = stream.adapter
        path = getattr(adapter, "wrapped_path", None)
        if path is None or stream.naive_log is not None:
            return None
        last = self._last_payload(named=True)
        if last is None:
            return None
        text, chunk = last
        wrapped = chunk.get("bytes") if type(chunk) is dict else None
        if type(wrapped) is not str or _BASE64_ONLY.fullmatch(wrapped.encode()) is None:
            return None
        shortcut = adapter.continuation if adapter is not None else None
        found = shortcut(chunk) if shortcut is not None else None
        if found is None:
            return None
        # the chunk's own envelope around its base64, and the event's inside it
        outer = Envelopes(("bytes",), _no_label)
        outer.learn(text, 0, 0, wrapped, "")
        choice, index, piece = found
        try:
            event = _a2b(wrapped.encode()).decode("utf-8")
        except ValueError:  # bytes the shortcut read with surrogates let through
            return None
        envelopes = Envelopes(path, _no_label)
        envelopes.learn(event, choice, index, piece, "")
        if not outer.items or not envelopes.items:
            return None
        env = envelopes.items[0]
        lead = env.prefix.encode("utf-8")
        trail = b'"' + env.suffix.encode("utf-8")
        # such an event opens with ``lead``, so its base64 with that of the
        # lead's whole 3-byte groups (full quads decode one way): a chunk
        # whose base64 does not ends a run before anything is decoded (the
        # next call's, say)
        expr = re.escape(binascii.b2a_base64(lead[: len(lead) // 3 * 3], newline=False)) + _BASE64
        padding = _padding(text, chunk, adapter, found)
        if padding is None:
            run = self._run_of(*outer.items[0].encoded(), expr)
        else:
            cut = _around(text, outer.items[0], padding)
            run = None if cut is None else self._run_of(cut[0], cut[2], expr, cut[1])
        if run is None:
            return None
        return env, run, (lead, trail)

    def _run_of(self, lead: bytes, trail: bytes, piece: bytes,
                mid: bytes | None = None) -> _Run | None:
        """The expression of the last frame's bytes around its piece, when its
        payload is ``lead``, a piece, and ``trail`` (or ``lead``, a piece,
        ``mid``, its padding's string and ``trail``)."""
        log = self.stream.events
        last = len(log) - 1
        span, at = log.span(last), log.at(last)
        if span is None or at is None:
            return None
        data = self.data
        payload = data[at[0] : at[1]]
        # a payload read with U+FFFD in place of bad bytes is not its envelope's bytes
        if len(payload) <= len(lead) + len(trail) or not (
            payload.startswith(lead) and payload.endswith(trail)
        ):
            return None
        head = data[span[0] + PRELUDE : at[0] + len(lead)]
        key = (head, trail, piece, mid)
        run = self._runs.get(key)
        if run is None:
            if len(self._runs) >= 64:  # a stream has a few envelopes at a time
                self._runs.clear()
            run = self._runs[key] = _Run(at[0] - span[0] - PRELUDE, head, trail, piece, mid)
        return run


def _no_label(doc: object) -> str:
    """Envelopes check a label; a wrapped event's is its chunk's name, not its own."""
    return ""


def _padding(text: str, doc: Any, adapter: Any, found: Continuation) -> Envelope | None:
    """The envelope of the string that ``text`` (``doc`` decoded, an event the
    adapter's shortcut reads as ``found``) holds at a top-level field the
    adapter never reads (its ``unread_fields``: Bedrock's padding), or None.
    Proved as an envelope is (``adapters/envelope.py``): a probe put in its
    place is read back at that field, so by JSON's grammar another string
    there changes that value and nothing else; and the shortcut reads the
    same continuation with another string there (the empty one)."""
    if type(doc) is not dict:
        return None
    for field in getattr(adapter, "unread_fields", ()):
        value = doc.get(field)
        if type(value) is not str:
            continue
        holes = Envelopes((field,), label_of)
        holes.learn(text, 0, 0, value, label_of(doc))
        if holes.items and adapter.continuation({**doc, field: ""}) == found:
            return holes.items[0]
    return None


def _around(text: str, piece: Envelope, padding: Envelope) -> tuple[bytes, bytes, bytes] | None:
    """The bytes of ``text`` before its piece (``piece``'s envelope), between
    the piece and its padding's string (``padding``'s), and after that string,
    quotes included; None when the padding does not come after the piece."""
    piece_end = len(text) - len(piece.suffix)  # past the piece's closing quote
    padding_at = len(padding.prefix)  # past the padding's opening quote
    if padding_at <= piece_end:
        return None
    return (piece.prefix.encode("utf-8"), text[piece_end - 1 : padding_at].encode("utf-8"),
            b'"' + padding.suffix.encode("utf-8"))


def _unwrapped(wrapped: list[bytes], lead: bytes, trail: bytes) -> list[bytes]:
    """The pieces of the events that chunks' base64 ``wrapped`` hold, from the
    first, while each one is exactly ``lead``, a piece and ``trail``: the
    bytes between them in each event, proved by one comparison of the events
    joined with the ones those pieces make (an event shorter than ``lead`` and
    ``trail`` makes a longer one, so the two differ), frame by frame only to
    say where they differ. The pieces are proved JSON strings' contents as
    they are decoded (``_decoded``).

    All decoded at once: ``a2b_base64`` mapped, in its lenient mode (a call
    with a keyword costs more than the decoding), which decodes what the
    strict mode the adapter uses accepts the same, and refuses what it
    refuses but one shape (``_BASE64`` holds the alphabet before at most two
    ``=``): three characters past whole quads and then two ``=``, whose
    length is no multiple of four, as every base64 the strict mode accepts
    is. A chunk that is none is read one by one, as one the decoding refuses."""
    if any(length & 3 for length in set(map(len, wrapped))):
        return []
    try:
        events = list(map(binascii.a2b_base64, wrapped))
    except binascii.Error:
        return []
    pieces: list[bytes] = list(map(_cut, events, repeat(slice(len(lead), -len(trail)))))
    if b"".join(events) == lead + (trail + lead).join(pieces) + trail:
        return pieces
    same = list(map(eq, events, map(b"".join, zip(repeat(lead), pieces, repeat(trail)))))
    return pieces[: same.index(False)]


def _decoded(pieces: list[bytes], whole: bool) -> list[str] | None:
    """The texts of ``pieces``, each as it decodes alone as a JSON string's
    contents, all decoded at once; None when one does not (or is not UTF-8).
    ``whole``: each backslash of a piece takes the byte after it (the frame's
    expression took them so).

    The pieces are joined with ``\\u0000``, a NUL's escape, read as one
    string and cut at its NULs. The scanner refuses a raw NUL, so each NUL is
    an escape it read. Each escape put between two pieces is read as one,
    from its backslash, when every backslash of a piece takes the byte after
    it (a piece then ends outside an escape, or inside a ``\\u`` one that
    the backslash put after it breaks), or when no piece holds the escape's
    bytes and the string holds one NUL fewer than the pieces (no proper end
    of those bytes begins them, so the joined bytes hold them only where
    they were put). Then each piece was read alone, from outside an escape to
    outside one, holding no quote the scanner stops at (it read to the end),
    and the cut gives each one's text: as many as there are pieces, unless a
    piece spells a NUL. Such pieces are proved one by one and decoded as a
    JSON array."""
    try:
        if whole or _NUL_ESCAPE not in b"".join(pieces):
            text = _NUL_ESCAPE.join(pieces).decode("utf-8") + '"'
            found, end = scanstring(text, 0)
            texts = found.split("\x00")
            if end == len(text) and len(texts) == len(pieces):
                return texts
            if not whole:
                return None
        if not all(map(_PIECE_ONLY.fullmatch, pieces)):
            return None
        return json.loads((b'["' + b'","'.join(pieces) + b'"]').decode("utf-8"))  # type: ignore[no-any-return]
    except ValueError:
        return None
