"""A real OTLP/HTTP trace receiver on loopback, for the tests: it decodes each
``ExportTraceServiceRequest`` with OpenTelemetry's own protobuf classes and
keeps the spans, as a collector would receive them."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def attributes(items: Any) -> dict[str, Any]:
    return {a.key: _value(a.value) for a in items}


class Receiver:
    """``url`` to send to; ``spans``: every span received, as plain dicts."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.requests: list[dict[str, str]] = []
        self.arrived = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.requests.append({"path": self.path, **dict(self.headers)})
                request = ExportTraceServiceRequest.FromString(body)
                for rs in request.resource_spans:
                    resource = attributes(rs.resource.attributes)
                    for ss in rs.scope_spans:
                        for span in ss.spans:
                            receiver.spans.append({
                                "name": span.name,
                                "kind": span.kind,
                                "resource": resource,
                                "attributes": attributes(span.attributes),
                                "events": [{"name": e.name, "attributes": attributes(e.attributes)}
                                           for e in span.events],
                                "status": span.status.code,
                                "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano,
                            })
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
                receiver.arrived.set()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
