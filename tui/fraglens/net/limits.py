"""How much of what a server or a client sends fraglens will hold: the caps on the network side.

A server that never ends a line, a compressed body that inflates a thousand
times, a client that posts gigabytes: each would otherwise grow a buffer
without limit. Past a cap the bytes already read are kept as they came (in the
recording), what happened is said in one line, and the reading stops: ``live``
ends the call, the proxy stops decoding that flow (the client still gets every
byte the upstream sends: forwarding is never cut by what the flows view cannot
hold). Sans-I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "LineGuard", "Limits", "mib"]

_MIB = 1024 * 1024


def mib(n: int) -> str:
    """A byte count as people read a cap: ``4 MiB``, ``512 KiB``, ``100 bytes``."""
    if n >= _MIB and n % _MIB == 0:
        return f"{n // _MIB} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"


@dataclass(frozen=True)
class Limits:
    #: an SSE line, or an event (the lines up to a blank line): ``--max-line-bytes``
    max_line: int = 4 * _MIB
    #: what a compressed response body may inflate to: ``--max-decoded-bytes``
    max_decoded: int = 64 * _MIB
    #: a response body ``live`` keeps, decoded: ``--max-stream-bytes``; the
    #: most ``check`` reads of a capture, so that every recording can be read back
    max_stream: int = 1024 * _MIB
    #: a request body the proxy forwards; larger gets 413: ``--max-body-bytes``
    max_body: int = 64 * _MIB
    #: how far the proxy's flows may fall behind its forwarding (what the forwarding
    #: process holds for them, unread); past it the streams' copies stop:
    #: ``--max-backlog-bytes``
    max_backlog: int = 64 * _MIB


DEFAULT_LIMITS = Limits()

# the end of an event: a blank line, in each of the three line-ending styles
_BLANK_LINES = (b"\r\n\r\n", b"\n\n", b"\r\r")


def _end_of_last(data: bytes, marks: tuple[bytes, ...]) -> int:
    """Where the last of ``marks`` in ``data`` ends; -1 when there is none."""
    return max((data.rfind(m) + len(m) if m in data else -1) for m in marks)


class LineGuard:
    """Watches an SSE body read by read: does a line or an event run past ``limit``?

    The decoder holds an unfinished line and an undispatched event in memory;
    this keeps only two counters and the last three bytes (a blank line can be
    cut across two reads), so it can stand in front of any decoder.
    """

    def __init__(self, limit: int, events: bool = True) -> None:
        self.limit = limit
        #: cap events too (SSE); False: lines only (NDJSON, which has no blank lines)
        self.events = events
        self._line = 0
        self._event = 0
        self._tail = b""
        #: "line" or "event" once one ran past the limit
        self.tripped: str | None = None

    def feed(self, data: bytes) -> bool:
        """Count ``data``; False once a line or an event is longer than the limit."""
        if self.tripped is not None:
            return False
        window = self._tail + data
        line_end = _end_of_last(data, (b"\n", b"\r"))
        self._line = self._line + len(data) if line_end < 0 else len(data) - line_end
        blank = _end_of_last(window, _BLANK_LINES)
        self._event = self._event + len(data) if blank < 0 else len(window) - blank
        self._tail = window[-3:]
        if self._line > self.limit:
            self.tripped = "line"
        elif self.events and self._event > self.limit:
            self.tripped = "event"
        return self.tripped is None

    def message(self) -> str:
        """What tripped, naming the option that sets the cap."""
        what = (
            "an SSE event"
            if self.tripped == "event"
            else "a line"
            if not self.events
            else "an SSE line"
        )
        return f"{what} ran past {mib(self.limit)} (--max-line-bytes)"
