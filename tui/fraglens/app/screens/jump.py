"""``:`` asks for an event number and hands it back to the app, which says so
when the number is past the last event (or not loaded yet)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from .prompt import PromptScreen


class JumpScreen(PromptScreen, ModalScreen[int | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="jump.cancel")]

    def __init__(self, last: int) -> None:
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-box"):
            yield Label(f"Go to event (0 to {self.last:,}), then enter; esc cancels")
            yield Input(placeholder=f"0 … {self.last}", type="integer", id="jump-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.dismiss(None)
            return
        number = int(text)
        if number < 0:
            number = max(0, number + self.last + 1)  # -1 is the last event, like a Python index
        self.dismiss(number)
