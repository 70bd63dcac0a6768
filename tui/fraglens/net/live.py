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

import socket
import ssl
from collections.abc import Callable, Iterator
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
from ..report.cost import PriceOptions
from .body import LiveBody
from .call_base import CallBase, Failure, LiveStatus, Phase, address, provider_message, size_text
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


class LiveCall(CallBase):
    """Send ``spec`` once over HTTP; feed the events into ``stream`` as they arrive."""

    NETWORK_ERRORS = (httpx.HTTPError, OSError)

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
        super().__init__(spec, stream=stream, on_event=on_event, on_status=on_status,
                         on_chunk=on_chunk, record=record, timeout=timeout, prices=prices,
                         limits=limits)
        self._transport = transport
        self.body = LiveBody(
            lines=spec.format in NDJSON_FORMATS,
            max_line=limits.max_line,
            binary=spec.format in EVENTSTREAM_FORMATS,
        )
        #: the body as kept: decoded, capped, every credential sent scrubbed (once headers came)
        self._copy: DecodedCopy | None = None
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

    @property
    def received(self) -> int:
        return self.body.size

    # -- running ----------------------------------------------------------------------
    def _prepare(self) -> None:
        if self.spec.resign is not None:
            # signed as it starts: AWS refuses a signature minutes old, and a call
            # may wait that long for its turn (compare runs a few at a time)
            self.spec = self.spec.resign()
            self.stream.secrets = self.spec.secrets

    def _start_recording(self, writer: RecordingWriter) -> None:
        writer.start(self.spec.for_record(), format=self.spec.format, secrets=self._prints)

    def _describe(self, exc: BaseException) -> tuple[str, str]:
        if isinstance(exc, httpx.HTTPError):
            self._emit_close()  # the message counts every event that arrived
            return describe_error(exc, self.spec.url, self.status)
        return "other", f"network error: {exc}"  # a socket error httpx did not wrap

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
            raise Failure(
                "cut-off",
                f"the server closed the connection mid-stream after "
                f"{counted(self.status.events, 'event')} ({size_text(self.body.size)}): {exc}",
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
            raise Failure(
                "too-long",
                f"the body ran past {mib(self.limits.max_stream)} (--max-stream-bytes): {ended}",
            )
        if copy.stopped is not None:
            raise Failure("decoding", f"{copy.stopped}: {ended}")
        if self.body.overflow is not None:
            raise Failure("too-long", f"{self.body.overflow}: {ended}")

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
        self._first_event()
        self._deliver(events)

    def _on_eof(self, response: httpx.Response) -> None:
        """The body ended cleanly: was it the stream we asked for?"""
        self._emit_close()
        status = response.status_code
        if status >= 400:
            raise Failure("http-status", self._http_message(response))
        if self.body.size == 0:
            raise Failure("not-a-stream", f"HTTP {status} with an empty body")
        if not self.body.streamed:
            ctype = response.headers.get("content-type", "no content type")
            raise Failure(
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

    def _end_body(self) -> None:
        self._emit_close()
        # as check reads the recording: "no [DONE]" is news only for an SSE body
        self.stream.sse_body = self.body.framing == "sse"

    def _ended_at(self) -> float:
        # when the body ended: a reader stamps the events the close flushed with
        # it, as this stream did
        return self._body_end

    def _http_message(self, response: httpx.Response) -> str:
        status = response.status_code
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        said = provider_message(self.body.body)
        # AWS names the error in a header: ThrottlingException:http://internal...
        error_type = response.headers.get("x-amzn-errortype", "").partition(":")[0].strip()
        if error_type and error_type not in said:
            said = f"{error_type}: {said}" if said else error_type
        head = f"HTTP {status} {phrase}".rstrip()
        return f"{head}: {said}" if said else head


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
    host = urlsplit(url).hostname or "?"
    where = address(url)
    detail = str(exc) or type(exc).__name__
    chain = list(_causes(exc))
    lowered = " | ".join(str(e) for e in chain).lower()
    got = ""
    if status is not None and status.bytes:
        got = f" after {counted(status.events, 'event')} ({size_text(status.bytes)})"
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
