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
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from ..framing.events import RawEvent
from ..framing.recording import WEBSOCKET, Frame, RecordingWriter
from ..framing.websocket import close_event, frame_event
from ..reading.stream import Stream
from ..report.cost import PriceOptions, cost_of, warm
from ..report.identity import streamed_identity
from ..report.usage import Tokens, Usage, read_usage
from .limits import DEFAULT_LIMITS, Limits
from .live import DEFAULT_TIMEOUT, LiveStatus, Phase, _one_line, _provider_message
from .request import RequestSpec

__all__ = ["WSLiveCall"]

#: the close code for "message too big" (RFC 6455, 7.4.1)
TOO_BIG = 1009


class _Failure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class WSLiveCall:
    """Send ``spec.body`` as one message on a new connection; feed every message
    into ``stream`` as it arrives."""

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
        self.spec = spec
        self.stream = stream if stream is not None else self.new_stream(spec)
        self.on_event = on_event
        self.on_status = on_status
        self.on_chunk = on_chunk
        self.record = record
        self.timeout = timeout
        self.prices = prices
        self.limits = limits
        self._now: dict[str, Any] = {"phase": Phase.CONNECTING, "reads": 0}
        self._bytes = 0
        self._usage_seen = 0
        self._t0 = 0.0
        self._t_end = 0.0
        self._task: asyncio.Task[Any] | None = None
        self._cancelled = False
        self._writer: RecordingWriter | None = None
        self._closed = False

    @staticmethod
    def new_stream(spec: RequestSpec) -> Stream:
        return Stream(format=spec.format, framing="websocket")

    def again(self, record: str | Path | None = None) -> WSLiveCall:
        return WSLiveCall(self.spec, on_event=self.on_event, on_status=self.on_status,
                          on_chunk=self.on_chunk, record=record, timeout=self.timeout,
                          prices=self.prices, limits=self.limits)

    def cancel(self) -> None:
        self._cancelled = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @property
    def status(self) -> LiveStatus:
        return LiveStatus(elapsed=self.elapsed, events=len(self.stream.events),
                          bytes=self._bytes, **self._now)

    @property
    def elapsed(self) -> float:
        if not self._t0:
            return 0.0
        return (self._t_end or time.monotonic()) - self._t0

    @property
    def model(self) -> str | None:
        """The model asked for: in the message (Responses), else in the URL (Realtime)."""
        model = self.spec.body.get("model")
        if isinstance(model, str) and model:
            return model
        found = dict(parse_qsl(urlsplit(self.spec.url).query)).get("model")
        return found or None

    def _price(self, used: Usage | None) -> None:
        """The cost the report will give, kept current as usage arrives."""
        model = streamed_identity(self.stream.events).model or self.model
        found, _ = cost_of(used, model, self.stream.format, self.prices or PriceOptions())
        self._now["cost"] = found["total"] if found else None
        self._now["currency"] = found["currency"] if found else None

    # -- running ----------------------------------------------------------------------
    async def run(self) -> LiveStatus:
        """Make the call; returns the final status (never raises for network trouble)."""
        self._task = asyncio.current_task()
        # the price table loads now, not when the usage comes mid-stream
        warm(self.model, self.spec.format, self.prices or PriceOptions())
        self._t0 = time.monotonic()
        fp, owned = self._open_record()
        if fp is not None:
            self._writer = RecordingWriter(fp)
            # the handshake has no body: the message sent is the first frame recorded
            handshake = {k: v for k, v in self.spec.for_record().items() if k != "body"}
            self._writer.start(handshake, format=self.spec.format, transport=WEBSOCKET)
        self._set(Phase.CONNECTING)
        try:
            if self._cancelled:
                raise asyncio.CancelledError
            await self._exchange()
            self._finish(Phase.DONE, None, "eof")
        except asyncio.CancelledError:
            self._finish(Phase.CANCELLED, "cancelled: what arrived is kept", "cancelled")
            if not self._cancelled:
                raise
            task = self._task
            if task is not None and hasattr(task, "uncancel"):
                task.uncancel()
        except _Failure as exc:
            self._finish(Phase.FAILED, str(exc), "error", exc.kind)
        except InvalidStatus as exc:
            response = exc.response
            said = _provider_message(bytes(response.body or b""))
            head = f"the server refused the WebSocket handshake: HTTP {response.status_code}"
            self._finish(Phase.FAILED, f"{head}: {said}" if said else head, "error",
                         "http-status")
        except (InvalidHandshake, InvalidURI) as exc:
            self._finish(Phase.FAILED, f"{self._where()} did not complete a WebSocket "
                         f"handshake: {exc}", "error", "protocol")
        except TimeoutError:
            self._finish(Phase.FAILED, f"timed out connecting to {self._where()}", "error",
                         "connect-timeout")
        except OSError as exc:
            refused = isinstance(exc, ConnectionRefusedError)
            message = (f"connection refused by {self._where()}: is the server running?"
                       if refused else f"cannot connect to {self._where()}: {exc}")
            self._finish(Phase.FAILED, message, "error", "connect")
        finally:
            if owned and fp is not None:
                fp.close()
        return self.status

    def _where(self) -> str:
        parts = urlsplit(self.spec.url)
        return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'wss' else 80)}"

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
                where = self._where()
                raise _Failure("read-timeout", f"the connection to {where} went silent after "
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
            raise _Failure("too-long", f"the server sent a {said} message, over --max-line-bytes "
                           f"({limit}): the connection was closed with {TOO_BIG}; what came "
                           "before is in the recording")
        code = rcvd.code if rcvd is not None else 1006
        reason = rcvd.reason if rcvd is not None else ""
        self._record_close(code, reason, "server")
        said = f" ({reason})" if reason else ""
        raise _Failure("cut-off", f"the server closed the connection with code {code}{said} "
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
        if "first_event" not in self._now and ev.kind == "data":
            self._now["first_event"] = self.elapsed
        self.stream.feed(ev)
        if self.on_event is not None:
            self.on_event(ev)
        usage = self.stream.reassembler.usage
        if len(usage) != self._usage_seen:
            self._usage_seen = len(usage)
            used = read_usage(usage[-1][1])
            self._now["tokens"] = None if used is None else Tokens(used.input, used.output)
            self._price(used)

    def _finish(self, phase: Phase, message: str | None, end: str, kind: str | None = None) -> None:
        self.stream.close()
        if phase is Phase.DONE:
            message = None
        elif message is not None:
            message = _one_line(self.spec.safe(message))
        t = self.elapsed
        self.stream.ended_at = round(t, 6)
        self._t_end = time.monotonic()
        if self._writer is not None:
            self._writer.end(end, error=message if phase is Phase.FAILED else None, t=t)
        self._set(phase, message=message, error_kind=kind)

    def _set(self, phase: Phase, **changes: Any) -> None:
        self._now["phase"] = phase
        self._now.update(changes)
        if self.on_status is not None:
            self.on_status(self.status)

    def _open_record(self) -> tuple[IO[bytes] | None, bool]:
        if self.record is None:
            return None, False
        if isinstance(self.record, (str, Path)):
            return open(self.record, "wb"), True  # noqa: SIM115 - closed in run()
        return self.record, False
