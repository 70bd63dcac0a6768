"""``fraglens live`` in the app: the call streams into the three panes as it arrives.

The app shows a Stream that may grow; this module runs the
:class:`LiveCall` in a Textual worker on the app's own event loop, so the call
feeds ``call.stream`` between two repaints and never from another thread. Each
event posts ``StreamGrew``, a message that coalesces: a backend sending
thousands of events a second costs one re-read per screen refresh, and no event
is dropped because the events are already in the stream. ``ctrl+r`` sends the
request again (a new stream, a new app screen); ``escape`` cancels the call in
flight and keeps what arrived. The command line (``fraglens.cli.live``)
runs it, and sends the request again as long as the user asks.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

from ..fit.budget import DEFAULT_BUDGET
from ..fit.verdicts import fit_for_request
from ..net.live import LiveCall, LiveStatus, Phase
from ..net.ws_live import WSLiveCall
from .app import FraglensApp, StreamGrew

__all__ = ["AGAIN", "LiveApp", "make_live_app"]

#: what the app returns when the user asked to send the request again
AGAIN = -1


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

    def __init__(
        self, call: LiveCall | WSLiveCall, schema_budget: float | None = DEFAULT_BUDGET
    ) -> None:
        super().__init__(call.stream, source=call.spec.for_record()["url"])
        self.call = call
        #: seconds each call's check against its tool may take (None: no limit)
        self.schema_budget = schema_budget
        call.on_event = self._grew
        call.on_status = self._status_changed

    def on_mount(self) -> None:
        # no super().on_mount(): Textual calls the on_mount of every class along
        # the MRO, the base's after this one, and a super() call ran it twice
        self.run_worker(self.call.run(), name="live-call", exclusive=True)

    def _grew(self, _ev: Any) -> None:
        self.post_message(StreamGrew())

    def _status_changed(self, status: LiveStatus) -> None:
        self.live_status = status.line()
        if status.phase.finished:
            # the stream is closed: its calls against the tools the request declared
            self.index.fit = fit_for_request(
                self.call.stream, {"body": self.call.spec.body}, budget=self.schema_budget
            )
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


def make_live_app(
    call: LiveCall | WSLiveCall, schema_budget: float | None = DEFAULT_BUDGET
) -> LiveApp:
    """The app showing ``call.stream``, running ``call`` once mounted."""
    return LiveApp(call, schema_budget)
