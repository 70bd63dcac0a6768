"""The responses of one WebSocket connection, told apart.

A Responses WebSocket or a Realtime session carries many responses, one after
another, in one stream. A response begins when the client asks for one (it
sends ``response.create``) or when the server starts one the client did not
ask for (a ``response.created`` with no request waiting: the Realtime API's
voice turns); it ends with its terminal event (``response.completed``,
``response.done``, ``response.failed``, an ``error``), or is ``aborted`` when
the connection closes while it is still open. The adapter says when the
server began and ended one (its ``responses`` and ``ends`` counts, the
``response_id`` and ``response_status``); this log only keeps the event
numbers where each happened, so that each call can be given its response by
its first event.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ..records import Record

__all__ = ["ABORTED", "ResponseLog", "WSResponse"]

#: the status of a response the connection's close cut off
ABORTED = "aborted"


class WSResponse(Record):
    __slots__ = ("first_event", "last_event", "id", "status", "begun")
    #: the event that began it: the client's request, else the server's first word
    first_event: int
    last_event: int
    #: the id the server gave it, once it did
    id: str | None
    #: None while it is open; then ``completed``, ``failed``, ``aborted``...
    status: str | None
    #: the server began it (a ``response.created`` came)
    begun: bool

    def __init__(
        self, first_event: int, last_event: int, id: str | None = None, status: str | None = None,
        begun: bool = False,
    ) -> None:
        self.first_event = first_event
        self.last_event = last_event
        self.id = id
        self.status = status
        self.begun = begun

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status or "open",
                "first_event": self.first_event, "last_event": self.last_event}


class ResponseLog:
    def __init__(self) -> None:
        self.responses: list[WSResponse] = []
        self._begun = 0
        self._ends = 0
        self._starts: list[int] = []

    @property
    def open(self) -> WSResponse | None:
        """The response still open, if one is."""
        last = self.responses[-1] if self.responses else None
        return last if last is not None and last.status is None else None

    def _new(self, number: int) -> WSResponse:
        response = WSResponse(number, number)
        self.responses.append(response)
        self._starts.append(number)
        return response

    def sent(self, number: int, payload: Any) -> None:
        """A message the client sent: a ``response.create`` asks for a response."""
        if isinstance(payload, dict) and payload.get("type") == "response.create":
            current = self.open
            if current is not None and not current.begun:
                current.status = "unanswered"  # asked again before any answer came
            self._new(number)

    def read(self, number: int, adapter: Any) -> None:
        """What the adapter made of server event ``number``."""
        begun = getattr(adapter, "responses", 0)
        ends = getattr(adapter, "ends", 0)
        current = self.open
        if begun > self._begun:
            self._begun = begun
            if current is None or current.begun:
                current = self._new(number)
            current.begun = True
        if current is None:
            if ends <= self._ends:
                return  # a session event between responses
            current = self._new(number)  # an end with no beginning: an error, say
        current.last_event = number
        if current.id is None:
            current.id = getattr(adapter, "response_id", None)
        if ends > self._ends:
            self._ends = ends
            current.status = getattr(adapter, "response_status", None) or "completed"

    def of_event(self, event: int) -> WSResponse | None:
        """The response an event (a call's first) belongs to."""
        at = bisect_right(self._starts, event) - 1
        return self.responses[at] if at >= 0 else None
