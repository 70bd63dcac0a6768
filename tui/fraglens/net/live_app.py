"""``fraglens live`` in the app: the call streams into the three panes as it arrives.

The app (``fraglens.app``) shows a Stream that may grow; this module runs the
:class:`LiveCall` in a Textual worker on the app's own event loop, so the call
feeds ``call.stream`` between two repaints and never from another thread. Each
event posts ``StreamGrew``, a message that coalesces: a backend sending
thousands of events a second costs one re-read per screen refresh, and no event
is dropped because the events are already in the stream. ``ctrl+r`` sends the
request again (a new stream, a new app screen); ``escape`` cancels the call in
flight and keeps what arrived. When the app is not there, the headless report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from textual.binding import Binding

from .live import LiveCall, LiveStatus, Phase

__all__ = ["AGAIN", "make_live_app", "run_live_app"]

#: what the app returns when the user asked to send the request again
AGAIN = -1


def make_live_app(call: LiveCall) -> Any:
    """The app showing ``call.stream``, running ``call`` once mounted.
    ImportError when the app is not installed."""
    from ..app.app import FraglensApp, StreamGrew

    class LiveApp(FraglensApp):
        BINDINGS = [
            *FraglensApp.BINDINGS,
            Binding(
                "ctrl+r",
                "send_again",
                "Send again",
                id="live.send-again",
                tooltip="cancel this call and send the same request again",
            ),
            Binding(
                "escape",
                "cancel_call",
                "Cancel",
                id="live.cancel",
                tooltip="cancel the call in flight; what arrived stays",
            ),
        ]

        def __init__(self, call: LiveCall) -> None:
            super().__init__(call.stream, source=call.spec.for_record()["url"])
            self.call = call
            call.on_event = self._grew
            call.on_status = self._status_changed

        def on_mount(self) -> None:
            super().on_mount()
            self.run_worker(self.call.run(), name="live-call", exclusive=True)

        def _grew(self, _ev: Any) -> None:
            self.post_message(StreamGrew())

        def _status_changed(self, status: LiveStatus) -> None:
            self.live_status = status.line()
            if status.phase.finished:
                self.post_message(StreamGrew())
                if status.phase is Phase.FAILED:
                    self.notify(status.message or "the call failed", severity="error")

        def action_send_again(self) -> None:
            self.call.cancel()
            self.exit(AGAIN)

        def action_cancel_call(self) -> None:
            if not self.call.status.phase.finished:
                self.call.cancel()
            else:  # nothing in flight: escape does what it does in the app
                self.action_unpin()

    return LiveApp(call)


def run_live_app(args: argparse.Namespace, call: LiveCall) -> int:
    try:
        app = make_live_app(call)
    except ImportError:
        print("fraglens: note: the app is not available; printing the report", file=sys.stderr)
        from .commands import run_headless

        return run_headless(args, call)
    attempt = 1
    while app.run() == AGAIN:
        attempt += 1
        call = call.again(record=_numbered(args.record, attempt))
        app = make_live_app(call)
    status = call.status
    code = 0
    if status.phase is Phase.FAILED:
        print(f"fraglens: error: {status.message}", file=sys.stderr)
        code = 2
    # SIGTERM or SIGHUP quit the app as `q` does (the call cancelled, its recording
    # ended): the shell's status for the signal, 143 or 129, comes first
    return app.signal_status or code


def _numbered(record: str | None, attempt: int) -> str | None:
    """rec.jsonl, then rec-2.jsonl, rec-3.jsonl...: a re-send never overwrites a recording."""
    if record is None:
        return None
    path = Path(record)
    return str(path.with_name(f"{path.stem}-{attempt}{path.suffix}"))
