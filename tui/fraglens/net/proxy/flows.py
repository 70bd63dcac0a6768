"""The flows the proxy has seen: one ``Flow`` per exchange, kept in a ``FlowStore``.

A ``StoreSink`` (``sink.py``) creates and feeds flows from the facts the
forwarding side reports: on the thread that reads the forwarding process's
pipe (``child.py``, what ``fraglens proxy`` runs), or on the proxy's own
event loop when it runs in process (tests, tools). Views (the Flows screen,
the headless printer) read them. The store's lock is the one rule that keeps
both sides honest: the sink holds it while it changes a flow, a view holds it
while it copies what it shows (:meth:`Flow.row`, ``flow.events[:]``). Views
never feed a flow's ``Stream``; to show the panes live they feed their own
``Stream`` from ``flow.events``.

No sockets and no files here: the sink hands in bytes and times, and the
recording writer it attaches writes to a file it opened.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ...engine.diagnostics import SEVERITY_RANK
from ...framing.events import RawEvent
from ...framing.recording import RecordingWriter
from ...reading.stream import Stream
from ...redact import Fingerprints

__all__ = ["Flow", "FlowRow", "FlowState", "FlowStore", "decoded_format", "worst_status"]


class FlowState(Enum):
    #: the request went to the upstream; no response headers yet
    WAITING = "waiting"
    #: the response headers came; the body is arriving
    STREAMING = "streaming"
    #: the upstream finished the body (whatever its status)
    DONE = "done"
    #: the upstream could not be reached (the client got a 502), or broke off mid-body
    FAILED = "failed"
    #: the client went away first; the upstream stream was closed with it
    CANCELLED = "cancelled"


#: how bad a call status is, for the "worst call" column: best first
_STATUS_ORDER = ("ok", "empty", "open", "repaired", "invalid", "truncated", "aborted")
_STATUS_RANK = {s: i for i, s in enumerate(_STATUS_ORDER)}


def worst_status(statuses: list[str]) -> str | None:
    return max(statuses, key=lambda s: _STATUS_RANK.get(s, len(_STATUS_RANK)), default=None)


# Endpoint suffixes that carry tool calls, and the wire format of each. Anything
# else (models, embeddings, files...) is forwarded and listed, never decoded.
_DECODED_SUFFIXES = (
    ("/chat/completions", "openai-chat"),
    ("/messages", "anthropic"),
    ("/responses", "openai-responses"),
)


def decoded_format(path: str) -> str | None:
    """The wire format of an endpoint path, or None for one that is only listed."""
    path = path.split("?", 1)[0].rstrip("/")
    for suffix, fmt in _DECODED_SUFFIXES:
        if path.endswith(suffix):
            # the Assistants API has /threads/{id}/messages: not Anthropic's
            if fmt == "anthropic" and "/threads/" in path:
                return None
            return fmt
    return None


@dataclass(frozen=True, slots=True)
class FlowRow:
    """What the flow list shows of a flow, copied under the store's lock."""

    number: int
    #: wall-clock time the request came in (seconds since the epoch)
    started: float
    method: str
    path: str
    model: str | None
    state: FlowState
    status: int | None
    #: seconds from the request to the end of the body; so far, while streaming
    duration: float
    #: None when the flow is listed but not decoded
    calls: int | None
    worst: str | None
    diagnostics: int | None
    #: "error", "warning", "info" or None: the worst diagnostic
    severity: str | None
    events: int
    received: int
    error: str | None

    def text(self) -> str:
        """Everything a filter matches against, lowercased."""
        parts = [
            str(self.number),
            self.method,
            self.path,
            self.model or "",
            self.state.value,
            str(self.status or ""),
            self.worst or "",
            self.error or "",
        ]
        return " ".join(parts).lower()


@dataclass(eq=False)
class Flow:
    """One request through the proxy and the response that came back.

    Headers and URLs are redacted when they are stored here: nothing a view
    shows or saves can carry the key.
    """

    number: int
    method: str
    #: path and query as the client sent them (redacted)
    path: str
    #: where the request went (redacted)
    url: str
    request_headers: dict[str, str]
    request_body: bytes
    #: the wire format decoded for this endpoint; None: listed only
    format: str | None
    model: str | None = None
    started: float = field(default_factory=time.time)
    #: monotonic clock at the request, for durations and event times
    t0: float = field(default_factory=time.monotonic)
    state: FlowState = FlowState.WAITING
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    #: seconds from the request to the response headers
    response_t: float | None = None
    ended: float | None = None
    error: str | None = None
    #: (seconds since the request, body bytes as the app decodes them), per read
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    #: body bytes forwarded (before any content-encoding is undone)
    received: int = 0
    #: the engine's view of the body; None when the endpoint is only listed
    stream: Stream | None = None
    #: the live recording (``--record-dir``), if any
    writer: RecordingWriter | None = None
    #: where the flow was saved, once it was
    saved_to: str | None = None
    notes: list[str] = field(default_factory=list)
    #: the fingerprints of the request's credentials: its reports scrub them
    secrets: Fingerprints | None = None
    #: a finished flow never changes: its row is computed once
    _final_row: FlowRow | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.format is not None and self.stream is None:
            self.stream = Stream(format=self.format, framing="sse")
        if self.stream is not None:
            self.stream.secrets = self.secrets

    @property
    def events(self) -> Sequence[RawEvent]:
        return self.stream.events if self.stream is not None else []

    @property
    def finished(self) -> bool:
        return self.state in (FlowState.DONE, FlowState.FAILED, FlowState.CANCELLED)

    def elapsed(self, now: float | None = None) -> float:
        end = self.ended if self.ended is not None else (now or time.monotonic())
        return max(end - self.t0, 0.0)

    def request_record(self) -> dict[str, Any]:
        """The request as a recording header holds it."""
        return {
            "method": self.method,
            "url": self.url,
            "headers": self.request_headers,
            "body": self.request_body,
        }

    def row(self) -> FlowRow:
        if self._final_row is not None:
            return self._final_row
        calls: int | None = None
        worst: str | None = None
        count: int | None = None
        severity: str | None = None
        if self.stream is not None:
            r = self.stream.reassembler
            calls = len(r.calls)
            worst = worst_status([c.result.status if c.result else "open" for c in r.calls])
            found = r.diagnostics()
            count = len(found)
            if found:
                top = max(SEVERITY_RANK[d.severity] for d in found)
                severity = next(s for s, rank in SEVERITY_RANK.items() if rank == top)
        row = FlowRow(
            number=self.number,
            started=self.started,
            method=self.method,
            path=self.path,
            model=self.model,
            state=self.state,
            status=self.status,
            duration=self.elapsed(),
            calls=calls,
            worst=worst,
            diagnostics=count,
            severity=severity,
            events=len(self.events),
            received=self.received,
            error=self.error,
        )
        if self.finished:
            self._final_row = row
        return row


#: what changed, for listeners: a new flow, its response headers, body bytes, its end
Change = str
Listener = Callable[[Flow, Change], None]


class FlowStore:
    """Every flow, oldest first, and who wants to know when one changes.

    Listeners are called on the proxy's thread, outside the lock, and must be
    quick (set a flag, post a message); one that raises is dropped so that a
    broken view cannot break forwarding. ``version`` grows with every change:
    a view that polls compares it instead of diffing flows.
    """

    def __init__(self, max_flows: int = 2000) -> None:
        self.lock = threading.RLock()
        self.flows: list[Flow] = []
        self.version = 0
        self.max_flows = max_flows
        self._next = 1
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def new_flow(self, **kwargs: Any) -> Flow:
        with self.lock:
            flow = Flow(number=self._next, **kwargs)
            self._next += 1
            self.flows.append(flow)
            if len(self.flows) > self.max_flows:
                # drop the oldest finished flows; never one still streaming
                excess = len(self.flows) - self.max_flows
                keep = []
                for f in self.flows:
                    if excess and f.finished:
                        excess -= 1
                        continue
                    keep.append(f)
                self.flows = keep
            self.version += 1
        self.notify(flow, "new")
        return flow

    def changed(self, flow: Flow, change: Change) -> None:
        with self.lock:
            self.version += 1
        self.notify(flow, change)

    def notify(self, flow: Flow, change: Change) -> None:
        for listener in list(self._listeners):
            try:
                listener(flow, change)
            except Exception:
                if listener in self._listeners:
                    self._listeners.remove(listener)

    def rows(self) -> list[FlowRow]:
        with self.lock:
            return [f.row() for f in self.flows]

    def get(self, number: int) -> Flow | None:
        with self.lock:
            return next((f for f in self.flows if f.number == number), None)
