"""``t``: the tools the request declared, each with its schema."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...engine.plural import counted
from ...fit.tools import Tool
from ..keys import HELP_BINDING
from ..widgets.parse import pretty

#: a schema is shown whole up to this many pretty-printed lines
SCHEMA_LINES = 400


class ToolsScreen(ModalScreen[None]):
    ABOUT_TITLE = "declared tools"
    ABOUT = [
        (
            "Tools",
            "The tools the request declared (or --tools gave), each with its "
            "schema; strict ones are marked.",
        ),
    ]
    ABOUT_KEYS = [("Tools", "↑ ↓  pgup pgdn", "scroll")]
    BINDINGS = [Binding("escape,t,q", "dismiss(None)", "Close", id="tools.close"), HELP_BINDING]

    def __init__(self, tools: list[Tool]) -> None:
        super().__init__()
        self.tools = tools

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="tools-box") as box:
            box.border_title = counted(len(self.tools), "declared tool")
            box.border_subtitle = "esc closes"
            yield Static(self.listing(), id="tools-body")

    def listing(self) -> RenderableType:
        if not self.tools:
            return Text("the request declared no function tools")
        parts: list[RenderableType] = []
        for tool in self.tools:
            head = Text(tool.name, "bold")
            if tool.strict:
                head.append("  strict: arguments promised to match", "italic")
            if tool.description:
                head.append(f"\n{tool.description}", "dim")
            parts.append(head)
            if tool.schema is None:
                parts.append(Text("free-form input: no JSON Schema", "dim"))
            else:
                parts.append(pretty(tool.schema, SCHEMA_LINES))
            parts.append(Text(""))
        return Group(*parts)
