"""What the forwarding side reports, and the flows made of it.

The forwarding side (``ProxyApp``) states facts about each exchange and
nothing else: it opened, the response headers came, body bytes went through,
it ended and how. A :class:`FlowSink` receives them. :class:`StoreSink` turns
them into ``Flow``s in a ``FlowStore`` (the tee into a ``Stream``, the live
recording, the flow's state); ``child.py`` carries the same facts over
a pipe from a forwarding process, so that the engine and the app never share
a process, or a GIL, with the bytes the user's app is waiting for.

Times are ``time.monotonic()`` readings: one clock for every process of the
machine, so a forwarding process can stamp them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...redact import Fingerprints, redact_headers, redact_url
from ..limits import DEFAULT_LIMITS, Limits
from .flows import Flow, FlowState, FlowStore, decoded_format
from .record import LiveRecording
from .tee import BodyTee
from .ws_flows import WSConnections

__all__ = ["ENDINGS", "FlowSink", "Opened", "StoreSink"]

#: how an exchange can end, as the forwarding side sees it
ENDINGS = {
    #: the upstream finished the body
    "eof": FlowState.DONE,
    #: the upstream broke off mid-body
    "upstream-error": FlowState.FAILED,
    #: the upstream could not be reached; the client got a 502
    "unreachable": FlowState.FAILED,
    #: the client went away first; the upstream stream was closed
    "client-gone": FlowState.CANCELLED,
    #: a proxy bug or the proxy stopping
    "proxy-error": FlowState.FAILED,
    "stopped": FlowState.CANCELLED,
}


@dataclass(frozen=True, slots=True)
class Opened:
    """A request the proxy forwards, as the flows may see it: every credential it
    carried redacted by name and scrubbed by value on the forwarding side, which
    is the only one that ever holds a key."""

    id: int
    method: str
    #: path and query as the client sent them
    path: str
    #: where the request goes
    url: str
    headers: list[tuple[str, str]]
    body: bytes
    #: wall clock, for the flow list
    started: float
    #: monotonic clock, for every other time
    t0: float
    #: where the credentials too short to scrub by value came from
    unscrubbed: list[str] = field(default_factory=list)
    #: the credentials' fingerprints, for the reports to scrub (never their values)
    secrets: Fingerprints | None = None


class FlowSink(Protocol):
    def opened(self, x: Opened) -> None: ...

    def response(self, id: int, status: int, headers: list[tuple[str, str]], at: float) -> None: ...

    def body(self, id: int, data: bytes, received: int, at: float) -> None:
        """``data``: the decoded, scrubbed copy of a read of ``received`` bytes forwarded."""

    def stopped(self, id: int, reason: str, at: float) -> None:
        """The copy of the body stopped (an encoding it cannot undo, a cap): why."""

    def ended(self, id: int, how: str, error: str | None, at: float) -> None: ...

    # a WebSocket connection (ws_relay.py): its handshake, each message, its close
    def ws_opened(self, id: int, path: str, url: str, headers: list[tuple[str, str]],
                  started: float, t0: float, unscrubbed: list[str]) -> None: ...

    def ws_handshake(self, id: int, status: int, headers: list[tuple[str, str]],
                     at: float) -> None: ...

    def ws_message(self, id: int, sender: str, data: str | bytes, at: float) -> None: ...

    def ws_refused(self, id: int, sender: str, size: int, reason: str, at: float) -> None: ...

    def ws_close(self, id: int, code: int, reason: str, sender: str, at: float) -> None: ...


def _model(body: bytes) -> str | None:
    if not body.lstrip().startswith(b"{"):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    model = value.get("model") if isinstance(value, dict) else None
    return model if isinstance(model, str) else None


@dataclass
class _Exchange:
    flow: Flow
    recording: LiveRecording | None
    tee: BodyTee | None = None


class StoreSink:
    """Facts in, flows out: every change under the store's lock, then announced."""

    def __init__(
        self, store: FlowStore, record_dir: Path | None = None, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        self.store = store
        self.record_dir = record_dir
        self.limits = limits
        self._open: dict[int, _Exchange] = {}
        #: WebSocket connections: flows per response (ws_flows.py)
        self.ws = WSConnections(store, record_dir)

    def ws_opened(self, id: int, path: str, url: str, headers: list[tuple[str, str]],
                  started: float, t0: float, unscrubbed: list[str]) -> None:
        self.ws.opened(id, path, url, headers, started, t0, unscrubbed)

    def ws_handshake(self, id: int, status: int, headers: list[tuple[str, str]],
                     at: float) -> None:
        self.ws.handshake(id, status, headers, at)

    def ws_message(self, id: int, sender: str, data: str | bytes, at: float) -> None:
        self.ws.message(id, sender, data, at)

    def ws_refused(self, id: int, sender: str, size: int, reason: str, at: float) -> None:
        self.ws.refused(id, sender, size, reason, at)

    def ws_close(self, id: int, code: int, reason: str, sender: str, at: float) -> None:
        self.ws.close(id, code, reason, sender, at)

    def opened(self, x: Opened) -> None:
        flow = self.store.new_flow(
            method=x.method,
            path=redact_url(x.path),
            url=redact_url(x.url),
            request_headers=redact_headers(x.headers),
            request_body=x.body,
            format=decoded_format(x.path),
            model=_model(x.body),
            started=x.started,
            t0=x.t0,
            secrets=x.secrets,
        )
        for where in x.unscrubbed:
            flow.notes.append(
                f"{where} carried a value too short to scrub safely: redacted by name only"
            )
        recording = None
        if self.record_dir is not None:
            try:
                with self.store.lock:
                    recording = LiveRecording(flow, self.record_dir)
            except OSError as exc:
                flow.notes.append(f"could not record: {exc}")
        self._open[x.id] = _Exchange(flow, recording)

    def response(self, id: int, status: int, headers: list[tuple[str, str]], at: float) -> None:
        ex = self._open.get(id)
        if ex is None:
            return
        flow = ex.flow
        with self.store.lock:
            flow.status = status
            flow.response_headers = redact_headers(headers)
            flow.response_t = at - flow.t0
            flow.state = FlowState.STREAMING
            if ex.recording is not None:
                ex.recording.response()
            ex.tee = BodyTee(flow, self.limits)
        self.store.changed(flow, "response")

    def body(self, id: int, data: bytes, received: int, at: float) -> None:
        ex = self._open.get(id)
        if ex is None or ex.tee is None:
            return
        with self.store.lock:
            ex.tee.feed(data, at - ex.flow.t0, received)
        self.store.changed(ex.flow, "body")

    def stopped(self, id: int, reason: str, at: float) -> None:
        ex = self._open.get(id)
        if ex is None or ex.tee is None:
            return
        with self.store.lock:
            ex.tee.stop(reason, at - ex.flow.t0)
        self.store.changed(ex.flow, "body")

    def ended(self, id: int, how: str, error: str | None, at: float) -> None:
        if self.ws.ended(id, how, error, at):
            return
        ex = self._open.pop(id, None)
        if ex is None:
            return  # ended already: the first word on how is the one kept
        flow = ex.flow
        with self.store.lock:
            if ex.tee is not None:
                ex.tee.close(at - flow.t0)
            state = ENDINGS.get(how, FlowState.FAILED)
            stream = flow.stream
            if (
                how == "client-gone"
                and stream is not None
                and stream.end
                in (
                    "done",
                    "terminal-event",
                )
            ):
                # SDKs close the connection as soon as they read [DONE] or the
                # final event, often before the upstream's last empty chunk
                flow.notes.append("the client closed the connection after the end event")
                state, error = FlowState.DONE, None
            elif how == "client-gone" and error is None:
                error = "the client disconnected"
            flow.state = state
            flow.error = error
            flow.ended = at
            if stream is not None:
                stream.ended_at = round(flow.elapsed(), 6)  # as its recording's end line
                if not stream.closed:
                    stream.close()
            if ex.recording is not None:
                ex.recording.finish()
        self.store.changed(flow, "end")

    def abandon_all(self, at: float) -> None:
        """The forwarding side is gone: whatever is still open ends here."""
        for id in [*self._open, *self.ws.open_ids()]:
            self.ended(id, "proxy-error", "the forwarding process stopped", at)
