"""What a framing reader hands on: one record per event of the stream.

Framing knows bytes and lines (SSE, NDJSON, a JSON array, a single JSON body,
a HAR export, a fraglens recording) and nothing of JSON chunk meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: data     - an SSE event with data, or one NDJSON line / array item / body
#: done     - the ``data: [DONE]`` sentinel
#: comment  - an SSE comment line (``: keep-alive``); ``data`` holds its text
#: damaged  - binary framing that did not hold (a bad CRC, a message cut off);
#:            ``data`` says what, ``event`` which kind (``crc`` or ``cut``)
EventKind = Literal["data", "done", "comment", "damaged"]


# Made once per event of 100k-event streams: a plain slotted dataclass, since a
# frozen one's __init__ costs several times more. Treat it as immutable.
@dataclass(slots=True)
class RawEvent:
    number: int
    kind: EventKind
    data: str
    #: the SSE ``event:`` field, if any
    event: str | None = None
    #: the SSE ``id:`` field, if any
    id: str | None = None
    #: seconds since the request was sent, when a recording says so
    time: float | None = None
    #: (start, end) byte offsets in the source this event was read from
    span: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class FramingProblem:
    """Something a reader met in the bytes and could not read as events: the
    stream reports it as a diagnostic (``code`` is a diagnostic code) at
    ``event``, the number of the event it happened before (None: at the end)."""

    code: str
    message: str
    event: int | None = None


@dataclass(slots=True)
class Framed:
    """A whole stream after framing."""

    #: sse | ndjson | json-array | json-body | eventstream | recording | har
    framing: str
    events: list[RawEvent]
    #: recording/HAR metadata: request, response (already redacted), etc.
    meta: dict[str, Any] = field(default_factory=dict)
    #: what could not be read, in stream order
    problems: list[FramingProblem] = field(default_factory=list)


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
