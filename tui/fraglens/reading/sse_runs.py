"""An SSE capture read into a stream a slice at a time, a long call's runs in bulk.

A call streamed in 100k pieces is 100k events that repeat one envelope
(``adapters/envelope.py``) around another piece, byte for byte: the same
``event:`` line, the same JSON before the piece's string and after it, the
same blank line. Read one at a time, each costs a few Python calls in the
decoder, the envelope and the engine, three times what the least reader of
the format spends on it. Here, once the stream has read an event as a
continuation in an envelope, that event's own bytes before and after its
piece become one regular expression, which finds in C how many of the next
events repeat them exactly; the pieces are decoded by one ``json.loads`` of
them all, the event records and the call's records are extended at once
(``Stream.take_run``), and the decoder goes on after the run
(``SSEDecoder.skip``). No Python code runs per event of a run.

Real streams vary each event outside its piece (an ``obfuscation``, a
``sequence_number``, padding): the envelope's holes (``adapters/envelope.py``)
are part of the expression, so such events make runs too. Parallel calls
streamed in turns alternate envelopes and have no run each; the stream's
envelopes then make one expression with an alternative per call, and each
event found says whose it is (``Stream.take_mixed_run``). Where each event
starts is told by its groups, not by a copy of it (``_Search``).

Why this is exact. A run is taken only where the decoder holds nothing (it is
between two events), and only events whose lines are exactly the learned
event's, but for the piece: an ``event:`` line or none, one ``data:`` line,
the blank line; no ``id:``, no comment, no other field. The piece must be one
JSON string's contents with nothing the scanner would refuse (no raw control
character, only JSON's escapes), and its bytes valid UTF-8 (else the decoder
reads the event, and the bytes it replaced are reported). Each such event is
what the decoder would have made of it, with the payload the envelope's with
another piece, which the envelope proves is the same continuation
(``adapters/envelope.py``); the engine takes the run's pieces as it takes
continuations, stopping short of the size limit, where the events left go one
by one again. Anything else ends the run there, and the decoder reads on.
Property tests (tests/test_runs.py) hold every read to the event-by-event one.
"""

from __future__ import annotations

import json
import re
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, compress, count, repeat
from operator import add, attrgetter, itemgetter, mul, ne, sub
from typing import Any

from ..adapters.envelope import Envelope
from ..engine.calls import by_owner
from ..framing.events import FrameTooLarge, FramingProblem, RunLines
from ..framing.sse import SSEDecoder
from .stream import Stream

#: events taken in one run at most: a bound on the lists a run builds, and so on
#: what a run holds while it is read (a few hundred bytes an event, let go
#: after it); a window holds about so many (next_window)
MAX_RUN = 1 << 12
#: bytes framed one event at a time after a run before the next is looked for
#: (one event: what ends a run is often one event between two runs); doubled
#: after every slice that ends in no run, up to _MAX_SLICE or the caller's budget
_FIRST_SLICE = 1
_MAX_SLICE = 256 * 1024
#: the fewest events taken as a run: fewer cost less read one by one, and a
#: look for so many at the start of a run is cheap where there is none
FEWEST = 32
#: events taken in one run of the SSE reader at most: what a window sized for
#: MAX_RUN of them holds (next_window), taken rather than found again
_MOST_FOUND = MAX_RUN + MAX_RUN // 4
#: bytes searched for a run's events at once: at first, and the least and the
#: most (next_window)
_FIRST_WINDOW = 64 * 1024
_SHORT_WINDOW = 4096
_MAX_WINDOW = 8 * 1024 * 1024

_CONTENT = re.compile(rb"[^ \t\r\n]")
_SSE_DATA_LINE = re.compile(rb"(?:\A(?:\xef\xbb\xbf)?|[\r\n])data:")
_BOM = b"\xef\xbb\xbf"
#: the end of a blank line: where a slice may end between two events
_BLANK = re.compile(rb"\n\r?\n|\r\r")
_TAILS = (b"\n\n", b"\r\n\r\n", b"\r\r")
#: possessive repeats where Python has them (3.11): a repeat that never gives
#: back what it took. Each one below stops before a byte its class refuses
#: and that what follows it needs (a quote, a backslash, a brace), so giving
#: back could never make the rest match: the same events are found, with no
#: place to backtrack to kept at each step (a seventh of a run's search)
_TAKE = b"*+" if sys.version_info >= (3, 11) else b"*"
_CHAR = rb'[^"\\\x00-\x1f]'
_ESCAPE = rb'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'
#: a JSON string's contents that json's scanner accepts, at least one character
#: (written as an unrolled loop, which backtracks in linear time where an event
#: does not end as the run's do); always followed by the closing quote
PIECE = rb'(?!")' + _CHAR + _TAKE + b"(?:" + _ESCAPE + _CHAR + _TAKE + b")" + _TAKE
#: a Vertex ``partialArgs`` entry: an object with none inside it, on one line
#: (``adapters/envelope.py``'s, with the repeats above)
_PLAIN = rb'[^{}\[\]"\r\n]' + _TAKE
ENTRY = (rb'\{' + _PLAIN + b'(?:"' + _CHAR + _TAKE + b"(?:" + _ESCAPE + _CHAR + _TAKE + b")"
         + _TAKE + b'"' + _PLAIN + b")" + _TAKE + rb"\}")
#: the rest of a search's window, as the last alternative of an expression that
#: finds events end to end: one step, whatever its length (a dot that takes
#: newlines, repeated, skips to the end in C, where a class such as [\s\S]
#: tests every byte: a window that reaches past a run's end cost as much as
#: the events it found)
REST = rb"(?s:.+)"


def _room_for_a_run(data: bytes, pos: int, blank: bytes) -> bool:
    """At least ``FEWEST`` events could follow ``pos``: every event of a run
    ends with the same blank line, so with fewer of them left there is no run
    to find, and its expressions are not compiled (on a capture of a few
    events that cost more than reading it). Looks no further than the
    ``FEWEST``-th blank line, which a run's search reads anyway."""
    for _ in range(FEWEST):
        at = data.find(blank, pos)
        if at < 0:
            return False
        pos = at + len(blank)
    return True


def incremental_sse(data: bytes) -> bool:
    """True when ``read_stream`` would read ``data`` as SSE for sure: it does
    not open as JSON (a recording, a HAR, a body, NDJSON) and has a ``data:``
    line. Anything else takes the whole-capture path, which decides the rest."""
    skip = len(_BOM) if data.startswith(_BOM) else 0
    found = _CONTENT.search(data, skip)
    if found is None or data[found.start() : found.start() + 1] in (b"{", b"["):
        return False
    return _SSE_DATA_LINE.search(data) is not None


class _Lines:
    """The learned event's lines before its payload, as one expression: its
    ``event:`` lines as they are, its ``id:`` line with any number there (a
    group), a one-line comment block before its data line as it is, and
    where each thing lies in an event of the run."""

    __slots__ = ("comment", "head", "id_at", "id_len", "lead", "literal", "shifted")

    def __init__(self, head: bytes, lead: int, id_len: int | None, id_at: int,
                 comment: tuple[int, int, int, int] | None, literal: bytes) -> None:
        self.head = head
        #: the bytes every event of a run opens with: the lines up to the id's
        #: number, or all of them (``data:`` too) when they have no id
        self.literal = literal
        #: where the payload starts after an event's start, its id taken out
        self.lead = lead - (id_len or 0)
        #: the learned id's length; None: no id line
        self.id_len = id_len
        self.id_at = id_at
        #: the comment line's span and its text's range from an event's start
        #: (its id taken out when it comes after it)
        self.shifted = comment is not None and id_len is not None and comment[0] >= id_at
        cut = id_len if self.shifted and id_len is not None else 0
        self.comment: tuple[int, ...] | None = (
            None if comment is None else tuple(c - cut for c in comment))


def _lines(lines: bytes, blank: bytes) -> _Lines | None:
    """The lines of a learned event (up to its payload) that a run may repeat:
    ``id:`` (a whole number, once), ``event:``, one comment line (not first),
    all ended alike, then the ``data:`` field. None for any other lines."""
    if blank not in _TAILS:
        return None
    if not lines.isascii():
        try:
            lines.decode("utf-8")
        except UnicodeDecodeError:
            return None  # a run's events are valid UTF-8 (SSEReader.runs)
    eol = blank[: len(blank) // 2]
    parts = lines.split(eol)
    last = parts.pop()
    if last not in (b"data:", b"data: "):
        return None
    head, pos = [], 0
    id_len: int | None = None
    id_at = 0
    comment = None
    literal = lines
    for line in parts:
        if b"\r" in line or b"\n" in line:
            return None
        if line[:3] == b"id:" and id_len is None:
            value = line[4:] if line[3:4] == b" " else line[3:]
            if not value.isdigit():
                return None
            id_len, id_at = len(value), pos + len(line)
            literal = lines[: id_at - id_len]
            head.append(re.escape(line[: len(line) - len(value)]) + b"([0-9]+)" + re.escape(eol))
        elif line[:6] == b"event:":
            head.append(re.escape(line + eol))
        elif line[:1] == b":" and comment is None and pos:
            text = pos + (2 if line[1:2] == b" " else 1)
            comment = (pos, pos + len(line) + len(eol), text, pos + len(line))
            head.append(re.escape(line + eol))
        else:
            return None
        pos += len(line) + len(eol)
    head.append(re.escape(last))
    return _Lines(b"".join(head), pos + len(last), id_len, id_at, comment, literal)


#: how an envelope spells the spaces a token may follow (``adapters/envelope.py``)
_SPACES = rb"[ \t]*"


class _Search:
    """One search for a run's events, and what the groups of each event it
    finds hold (their places in findall's tuple, from 0): the piece, the id,
    the usage numbers, the texts that say whose it is, and where each event
    starts. ``whole``: group 0 is each event whole, whose length is its
    width; else an event's width is ``fixed`` and the lengths of its groups
    ``widths``: each part of it whose width may vary is a group (a hole, a
    usage number, the piece) and the spaces between its tokens are the
    learned event's. A copy of each event whole cost a fifth of a search."""

    __slots__ = ("fixed", "id", "pattern", "piece", "usage", "which", "whole", "widths")

    def __init__(self, expression: bytes, kinds: list[str], fixed: int) -> None:
        #: such an event, or else the rest: searched from where the decoder
        #: stands, it finds such events end to end and then at most one rest,
        #: where the first other event begins (findall tries the event first
        #: at every place it reaches). Two groups at least: findall gives a
        #: tuple of each event's (an empty one, when the piece is the only one)
        self.pattern = re.compile(expression + (b"()" if len(kinds) == 1 else b"") + b"|" + REST)
        self.whole = kinds[:1] == ["event"]
        self.piece = kinds.index("piece")
        self.id = kinds.index("id") if "id" in kinds else None
        self.usage = [k for k, kind in enumerate(kinds) if kind in ("usage", "usage number")]
        self.which = [k for k, kind in enumerate(kinds) if kind == "which"]
        # the groups no other group holds: an event is them and its fixed bytes
        self.widths = [k for k, kind in enumerate(kinds) if kind not in ("usage", "event")]
        self.fixed = fixed

    def exact(self, event: bytes) -> bool:
        """``event`` (the learned one) is such an event, as wide as its groups say."""
        found = self.pattern.fullmatch(event)  # (the rest takes any other)
        if found is None or found.group(self.piece + 1) is None:
            return False
        return self.whole or self.fixed + sum(
            len(found.group(k + 1)) for k in self.widths) == len(event)


def _one_group(regex: bytes) -> bool:
    """``regex`` is one capturing group, whole (a usage number's hole)."""
    if regex[:1] != b"(" or regex[1:2] == b"?":
        return False
    depth, k, in_class = 0, 0, False
    while k < len(regex):
        c = regex[k : k + 1]
        if c == b"\\":
            k += 2
            continue
        if in_class:
            in_class = c != b"]"
        elif c == b"[":
            in_class = True
        elif c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
            if not depth:
                return k == len(regex) - 1
        k += 1
    return False


def _plain(regex: bytes) -> bytes | None:
    """The text ``regex`` is, when it is one (a token ``re.escape`` wrote)."""
    text = re.sub(rb"\\(.)", rb"\1", regex, flags=re.S)
    return text if re.escape(text) == regex else None


class _Event:
    """An event of a run as its parts, in order, from which its searches are
    written (``told``, ``whole``): bytes as they are, the lines, an
    envelope's token (its expression, and its text or None: a hole, or a
    token after spaces), the piece, and the texts that say whose it is."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, Any]] = []

    def add(self, kind: str, part: Any) -> None:
        self.parts.append((kind, part))

    def envelope(self, env: Envelope, piece: bytes, around: tuple[bytes, bytes]) -> None:
        """``env``'s tokens around ``piece``."""
        gap, quote = around
        for regex, text in env.parts[0]:
            self.add("token", (regex, text))
        if gap:
            self.add("token", (gap, None))
        self.add("bytes", (re.escape(quote), len(quote)))
        self.add("piece", piece)
        self.add("bytes", (re.escape(quote), len(quote)))
        for regex, text in env.parts[1]:
            self.add("token", (regex, text))

    @property
    def spaced(self) -> int:
        """How many tokens may follow spaces."""
        return sum(kind == "token" and part[0].startswith(_SPACES) for kind, part in self.parts)

    def spaces(self, learned: bytes) -> list[bytes] | None:
        """The spaces ``learned`` has before each token that may follow some."""
        probe, k = [], 0
        for kind, part in self.parts:
            if kind == "token" and part[0].startswith(_SPACES):
                probe.append(b"(?P<s%d>%s)%s" % (k, _SPACES, part[0][len(_SPACES):]))
                k += 1
            else:
                probe.append(self._whole(kind, part))
        found = re.fullmatch(b"".join(probe), learned)
        return None if found is None else [found.group(f"s{n}") for n in range(k)]

    def whole(self) -> _Search:
        """The search of such events with any spaces between their tokens,
        each one whole in group 0."""
        kinds = ["event"]
        for kind, part in self.parts:
            if kind == "lines" and part.id_len is not None:
                kinds.append("id")
            elif kind == "token" and part[1] is None:
                kinds.extend(["usage"] * re.compile(part[0]).groups)
            elif kind in ("piece", "which"):
                kinds.append(kind)
        return _Search(b"(" + b"".join(self._whole(k, p) for k, p in self.parts) + b")",
                       kinds, 0)

    def told(self, spaces: list[bytes]) -> _Search:
        """The search of such events whose widths their groups tell, with
        ``spaces`` before the tokens that may follow some."""
        kinds: list[str] = []
        expressions, fixed = [], 0
        each = iter(spaces)
        for kind, part in self.parts:
            expression, width = self._told(kind, part, each, kinds)
            expressions.append(expression)
            fixed += width
        return _Search(b"".join(expressions), kinds, fixed)

    @staticmethod
    def _whole(kind: str, part: Any) -> bytes:
        if kind == "bytes":
            return part[0]  # type: ignore[no-any-return]
        if kind == "lines":
            return part.head  # type: ignore[no-any-return]
        if kind == "token":
            return part[0]  # type: ignore[no-any-return]
        if kind == "piece":
            return b"(" + part + b")"  # type: ignore[no-any-return]
        first, middles, last = part
        return (re.escape(first) + b"(" + b"|".join(map(re.escape, dict.fromkeys(middles)))
                + b")" + re.escape(last))

    @staticmethod
    def _told(kind: str, part: Any, spaces: Any, kinds: list[str]) -> tuple[bytes, int]:
        """A part in a search that tells each event's width, and its fixed
        width: text as it is, spaces as given, a usage number's hole (a
        group already) as it is, any other hole in a group of its own."""
        if kind == "bytes":
            return part  # type: ignore[no-any-return]
        if kind == "lines":
            if part.id_len is not None:
                kinds.append("id")
            return part.head, part.lead
        if kind == "piece":
            kinds.append(kind)
            return _Event._whole(kind, part), 0
        if kind == "which":
            kinds.append(kind)
            return _Event._whole(kind, part), len(part[0]) + len(part[2])
        regex, text = part
        if text is not None:
            return regex, len(text)
        before = b""
        if regex.startswith(_SPACES):
            before, regex = next(spaces), regex[len(_SPACES):]
        plain = _plain(regex)
        if plain is not None:
            return re.escape(before + plain), len(before) + len(plain)
        if _one_group(regex):
            kinds.append("usage number")
        else:
            kinds.append("width")
            kinds.extend(["usage"] * re.compile(regex).groups)
            regex = b"(" + regex + b")"
        return re.escape(before) + regex, len(before)

    def search(self, learned: bytes) -> _Search | None:
        """The search that tells each event's width, with the spaces of the
        last event, ``learned`` (none, most often: tried first, with nothing
        to learn); None when ``learned`` is no such event."""
        told = self.told([b""] * self.spaced)
        if told.exact(learned):
            return told
        spaces = self.spaces(learned)
        if spaces is None or not any(spaces):
            return None
        told = self.told(spaces)
        return told if told.exact(learned) else None


def _around(env: Envelope) -> tuple[bytes, bytes] | None:
    """What ``env``'s expression holds between its last token before the
    piece and the piece (spaces it may have, then its quote) and between
    the piece and its first token after (the quote): the spaces and the
    quote (none around an entry); None for anything else."""
    lead_end = env.lead[len(b"".join(r for r, _ in env.parts[0])):]
    quote = env.trail[: len(env.trail) - len(b"".join(r for r, _ in env.parts[1]))]
    if quote not in (b"", b'"') or not lead_end.endswith(quote):
        return None
    return lead_end[: len(lead_end) - len(quote)], quote


def _plain_lead(env: Envelope) -> bytes:
    """The payload's bytes before its piece up to its first hole or gap: its
    tokens' texts (``Envelope.parts``)."""
    out = []
    for _, text in env.parts[0]:
        if text is None:
            break
        out.append(text)
    return b"".join(out)


class _Searches:
    """The searches of a run's events: the one that tells each event's width
    while its events have the learned one's spaces (``_Search``), else the
    one that takes each event whole; each written and compiled when first
    needed (most envelopes learned make no run of their own: a short
    string's pieces, calls in turns; compiling costs as much as reading a
    few thousand events)."""

    __slots__ = ("_event", "_learned", "_search")

    def __init__(self, event: _Event, learned: bytes) -> None:
        self._event = event
        self._learned: bytes | None = learned
        self._search: _Search | None = None

    def first(self) -> _Search | None:
        """The search to try first; None when the learned event is no such event."""
        if self._learned is not None:
            learned, self._learned = self._learned, None
            self._search = self._event.search(learned)
            if self._search is None:
                whole = self._event.whole()
                self._search = whole if whole.exact(learned) else None
        return self._search

    def whole(self) -> _Search | None:
        """The search that takes each event whole, from now on: the events of
        the run met other spaces than the learned one's (padding)."""
        if self._search is not None and not self._search.whole:
            self._search = self._event.whole()
        return self._search


class _Run:
    """The learned event's bytes around its piece, as expressions: its lines
    before the payload (``_Lines``) and after it as they are, the payload's
    envelope with its holes (``Envelope.lead``, ``Envelope.trail``), and
    which group of a found event holds what."""

    __slots__ = ("_fewest", "_repeated", "event", "id", "lines", "literal", "payload_end",
                 "piece", "searches", "tail", "usage")

    def __init__(self, lines: _Lines, env: Envelope, tail: bytes, piece: bytes,
                 learned: bytes, around: tuple[bytes, bytes]) -> None:
        self.lines = lines
        self.tail = tail
        #: how far before its event's end the payload stops
        self.payload_end = len(tail)
        head, trail = lines.head + env.lead, env.trail + re.escape(tail)
        #: such an event and its groups (the whole one, the id, the usage
        #: before the piece, the piece, the usage after it: ``id``, ``piece``,
        #: ``usage``), as an alternative among calls in turns (``_take_mixed``)
        self.event = b"(" + head + b"(" + piece + b")" + trail + b")"
        self._repeated = b"(?:" + head + piece + trail + b"){%d}" % FEWEST
        self._fewest: re.Pattern[bytes] | None = None
        event = _Event()
        event.add("lines", lines)
        event.envelope(env, piece, around)
        event.add("bytes", (re.escape(tail), len(tail)))
        self.searches = _Searches(event, learned)
        #: the bytes each of its events opens with: the lines' (``_Lines.literal``)
        #: and, when they are all plain, the payload's tokens up to its first
        #: hole or gap or its piece
        self.literal = lines.literal if lines.id_len is not None else (
            lines.literal + _plain_lead(env))
        # the groups of a found event, from 0 in what findall gives: the whole,
        # the id, the usage before the piece, the piece, the usage after it
        self.id = 1 if lines.id_len is not None else 0
        self.piece = 1 + self.id + env.lead_groups
        holes = len(env.usage.paths) if env.usage is not None else 0
        self.usage = [1 + self.id + g + (g >= env.lead_groups) for g in range(holes)]

    @property
    def fewest(self) -> re.Pattern[bytes]:
        """At least ``FEWEST`` such events from where the search starts."""
        if self._fewest is None:
            self._fewest = re.compile(self._repeated)
        return self._fewest

    def may_start(self, data: bytes, pos: int) -> bool:
        """False where ``fewest`` surely finds no run at ``pos``, told without
        compiling it: the first event there or the ``FEWEST``-th (each of a
        run's events ends with its one blank line) does not open with the
        bytes every one of them opens with (``literal``)."""
        literal, tail = self.literal, self.tail
        if not data.startswith(literal, pos):
            return False
        for _ in range(FEWEST - 1):
            at = data.find(tail, pos)
            if at < 0:
                return False
            pos = at + len(tail)
        return data.startswith(literal, pos)


class _Turns:
    """The events of several calls in turns (each one of ``envs``), when the
    envelopes differ only in tokens that are plain text (a call's index, its
    id): one expression, with a group at each place they differ, whose texts
    say whose event it is (``table``). Each event is matched once, where an
    alternative per envelope would try each in turn (8 calls: 4.5 each)."""

    __slots__ = ("bytewise", "fewest", "lines", "payload_end", "searches", "table", "widths")

    def __init__(self, lines: _Lines, tail: bytes, event: _Event, learned: bytes,
                 table: dict[Any, int]) -> None:
        self.lines = lines
        self.payload_end = len(tail)
        self.searches = _Searches(event, learned)
        self.fewest = re.compile(b"(?:" + b"".join(
            _Event._whole(kind, part) for kind, part in event.parts) + b"){%d}" % FEWEST)
        #: whose event it is, by the texts of its groups that say so: the one
        #: text itself where one group does (the commonest: a call's id)
        self.table = table
        #: by envelope, the length of the text that says whose (one group's)
        self.widths = [0] * len(table)
        for text, k in table.items():
            self.widths[k] = len(text) if type(text) is bytes else 0
        #: the same as a translation of bytes, where one group says whose and
        #: each text it takes is one byte (ids a character apart)
        self.bytewise: bytes | None = None
        if all(type(t) is bytes and len(t) == 1 for t in table):
            codes = bytearray(range(256))
            for text, k in table.items():
                codes[text[0]] = k  # type: ignore[index]
            self.bytewise = bytes(codes)


def _opening(texts: list[bytes]) -> bytes:
    """The bytes every one of ``texts`` opens with."""
    low, high = min(texts), max(texts)  # the others lie between: they share what these do
    n = 0
    while n < len(low) and low[n] == high[n]:
        n += 1
    return low[:n]


def _turns(envs: list[Envelope], lines: _Lines, tail: bytes, learned: bytes) -> _Turns | None:
    """``_Turns`` of ``envs`` (the last event, ``learned``, is one of them),
    when they differ only in plain text, in the same places, and each is
    told from the others by it."""
    arounds = set(map(_around, envs))
    if len(arounds) != 1 or None in arounds:
        return None
    gap, quote = arounds.pop()  # type: ignore[misc]
    event = _Event()
    event.add("lines", lines)
    texts: list[list[bytes]] = [[] for _ in envs]
    for side in (0, 1):
        parts = [env.parts[side] for env in envs]
        if len({len(p) for p in parts}) != 1:
            return None
        if side == 1:
            if gap:
                event.add("token", (gap, None))
            event.add("bytes", (re.escape(quote), len(quote)))
            event.add("piece", PIECE)
            event.add("bytes", (re.escape(quote), len(quote)))
        for tokens in zip(*parts, strict=True):
            regexes = [regex for regex, _ in tokens]
            if len(set(regexes)) == 1:  # the same token (or hole) in every envelope
                event.add("token", tokens[0])
                continue
            said: list[bytes] = [text for _, text in tokens]  # type: ignore[misc]
            if None in said:
                return None
            # the bytes all of them share before and after where they differ
            # stay out of the group: ids that differ in a character make a
            # class, one step (an alternative per id was tried in turn)
            first = _opening(said)
            last = _opening([text[len(first):][::-1] for text in said])[::-1]
            middles = [text[len(first) : len(text) - len(last)] for text in said]
            event.add("which", (first, middles, last))
            for k, middle in enumerate(middles):
                texts[k].append(middle)
    event.add("bytes", (re.escape(tail), len(tail)))
    table: dict[Any, int] = {tuple(t) if len(t) != 1 else t[0]: k for k, t in enumerate(texts)}
    if len(table) != len(envs):
        return None
    return _Turns(lines, tail, event, learned, table)


def _columns(numbers: list[list[bytes]]) -> list[array[int]]:
    """Each usage hole's numbers, as far as all of them fit in 64 bits: a
    run stops before a number too large to keep so (read one by one). A
    number the same in every event (a prompt's token count) is read once,
    the others by one ``json.loads`` of them all (the holes take whole
    numbers as JSON spells them)."""
    values: list[list[int]] = []
    fit = min(map(len, numbers), default=0)
    for digits in numbers:
        if digits and digits.count(digits[0]) == len(digits):
            column = [int(digits[0])] * len(digits) if len(digits[0]) < 19 else None
        else:
            try:
                column = json.loads(b"[" + b",".join(digits) + b"]")
            except ValueError:  # a number of thousands of digits
                column = None
        if column is None or (column and (max(column) > _MOST or min(column) < -_MOST)):
            # the first that does not fit, one by one (a long number is rare)
            column = []
            for text in digits:
                if len(text) > 20 or not -_MOST <= int(text) <= _MOST:
                    break
                column.append(int(text))
        fit = min(fit, len(column))
        values.append(column)
    return [array("q", column if fit == len(column) else column[:fit]) for column in values]


#: the largest number a usage column keeps
_MOST = (1 << 63) - 1


def _decoded(which: Sequence[int], pieces: Iterable[bytes], envs: int) -> list[list[str]] | None:
    """The pieces of events of several calls in turns, the k-th ``envs``
    envelope ``which[k]``'s, shared out among the envelopes and each one's
    decoded by one ``json.loads``: put with their calls once, here, rather
    than by each reader of them. None when some are not JSON strings'
    contents in UTF-8 (decoded strictly first: json.loads would let encoded
    surrogates through)."""
    out: list[list[str]] = []
    for mine in by_owner(which, pieces, envs):
        try:
            out.append(json.loads((b'["' + b'","'.join(mine) + b'"]').decode("utf-8"))
                       if mine else [])
        except ValueError:
            return None
    return out


def _counted(ids: list[bytes]) -> int:
    """How many of ``ids`` count up by one from the first, spelled as
    numbers are (what ``RunLines.first_id`` keeps): none when the first is
    longer than 64 bits hold (Python turns no more than 4300 digits into a
    number; the event log keeps such ids as their text, one by one)."""
    if len(ids[0]) > 18:
        return 0
    first = int(ids[0])
    spelled = list(map(b"%d".__mod__, range(first, first + len(ids))))
    return next(compress(count(), map(ne, ids, spelled)), len(ids))


def _run_lines(lines: _Lines, starts: list[int], ids: list[bytes] | None) -> RunLines | None:
    """Where the events of a run found at ``starts`` (with ``ids``) hold
    what besides their payload, for the event log; None: nothing varies."""
    if lines.id_len is None and lines.comment is None:
        return None
    begin = starts[:-1]
    shifts = None if ids is None else list(map(len, ids))
    payloads = None if shifts is None else list(map(add, begin, map(add, shifts,
                                                                   repeat(lines.lead))))
    comments = None
    if lines.comment is not None:
        moved = begin if not lines.shifted or shifts is None else list(map(add, begin, shifts))
        comments = tuple(list(map(add, moved, repeat(c))) for c in lines.comment)
    return RunLines(payloads, comments,  # type: ignore[arg-type]
                    None if ids is None else int(ids[0]))


def next_window(window: int, took: int, events: int, room: int, full: bool, least: int,
                most: int) -> int:
    """The bytes to search for the next run, after one of ``events`` events
    that took ``took`` bytes of a search of ``window`` bytes, ``room`` of them
    left after it. A run cut at MAX_RUN (``full``): about as many (events
    found past it are found again, so a window holds about MAX_RUN events, not
    many more). One that ran to the window's end (less than about four of its
    events' room left: its next event cut there): twice the window, up to
    ``most``. One that ended inside the window: twice its bytes, at least
    ``least`` (a capture whose runs are short is not searched far past each
    of them)."""
    if full:
        return max(least, took + took // 8)
    if room * events < 4 * took:
        return min(2 * window, most)
    return max(least, 2 * took)


class SliceReader:
    """A capture read into a stream a slice at a time, the runs that start
    after each slice taken in bulk: what the SSE and NDJSON readers share. A
    subclass reads one slice of about so many bytes one event at a time
    (``_slice_once``), and takes one run where one starts (``_take_run``)."""

    #: the first slice after a run, and the most a slice doubles to
    first_slice = _FIRST_SLICE
    max_slice = _MAX_SLICE

    def __init__(self) -> None:
        #: bytes read so far
        self.pos = 0
        self.done = False
        self._slice = self.first_slice
        self._budget = _MAX_WINDOW

    def advance(self, budget: int) -> None:
        """Read about ``budget`` bytes more (at least one slice)."""
        stop = self.pos + budget
        self._budget = budget
        while not self.done:
            self._slice_once(min(self._slice, budget))
            took = False
            while self.pos < stop and not self.done and self._take_run():
                took = True
            self._slice = self.first_slice if took else min(2 * self._slice, self.max_slice)
            if self.pos >= stop:
                return

    def _slice_once(self, size: int) -> None:
        raise NotImplementedError

    def _take_run(self) -> bool:
        raise NotImplementedError


class SSEReader(SliceReader):
    """``data``, an SSE capture, read into ``stream`` (made over ``data``, with
    ``source=data``, and empty). Call :meth:`advance` until :attr:`done`."""

    def __init__(self, stream: Stream, data: bytes) -> None:
        if stream.events or stream.events.source is not data:
            raise ValueError("the stream must be empty and made over the capture's bytes")
        super().__init__()
        self.stream = stream
        self.data = data
        self._decoder = SSEDecoder(log=stream.events)
        #: what the framing met on the way, once done
        self.problems: list[FramingProblem] = []
        #: the events read in runs, in order: their bytes are valid UTF-8 (the
        #: lines are the learned event's, checked; each piece, entry and usage
        #: is decoded strictly; the rest is the envelope's own text)
        self.runs: list[range] = []
        self._window = _FIRST_WINDOW
        self._runs: dict[tuple[bytes, ...], _Run] = {}
        self._mixed: dict[tuple[bytes, ...], re.Pattern[bytes]] = {}
        self._turns: dict[tuple[bytes, ...], _Turns | None] = {}

    def _slice_once(self, size: int) -> None:
        if self._feed_slice(size) and self.pos == len(self.data):
            stream = self.stream
            first = len(stream.events)
            self._decoder.close()
            stream.take_logged(first)
            self.problems = self._decoder.problems
            self.done = True

    def _feed_slice(self, size: int) -> bool:
        """Frame about ``size`` bytes event by event, to the end of a blank
        line past them; False where a frame over the limit ended the read."""
        data, pos, stream = self.data, self.pos, self.stream
        end = len(data)
        if pos + size < end:
            blank = _BLANK.search(data, pos + size)
            if blank is not None:
                end = blank.end()
        first = len(stream.events)
        try:
            self._decoder.feed(data[pos:end])
        except FrameTooLarge as exc:  # as a whole read stops there (framing/detect.py)
            stream.take_logged(first)
            self.problems = [*self._decoder.problems, FramingProblem("frame-too-large", str(exc))]
            self.pos, self.done = len(data), True
            return False
        stream.take_logged(first)
        self.pos = end
        return True

    def _take_run(self) -> bool:
        data, pos, stream = self.data, self.pos, self.stream
        if self._decoder.between_events != pos:
            return False
        env = stream.run_envelope()
        if env is None:
            # Vertex: a growing string's pieces, else any entries
            learned = stream.run_entries(pieces=True, ahead=self._ahead)
            if learned is not None and self._take_entries(learned, PIECE):
                return True
            learned = stream.run_entries()
            return learned is not None and self._take_entries(learned, ENTRY)
        run = self._run_of(env, PIECE)
        if run is None:
            return False
        end = min(len(data), pos + min(self._window, self._budget))
        if not run.may_start(data, pos) or run.fewest.match(data, pos) is None:
            # not a run of this call worth taking: several calls in turns, or
            # nothing to take (then read on one by one)
            return self._take_mixed(env, end)
        found = self._found(run, end)
        if found is None:
            return False
        pieces, starts, usage, lines, _ = found
        try:
            # decoded strictly first: json.loads would let encoded surrogates through
            texts: list[str] = json.loads((b'["' + b'","'.join(pieces) + b'"]').decode("utf-8"))
        except ValueError:
            return False
        taken = stream.take_run(env, texts, self._name(), starts, run.lines.lead, run.payload_end,
                                usage, lines)
        return self._skip(starts, taken, lines)

    def _ahead(self) -> str | None:
        """The payload of the ``FEWEST``-th event from here, when the last
        event is one ``data:`` line and that one is too (each of a run's
        events is its lines, its payload and its blank line): what a run from
        here would hold in its last event but one piece or entry, usage
        aside, for ``Stream.run_entries`` to look at first. None when that
        cannot be told so (then nothing is looked at first)."""
        data, log = self.data, self.stream.events
        last = len(log) - 1
        span, at = (log.span(last), log.at(last)) if log else (None, None)
        if span is None or at is None:
            return None
        head, tail = data[span[0] : at[0]], data[at[1] : span[1]]
        if head not in (b"data:", b"data: ") or tail not in _TAILS:
            return None
        pos = self.pos
        for _ in range(FEWEST - 1):
            found = data.find(tail, pos)
            if found < 0:
                return None
            pos = found + len(tail)
        end = data.find(tail, pos)
        if end < 0 or not data.startswith(head, pos):
            return None
        try:
            return data[pos + len(head) : end].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _take_entries(self, env: Envelope, piece: bytes) -> bool:
        """Events from here that are the last one with another entry in its
        entry's place (``Stream.run_entries``), or another piece in its
        piece's (``piece`` says which), at least so many: taken in bulk, every
        one read by the adapter (``Stream.take_entries``)."""
        data, pos, stream = self.data, self.pos, self.stream
        run = self._run_of(env, piece)
        if run is None or not run.may_start(data, pos) or run.fewest.match(data, pos) is None:
            return False
        found = self._found(run, min(len(data), pos + min(self._window, self._budget)))
        if found is None:
            return False
        values, starts, usage, lines, _ = found
        try:
            # each found entry is one object (none inside it): joined, one array
            # of them; pieces decoded strictly first (json.loads would let
            # encoded surrogates through)
            entries = json.loads((b"[" + b",".join(values) + b"]" if piece is ENTRY else
                                  b'["' + b'","'.join(values) + b'"]').decode("utf-8"))
        except ValueError:
            return False
        if len(entries) != len(values):
            return False
        taken = stream.take_entries(env, entries, self._name(), starts, run.lines.lead,
                                    run.payload_end, usage, lines)
        return self._skip(starts, taken, lines)

    def _found(
        self, run: _Run | _Turns, end: int
    ) -> tuple[list[bytes], list[int], list[array[int]], RunLines | None, Sequence[int]] | None:
        """The events from here to ``end`` that are ``run``'s, end to end (at
        most ``_MOST_FOUND``, their ids counting up): the piece of each, where
        each starts (and the end of the last), each usage hole's numbers,
        what the event log keeps of their lines, and (for calls in turns)
        whose each one is. None when there is no run."""
        data, pos = self.data, self.pos
        search = run.searches.first()
        if search is None:
            return None
        blocks = search.pattern.findall(data, pos, end)
        if blocks and not blocks[-1][search.piece]:
            blocks.pop()  # the rest (no piece), from the first other event on
        if len(blocks) < FEWEST and not search.whole:
            # the run's events have other spaces than the learned one's (padding)
            search = run.searches.whole()
            assert search is not None
            blocks = search.pattern.findall(data, pos, end)
            if blocks and not blocks[-1][search.piece]:
                blocks.pop()
        groups = search
        full = len(blocks) >= MAX_RUN
        # a window sized for MAX_RUN events holds a few more (next_window):
        # they are taken too, rather than found again by the next search
        del blocks[_MOST_FOUND:]
        ids = None
        if groups.id is not None and blocks:
            ids = list(map(itemgetter(groups.id), blocks))
            del blocks[_counted(ids):]
            del ids[len(blocks):]
        which: Sequence[int] = []
        if isinstance(run, _Turns) and blocks and len(groups.which) == 1:
            # one group says whose: each text it takes is an envelope's (the
            # ids of calls in turns, most often a character apart: a table)
            said = map(itemgetter(groups.which[0]), blocks)
            which = (b"".join(said).translate(run.bytewise) if run.bytewise is not None
                     else list(map(run.table.__getitem__, said)))
        elif isinstance(run, _Turns) and blocks:
            # a mix of the differing texts that is no envelope's ends the run
            found = list(map(run.table.get, zip(
                *[map(itemgetter(g), blocks) for g in groups.which], strict=True)))
            which = found[: found.index(None) if None in found else len(found)]  # type: ignore[assignment]
            del blocks[len(which):]
            if ids is not None:
                del ids[len(blocks):]
        if not blocks:
            return None
        pieces = list(map(itemgetter(groups.piece), blocks))
        digits = [list(map(itemgetter(k), blocks)) for k in groups.usage]
        if groups.whole:
            starts = list(accumulate(map(len, map(itemgetter(0), blocks)), initial=pos))
        else:  # each event's width: its fixed bytes and the lengths of its groups
            widths: Iterator[int] = map(len, pieces)
            fixed = groups.fixed
            for k in groups.widths:
                if k in groups.usage:
                    column = digits[groups.usage.index(k)]
                    if column.count(column[0]) == len(column):  # a prompt's count: the same
                        fixed += len(column[0])
                    else:
                        widths = map(add, widths, map(len, column))
                elif k in groups.which and isinstance(run, _Turns) and len(groups.which) == 1:
                    if len(set(run.widths)) == 1:  # ids as long as each other
                        fixed += run.widths[0]
                    else:
                        widths = map(add, widths, map(run.widths.__getitem__, which))
                elif k != groups.piece:
                    widths = map(add, widths, map(len, map(itemgetter(k), blocks)))
            starts = list(accumulate(map(add, widths, repeat(fixed)), initial=pos))
        stop = starts[-1]
        del blocks  # (each event's groups, let go: a run's pieces are what is kept)
        full = full and len(pieces) >= MAX_RUN
        # a full run: the window for about MAX_RUN events as long as these
        took = (stop - pos) * MAX_RUN // len(pieces) if full else stop - pos
        self._window = next_window(self._window, took, len(pieces), end - stop, full,
                                   _SHORT_WINDOW, _MAX_WINDOW)
        max_line = min(self._decoder.max_line, self._decoder.max_event)
        if stop - pos > max_line and max(map(sub, starts[1:], starts)) > max_line:
            return None  # the decoder says where a line is too long
        usage = _columns(digits)
        if usage and len(usage[0]) < len(pieces):
            del pieces[len(usage[0]):], starts[len(usage[0]) + 1:]
            which = which[: len(usage[0])]
            if ids is not None:
                del ids[len(pieces):]
            if not pieces:
                return None
        return pieces, starts, usage, _run_lines(run.lines, starts, ids), which

    def _name(self) -> str | None:
        log = self.stream.events
        return log.name(len(log) - 1)

    def _skip(self, starts: list[int], taken: int, lines: RunLines | None) -> bool:
        """The decoder goes on after the ``taken`` events read in bulk."""
        if not taken:
            return False
        comments = lines is not None and lines.comments is not None
        events = taken * (2 if comments else 1)
        self.runs.append(range(len(self.stream.events) - events, len(self.stream.events)))
        self._decoder.skip(starts[taken], events)
        self.pos = starts[taken]
        if self.pos == len(self.data):
            self._slice_once(0)  # the end: close the decoder
        return True

    def _take_mixed(self, env: Envelope, end: int) -> bool:
        """Events from here that are each one of the stream's envelopes with
        another piece, several calls' continuations in turns (parallel calls
        streamed interleaved): taken in bulk as a run is, when there are at
        least so many (``FEWEST``)."""
        data, pos, stream = self.data, self.pos, self.stream
        envs = stream.run_envelopes()
        if len(envs) < 2:
            return False
        # every envelope's usage has as many holes, or none has usage
        holes = {-1 if e.usage is None else len(e.usage.paths) for e in envs}
        if len(holes) != 1:
            return False
        runs = [self._run_of(e, PIECE) for e in envs]
        if any(run is None for run in runs):
            return False
        turns = self._turns_of(envs)
        if turns is not None:
            return self._take_turns(envs, turns, end)
        key = tuple(run.event for run in runs)  # type: ignore[union-attr]
        pattern = self._mixed.get(key)
        if pattern is None:  # (_run_of said there is room for a run)
            if len(self._mixed) >= 64:
                self._mixed.clear()
            # the envelopes in a group of their own, so that the expression
            # reads the bytes they share once (the parser takes a prefix
            # common to all the alternatives out of them), then tells them
            # apart, where each one was tried from the event's start in turn
            pattern = self._mixed[key] = re.compile(
                b"(?:" + b"|".join(key) + b")|(" + REST + b")")
        found = list(pattern.finditer(data, pos, end))
        if found and found[-1].lastindex == pattern.groups:
            found.pop()  # the rest, from the first other event on
        full = len(found) > MAX_RUN
        del found[MAX_RUN:]
        # each alternative's groups follow the one before's: its last says whose event it is
        width = pattern.groups // len(envs) if pattern.groups % len(envs) == 1 else 0
        if not width:
            return False
        which = [(g - 1) // width for g in map(attrgetter("lastindex"), found)]
        first = runs[0]
        assert first is not None
        # the number of an alternative's first group, less one (findall's index + 1)
        base = list(map(add, map(mul, which, repeat(width)), repeat(1)))
        ids = None
        if first.id:
            ids = list(map(re.Match.group, found, map(add, base, repeat(first.id))))
            del found[_counted(ids) if ids else 0:]
            del ids[len(found):]
        if len(found) < FEWEST:
            return False
        del which[len(found):], base[len(found):]
        pieces = list(map(re.Match.group, found, map(add, base, map(
            [run.piece for run in runs].__getitem__, which))))  # type: ignore[union-attr]
        starts = [pos, *map(re.Match.end, found)]
        self._window = next_window(self._window, starts[-1] - pos, len(found), end - starts[-1],
                                   full and len(found) == MAX_RUN, _SHORT_WINDOW, _MAX_WINDOW)
        max_line = min(self._decoder.max_line, self._decoder.max_event)
        if starts[-1] - pos > max_line and max(map(sub, starts[1:], starts)) > max_line:
            return False  # the decoder says where a line is too long
        usage = _columns([
            list(map(re.Match.group, found, map(add, base, map(
                [run.usage[h] for run in runs].__getitem__, which))))  # type: ignore[union-attr]
            for h in range(len(first.usage))])
        if usage and len(usage[0]) < len(found):
            del found[len(usage[0]):], pieces[len(usage[0]):], which[len(usage[0]):]
            del starts[len(usage[0]) + 1:]
            if ids is not None:
                del ids[len(found):]
            if len(found) < FEWEST:
                return False
        texts = _decoded(which, pieces, len(envs))
        if texts is None:
            return False
        lines = _run_lines(first.lines, starts, ids)
        taken = stream.take_mixed_run(envs, which, texts, self._name(), starts, first.lines.lead,
                                      first.payload_end, usage, lines)
        return self._skip(starts, taken, lines)

    def _turns_of(self, envs: list[Envelope]) -> _Turns | None:
        """The one expression of ``envs``' events (``_Turns``), when there is one."""
        log = self.stream.events
        last = len(log) - 1
        span, at = log.span(last), log.at(last)
        assert span is not None and at is not None  # _run_of said so
        head, tail = self.data[span[0] : at[0]], self.data[at[1] : span[1]]
        key = (head, tail, *(e.lead + b"\0" + e.trail for e in envs))
        if key not in self._turns:
            lines = _lines(head, tail)
            if len(self._turns) >= 64:
                self._turns.clear()
            self._turns[key] = None if lines is None else _turns(
                envs, lines, tail, self.data[span[0] : span[1]])
        return self._turns[key]

    def _take_turns(self, envs: list[Envelope], turns: _Turns, end: int) -> bool:
        """``_take_mixed`` with one expression for every call's events."""
        if turns.fewest.match(self.data, self.pos) is None:
            return False
        found = self._found(turns, end)
        if found is None:
            return False
        pieces, starts, usage, lines, which = found
        if len(pieces) < FEWEST:
            return False
        texts = _decoded(which, pieces, len(envs))
        if texts is None:
            return False
        taken = self.stream.take_mixed_run(envs, which, texts, self._name(), starts,
                                           turns.lines.lead, turns.payload_end, usage, lines)
        return self._skip(starts, taken, lines)

    def _run_of(self, env: Envelope, piece: bytes) -> _Run | None:
        """The expressions of the last event's bytes around its piece (an
        argument string's contents, or an entry), when its lines are the
        plain ones a run may repeat."""
        log = self.stream.events
        last = len(log) - 1
        span, at = log.span(last), log.at(last)
        if span is None or at is None or env.pattern is None:
            return None
        data = self.data
        head, tail = data[span[0] : at[0]], data[at[1] : span[1]]
        key = (head, env.lead, env.trail, tail, piece)
        run = self._runs.get(key)
        if run is None:
            lines, around = _lines(head, tail), _around(env)
            if lines is None or around is None or not _room_for_a_run(data, self.pos, tail):
                return None
            if len(self._runs) >= 64:  # a stream has a few envelopes at a time
                self._runs.clear()
            run = self._runs[key] = _Run(lines, env, tail, piece, data[span[0] : span[1]],
                                         around)
        return run
