"""``v``: the selected call's arguments whole, for reading.

The Parse pane cuts long values to what fits; this screen shows all of it in
a scrolling text view that renders only the lines on screen, so a megabyte of
arguments opens as fast as a line. String values are shown unescaped: a
``file_text`` with 140 ``\\n`` reads as the code it is, each line indented
under its key behind a ``│``. Without a parsed value (still streaming, or
invalid), the argument text as received at the step is shown instead.

``b`` switches to the text as received with its fragment boundaries marked
(``FragmentView``), and back.
"""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from ...engine.calls import Call
from ...engine.plural import counted
from ...redact import TextScrub
from ..keys import HELP_BINDING
from ..widgets.fragment_view import FragmentView

_scalar = json.JSONEncoder(ensure_ascii=False).encode


def readable(value: Any, indent: str = "") -> list[str]:
    """``value`` as indented JSON lines, except that a string holding line
    breaks is written out unescaped: ``key: │`` then its lines, each behind
    ``│ ``. Anything else is the JSON a parser would read."""
    out: list[str] = []
    _write(value, indent, "", "", out)
    return out


def _write(value: Any, indent: str, head: str, tail: str, out: list[str]) -> None:
    inner = indent + "  "
    if isinstance(value, dict) and value:
        out.append(f"{indent}{head}{{")
        last = len(value) - 1
        for i, (key, item) in enumerate(value.items()):
            _write(item, inner, f"{_scalar(key)}: ", "," if i < last else "", out)
        out.append(f"{indent}}}{tail}")
    elif isinstance(value, list) and value:
        out.append(f"{indent}{head}[")
        last = len(value) - 1
        for i, item in enumerate(value):
            _write(item, inner, "", "," if i < last else "", out)
        out.append(f"{indent}]{tail}")
    elif isinstance(value, str) and "\n" in value:
        lines = counted(value.count("\n") + 1, "line")
        out.append(f"{indent}{head}│ ({counted(len(value), 'char')}, {lines}){tail}")
        out.extend(f"{inner}│ {line}" for line in value.split("\n"))
    else:
        out.append(f"{indent}{head}{_scalar(value)}{tail}")


class ValueScreen(ModalScreen[None]):
    ABOUT_TITLE = "the arguments whole"
    ABOUT = [
        (
            "Value",
            "The selected call's arguments whole, string values that hold line "
            "breaks written out unescaped; b shows the text as received instead, "
            "each fragment shaded in turn.",
        ),
    ]
    ABOUT_KEYS = [("Value", "↑ ↓  pgup pgdn", "scroll")]
    BINDINGS = [
        Binding("escape,v,q", "dismiss(None)", "Close", id="value.close"),
        HELP_BINDING,
        Binding("b", "toggle_boundaries", "Boundaries", id="value.boundaries"),
    ]

    def __init__(
        self,
        title: str,
        about: str,
        text: str,
        call: Call | None = None,
        step: int = 0,
        boundaries: bool = False,
        scrub: TextScrub | None = None,
    ) -> None:
        """``call`` and ``step``: whose text as received ``b`` shows with its
        fragment boundaries (and does from the start when ``boundaries``)."""
        super().__init__()
        self.title_text = title
        self.about = about
        self.text = text
        self.call = call
        self.step = step
        self.boundaries = boundaries and call is not None
        self.scrub = scrub or TextScrub(None)

    def compose(self) -> ComposeResult:
        with Vertical(id="value-box") as box:
            box.border_title = self.title_text
            box.border_subtitle = "esc closes · b fragment boundaries · arrows, pgup/pgdn scroll"
            yield Static(self.about, id="value-about")
            yield TextArea(
                self.text, read_only=True, show_line_numbers=True, soft_wrap=False, id="value-text"
            )
            if self.call is not None:
                view = FragmentView(self.call, self.step, self.scrub, id="value-fragments")
                view.display = False
                yield view

    def on_mount(self) -> None:
        self._show()

    def action_toggle_boundaries(self) -> None:
        if self.call is None:
            self.notify("No call here: no fragments to mark.", severity="warning")
            return
        self.boundaries = not self.boundaries
        self._show()

    def _show(self) -> None:
        area = self.query_one(TextArea)
        area.display = not self.boundaries
        about = self.query_one("#value-about", Static)
        if self.call is not None:
            self.query_one(FragmentView).display = self.boundaries
        if not self.boundaries:
            about.update(self.about)
            area.focus()
            return
        view = self.query_one(FragmentView)
        about.update(
            f"as received at event {self.step:,}: {counted(view.fragments, 'fragment')}, "
            f"{counted(view.length, 'char')}; each fragment shaded in turn, the gutter gives "
            "the fragment and event each row starts in (b: the value again)"
        )
        view.focus()
