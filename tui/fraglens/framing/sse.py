"""An incremental Server-Sent Events decoder: bytes in, ``RawEvent`` records out.

It follows the WHATWG event-stream rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
like httpx-sse's ``_decoders.py``, with departures chosen for a debugger:

- comment lines become ``comment`` events instead of being dropped: keep-alives
  are part of what the user is looking at (``sse-comment``); consecutive comment lines
  (a capture's header note, a multi-line keep-alive) make one event;
- :meth:`SSEDecoder.close` dispatches an event that never got its blank line:
  a stream cut off there still delivered that data (``no-done``);
- ``RawEvent.id`` is the ``id:`` field of that event only, not the inherited
  "last event id": the stream view shows what each event carried.
  ``retry:`` and unknown fields are read and ignored (nothing reconnects here);
  a blank line with no ``data:`` line before it dispatches nothing, as the
  spec says.

Lines are split on bytes, never on decoded text. CR and LF bytes cannot occur
inside a multi-byte UTF-8 sequence, so a character split across two feeds is
never cut by a line split, and spans are byte offsets without bookkeeping.

Every buffer is bounded, as in h11: a line longer than ``max_line`` bytes, or
an event whose ``data:`` lines add up to more than ``max_event``, stops the
decoder with :class:`FrameTooLarge` instead of growing without end (a server
that never sends a newline would otherwise take all memory). Feeding after
:meth:`SSEDecoder.close` raises :class:`DecoderMisuse`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import repeat

from .events import (
    DecoderMisuse,
    EventKind,
    EventLog,
    FrameTooLarge,
    FramingProblem,
    RawEvent,
)

__all__ = ["DEFAULT_MAX_EVENT", "DEFAULT_MAX_LINE", "SSEDecoder"]

#: one line, and one event's data, at most: far above any real chunk (a whole
#: call's arguments in one chunk included), far below what hurts a machine
DEFAULT_MAX_LINE = 16 * 1024 * 1024
DEFAULT_MAX_EVENT = 16 * 1024 * 1024
#: consecutive comment lines gathered into one comment event, at most (and at
#: most max_event bytes of them)
_MAX_COMMENT_LINES = 1024
_FIELDS = frozenset({b"data", b"event", b"id", b"retry"})
#: bytes that have no business before a field name: BOMs, NULs, other controls
_STRAY = b"\xef\xbb\xbf\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x1a\x1b\x7f"

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"(\r\n|\r|\n)")


class SSEDecoder:
    """Feed bytes as they arrive; get back the events they complete.

    Events are numbered from 0 in stream order (comments included). ``span`` is
    the (start, end) byte offsets of the event's lines, blank line included, in
    everything fed so far; a leading BOM counts as fed bytes. ``time``, when
    given to :meth:`feed`, is stamped on the events that feed completed.
    """

    def __init__(
        self,
        max_line: int = DEFAULT_MAX_LINE,
        max_event: int = DEFAULT_MAX_EVENT,
        log: EventLog | None = None,
    ) -> None:
        if max_line <= 0 or max_event <= 0:
            raise ValueError("the line and event limits must be positive")
        if log is not None and (log.source is None or len(log)):
            raise ValueError("the log must be empty and over the bytes to be fed")
        #: where events go instead of being returned, when given: an EventLog
        #: over the very bytes fed (from the first), which then keeps each
        #: one-line payload as a range of them, neither decoded nor made an
        #: object here (a whole capture read at once)
        self.log = log
        self.max_line = max_line
        self.max_event = max_event
        #: what was read in a way the spec would not have (stray bytes before a
        #: field name), in stream order; ``event`` is the event it belongs to
        self.problems: list[FramingProblem] = []
        self._closed = False
        # set when a limit was hit: (what, where it began); the decoder is failed
        self._overflow: tuple[str, int] | None = None
        self._number = 0
        # the first bytes, held until we know whether they are a BOM
        self._head = b""
        self._started = False
        # a CR ending a feed may be the first half of a CRLF: decide on the next
        # byte, so that every split of the input yields the same events
        self._cr_held = False
        # the pieces of the line not terminated yet, and where it starts
        self._partial: list[bytes] = []
        self._partial_len = 0
        self._line_start = 0
        # the event being built
        self._data: list[bytes] = []
        self._data_len = 0
        #: comment lines of the block being read, and where the block began
        self._comment: list[bytes] = []
        self._comment_start = 0
        self._event: str | None = None
        self._id: str | None = None
        self._event_start = -1  # -1: no field line yet
        #: event names as read, by their bytes (an empty name reads as None)
        self._names: dict[bytes, str | None] = {}

    def feed(self, chunk: bytes, time: float | None = None) -> list[RawEvent]:
        """The events ``chunk`` completes (none with a ``log``: they are in it).
        FrameTooLarge past a limit (with the events completed before it);
        DecoderMisuse after :meth:`close`."""
        if self.log is None:
            return self._feed(chunk, time)
        try:
            out = self._feed(chunk, time)
        except FrameTooLarge as exc:
            self._to_log(exc.events)
            exc.events = []
            raise
        self._to_log(out)
        return []

    @property
    def between_events(self) -> int | None:
        """The offset of the next byte to feed when everything fed so far ended
        a whole event and nothing is held (no part of a line, of an event, of
        a comment): where a run of events may be read without this decoder."""
        if (
            not self._started or self._closed or self._cr_held or self._partial or self._data
            or self._comment or self._event_start >= 0 or self._overflow is not None
        ):
            return None
        return self._line_start

    def skip(self, end: int, count: int) -> None:
        """``count`` whole events up to offset ``end`` were read by someone else
        (see reading/sse_runs.py): go on from there, numbering on after them."""
        if self.between_events is None or end < self._line_start:
            raise DecoderMisuse("SSEDecoder.skip() in the middle of an event")
        self._line_start = end
        self._number += count

    def _to_log(self, events: list[RawEvent]) -> None:
        assert self.log is not None
        for ev in events:
            self.log.append(ev)
        events.clear()

    def _feed(self, chunk: bytes, time: float | None) -> list[RawEvent]:
        if self._closed:
            raise DecoderMisuse("SSEDecoder.feed() after close()")
        out: list[RawEvent] = []
        if self._overflow is not None:
            self._fail(out)
        if not self._started:
            chunk = self._head + chunk
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._head = chunk
                return out
            self._head = b""
            self._started = True
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
                self._line_start = len(_BOM)
        if self._cr_held:
            chunk = b"\r" + chunk
            self._cr_held = False
        if chunk.endswith(b"\r"):
            self._cr_held = True
            chunk = chunk[:-1]
        if chunk:
            self._split(chunk, out, time)
            if self._partial_len > self.max_line and self._overflow is None:
                self._overflow = ("a line", self._line_start)
            if self._overflow is not None:
                self._fail(out)
        return out

    def _fail(self, out: list[RawEvent]) -> None:
        assert self._overflow is not None
        what, offset = self._overflow
        # what was buffered is dropped: the caller keeps the bytes from offset on
        self._partial, self._partial_len, self._data, self._comment = [], 0, [], []
        limit = self.max_line if what == "a line" else self.max_event
        raise FrameTooLarge(what, offset, limit, out)

    def close(self, time: float | None = None) -> list[RawEvent]:
        """End of stream: terminate the last line and dispatch an open event.
        A failed decoder has nothing more to give; closing twice is harmless."""
        out = self._close(time)
        if self.log is None:
            return out
        self._to_log(out)
        return []

    def _close(self, time: float | None) -> list[RawEvent]:
        out: list[RawEvent] = []
        if self._closed or self._overflow is not None:
            self._closed = True
            return out
        self._closed = True
        if not self._started:
            # fewer bytes than a BOM that were not one: ordinary text
            self._started = True
            head, self._head = self._head, b""
            if head:
                self._split(head, out, time)
        if self._cr_held:
            self._cr_held = False
            self._split(b"\r", out, time)
        if self._partial:
            line = b"".join(self._partial)
            self._partial, self._partial_len = [], 0
            self._consume([line], [0], out, time)
        if self._data or self._comment:
            # as if the missing blank line had come, zero bytes long
            self._consume([b""], [0], out, time)
        return out

    def _split(self, text: bytes, out: list[RawEvent], time: float | None) -> None:
        if b"\r" not in text:
            if b"\n" not in text:
                self._partial.append(text)
                self._partial_len += len(text)
                return
            if self._partial:
                self._partial.append(text)
                text = b"".join(self._partial)
                self._partial, self._partial_len = [], 0
            self._blocks(text, b"\n", out, time)
            return
        if text.count(b"\r") == text.count(b"\n") == text.count(b"\r\n") and not self._partial:
            self._blocks(text, b"\r\n", out, time)
            return
        # mixed line ends: split on each, remembering its length for the spans
        parts = _LINE_END.split(text)
        lines = parts[0::2]
        terms = [len(sep) for sep in parts[1::2]]
        if len(lines) == 1:
            self._partial.append(text)
            self._partial_len += len(text)
            return
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
            self._partial, self._partial_len = [], 0
        rest = lines.pop()
        self._consume(lines, terms, out, time)
        if rest and self._overflow is None:
            self._partial.append(rest)
            self._partial_len += len(rest)

    def _blocks(self, text: bytes, eol: bytes, out: list[RawEvent], time: float | None) -> None:
        """Text with one kind of line end ``eol``, cut at blank lines.

        Nearly every event of a long stream is one ``data:`` line, or an
        ``event:`` line and a ``data:`` line, and its blank line: that block
        becomes an event directly; any other block goes line by line through
        ``_consume``.

        A block ended by its blank line leaves no state behind (its data was
        dispatched, a comment block was closed), so only the first block can
        continue an event begun in an earlier feed.
        """
        blocks = text.split(eol + eol)
        term = len(eol)
        rest = blocks.pop()
        pos, number = self._line_start, self._number
        clean = not (self._data or self._comment) and self._event_start < 0
        max_line = self.max_line
        max_pair = min(max_line, self.max_event)  # an event line and a data line
        add = self.log.add if self.log is not None else None
        names = self._names
        for block in blocks:
            if clean and block[:5] == b"data:" and len(block) <= max_line and eol not in block:
                raw = block[6:] if block[5:6] == b" " else block[5:]
                stop = pos + len(block)
                end = stop + 2 * term
                # 64 bytes are 16 characters at least: too long for [DONE], so data
                if add is not None and len(raw) >= 64:
                    if out:
                        self._to_log(out)
                    add("data", None, pos, end, stop - len(raw), stop, time)
                    number += 1
                    pos = end
                    continue
                payload = raw.decode("utf-8", "replace")
                kind: EventKind = (
                    "done" if len(payload) < 16 and payload.strip() == "[DONE]" else "data"
                )
                out.append(RawEvent(number, kind, payload, None, None, time, (pos, end),
                                    (stop - len(raw), stop)))
                number += 1
                pos = end
                continue
            if clean and block[:6] == b"event:" and len(block) <= max_pair:
                # the other common shape (Anthropic, Responses, Cohere): an event
                # name line, then one data line
                head, _, line = block.partition(eol)
                if line[:5] == b"data:" and eol not in line:
                    name = head[7:] if head[6:7] == b" " else head[6:]
                    raw = line[6:] if line[5:6] == b" " else line[5:]
                    stop = pos + len(block)
                    end = stop + 2 * term
                    event = names.get(name)
                    if event is None:
                        event = name.decode("utf-8", "replace") or None
                        if len(names) < 64:  # a stream names a handful of event types
                            names[name] = event
                    if add is not None and len(raw) >= 64:
                        if out:
                            self._to_log(out)
                        add("data", event, pos, end, stop - len(raw), stop, time)
                        number += 1
                        pos = end
                        continue
                    payload = raw.decode("utf-8", "replace")
                    kind = "done" if len(payload) < 16 and payload.strip() == "[DONE]" else "data"
                    out.append(RawEvent(number, kind, payload, event, None, time, (pos, end),
                                        (stop - len(raw), stop)))
                    number += 1
                    pos = end
                    continue
            self._line_start, self._number = pos, number
            lines = block.split(eol)
            lines.append(b"")  # the blank line the block ended with
            self._consume(lines, repeat(term), out, time)
            if self._overflow is not None:
                return
            pos, number = self._line_start, self._number
            clean = True
        self._line_start, self._number = pos, number
        lines = rest.split(eol)
        rest = lines.pop()
        if lines:
            self._consume(lines, repeat(term), out, time)
        if rest and self._overflow is None:
            self._partial.append(rest)
            self._partial_len += len(rest)

    def _consume(
        self, lines: list[bytes], terms: Iterable[int], out: list[RawEvent], time: float | None
    ) -> None:
        """Interpret complete lines; ``terms`` gives their terminators' lengths.

        One tight loop with the state in locals: this runs once per line of
        100k-event streams, so the common ``data:`` line takes the first branch.
        """
        number = self._number
        pos = self._line_start
        data, dsize = self._data, self._data_len
        max_line, max_event = self.max_line, self.max_event
        event, eid, estart = self._event, self._id, self._event_start
        # terms may be an endless repeat(): lines sets the length
        comment, cstart = self._comment, self._comment_start
        csize = sum(map(len, comment)) if comment else 0
        # where the event's one data value starts, when it was fed with its line here
        vstart = -1
        for line, term in zip(lines, terms, strict=False):
            start = pos
            pos += len(line) + term
            if len(line) > max_line:
                self._overflow = ("a line", start)
                pos = start
                break
            if comment and line[:1] != b":":
                # a block of comment lines (a sample's header, a keep-alive) is one event
                text = b"\n".join(comment).decode("utf-8", "replace")
                out.append(RawEvent(number, "comment", text, time=time, span=(cstart, start)))
                number += 1
                comment, csize = [], 0
            if line.startswith(b"data:"):
                if estart < 0:
                    estart = start
                value = line[6:] if line[5:6] == b" " else line[5:]
                if not data:
                    vstart = start + len(line) - len(value)
                data.append(value)
                dsize += len(value) + 1
                if dsize > max_event:
                    self._overflow = ("an event", estart)
                    pos = start
                    break
            elif not line:
                if data:
                    one = len(data) == 1 and vstart >= 0
                    raw = data[0] if len(data) == 1 else b"\n".join(data)
                    payload = raw.decode("utf-8", "replace")
                    kind: EventKind = (
                        "done" if len(payload) < 16 and payload.strip() == "[DONE]" else "data"
                    )
                    at = (vstart, vstart + len(raw)) if one else None
                    out.append(
                        RawEvent(number, kind, payload, event, eid, time, (estart, pos), at)
                    )
                    number += 1
                    data, dsize = [], 0
                event = eid = None
                estart = -1
            elif line[0] == 0x3A:  # ":"
                if not comment:
                    cstart = start
                elif len(comment) >= _MAX_COMMENT_LINES or csize > max_event:
                    # endless keep-alives with nothing between them: one event
                    # per so many lines, so that the block stays bounded too
                    text = b"\n".join(comment).decode("utf-8", "replace")
                    out.append(RawEvent(number, "comment", text, time=time, span=(cstart, start)))
                    number += 1
                    comment, cstart, csize = [], start, 0
                comment.append(line[2:] if line[1:2] == b" " else line[1:])
                csize += len(line)
            else:
                if estart < 0:
                    estart = start
                name, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if name not in _FIELDS and name.lstrip(_STRAY) in _FIELDS:
                    # a second BOM, a NUL... before a field name: the spec would
                    # drop the line, and with it the event; read it, and say so
                    stray = name[: len(name) - len(name.lstrip(_STRAY))]
                    name = name[len(stray) :]
                    self.problems.append(
                        FramingProblem(
                            "stray-bytes",
                            f"{stray!r} before `{name.decode()}:` at byte {start}: "
                            "skipped, the line read as that field",
                            number,
                        )
                    )
                if name == b"data":
                    if not data:
                        vstart = -1  # read after stray bytes or as a field: no plain slice
                    data.append(value)
                    dsize += len(value) + 1
                    if dsize > max_event:
                        self._overflow = ("an event", estart)
                        pos = start
                        break
                elif name == b"event":
                    event = value.decode("utf-8", "replace") or None
                elif name == b"id" and b"\0" not in value:
                    eid = value.decode("utf-8", "replace")
        self._comment, self._comment_start = comment, cstart
        self._number = number
        self._line_start = pos
        self._data, self._data_len = data, dsize
        self._event, self._id, self._event_start = event, eid, estart
