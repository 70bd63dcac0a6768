"""``h``: the whole history for the stream's calls — the assistant message and
one result skeleton per call, in the API's shape — and the checker's verdict
on it, so the user sees exactly what goes back to the model."""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...engine.plural import counted
from ...history import SHAPES, build_history, check_conversation, default_shape
from ...reading.stream import Stream
from ...report.document import build_report
from .. import clipboard
from ..keys import HELP_BINDING
from ..widgets.parse import pretty


class HistoryScreen(ModalScreen[None]):
    ABOUT_TITLE = "history to send back"
    ABOUT = [
        (
            "History",
            "The messages that go back to the model for the final calls, in the "
            "shape a provider takes, and what a provider would reject in them.",
        ),
    ]
    ABOUT_KEYS = [("History", "↑ ↓  pgup pgdn", "scroll")]
    BINDINGS = [
        Binding("escape,h,q", "dismiss(None)", "Close", id="history.close"),
        HELP_BINDING,
        Binding("s", "next_shape", "Shape", id="history.shape",
                tooltip="Show the history in the next API shape"),
        Binding("b", "toggle_broken", "Broken calls", id="history.broken",
                tooltip="Include or leave out calls whose status is not ok/empty"),
        Binding("c", "copy", "Copy", id="history.copy",
                tooltip="Copy the messages as JSON"),
    ]  # fmt: skip

    def __init__(self, stream: Stream, step: int | None = None) -> None:
        """``step``: the app's step, when it is not the last event: the history
        is built from the whole stream, and the screen says so."""
        super().__init__()
        self.step = step
        self.report = build_report(stream)
        self.shape = default_shape(self.report.get("format"))
        self.include_broken = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="history-box") as box:
            box.border_subtitle = "s shape · b broken calls · c copy · esc closes"
            yield Static(id="history-about")
            yield Static(id="history-body")

    def on_mount(self) -> None:
        self._show()

    def _built(self) -> dict:
        return build_history(self.report, shape=self.shape, include_broken=self.include_broken)

    def _show(self) -> None:
        built = self._built()
        box = self.query_one("#history-box", VerticalScroll)
        broken = "with broken calls" if self.include_broken else "ok/empty calls only"
        box.border_title = f"history · {self.shape} · {broken}"
        about = Text(end="")
        if self.step is not None:
            about.append(
                f"From the whole stream (its final calls), not as of event {self.step}.\n",
                "bold",
            )
        problems = check_conversation(built["messages"])
        if problems:
            about.append(
                f"✖ {counted(len(problems), 'problem')} a provider would reject:\n", "bold red"
            )
            for p in problems:
                about.append(f"  {p.code}: {p.message}\n")
        else:
            about.append("✔ passes fraglens history check\n", "bold green")
        for note in built["notes"]:
            about.append(f"note: {note}\n", "yellow")
        about.rstrip()
        self.query_one("#history-about", Static).update(about)
        messages = built["messages"]
        body = pretty(messages, 5000) if messages else Text("(nothing to send back)")
        self.query_one("#history-body", Static).update(body)

    def action_next_shape(self) -> None:
        self.shape = SHAPES[(SHAPES.index(self.shape) + 1) % len(SHAPES)]
        self._show()

    def action_toggle_broken(self) -> None:
        self.include_broken = not self.include_broken
        self._show()

    def action_copy(self) -> None:
        text = json.dumps(self._built()["messages"], indent=2, ensure_ascii=False)
        clipboard.copy(self.app, text, f"the history ({self.shape})")
