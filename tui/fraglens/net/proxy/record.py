"""Flows as fraglens recordings: live into ``--record-dir``, or saved on demand.

Either way the file is an ordinary recording (``fraglens/framing/recording.py``):
``check``, the app and ``serve`` read it like any other. The body recorded is
the one the app decoded (content-encoding undone), each network read with its
time; headers and URLs were redacted when the flow stored them, and the
writer redacts them again.
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from ...framing.recording import RECORDING_SUFFIX, WEBSOCKET, RecordingWriter
from .flows import Flow, FlowState

__all__ = ["LiveRecording", "create_exclusive", "end_reason", "recording_name", "save_flow"]


def recording_name(flow: Flow, attempt: int = 1) -> str:
    """``20260102-030405-0007-post-v1-chat-completions.fraglens``: sorts by time.

    ``attempt`` > 1 adds ``-2``, ``-3``...: the name was taken (another proxy
    writing to the same directory numbers its flows from 1 too).
    """
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(flow.started))
    slug = re.sub(r"[^a-z0-9]+", "-", flow.path.split("?", 1)[0].lower()).strip("-")
    again = f"-{attempt}" if attempt > 1 else ""
    name = f"{stamp}-{flow.number:04d}-{flow.method.lower()}-{slug[:60] or 'root'}{again}"
    return name + RECORDING_SUFFIX


#: names tried before a random one: enough for any number of proxies sharing a directory
_ATTEMPTS = 100


def create_exclusive(directory: Path, flow: Flow) -> tuple[Path, IO[bytes]]:
    """A new file for ``flow`` in ``directory``, never one that exists (``O_EXCL``)."""
    for attempt in range(1, _ATTEMPTS + 1):
        path = directory / recording_name(flow, attempt)
        try:
            return path, path.open("xb")
        except FileExistsError:
            continue
    stem = recording_name(flow).removesuffix(RECORDING_SUFFIX)
    path = directory / f"{stem}-{uuid.uuid4().hex}{RECORDING_SUFFIX}"
    return path, path.open("xb")


def _created(flow: Flow) -> datetime:
    return datetime.fromtimestamp(flow.started, tz=timezone.utc)


def end_reason(flow: Flow) -> tuple[str, str | None]:
    if flow.state is FlowState.CANCELLED:
        return "cancelled", flow.error
    if flow.state is FlowState.FAILED:
        return "error", flow.error
    return "eof", None


def _write_all(flow: Flow, writer: RecordingWriter) -> None:
    if flow.stream is not None and flow.stream.framing == "websocket":
        _write_websocket(flow, writer)
        return
    writer.start(
        flow.request_record(), format=flow.format, created=_created(flow), secrets=flow.secrets
    )
    if flow.status is not None:
        writer.response(flow.status, flow.response_headers, flow.response_t)
    for t, data in flow.chunks:
        writer.chunk(t, data)
    if flow.finished:
        reason, error = end_reason(flow)
        writer.end(reason, error, flow.elapsed())
    else:
        writer.flush()  # a flow still arriving: the reads' times so far


_REFUSED = re.compile(r"a (\d+)-byte message from the (client|server) was not kept: (.*)", re.S)


def _write_websocket(flow: Flow, writer: RecordingWriter) -> None:
    """One response of a WebSocket connection, as a WebSocket recording of its
    own: the handshake, the request's message and the server's, the close if it
    cut the response off. Times count from the request's message."""
    request = {k: v for k, v in flow.request_record().items() if k != "body"}
    writer.start(request, format=flow.format, created=_created(flow), secrets=flow.secrets,
                 transport=WEBSOCKET)
    if flow.status is not None:
        writer.response(flow.status, flow.response_headers, 0.0)
    for ev in flow.events:
        t = ev.time or 0.0
        if ev.kind in ("sent", "data"):
            writer.frame(t, "client" if ev.kind == "sent" else "server", ev.data)
        elif ev.kind == "binary":
            writer.frame(t, ev.event or "server", base64.b64decode(ev.data))
        elif ev.kind == "close":
            close = json.loads(ev.data)
            writer.close(t, close.get("code"), close.get("reason") or "", close.get("from"))
        elif ev.kind == "damaged" and (m := _REFUSED.fullmatch(ev.data)) is not None:
            writer.refused(t, m.group(2), int(m.group(1)), m.group(3))
    if flow.finished:
        reason, error = end_reason(flow)
        writer.end(reason, error, flow.elapsed())


def save_flow(flow: Flow, path: Path) -> Path:
    """Write what the flow holds so far as a recording at ``path``.

    The caller holds the store's lock, so that the flow does not move while it
    is written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fp:
        _write_all(flow, RecordingWriter(fp))
    flow.saved_to = str(path)
    return path


class LiveRecording:
    """A flow written to ``directory`` as it happens, flushed per network read.

    Created when the flow is; the proxy calls :meth:`response` and
    :meth:`finish`, and the tee writes chunks through ``flow.writer``.
    """

    def __init__(self, flow: Flow, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        # exclusive: two proxies sharing --record-dir never write into each other's file
        self.path, fp = create_exclusive(directory, flow)
        self._fp: IO[bytes] | None = fp
        self.flow = flow
        writer = RecordingWriter(self._fp)
        writer.start(
            flow.request_record(), format=flow.format, created=_created(flow), secrets=flow.secrets
        )
        flow.writer = writer
        flow.saved_to = str(self.path)

    def response(self) -> None:
        flow = self.flow
        if flow.writer is not None and flow.status is not None:
            flow.writer.response(flow.status, flow.response_headers, flow.response_t)

    def finish(self) -> None:
        flow = self.flow
        if self._fp is None:
            return
        try:
            if flow.writer is not None:
                reason, error = end_reason(flow)
                flow.writer.end(reason, error, flow.elapsed())
        finally:
            flow.writer = None
            self._fp.close()
            self._fp = None
