"""``fraglens live`` in the app: the call streams into the three panes as it arrives.

The app (``tui.app``) shows a Stream that may grow; this module runs the
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

from .live import LiveCall, LiveStatus, Phase

__all__ = ["run_live_app"]

#: what the app returns when the user asked to send the request again
_AGAIN = -1


def run_live_app(args: argparse.Namespace, call: LiveCall) -> int:
    try:
        from ..app.app import FraglensApp, StreamGrew
    except ImportError:
        print("fraglens: note: the app is not available; printing the report", file=sys.stderr)
        from .commands import run_headless

        return run_headless(args, call)

    class LiveApp(FraglensApp):
        BINDINGS = [
            *FraglensApp.BINDINGS,
            ("ctrl+r", "send_again", "Send again"),
            ("escape", "cancel_call", "Cancel"),
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
            self.exit(_AGAIN)

        def action_cancel_call(self) -> None:
            if not self.call.status.phase.finished:
                self.call.cancel()

    attempt = 1
    while True:
        result = LiveApp(call).run()
        if result != _AGAIN:
            break
        attempt += 1
        call = call.again(record=_numbered(args.record, attempt))
    status = call.status
    if status.phase is Phase.FAILED:
        print(f"fraglens: error: {status.message}", file=sys.stderr)
        return 2
    return 0


def _numbered(record: str | None, attempt: int) -> str | None:
    """rec.jsonl, then rec-2.jsonl, rec-3.jsonl...: a re-send never overwrites a recording."""
    if record is None:
        return None
    path = Path(record)
    return str(path.with_name(f"{path.stem}-{attempt}{path.suffix}"))
