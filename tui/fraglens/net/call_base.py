"""What a live call is whatever carries it: its status, its price, its recording, its end.

:class:`~.live.LiveCall` (HTTP) and :class:`~.ws_live.WSLiveCall` (WebSocket)
read different transports but show the same face to ``fraglens live``, its
app and ``compare``: frozen :class:`LiveStatus` snapshots, a cost kept
current as usage arrives, a recording opened before the clock starts and
ended with how the call ended, and a one-line reason that never holds a
credential. :class:`CallBase` holds that part once; a transport's class
supplies the exchange itself and the few places where the two differ (what
its recording starts with, how its body ends, which errors its library
raises and how they read).
"""

from __future__ import annotations

import asyncio
import enum
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar
from urllib.parse import urlsplit

from ..engine.plural import counted
from ..framing.events import RawEvent
from ..framing.recording import RecordingWriter
from ..reading.stream import Stream
from ..redact import Fingerprints
from ..report.cost import PriceOptions, cost_of, warm
from ..report.identity import streamed_identity
from ..report.usage import Tokens, Usage, read_usage
from .limits import Limits
from .request import RequestSpec

__all__ = ["CallBase", "Failure", "LiveStatus", "Phase", "address", "one_line",
           "provider_message", "size_text"]

#: an error body longer than this is cut in the one-line message (the recording keeps it)
_MESSAGE_CHARS = 300


class Phase(str, enum.Enum):
    CONNECTING = "connecting"  # resolving, connecting, TLS, sending the request
    WAITING = "waiting"  # the request is sent; waiting for the first byte of the answer
    STREAMING = "streaming"  # the status line came; the body is being read
    DONE = "done"  # the body ended normally (the report says if the stream was whole)
    FAILED = "failed"  # transport error, HTTP error, cut-off body, not a stream: see message
    CANCELLED = "cancelled"  # cancel() was called; what arrived is kept

    @property
    def finished(self) -> bool:
        return self in (Phase.DONE, Phase.FAILED, Phase.CANCELLED)


@dataclass(frozen=True)
class LiveStatus:
    """A snapshot of one call, for a status bar. Times are seconds since the request."""

    phase: Phase
    elapsed: float = 0.0
    events: int = 0
    bytes: int = 0
    reads: int = 0
    http_status: int | None = None
    #: when the status line and headers came
    first_byte: float | None = None
    #: when the first event was complete
    first_event: float | None = None
    tokens: Tokens | None = None
    #: the report's cost total, once usage is known and the model has a price
    cost: float | None = None
    currency: str | None = None
    #: FAILED: the one-line reason; CANCELLED: what was cancelled
    message: str | None = None
    #: FAILED: connect, dns, tls, connect-timeout, read-timeout, http-status, cut-off,
    #: not-a-stream, protocol, too-long (a line or event past the cap), decoding (the
    #: body's encoding, or its decoded size past the cap), other
    error_kind: str | None = None

    @property
    def rate(self) -> float | None:
        """Events per second since the first event."""
        if self.first_event is None or self.events < 2:
            return None
        span = self.elapsed - self.first_event
        return (self.events - 1) / span if span > 0 else None

    def line(self, message: bool = True) -> str:
        """One line for a status bar or stderr; ``message=False`` leaves out the reason."""
        bits = [self.phase.value]
        if self.http_status is not None:
            bits.append(f"HTTP {self.http_status}")
        if self.events or self.phase is Phase.STREAMING:
            bits.append(f"{counted(self.events, 'event')}, {size_text(self.bytes)}")
        rate = self.rate
        if rate is not None and self.phase is Phase.STREAMING:
            bits.append(f"{rate:,.0f} ev/s")
        if self.first_event is not None:
            bits.append(f"first event {self.first_event:.2f}s")
        bits.append(f"{self.elapsed:.2f}s")
        if self.tokens is not None:
            bits.append(f"tokens {self.tokens}")
        if self.cost is not None:
            bits.append(f"cost {self.cost:.6f} {self.currency or ''}".rstrip())
        text = " · ".join(bits)
        return f"{text} — {self.message}" if self.message and message else text


def size_text(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def address(url: str) -> str:
    """``host:port`` of ``url``, the port its scheme implies when it names none."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
    return f"{parts.hostname or '?'}:{port}"


def one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


def provider_message(body: bytes) -> str:
    """What the provider said in an error body: error.message, message, detail, or the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        return one_line(text)
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict):
            for key in ("message", "type", "code"):
                if isinstance(err.get(key), str):
                    return one_line(err[key])
        if isinstance(err, str):
            return one_line(err)
        for key in ("message", "detail"):
            if isinstance(doc.get(key), str):
                return one_line(doc[key])
    return one_line(text)


class Failure(Exception):
    """The call cannot go on: ``kind`` is the status's ``error_kind``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class CallBase:
    """One request sent once, its answer fed into ``stream`` as it arrives.

    ``on_event(ev)`` is called after ``ev`` was fed to ``stream``; ``on_status(s)``
    on every phase change and after every network read; ``on_chunk(t, data)``
    per network read. Callbacks run in the event loop running :meth:`run` and
    must not block; repainting at the screen's pace is the caller's business.
    """

    #: what the transport's library raises for network trouble, read by :meth:`_describe`
    NETWORK_ERRORS: ClassVar[tuple[type[BaseException], ...]] = (OSError,)

    def __init__(
        self,
        spec: RequestSpec,
        *,
        stream: Stream | None,
        on_event: Callable[[RawEvent], None] | None,
        on_status: Callable[[LiveStatus], None] | None,
        on_chunk: Callable[[float, bytes], None] | None,
        record: str | Path | IO[bytes] | None,
        timeout: float,
        prices: PriceOptions | None,
        limits: Limits,
    ) -> None:
        self.spec = spec
        self.stream = stream if stream is not None else self.new_stream(spec)
        # the report joins what the reads split: a key in two pieces is whole there
        self.stream.secrets = spec.secrets
        self.on_event = on_event
        self.on_status = on_status
        self.on_chunk = on_chunk
        self.record = record
        self.timeout = timeout
        self.prices = prices
        self.limits = limits
        # the status, kept as plain fields: it changes on every read, and a
        # frozen snapshot is only built when someone looks (``status``)
        self._now: dict[str, Any] = {"phase": Phase.CONNECTING, "reads": 0}
        self._usage_seen = 0
        self._t0 = 0.0
        self._t_end = 0.0
        self._task: asyncio.Task[Any] | None = None
        self._cancelled = False
        self._writer: RecordingWriter | None = None
        #: the fingerprints of the credentials sent, for the recording's header
        self._prints: Fingerprints | None = None

    @staticmethod
    def new_stream(spec: RequestSpec) -> Stream:
        """The Stream a call on ``spec`` feeds: read as its recording will be read."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Stop the call in flight; what arrived stays. Call from the loop's thread."""
        self._cancelled = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @property
    def status(self) -> LiveStatus:
        """A snapshot of the call now."""
        return LiveStatus(
            elapsed=self.elapsed, events=len(self.stream.events), bytes=self.received, **self._now
        )

    @property
    def received(self) -> int:
        """The bytes of the answer kept so far."""
        raise NotImplementedError

    @property
    def elapsed(self) -> float:
        if not self._t0:
            return 0.0
        return (self._t_end or time.monotonic()) - self._t0

    @property
    def model(self) -> str | None:
        """The model the request's body names."""
        model = self.spec.body.get("model")
        return model if isinstance(model, str) and model else None

    # -- running ----------------------------------------------------------------------
    async def run(self) -> LiveStatus:
        """Make the call; returns the final status (never raises for network trouble)."""
        self._task = asyncio.current_task()
        self._prepare()
        if self.record is not None and self.spec.secrets:
            # a few scrypt hashes, before the clock starts: no part of the call's timing
            self._prints = self.spec.fingerprints
        # the price table loads now, not when the usage comes mid-stream
        warm(self.model, self.spec.format, self.prices or PriceOptions())
        self._t0 = time.monotonic()
        fp, owned = self._open_record()
        if fp is not None:
            self._writer = RecordingWriter(fp)
            self._start_recording(self._writer)
        self._set(Phase.CONNECTING)
        try:
            if self._cancelled:
                raise asyncio.CancelledError
            await self._exchange()
            self._finish(Phase.DONE, None, "eof")
        except asyncio.CancelledError:
            self._finish(Phase.CANCELLED, "cancelled: what arrived is kept", "cancelled")
            if not self._cancelled:
                raise  # cancelled from outside (the app's worker): let it propagate
            task = self._task
            if task is not None and hasattr(task, "uncancel"):
                task.uncancel()  # our own cancel() was handled here
        except Failure as exc:
            self._finish(Phase.FAILED, str(exc), "error", exc.kind)
        except self.NETWORK_ERRORS as exc:
            kind, message = self._describe(exc)
            self._finish(Phase.FAILED, message, "error", kind)
        finally:
            if owned and fp is not None:
                fp.close()
        return self.status

    def _prepare(self) -> None:
        """What is done before the clock starts."""

    def _start_recording(self, writer: RecordingWriter) -> None:
        raise NotImplementedError

    async def _exchange(self) -> None:
        raise NotImplementedError

    def _describe(self, exc: BaseException) -> tuple[str, str]:
        """(error kind, one-line message) for one of ``NETWORK_ERRORS``."""
        raise NotImplementedError

    def _end_body(self) -> None:
        """The answer's last events, fed before the stream closes."""

    def _ended_at(self) -> float:
        """The time the recording's end line holds, once the stream is closed."""
        return self.elapsed

    # -- what arrived -----------------------------------------------------------------
    def _first_event(self) -> None:
        if "first_event" not in self._now:
            self._now["first_event"] = self.elapsed

    def _deliver(self, events: Iterable[RawEvent]) -> None:
        """Feed ``events`` to the stream and ``on_event``, then keep usage and cost current."""
        feed, on_event = self.stream.feed, self.on_event
        for ev in events:
            feed(ev)
            if on_event is not None:
                on_event(ev)
        usage = self.stream.reassembler.usage
        if len(usage) != self._usage_seen:
            self._usage_seen = len(usage)
            used = read_usage(usage[-1][1])
            self._now["tokens"] = None if used is None else Tokens(used.input, used.output)
            self._price(used)

    def _price(self, used: Usage | None) -> None:
        """The cost the report will give, kept current as usage arrives."""
        model = streamed_identity(self.stream.events).model or self.model
        found, _ = cost_of(used, model, self.stream.format, self.prices or PriceOptions())
        self._now["cost"] = found["total"] if found else None
        self._now["currency"] = found["currency"] if found else None

    # -- the end ----------------------------------------------------------------------
    def _finish(self, phase: Phase, message: str | None, end: str, kind: str | None = None) -> None:
        self._end_body()
        self.stream.close()
        if phase is Phase.DONE:
            message = None
        elif message is not None:
            message = one_line(self.spec.safe(message))
        t = self._ended_at()
        self.stream.ended_at = round(t, 6)  # as the end line holds it
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
