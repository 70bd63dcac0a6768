"""The chunking profile of the stream on screen (palette: "view: chunking profile").

What ``check --chunking`` prints, one line per figure with what it counts:
how the backend cut the tool calls into fragments.
"""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...engine.plural import counted, noun
from ...reading.stream import Stream
from ...report.chunking import chunking_profile
from ..keys import HELP_BINDING

__all__ = ["ChunkingScreen", "profile_table"]


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def profile_table(stream: Stream) -> Table:
    p = chunking_profile(stream)
    sizes = p["fragment_chars"]
    table = Table(show_header=False, box=None, padding=(0, 1))
    table.add_column(justify="right", style="bold")
    table.add_column()
    rows = [
        (
            str(p["fragments"]),
            f"argument {noun(p['fragments'], 'fragment')} over {counted(p['calls'], 'call')}, "
            "as check counts",
        ),
        (
            f"{_n(sizes['min'])} / {_n(sizes['median'])} / {_n(sizes['max'])}",
            "characters per fragment: min / median / max",
        ),
        (str(p["mid_string"]), "fragments ending inside a string (a call's last one not counted)"),
        (str(p["mid_escape"]), "of them, inside an escape (\\ or \\uXXXX cut in two)"),
        (str(p["mid_utf8"]), "inside a character (UTF-8 bytes or a surrogate pair cut in two)"),
        (str(p["whole_in_one_chunk"]), "calls that came whole in one chunk (id, name, arguments)"),
        (str(p["ids_resent"]), "calls whose id was re-sent on later fragments"),
        (str(p["names_resent"]), "calls whose whole name was re-sent on later fragments"),
    ]
    for value, meaning in rows:
        table.add_row(value, meaning)
    return table


class ChunkingScreen(ModalScreen[None]):
    ABOUT_TITLE = "chunking profile"
    ABOUT = [
        (
            "Chunking",
            "How the provider cut the arguments into fragments: sizes, cuts inside "
            "strings, escapes and characters, ids and names re-sent.",
        ),
    ]
    ABOUT_KEYS: list[tuple[str, str, str]] = []
    BINDINGS = [
        Binding("escape,enter,q", "dismiss(None)", "Close", id="chunking.close"),
        HELP_BINDING,
    ]

    DEFAULT_CSS = """
    ChunkingScreen { align: center middle; }
    ChunkingScreen #chunking-box {
        width: auto; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; padding: 0 1; background: $surface;
    }
    """

    def __init__(self, stream: Stream) -> None:
        super().__init__()
        self.stream = stream

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="chunking-box") as box:
            box.border_title = "chunking profile"
            box.border_subtitle = "esc closes"
            yield Static(profile_table(self.stream))
