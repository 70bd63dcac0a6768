"""One live WebSocket-mode response: connect, send ``response.create``, read it, record it.

:class:`WSLiveCall` is :class:`~.live.LiveCall` for a ``ws://`` or ``wss://``
URL, with the same face (``stream``, ``status``, ``run``, ``cancel``,
``again``, the callbacks), so that ``fraglens live`` and its app show it the
same way. The ``websockets`` package speaks the protocol (handshake, masking,
permessage-deflate, ping, close). Each message is scrubbed of every
credential the handshake sent, written to the recording (a WebSocket
recording, ``framing/recording.py`` version 2) and only then fed to the
stream, as one event. The call ends when the response ends (its terminal
event): then the client closes the connection with 1000, as an SDK does
between turns.

What can go wrong ends the call with a one-line reason, everything that
arrived kept: a refused handshake (its HTTP status and the provider's
message), a read that times out, the server closing mid-response (the close
code and reason: that response is ``aborted``), a message over
``--max-line-bytes`` (refused: the client closes with 1009, "message too
big", and the recording says how big).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import IO
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from ..framing.events import RawEvent
from ..framing.recording import WEBSOCKET, Frame, RecordingWriter
from ..framing.websocket import close_event, frame_event
from ..reading.stream import Stream
from ..report.cost import PriceOptions
from .call_base import CallBase, Failure, LiveStatus, Phase, address, provider_message
from .limits import DEFAULT_LIMITS, Limits
from .request import DEFAULT_TIMEOUT, RequestSpec

__all__ = ["WSLiveCall"]

#: the close code for "message too big" (RFC 6455, 7.4.1)
TOO_BIG = 1009


class WSLiveCall(CallBase):
    """Send ``spec.body`` as one message on a new connection; feed every message
    into ``stream`` as it arrives."""

    NETWORK_ERRORS = (InvalidHandshake, InvalidURI, OSError)

    def __init__(
        self,
        spec: RequestSpec,
        *,
        stream: Stream | None = None,
        on_event: Callable[[RawEvent], None] | None = None,
        on_status: Callable[[LiveStatus], None] | None = None,
        on_chunk: Callable[[float, bytes], None] | None = None,
        record: str | Path | IO[bytes] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        prices: PriceOptions | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        super().__init__(spec, stream=stream, on_event=on_event, on_status=on_status,
                         on_chunk=on_chunk, record=record, timeout=timeout, prices=prices,
                         limits=limits)
        self._bytes = 0
        self._closed = False

    @staticmethod
    def new_stream(spec: RequestSpec) -> Stream:
        return Stream(format=spec.format, framing="websocket")

    def again(self, record: str | Path | None = None) -> WSLiveCall:
        return WSLiveCall(self.spec, on_event=self.on_event, on_status=self.on_status,
                          on_chunk=self.on_chunk, record=record, timeout=self.timeout,
                          prices=self.prices, limits=self.limits)

    @property
    def received(self) -> int:
        return self._bytes

    @property
    def model(self) -> str | None:
        """The model asked for: in the message (Responses), else in the URL (Realtime)."""
        model = super().model
        if model is not None:
            return model
        found = dict(parse_qsl(urlsplit(self.spec.url).query)).get("model")
        return found or None

    # -- running ----------------------------------------------------------------------
    def _start_recording(self, writer: RecordingWriter) -> None:
        # the handshake has no body: the message sent is the first frame recorded
        handshake = {k: v for k, v in self.spec.for_record().items() if k != "body"}
        writer.start(handshake, format=self.spec.format, secrets=self._prints,
                     transport=WEBSOCKET)

    def _describe(self, exc: BaseException) -> tuple[str, str]:
        where = address(self.spec.url)
        if isinstance(exc, InvalidStatus):
            response = exc.response
            said = provider_message(bytes(response.body or b""))
            head = f"the server refused the WebSocket handshake: HTTP {response.status_code}"
            return "http-status", f"{head}: {said}" if said else head
        if isinstance(exc, (InvalidHandshake, InvalidURI)):
            return "protocol", f"{where} did not complete a WebSocket handshake: {exc}"
        if isinstance(exc, TimeoutError):
            return "connect-timeout", f"timed out connecting to {where}"
        if isinstance(exc, ConnectionRefusedError):
            return "connect", f"connection refused by {where}: is the server running?"
        return "connect", f"cannot connect to {where}: {exc}"

    async def _exchange(self) -> None:
        spec = self.spec
        async with connect(
            spec.url,
            additional_headers=list(spec.headers),
            # the largest message read: past it, the client closes with 1009
            max_size=self.limits.max_line,
            open_timeout=self.timeout,
            # a loopback server (fraglens serve) never goes through a proxy
            proxy=None,
        ) as ws:
            self._handshake(ws)
            self._set(Phase.WAITING)
            text = spec.content.decode("utf-8")
            await ws.send(text)
            self._message("client", spec.safe(text))
            await self._read(ws)

    def _handshake(self, ws: ClientConnection) -> None:
        response = ws.response
        t = self.elapsed
        if self._writer is not None and response is not None:
            safe = self.spec.safe
            headers = [(name, safe(value)) for name, value in response.headers.raw_items()]
            self._writer.response(response.status_code, headers, t=t)
        self._set(Phase.STREAMING, http_status=101, first_byte=t)

    async def _read(self, ws: ClientConnection) -> None:
        log = self.stream.ws
        assert log is not None
        while True:
            try:
                message = await asyncio.wait_for(ws.recv(), self.timeout)
            except asyncio.TimeoutError:
                where = address(self.spec.url)
                raise Failure("read-timeout", f"the connection to {where} went silent after "
                               f"{len(self.stream.events)} events: read timed out") from None
            except ConnectionClosed as exc:
                self._closed_by(exc)
                raise  # unreachable: _closed_by raises
            if isinstance(message, str):
                self._message("server", self.spec.safe(message))
            else:
                self._message("server", self.spec.secrets.scrub(message))
            if log.responses and log.responses[-1].status is not None:
                # the response is over: close as an SDK closes between turns
                await ws.close(1000)
                self._record_close(1000, "", "client")
                return

    def _closed_by(self, exc: ConnectionClosed) -> None:
        """The connection closed before the response ended: say who closed it and how."""
        sent, rcvd = exc.sent, exc.rcvd
        if sent is not None and sent.code == TOO_BIG:
            cause = exc.__cause__
            size = getattr(cause, "size", None) or getattr(cause, "current_size", None)
            limit = self.limits.max_line
            reason = f"a message over --max-line-bytes ({limit} bytes): not read"
            said = f"{size}-byte" if isinstance(size, int) else f"over-{limit}-byte"
            t = self._now_t()
            if self._writer is not None:
                self._writer.refused(t, "server", size if isinstance(size, int)
                                     else limit + 1, reason)
            self._feed(frame_event(len(self.stream.events), Frame(
                t, "server", refused=size if isinstance(size, int) else limit + 1,
                reason=reason)))
            self._record_close(TOO_BIG, sent.reason, "client")
            raise Failure("too-long", f"the server sent a {said} message, over --max-line-bytes "
                           f"({limit}): the connection was closed with {TOO_BIG}; what came "
                           "before is in the recording")
        code = rcvd.code if rcvd is not None else 1006
        reason = rcvd.reason if rcvd is not None else ""
        self._record_close(code, reason, "server")
        said = f" ({reason})" if reason else ""
        raise Failure("cut-off", f"the server closed the connection with code {code}{said} "
                       f"before the response ended, after {len(self.stream.events)} events")

    # -- what arrived -----------------------------------------------------------------
    def _now_t(self) -> float:
        """Now, as the recording writes it: the stream's events carry the same
        times as the recording's, so its report and check's are the same."""
        return round(self.elapsed, 6)

    def _message(self, sender: str, data: str | bytes) -> None:
        t = self._now_t()
        if self._writer is not None:
            self._writer.frame(t, sender, data)
        size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
        self._bytes += size
        frame = Frame(t, sender, text=data) if isinstance(data, str) else Frame(t, sender,
                                                                                 data=data)
        if self.on_chunk is not None and sender == "server":
            self.on_chunk(t, data.encode("utf-8") if isinstance(data, str) else data)
        self._now["reads"] += 1
        self._feed(frame_event(len(self.stream.events), frame))
        self._set(Phase.STREAMING)

    def _record_close(self, code: int, reason: str, sender: str) -> None:
        if self._closed:
            return
        self._closed = True
        t = self._now_t()
        reason = self.spec.safe(reason)
        if self._writer is not None:
            self._writer.close(t, code, reason, sender)
        self._feed(close_event(len(self.stream.events),
                               {"code": code, "reason": reason, "from": sender}, t))

    def _feed(self, ev: RawEvent) -> None:
        if ev.kind == "data":
            self._first_event()
        self._deliver((ev,))
