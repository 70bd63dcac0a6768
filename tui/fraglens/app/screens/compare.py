"""``fraglens compare --app``: the backends listed as they finish, each one a capture to open.

The calls run on a thread of their own, with their own event loop
(:func:`fraglens.net.compare.run_backends`): drawing the screen never delays
reading a backend's stream, so its times are the network's, as they are
without the app. Each finished backend comes to the screen as a message
(its row is complete, its stream no longer fed), and is listed then. A row is the text report's
row (``compare_text.backend_cells``); under the list, the highlighted
backend's chunking profile or error, and once every backend is in, whether
they agree and the differences. ``enter`` opens the backend's stream (what
its recording holds) in the debugger's three panes; ``l`` comes back.
"""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from typing import Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from ...engine.plural import counted
from ...net.compare import Backend, compare_doc, compare_exit, run_backends
from ...reading.stream import Stream
from ...report.chunking import chunking_line
from ...report.comparison import COLUMNS, agreement_lines, backend_cells
from ..app import FraglensApp
from ..keys import BINDINGS as DEBUGGER_BINDINGS
from ..widgets.stream_list import StreamList

__all__ = ["CompareApp", "CompareScreen", "run_compare_app"]


class BackendFinished(Message):
    """A backend's call ended; its row is filled in (posted from the calls' thread)."""

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend


class ComparisonDone(Message):
    """Every backend's call ended."""


class BackendTable(DataTable):
    BINDINGS: ClassVar = [
        Binding("enter", "select_cursor", "Open", id="compare.open",
                tooltip="Open the backend's stream in the three panes"),
    ]  # fmt: skip


class CompareScreen(Screen):
    """The list of backends; the app calls :meth:`add` as each one finishes."""

    ABOUT_TITLE = "the backends compared"
    ABOUT = [
        (
            "Backends",
            "One row per backend as it finishes: its calls, their worst verdict, the "
            "codes raised, timing and cost, as `fraglens compare` prints them. Below: "
            "the highlighted backend's chunking (or its error), and once every backend "
            "is in, whether they agree and each difference.",
        ),
    ]
    ABOUT_KEYS = [
        ("Backends", "↑ ↓", "highlight a backend"),
        ("Backends", "l", "back to this list from the three panes"),
    ]

    BINDINGS: ClassVar = [
        Binding("q", "app.quit", "Quit", id="app.quit", tooltip="Quit (calls in flight stop)"),
    ]

    DEFAULT_CSS = """
    CompareScreen #compare-intro { height: auto; padding: 0 1; color: $text-muted; }
    CompareScreen #compare-table { height: auto; max-height: 60%; }
    CompareScreen #compare-detail { height: 1fr; padding: 0 1; overflow-y: auto; }
    CompareScreen #compare-status { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, backends: list[Backend], intro: str) -> None:
        super().__init__()
        self.backends = backends
        self.intro = intro
        #: the finished backends, in the order they finished (the table's rows)
        self.shown: list[Backend] = []
        self._ready = False
        self.doc: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(self.intro, id="compare-intro")
        yield BackendTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="compare-detail")
        yield Static(id="compare-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "compare"
        table = self.query_one(BackendTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        table.focus()
        for backend in self.shown:  # finished before the screen was mounted
            self._add_row(backend)
        self._show_status()
        # Textual counts the screen mounted before this handler has run (and so
        # before its table has columns): a result arriving then waits in shown
        self._ready = True

    def add(self, backend: Backend) -> None:
        self.shown.append(backend)
        if self._ready:
            self._add_row(backend)
            self._show_status()

    def _add_row(self, backend: Backend) -> None:
        assert backend.row is not None
        # height None: as many lines as the row's tallest cell (one code a line)
        self.query_one(BackendTable).add_row(
            *backend_cells(backend.row), key=backend.model, height=None
        )
        self._show_detail()

    def finished(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        if self._ready:
            self._show_status()
            self._show_detail()

    def _show_status(self) -> None:
        total, done = len(self.backends), len(self.shown)
        parts = [f"{done} of {counted(total, 'backend')} finished"]
        if self.doc is not None:
            parts.append("they agree" if self.doc["agree"] else "they disagree")
        parts.append("enter opens one, l comes back")
        self.query_one("#compare-status", Static).update(Text(" · ".join(parts)))

    def selected(self) -> Backend | None:
        table = self.query_one(BackendTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((b for b in self.shown if b.model == key), None)

    def _show_detail(self) -> None:
        parts: list[Any] = []
        backend = self.selected()
        if backend is not None and backend.row is not None:
            row = backend.row
            head = Text(f"{row['model']}: ", style="bold")
            if row["error"] is not None:
                head.append(row["error"], style="red")
            elif row["chunking"] is not None:
                head.append(chunking_line(row["chunking"]))
            parts.append(head)
            if row.get("recording"):
                parts.append(Text(f"recorded to {row['recording']}", style="dim"))
        if self.doc is not None:
            parts.append(Text(""))
            parts.extend(agreement_lines(self.doc))
        self.query_one("#compare-detail", Static).update(Group(*parts))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        backend = self.selected()
        if backend is not None:
            self.app.open_backend(backend)  # type: ignore[attr-defined]


#: the debugger's own actions: they act on the panes, which the list hides
_PANE_ACTIONS = frozenset(b.action for b in DEBUGGER_BINDINGS) - {"quit", "help"}


class CompareApp(FraglensApp):
    """The debugger with the list of backends in front."""

    BINDINGS: ClassVar = [
        *FraglensApp.BINDINGS,
        Binding("l", "show_backends", "Backends", id="compare.backends",
                tooltip="Back to the list of backends"),
    ]  # fmt: skip
    KEY_BAR: ClassVar[tuple[str, ...]] = ("compare.backends", *FraglensApp.KEY_BAR)

    def __init__(self, backends: list[Backend], *, concurrency: int, intro: str) -> None:
        super().__init__(Stream(), source="fraglens compare")
        self.backends = backends
        self.concurrency = concurrency
        self.list = CompareScreen(backends, intro)
        self.doc: dict[str, Any] | None = None
        self._thread = threading.Thread(
            target=self._run_calls, name="fraglens-compare", daemon=True
        )
        #: the calls' loop and task, to cancel them when the app quits first. Not
        #: ``_loop``: that is the app's own, which ``post_message`` from another
        #: thread wakes; pointed at this thread's loop, the list stood still until
        #: a key woke the app
        self._calls_loop: asyncio.AbstractEventLoop | None = None
        self._calls_task: asyncio.Task[Any] | None = None

    # Textual calls FraglensApp's own on_mount and on_unmount as well (handlers
    # are dispatched along the class's MRO): no super() calls here
    def on_mount(self) -> None:
        self.install_screen(self.list, name="backends")
        self.push_screen("backends")
        self._thread.start()

    def _run_calls(self) -> None:
        asyncio.run(self._calls())

    async def _calls(self) -> None:
        self._calls_loop, self._calls_task = asyncio.get_running_loop(), asyncio.current_task()
        done = partial(self._post, BackendFinished)
        try:
            await run_backends(self.backends, concurrency=self.concurrency, on_done=done)
        except asyncio.CancelledError:
            return  # the app quit: each call ended its recording with what arrived
        self._post(ComparisonDone)

    def _post(self, message: type[Message], *args: Any) -> None:
        self.post_message(message(*args))  # thread-safe: queued for the app's loop

    def on_backend_finished(self, message: BackendFinished) -> None:
        self.list.add(message.backend)

    def on_comparison_done(self, _message: ComparisonDone) -> None:
        self.doc = compare_doc([b.row for b in self.backends if b.row is not None])
        self.list.finished(self.doc)

    def on_unmount(self) -> None:
        loop, task = self._calls_loop, self._calls_task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass  # the loop closed in between: the calls were over
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    @property
    def on_list(self) -> bool:
        stack = self.screen_stack
        return bool(stack) and stack[-1] is self.list

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.on_list and action in _PANE_ACTIONS | {"show_backends"}:
            return False
        if action == "show_backends":
            return True
        return super().check_action(action, parameters)

    def open_backend(self, backend: Backend) -> None:
        if not backend.call.stream.events:
            said = backend.row["error"] if backend.row else None
            self.notify(
                said or "nothing arrived", title=f"{backend.model}: no events", severity="warning"
            )
            return
        self.run_worker(self._open(backend), exclusive=True, group="open-backend")

    async def _open(self, backend: Backend) -> None:
        if self.on_list:
            await self.pop_screen()
        source = backend.recording or backend.model
        await self.show_stream(backend.call.stream, f"{backend.model} · {source}")
        self.query_one(StreamList).focus()

    def action_show_backends(self) -> None:
        if not self.on_list:
            self.playing = False
            self.push_screen("backends")


def run_compare_app(backends: list[Backend], *, concurrency: int, source: str) -> int:
    """Run the calls in the app; exit as ``compare`` does once every backend is in,
    130 when the user quit before that."""
    intro = (
        f"One request to {counted(len(backends), 'model')} at {source}, {concurrency} at a time; "
        "each backend is listed when it finishes."
    )
    app = CompareApp(backends, concurrency=concurrency, intro=intro)
    app.run()
    if app.signal_status:
        return app.signal_status
    return compare_exit(app.doc) if app.doc is not None else 130
