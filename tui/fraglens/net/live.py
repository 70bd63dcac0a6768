"""One live request: send it, read the stream as it arrives, record it, say how it went.

:class:`LiveCall` is the async worker behind ``fraglens live`` and the app's
live mode. It feeds every event into ``call.stream`` (a :class:`fraglens.reading.stream.Stream`)
the moment the event is complete, writes each network read to the recording
(flushed per line) before anything else looks at it, and reports progress
as frozen :class:`LiveStatus` values. Whatever happens — a refused connection,
a timeout, an HTTP error, a body cut off mid-event, ``cancel()`` — the call
ends with everything that arrived in the stream and in the recording, and a
one-line message that never contains the API key.

httpx does the HTTP; httpx-sse's ``aconnect_sse`` opens the stream (it sets the
SSE request headers). The events are decoded by fraglens' own decoder from the
raw reads, because ``aiter_sse`` drops comments and the reads' boundaries,
which are part of what the user is debugging.
"""

from __future__ import annotations

import asyncio
import enum
import json
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import httpx
from httpx_sse import aconnect_sse

from ..engine.plural import counted
from ..framing.events import RawEvent
from ..framing.recording import RecordingWriter
from ..reading.stream import Stream
from ..report.cost import PriceOptions, cost_of, warm
from ..report.identity import streamed_identity
from ..report.usage import Tokens, Usage, read_usage
from .body import LiveBody
from .decoded import DecodedCopy
from .limits import DEFAULT_LIMITS, Limits, mib
from .request import (
    DEFAULT_TIMEOUT,
    EVENTSTREAM_FORMATS,
    NDJSON_FORMATS,
    RequestSpec,
    is_loopback,
)

__all__ = ["DEFAULT_TIMEOUT", "LiveCall", "LiveStatus", "Phase", "describe_error"]

#: seconds to wait for a connection, and between two reads of the response
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
            bits.append(f"{counted(self.events, 'event')}, {_size(self.bytes)}")
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


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


class _Failure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class LiveCall:
    """Send ``spec`` once; feed the events into ``stream`` as they arrive.

    ``on_event(ev)`` is called after ``ev`` was fed to ``stream``; ``on_status(s)``
    on every phase change and after every network read; ``on_chunk(t, data)``
    per network read. Callbacks run in the event loop running :meth:`run` and
    must not block; repainting at the screen's pace is the caller's business.
    """

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
        transport: httpx.AsyncBaseTransport | None = None,
        limits: Limits = DEFAULT_LIMITS,
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
        self._transport = transport
        # the status, kept as plain fields: it changes on every read, and a
        # frozen snapshot is only built when someone looks (``status``)
        self._now: dict[str, Any] = {"phase": Phase.CONNECTING, "reads": 0}
        self._usage_seen = 0
        self.body = LiveBody(
            lines=spec.format in NDJSON_FORMATS,
            max_line=limits.max_line,
            binary=spec.format in EVENTSTREAM_FORMATS,
        )
        self._t0 = 0.0
        self._t_end = 0.0
        self._task: asyncio.Task[Any] | None = None
        self._cancelled = False
        #: the body as kept: decoded, capped, every credential sent scrubbed (once headers came)
        self._copy: DecodedCopy | None = None
        self._writer: RecordingWriter | None = None
        self._body_closed = False
        self._body_end = 0.0

    @staticmethod
    def new_stream(spec: RequestSpec) -> Stream:
        """The Stream a call on ``spec`` feeds: read as its recording will be read."""
        return Stream(format=spec.format, framing="recording", sse_body=True)

    def again(self, record: str | Path | None = None) -> LiveCall:
        """A fresh call with the same request and options (for "send again");
        a signed request is signed anew when it runs."""
        return LiveCall(
            self.spec,
            on_event=self.on_event,
            on_status=self.on_status,
            on_chunk=self.on_chunk,
            record=record,
            timeout=self.timeout,
            prices=self.prices,
            transport=self._transport,
            limits=self.limits,
        )

    def cancel(self) -> None:
        """Stop the call in flight; what arrived stays. Call from the loop's thread."""
        self._cancelled = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @property
    def status(self) -> LiveStatus:
        """A snapshot of the call now."""
        now = self._now
        events = len(self.stream.events)
        return LiveStatus(
            elapsed=self.elapsed,
            events=events,
            bytes=self.body.size,
            **now,
        )

    @property
    def elapsed(self) -> float:
        if not self._t0:
            return 0.0
        return (self._t_end or time.monotonic()) - self._t0

    @property
    def model(self) -> str | None:
        """The model the request names (a Bedrock request names it in its URL)."""
        model = self.spec.body.get("model")
        return model if isinstance(model, str) and model else None

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
        if self.spec.resign is not None:
            # signed as it starts: AWS refuses a signature minutes old, and a call
            # may wait that long for its turn (compare runs a few at a time)
            self.spec = self.spec.resign()
            self.stream.secrets = self.spec.secrets
        prints = None
        if self.record is not None and self.spec.secrets:
            # a few scrypt hashes, before the clock starts: no part of the call's timing
            prints = self.spec.fingerprints
        # the price table loads now, not when the usage comes mid-stream
        warm(self.model, self.spec.format, self.prices or PriceOptions())
        self._t0 = time.monotonic()
        fp, owned = self._open_record()
        writer = RecordingWriter(fp) if fp is not None else None
        if writer is not None:
            writer.start(self.spec.for_record(), format=self.spec.format, secrets=prints)
        self._writer = writer
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
        except _Failure as exc:
            self._finish(Phase.FAILED, str(exc), "error", exc.kind)
        except httpx.HTTPError as exc:
            self._emit_close()  # the message counts every event that arrived
            kind, message = describe_error(exc, self.spec.url, self.status)
            self._finish(Phase.FAILED, message, "error", kind)
        except OSError as exc:  # a socket error httpx did not wrap
            self._finish(Phase.FAILED, f"network error: {exc}", "error", "other")
        finally:
            if owned and fp is not None:
                fp.close()
        return self.status

    async def _exchange(self) -> None:
        spec = self.spec
        host = urlsplit(spec.url).hostname or ""
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            # a loopback server (fraglens serve, a local model) never goes through a proxy
            trust_env=not is_loopback(host),
            transport=self._transport,
        )
        request: dict[str, Any] = {
            "headers": dict(spec.headers),
            "content": spec.content,
            "extensions": {"trace": self._trace},
        }
        async with client:
            if spec.format in EVENTSTREAM_FORMATS:
                # signed: the headers go as they were signed (aconnect_sse would
                # change Accept), and the answer is no SSE anyway
                async with client.stream(spec.method, spec.url, **request) as response:
                    await self._read(response)
            else:
                async with aconnect_sse(client, spec.method, spec.url, **request) as source:
                    response = source.response
                    await self._read(response)
        self._on_eof(response)

    async def _read(self, response: httpx.Response) -> None:
        self._on_response(response)
        try:
            # raw: the decoding is DecodedCopy's, capped (httpx's is not)
            async for data in response.aiter_raw():
                self._on_read(data)
        except httpx.RemoteProtocolError as exc:
            self._emit_close()
            raise _Failure(
                "cut-off",
                f"the server closed the connection mid-stream after "
                f"{counted(self.status.events, 'event')} ({_size(self.body.size)}): {exc}",
            ) from None

    async def _trace(self, name: str, info: dict[str, Any]) -> None:
        if name.endswith("send_request_body.complete"):
            self._set(Phase.WAITING)

    def _on_response(self, response: httpx.Response) -> None:
        t = self.elapsed
        if self._writer is not None:
            # by name (redact_headers, in the writer) and by value: a server may echo the key
            safe = self.spec.safe
            headers = [(name, safe(value)) for name, value in response.headers.multi_items()]
            self._writer.response(response.status_code, headers, t=t)
        encoding = response.headers.get("content-encoding")
        self._copy = DecodedCopy(encoding, self.spec.secrets, self.limits.max_decoded)
        self._set(Phase.STREAMING, http_status=response.status_code, first_byte=t)

    def _on_read(self, data: bytes) -> None:
        t = self.elapsed
        copy = self._copy
        assert copy is not None  # the headers came before the body
        kept = copy.feed(data)
        room = self.limits.max_stream - self.body.size
        self._take(t, kept[:room] if len(kept) > room else kept)
        ended = "the call was ended there; what was read is in the recording"
        if len(kept) > room:
            raise _Failure(
                "too-long",
                f"the body ran past {mib(self.limits.max_stream)} (--max-stream-bytes): {ended}",
            )
        if copy.stopped is not None:
            raise _Failure("decoding", f"{copy.stopped}: {ended}")
        if self.body.overflow is not None:
            raise _Failure("too-long", f"{self.body.overflow}: {ended}")

    def _take(self, t: float, data: bytes) -> None:
        if not data:
            return
        if self._writer is not None:
            self._writer.chunk(t, data)
        if self.on_chunk is not None:
            self.on_chunk(t, data)
        self._emit(self.body.feed(t, data))
        self._now["reads"] += 1
        self._set(Phase.STREAMING)

    def _emit(self, events: list[RawEvent]) -> None:
        if not events:
            return
        if "first_event" not in self._now:
            self._now["first_event"] = self.elapsed
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

    def _on_eof(self, response: httpx.Response) -> None:
        """The body ended cleanly: was it the stream we asked for?"""
        self._emit_close()
        status = response.status_code
        if status >= 400:
            raise _Failure("http-status", self._http_message(response))
        if self.body.size == 0:
            raise _Failure("not-a-stream", f"HTTP {status} with an empty body")
        if not self.body.streamed:
            ctype = response.headers.get("content-type", "no content type")
            raise _Failure(
                "not-a-stream",
                f"HTTP {status} ({ctype}) is not an event stream: read as a single body",
            )

    def _emit_close(self) -> None:
        if self._body_closed:
            return
        self._body_closed = True
        tail = self._copy.close() if self._copy is not None else b""
        if tail:
            self._take(self.elapsed, tail)
        self._body_end = self.elapsed
        self._emit(self.body.close(self._body_end))

    def _http_message(self, response: httpx.Response) -> str:
        status = response.status_code
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        said = _provider_message(self.body.body)
        # AWS names the error in a header: ThrottlingException:http://internal...
        error_type = response.headers.get("x-amzn-errortype", "").partition(":")[0].strip()
        if error_type and error_type not in said:
            said = f"{error_type}: {said}" if said else error_type
        head = f"HTTP {status} {phrase}".rstrip()
        return f"{head}: {said}" if said else head

    def _finish(self, phase: Phase, message: str | None, end: str, kind: str | None = None) -> None:
        self._emit_close()
        # as check reads the recording: "no [DONE]" is news only for an SSE body
        self.stream.sse_body = self.body.framing == "sse"
        self.stream.close()
        if phase is Phase.DONE:
            message = None
        elif message is not None:
            message = _one_line(self.spec.safe(message))
        # the end line's time is when the body ended: a reader stamps the events
        # the close flushed with it, as this stream did
        t = self._body_end
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


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


def _provider_message(body: bytes) -> str:
    """What the provider said in an error body: error.message, message, detail, or the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        return _one_line(text)
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict):
            for key in ("message", "type", "code"):
                if isinstance(err.get(key), str):
                    return _one_line(err[key])
        if isinstance(err, str):
            return _one_line(err)
        for key in ("message", "detail"):
            if isinstance(doc.get(key), str):
                return _one_line(doc[key])
    return _one_line(text)


_DNS_HINTS = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "getaddrinfo failed",
    "no address associated",
    "name resolution",
)
_TLS_HINTS = ("ssl", "tls", "certificate", "handshake")


def describe_error(
    exc: BaseException, url: str, status: LiveStatus | None = None
) -> tuple[str, str]:
    """(kind, one-line message) for an httpx error, naming the host and what was going on."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    where = f"{host}:{port}"
    detail = str(exc) or type(exc).__name__
    chain = list(_causes(exc))
    lowered = " | ".join(str(e) for e in chain).lower()
    got = ""
    if status is not None and status.bytes:
        got = f" after {counted(status.events, 'event')} ({_size(status.bytes)})"
    if isinstance(exc, httpx.ConnectTimeout):
        return "connect-timeout", f"timed out connecting to {where}"
    if isinstance(exc, httpx.ReadTimeout):
        if status is not None and status.http_status is not None:
            return "read-timeout", f"the stream from {where} went silent{got}: read timed out"
        return "read-timeout", f"{where} accepted the request but sent no answer: read timed out"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout", f"timed out talking to {where}: {detail}"
    if isinstance(exc, httpx.ConnectError):
        root = str(chain[-1]) if chain else detail
        if any(isinstance(e, socket.gaierror) for e in chain) or any(
            hint in lowered for hint in _DNS_HINTS
        ):
            return "dns", f"cannot resolve host {host!r}: {root}"
        tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
        if tls is not None or any(hint in lowered for hint in _TLS_HINTS):
            return "tls", f"TLS handshake with {where} failed: {tls or root}"
        if any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in lowered:
            return "connect", f"connection refused by {where}: is the server running?"
        return "connect", f"cannot connect to {where}: {root}"
    if isinstance(exc, httpx.RemoteProtocolError):
        if status is not None and status.http_status is not None:
            return "cut-off", f"the server closed the connection mid-stream{got}: {detail}"
        return "protocol", f"{where} did not answer with HTTP: {detail}"
    if isinstance(exc, httpx.ReadError):
        return "cut-off", f"reading from {where} failed{got}: {detail}"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return "other", f"unsupported URL: {detail}"
    return "other", f"{type(exc).__name__} talking to {where}: {detail}"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
