"""``/`` asks for a text or a pattern and hands it back to the app."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from .prompt import PromptScreen


class SearchScreen(PromptScreen, ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="search.cancel")]

    def __init__(self, previous: str = "") -> None:
        super().__init__()
        self.previous = previous

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-box"):
            yield Label("Find in events and call arguments (a regex, or plain text); esc cancels")
            yield Input(value=self.previous, placeholder="text or pattern", id="search-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value or None)
