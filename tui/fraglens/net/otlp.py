"""Spans out over OTLP/HTTP: one per exchange, to the collector a team runs.

``report/genai_span.py`` says what a span holds; this module makes it a real
OpenTelemetry span and hands it to the SDK's batching processor, which
encodes and sends spans from its own thread: the caller (the proxy's flow
store, ``check``'s loop, ``live`` at its end) only queues. A collector that
cannot be reached costs one warning on stderr, never a stall or a lost flow:
the SDK's own error logs are kept quiet, a failed batch is dropped after one
bounded try, and while the collector stays down no batch waits on it.

Needs the ``otel`` extra (``pip install 'fraglens[otel]'``).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import __version__

__all__ = ["ENV_ENDPOINT", "Exporter", "OtlpUnavailable", "exporter_for", "otlp_url"]

#: the OpenTelemetry variables that say where spans go, when ``--otlp`` does not
ENV_ENDPOINT = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
#: seconds one export may take: the most a dead collector delays the end of a command
EXPORT_TIMEOUT = 2.0
#: seconds without a try after a failed export (the collector is likely still down)
_QUIET_AFTER_FAILURE = 30.0
_SDK_LOGGERS = ("opentelemetry.exporter.otlp.proto.http",
                "opentelemetry.exporter.otlp.proto.http.trace_exporter",
                "opentelemetry.exporter.otlp.proto.http._common",
                "opentelemetry.sdk.trace.export", "opentelemetry.sdk._shared_internal")


class OtlpUnavailable(RuntimeError):
    """``--otlp`` without the extra installed: a one-line reason."""


def otlp_url(flag: str | None) -> str | None:
    """Where spans go: ``--otlp URL``, else the OpenTelemetry environment's
    endpoint; None for nowhere. A base URL gets ``/v1/traces``, as the OTLP
    exporter specification says of ``OTEL_EXPORTER_OTLP_ENDPOINT``."""
    if flag:
        return _traces(flag)
    traces = os.environ.get(ENV_ENDPOINT[0])
    if traces:
        return traces  # the signal's own endpoint is used as given
    base = os.environ.get(ENV_ENDPOINT[1])
    return _traces(base) if base else None


def _traces(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


def _warn(message: str) -> None:
    print(f"fraglens: warning: {message}", file=sys.stderr)


class _Guarded:
    """The SDK's OTLP exporter, with one warning for a collector that cannot
    be reached and no try for a while after a failure."""

    def __init__(self, inner: Any, url: str, warn: Callable[[str], None]) -> None:
        self._inner = inner
        self._url = url
        self._warn = warn
        self._warned = False
        self._quiet_until = 0.0
        self._lock = threading.Lock()
        #: spans that were not delivered (kept for the tests and the summary)
        self.dropped = 0

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        if time.monotonic() < self._quiet_until:
            self.dropped += len(spans)
            return SpanExportResult.FAILURE
        try:
            result = self._inner.export(spans)
        except Exception as exc:  # the SDK's transport may raise what it did not expect
            result = SpanExportResult.FAILURE
            reason = f"{type(exc).__name__}: {exc}"
        else:
            reason = "no answer or an error status"
        if result is not SpanExportResult.SUCCESS:
            self.dropped += len(spans)
            self._quiet_until = time.monotonic() + _QUIET_AFTER_FAILURE
            with self._lock:
                if not self._warned:
                    self._warned = True
                    self._warn(f"spans could not be sent to the OTLP collector at {self._url} "
                               f"({reason}); the exchanges are unaffected")
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))


class Exporter:
    """One OTLP/HTTP destination: ``export`` queues a span (from
    ``genai_span``), ``close`` sends what is queued, within a bound."""

    def __init__(self, url: str, service: str, warn: Callable[[str], None] = _warn) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            raise OtlpUnavailable("--otlp needs the OpenTelemetry SDK: "
                                  "pip install 'fraglens[otel]'") from None
        for name in _SDK_LOGGERS:  # one warning of ours says it; the SDK's would repeat it
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self.url = url
        self._guarded = _Guarded(OTLPSpanExporter(endpoint=url, timeout=EXPORT_TIMEOUT), url,
                                 warn)
        self._provider = TracerProvider(
            resource=Resource.create({"service.name": service, "service.version": __version__})
        )
        # the SDK's processor: spans wait in its bounded queue, a thread sends them
        self._provider.add_span_processor(BatchSpanProcessor(self._guarded,  # type: ignore[arg-type]
                                                             schedule_delay_millis=500))
        self._tracer = self._provider.get_tracer("fraglens", __version__)

    @property
    def dropped(self) -> int:
        return self._guarded.dropped

    def export(self, span: dict[str, Any], start_ns: int | None = None,
               end_ns: int | None = None) -> None:
        """Queue one span; ``start_ns``/``end_ns``: when the exchange began and
        ended (epoch nanoseconds), else now minus its duration, and now."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        end = end_ns if end_ns is not None else time.time_ns()
        start = start_ns
        if start is None:
            duration = span.get("duration_s")
            start = end - int(duration * 1e9) if isinstance(duration, (int, float)) else end
        otel = self._tracer.start_span(span["name"], kind=SpanKind.CLIENT,
                                       attributes=span["attributes"], start_time=start)
        for event in span["events"]:
            otel.add_event(event["name"], attributes=event["attributes"], timestamp=end)
        if span.get("error"):
            otel.set_status(Status(StatusCode.ERROR, span["error"]))
        otel.end(end_time=end)

    def close(self) -> None:
        """Send what is queued and stop: at most about one export's timeout
        when the collector is down."""
        self._provider.shutdown()


def exporter_for(flag: str | None, service: str) -> Exporter | None:
    """The exporter ``--otlp``/the environment ask for; None when neither does.
    A missing extra is a one-line warning when only the environment asked,
    an error (``OtlpUnavailable``) when the flag did."""
    url = otlp_url(flag)
    if url is None:
        return None
    try:
        return Exporter(url, service)
    except OtlpUnavailable as exc:
        if flag:
            raise
        _warn(f"{exc} (OTEL_EXPORTER_OTLP_ENDPOINT is set); no spans sent")
        return None


def export_exchange(
    exporter: Exporter,
    doc: dict[str, Any] | None,
    stream: Any,
    *,
    content: bool = False,
    model: str | None = None,
    started: float | None = None,
    duration: float | None = None,
    error: str | None = None,
) -> None:
    """Queue the span of one exchange seen on the network (a live call, a
    proxied flow, a compared backend): ``doc`` its report (None when no event
    came), ``started`` when its request was sent (epoch seconds),
    ``duration`` how long it took, ``error`` why it failed, if it did."""
    from ..report.genai_span import genai_span

    if doc is not None:
        span = genai_span(doc, stream, content=content, request_model=model)
    else:
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.stream": True}
        if model:
            attrs["gen_ai.request.model"] = model
        span = {"name": f"chat {model}" if model else "chat", "attributes": attrs, "events": []}
    if error:
        span["error"] = error
        span["attributes"]["error.type"] = "request_failed" if doc is None else "stream_error"
    if duration is not None:
        span["duration_s"] = duration
    start_ns = end_ns = None
    if started is not None:
        start_ns = int(started * 1e9)
        end_ns = start_ns + int((duration or 0.0) * 1e9)
    exporter.export(span, start_ns=start_ns, end_ns=end_ns)
