"""``fraglens diff A B --app``: two captures side by side, their differences marked.

The screen in front shows A's calls on the left and B's on the right, each
pair on the same row: a call that differs is marked ``≠`` in yellow, its
changed key paths listed and its argument text marked character by character
(what only A has on red, what only B has on green, as the Parse pane marks a
repair); a call only one side has stands alone. ``a`` and ``b`` open that
capture in the debugger's three panes (the same app, nothing re-implemented);
``d`` comes back. The app exits as ``diff`` does: 0 same, 1 different.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from ...engine.plural import counted
from ...reading.stream import Stream
from ...report.diff import ADDED, MARK_LIMIT, REMOVED, change_line, diff_exit, marked_pair
from ...report.text import STATUS_STYLE
from ..app import FraglensApp
from ..keys import BINDINGS as DEBUGGER_BINDINGS
from ..widgets.stream_list import StreamList

__all__ = ["DiffApp", "DiffScreen", "columns", "run_diff_app"]

_SAME, _DIFFERS = "green", "bold yellow"


def _head(mark: str, call: dict[str, Any], style: str) -> Text:
    status = call["status"]
    return Text.assemble(
        (f"{mark} #{call['position']} {call['name']} ", style),
        (f"({call['id']}) ", "dim"),
        (status, STATUS_STYLE.get(status, "")),
    )


def _shown(call: dict[str, Any]) -> str:
    """The argument text, up to ``MARK_LIMIT`` characters (the rest is one key away)."""
    raw: str = call["arguments_raw"]
    if len(raw) <= MARK_LIMIT:
        return raw
    return f"{raw[:MARK_LIMIT]}… ({len(raw) - MARK_LIMIT:,} more chars: a / b opens the capture)"


def columns(doc: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> tuple[Group, Group]:
    """A's and B's sides: the calls of each, a pair on the same row, the
    differences marked. ``a`` and ``b`` are the two ``check`` reports."""
    left: list[Any] = []
    right: list[Any] = []
    a_calls, b_calls = a["calls"], b["calls"]
    for pair in doc["calls"]:
        ca, cb = a_calls[pair["a"]], b_calls[pair["b"]]
        differs = pair["differs"]
        style = _DIFFERS if differs else _SAME
        mark = "≠" if differs else "="
        left.append(_head(mark, ca, style))
        right.append(_head(mark, cb, style))
        if "arguments" in differs:
            ta, tb = marked_pair(_shown(ca), _shown(cb), REMOVED, ADDED)
        else:
            ta, tb = Text(_shown(ca), overflow="fold"), Text(_shown(cb), overflow="fold")
        changes = [Text(f"  {change_line(c)}", "yellow") for c in pair.get("changes", [])]
        # both sides as tall as the taller, so the next pair starts on one row
        left.extend([ta, *changes])
        right.extend([tb, *(Text("") for _ in changes)])
        rows_a, rows_b = len(ta.plain.splitlines() or [""]), len(tb.plain.splitlines() or [""])
        for _ in range(rows_b - rows_a):
            left.append(Text(""))
        for _ in range(rows_a - rows_b):
            right.append(Text(""))
        left.append(Text(""))
        right.append(Text(""))
    for call in doc["missing_in_b"]:
        left.append(_head("≠", a_calls[call["position"]], _DIFFERS))
        left.append(Text(_shown(call), overflow="fold"))
        right.append(Text("(no such call)", _DIFFERS))
        right.append(Text(""))
    for call in doc["extra_in_b"]:
        right.append(_head("≠", b_calls[call["position"]], _DIFFERS))
        right.append(Text(_shown(call), overflow="fold"))
        left.append(Text("(no such call)", _DIFFERS))
        left.append(Text(""))
    return Group(*left), Group(*right)


class DiffScreen(Screen):
    """The two captures' calls side by side."""

    ABOUT_TITLE = "two captures compared"
    ABOUT = [
        (
            "Diff",
            "A's calls on the left, B's on the right, each pair on one row: a call "
            "that differs is marked ≠, its changed key paths listed and its argument "
            "text marked character by character (only A's on red, only B's on green); "
            "a call only one side has stands alone.",
        ),
    ]
    ABOUT_KEYS = [("Diff", "d", "back to the differences from the three panes")]
    BINDINGS: ClassVar = [
        Binding("a", "app.open_side(0)", "Open A", id="diff.open_a",
                tooltip="Open capture A in the three panes"),
        Binding("b", "app.open_side(1)", "Open B", id="diff.open_b",
                tooltip="Open capture B in the three panes"),
        Binding("q", "app.quit", "Quit", id="app.quit", tooltip="Quit"),
    ]  # fmt: skip

    DEFAULT_CSS = """
    DiffScreen #diff-sides { height: 1fr; }
    DiffScreen .diff-side { width: 1fr; border: round $primary; padding: 0 1; }
    DiffScreen #diff-status { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, doc: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> None:
        super().__init__()
        self.doc = doc
        self.sides = columns(doc, a, b)

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="diff-sides"):
            for name, side, body in (("A", self.doc["a"], self.sides[0]),
                                     ("B", self.doc["b"], self.sides[1])):
                scroll = VerticalScroll(Static(body), classes="diff-side", id=f"diff-{name}")
                scroll.border_title = f"{name}: {side['path']}"
                scroll.border_subtitle = f"{side['format']} · {counted(side['calls'], 'call')}"
                yield scroll
        verdict = "same calls, same arguments" if self.doc["same"] else "the captures differ"
        yield Static(Text(f"{verdict} · a / b open a capture, d comes back"), id="diff-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "diff"


#: the debugger's own actions: they act on the panes, which the diff hides
_PANE_ACTIONS = frozenset(b.action for b in DEBUGGER_BINDINGS) - {"quit", "help"}


class DiffApp(FraglensApp):
    """The debugger with the two captures' differences in front."""

    BINDINGS: ClassVar = [
        *FraglensApp.BINDINGS,
        Binding("d", "show_diff", "Diff", id="diff.back", tooltip="Back to the differences"),
    ]  # fmt: skip
    KEY_BAR: ClassVar[tuple[str, ...]] = ("diff.back", *FraglensApp.KEY_BAR)

    def __init__(self, doc: dict[str, Any], a: tuple[str, Stream, dict[str, Any]],
                 b: tuple[str, Stream, dict[str, Any]]) -> None:
        super().__init__(a[1], source=a[0])
        self.doc = doc
        self.captures = (a, b)
        self.front = DiffScreen(doc, a[2], b[2])

    def on_mount(self) -> None:
        self.install_screen(self.front, name="diff")
        self.push_screen("diff")

    @property
    def on_front(self) -> bool:
        stack = self.screen_stack
        return bool(stack) and stack[-1] is self.front

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.on_front and action in _PANE_ACTIONS | {"show_diff"}:
            return False
        if action in ("show_diff", "open_side"):
            return True
        return super().check_action(action, parameters)

    def action_open_side(self, side: int) -> None:
        self.run_worker(self._open(side), exclusive=True, group="open-side")

    async def _open(self, side: int) -> None:
        label, stream, _ = self.captures[side]
        if self.on_front:
            await self.pop_screen()
        await self.show_stream(stream, f"{'AB'[side]} · {label}")
        self.query_one(StreamList).focus()

    def action_show_diff(self) -> None:
        if not self.on_front:
            self.playing = False
            self.push_screen("diff")


def run_diff_app(doc: dict[str, Any], a: tuple[str, Stream, dict[str, Any]],
                 b: tuple[str, Stream, dict[str, Any]]) -> int:
    """Show the two captures; exit as ``diff`` does."""
    app = DiffApp(doc, a, b)
    app.run()
    if app.signal_status:
        return app.signal_status
    return diff_exit(doc)
