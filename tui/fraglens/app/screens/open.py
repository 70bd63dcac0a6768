"""``o``: open another capture without quitting: type a path, or pick a file.

The path box starts in the folder of the capture shown. Below it, first, the
captures opened before (``recent.py``; ``enter`` on one opens it), then a tree
of that folder: choosing a file in the tree fills the box, ``enter`` opens
what the box says. The app reads it (``reading.progressive``) and says in one line why
when it cannot.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label, OptionList
from textual.widgets.option_list import Option


class OpenScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="open.cancel")]

    def __init__(self, folder: Path, recent: list[str] | None = None) -> None:
        """``recent``: the captures opened before, most recent first."""
        super().__init__()
        self.folder = folder
        self.recent = recent or []

    def compose(self) -> ComposeResult:
        with Vertical(id="open-box") as box:
            box.border_title = "Open a capture"
            box.border_subtitle = "enter opens · tab to the files · esc cancels"
            yield Label("Path (SSE, NDJSON, JSON, HAR or a recording):")
            yield Input(value=f"{self.folder}/", id="open-path")
            if self.recent:
                yield Label("Opened before (tab, then enter opens one):")
                yield OptionList(*(Option(Text(p), id=p) for p in self.recent), id="open-recent")
            yield DirectoryTree(self.folder, id="open-tree")

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        box = self.query_one("#open-path", Input)
        box.value = str(event.path)
        box.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self.dismiss(text or None)
