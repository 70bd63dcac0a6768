"""``g``: the calls fraglens built beside what a naive client would have built.

Three columns: the real calls (the engine's, as every pane shows them), the
fragments grouped by id, and grouped by arrival (a new call whenever a delta
carries an id or a name), as ``check --compare`` reports them. Each naive key
says whether its text is exactly one of the real calls' and whether it is
JSON at all: that is the bug fraglens exists to prevent, on this stream.
Values are cut as the Parse pane cuts them, and each column lists at most
``SHOWN`` keys.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...engine.plural import counted
from ...redact import TextScrub
from ..keys import HELP_BINDING
from ..naive import Grouped, NaiveReplay
from ..scrubbed import scrubbed
from ..steps import StepIndex
from ..widgets.cells import cell_safe
from ..widgets.cut import cut_string
from ..widgets.parse import STATUS_GLYPH

#: keys listed per column
SHOWN = 200
_HOW = {"by_id": "grouped by id", "by_arrival": "grouped by arrival"}


def real_entries(index: StepIndex) -> Text:
    out = Text()
    for i, call in enumerate(index.calls[:SHOWN]):
        result = call.result
        status = STATUS_GLYPH[result.status] if result is not None else "… open"
        _head(out, f"#{i} {call.name or '(no name)'}", call.id, first=not i)
        out.append(f"\n  {status} · {call.length:,} chars\n", "dim")
        _body(out, call.text, index.scrub)
    _more(out, len(index.calls))
    return scrubbed(out, index.scrub)


def naive_entries(keys: list[Grouped], index: StepIndex) -> Text:
    out = Text()
    for i, key in enumerate(keys[:SHOWN]):
        _head(out, key.name or "(no name)", key.id, first=not i)
        out.append(f"\n  {len(key.arguments):,} chars · ", "dim")
        if key.same_as is not None:
            call = index.calls[key.same_as]
            out.append(f"= #{key.same_as} {call.name or ''}".rstrip(), "green")
        else:
            out.append("≠ no real call", "red")
        if key.json is None:
            out.append(" · too long to check", "dim")
        elif key.json:
            out.append(" · JSON", "dim")
        else:
            out.append(" · ✖ not JSON", "red")
        out.append("\n")
        _body(out, key.arguments, index.scrub)
    _more(out, len(keys))
    return scrubbed(out, index.scrub)


def summary(index: StepIndex, found: dict[str, list[Grouped]]) -> str:
    n = len(index.calls)
    parts = [f"fraglens built {counted(n, 'call')}."]
    for how, keys in found.items():
        right = sum(k.same_as is not None for k in keys)
        parts.append(f"A client that groups the fragments {how.replace('_', ' ')} gets "
                     f"{counted(len(keys), 'call')}, {right} of them right.")
    return " ".join(parts)


def _head(out: Text, title: str, wire_id: str | None, first: bool) -> None:
    if not first:
        out.append("\n")
    out.append(cell_safe(title), "bold")
    out.append(f"  {wire_id or '(no id)'}", "dim")


def _body(out: Text, text: str, scrub: TextScrub) -> None:
    shown, _ = cut_string(text, scrub)
    out.append("  " + (cell_safe(shown) if shown else "(no argument text)") + "\n")


def _more(out: Text, total: int) -> None:
    if total > SHOWN:
        out.append(f"\n… {total - SHOWN:,} more", "dim")


class NaiveScreen(ModalScreen[None]):
    ABOUT_TITLE = "what a naive client would have built"
    ABOUT = [
        (
            "Naive",
            "The calls fraglens built beside the fragments grouped by id and by "
            "arrival, each naive key marked = when its text is one of the real "
            "calls'.",
        ),
    ]
    ABOUT_KEYS = [("Naive", "tab  shift+tab", "move between the columns")]
    BINDINGS = [Binding("escape,g,q", "dismiss(None)", "Close", id="naive.close"), HELP_BINDING]

    def __init__(self, index: StepIndex) -> None:
        super().__init__()
        self.index = index
        self.replay = NaiveReplay(index.stream)
        #: the groupings, once the replay is done
        self.found: dict[str, list[Grouped]] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="naive-box") as box:
            box.border_title = "What a naive client would have built"
            box.border_subtitle = "esc closes · tab between columns"
            events = counted(len(self.replay.events), "event")
            yield Static(f"reading the {events} again as a naive client would…", id="naive-about")
            with Horizontal(id="naive-columns"):
                for name, title in (("real", f"fraglens: {len(self.index.calls):,}"),
                                    *_HOW.items()):
                    with VerticalScroll(id=f"naive-{name}", classes="naive-column") as column:
                        column.border_title = title
                        column.can_focus = True
                        yield Static(id=f"naive-{name}-text")

    def on_mount(self) -> None:
        self.query_one("#naive-real-text", Static).update(real_entries(self.index))
        self.query_one("#naive-real").focus()
        self.run_worker(self._replay(), name="naive", exclusive=True)

    async def _replay(self) -> None:
        about = self.query_one("#naive-about", Static)
        while not self.replay.advance():
            events = counted(len(self.replay.events), "event")
            about.update(
                f"reading the {events} again as a naive client would… {self.replay.fraction:.0%}"
            )
            await asyncio.sleep(0)
        found = self.found = self.replay.groupings([c.text for c in self.index.calls])
        about.update(summary(self.index, found))
        for how, keys in found.items():
            column = self.query_one(f"#naive-{how}", VerticalScroll)
            column.border_title = f"{_HOW[how]}: {len(keys):,}"
            self.query_one(f"#naive-{how}-text", Static).update(naive_entries(keys, self.index))
