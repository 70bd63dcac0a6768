"""``e`` (or a click on a code in the Parse pane): what a diagnostic means.

The same entry ``fraglens explain CODE`` prints and docs/diagnostics.md holds,
laid out for the screen: the text wraps to the box, the wire example does not.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...engine.diagnostics import CODES
from ...engine.explanations import EXPLANATIONS
from ..keys import HELP_BINDING
from ..widgets.parse import SEVERITY_GLYPH

SEVERITY_STYLE = {"info": "", "warning": "bold yellow", "error": "bold red"}


class ExplainScreen(ModalScreen[None]):
    ABOUT_TITLE = "a diagnostic explained"
    ABOUT = [
        (
            "Explain",
            "What the diagnostic means and what to do about it: the text `fraglens "
            "explain CODE` prints.",
        ),
    ]
    ABOUT_KEYS: list[tuple[str, str, str]] = []
    BINDINGS = [Binding("escape,e,q", "dismiss(None)", "Close", id="explain.close"), HELP_BINDING]

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="explain-box") as box:
            box.border_title = f"diagnostic {self.code}"
            box.border_subtitle = "esc closes"
            yield Static(self._text(), id="explain-text")

    def _text(self) -> Text:
        severity, summary = CODES[self.code]
        entry = EXPLANATIONS[self.code]
        out = Text(end="")
        out.append(f"{SEVERITY_GLYPH[severity]} {self.code}", SEVERITY_STYLE[severity])
        out.append(f"  {severity}: {summary}\n\n")
        # a table's bars are escaped for Markdown; here they are plain text
        out.append(entry.means.replace("\\|", "|") + "\n\n")
        out.append("On the wire (one event per line)\n", "bold")
        out.append(entry.wire + "\n\n", "dim")
        out.append("What fraglens did\n", "bold")
        out.append(entry.did + "\n\n")
        out.append("What to do\n", "bold")
        out.append(entry.todo + "\n\n")
        out.append(f"fraglens explain {self.code}", "bold")
        out.append(" prints this at the command line; docs/diagnostics.md lists every code.")
        return out
