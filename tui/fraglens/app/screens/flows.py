"""The Flows screen of ``fraglens proxy``: every exchange as it happens, and the
three panes for the one you open.

The proxy runs on its own thread (``fraglens/net/proxy/``) and owns the flows;
this side only reads them, under the store's lock, at the screen's pace: a
timer compares ``FlowStore.version`` and updates the rows that changed. The
flow list is mitmproxy's: newest at the bottom, the cursor follows the newest
until the user moves it (then a "N new" counter, toolong's way), ``end``
follows again, ``/`` filters by text.

``enter`` opens a flow in the debugger's three panes. The panes read a
``Stream`` of their own, fed on this thread from ``flow.events`` as they come
(the proxy's ``Stream`` is never read while it is being fed), so an open flow
fills in live and steps like any capture once it is done. ``l`` goes back to
the list. ``s`` saves the selected flow as a recording.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from ...fit.budget import DEFAULT_BUDGET
from ...fit.verdicts import fit_for_request
from ...net.proxy.flows import Flow, FlowRow, FlowState, FlowStore
from ...net.proxy.record import recording_name, save_flow
from ...reading.stream import Stream
from ...redact import redact_url
from ...report.text import STATUS_STYLE
from ..app import FraglensApp
from ..keys import BINDINGS as DEBUGGER_BINDINGS
from ..widgets.stream_list import StreamList

__all__ = ["FlowTable", "FlowsScreen", "ProxyFlowsApp", "flow_cells", "run_flows_app"]

#: how often the screen looks at the store (the proxy never waits for it)
POLL_SECONDS = 1 / 15

COLUMNS = (
    ("#", "number"),
    ("time", "time"),
    ("method", "method"),
    ("path", "path"),
    ("model", "model"),
    ("status", "status"),
    ("state", "state"),
    ("duration", "duration"),
    ("calls", "calls"),
    ("worst", "worst"),
    ("diag", "diagnostics"),
)

_STATE_TEXT = {
    FlowState.WAITING: ("… waiting", "dim"),
    FlowState.STREAMING: ("▶ streaming", "bold cyan"),
    FlowState.DONE: ("✓ done", "green"),
    FlowState.FAILED: ("✖ failed", "bold red"),
    FlowState.CANCELLED: ("■ cancelled", "yellow"),
}
_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}

#: a column's width, from the values it can hold (a worst verdict is one of six
#: words or "not decoded"), so that none is cut while it waits for a wider one;
#: the path and the model share what is left
WIDTHS = {
    "number": 4,
    "time": 8,
    "method": 7,  # OPTIONS
    "status": 6,
    "state": max(len(text) for text, _ in _STATE_TEXT.values()),
    "duration": 9,  # 1234.56s…
    "calls": 5,
    "worst": max(len(w) for w in (*STATUS_STYLE, "truncated", "not decoded")),
    "diagnostics": 4,
}
#: the least room the path and the model get before a column is left out
FLEXIBLE = {"path": 16, "model": 10}
#: what a narrow list leaves out, first to last: the time (the order says it),
#: the method (POST, nearly always), the model (the path names the API)
NARROW_DROPS = ("time", "method", "model")


def shown_columns(width: int, padding: int = 1) -> tuple[list[str], dict[str, int]]:
    """The column keys a list ``width`` cells wide shows, and each one's width:
    the known ones as wide as their widest value, the path and the model
    sharing the rest."""
    keys = [key for _, key in COLUMNS]
    for drop in (None, *NARROW_DROPS):
        if drop is not None:
            keys.remove(drop)
        fixed = sum(WIDTHS[k] for k in keys if k in WIDTHS) + 2 * padding * len(keys)
        flexible = [k for k in keys if k in FLEXIBLE]
        if fixed + sum(FLEXIBLE[k] for k in flexible) <= width:
            break
    widths = {k: WIDTHS[k] for k in keys if k in WIDTHS}
    room = width - fixed - 1  # the scroll bar's cell
    for k in flexible:
        # with every column but the path left out, the path takes what is left
        share = room if k == flexible[-1] else max(FLEXIBLE[k], room * 2 // 3)
        widths[k] = max(6, share)
        room -= widths[k]
    return keys, widths


def _status_style(status: int) -> str:
    return (
        "green"
        if status < 300
        else "cyan"
        if status < 400
        else "yellow"
        if status < 500
        else "bold red"
    )


def flow_cells(row: FlowRow) -> tuple[Text, ...]:
    """One row of the flow list, in COLUMNS order."""
    status = (
        Text("—", "dim") if row.status is None else Text(str(row.status), _status_style(row.status))
    )
    state, state_style = _STATE_TEXT[row.state]
    duration = f"{row.duration:.2f}s" + (
        "…" if row.state in (FlowState.WAITING, FlowState.STREAMING) else ""
    )
    if row.calls is None:
        calls, worst, diagnostics = Text("·", "dim"), Text("not decoded", "dim"), Text("·", "dim")
    else:
        calls = Text(str(row.calls))
        worst = Text(row.worst or "—", STATUS_STYLE.get(row.worst or "", "dim"))
        diagnostics = Text(str(row.diagnostics), _SEVERITY_STYLE.get(row.severity or "", "dim"))
    return (
        Text(str(row.number), "dim"),
        Text(time.strftime("%H:%M:%S", time.localtime(row.started))),
        Text(row.method, "bold"),
        Text(row.path, overflow="ellipsis", no_wrap=True),
        Text(row.model or "—", "dim" if row.model is None else ""),
        status,
        Text(state, state_style),
        Text(duration, justify="right"),
        calls,
        worst,
        diagnostics,
    )


class FlowTable(DataTable):
    """The flow list; ``enter`` opens the flow under the cursor."""

    BINDINGS: ClassVar = [
        Binding(
            "enter",
            "select_cursor",
            "Open",
            id="flows.open",
            tooltip="Open the flow in the three panes (live while it streams)",
        ),
        Binding(
            "end",
            "screen.follow",
            "Follow",
            id="flows.follow",
            tooltip="Put the cursor on the newest flow and keep it there",
        ),
    ]


class FlowsScreen(Screen):
    """The list of flows. The app calls :meth:`refresh_rows` when the store changed."""

    ABOUT_TITLE = "the proxy's flows"
    ABOUT = [
        (
            "Flows",
            "Every request your app sent through the proxy, newest at the bottom: "
            "method, path, model, HTTP status, state (waiting, streaming, done, "
            "failed), duration, then the tool calls decoded from the response, the "
            "worst verdict among them and how many diagnostics they raised.",
        ),
        (
            "Following",
            "The cursor stays on the newest flow until you move it; the status line "
            "then counts the flows that came since, and end follows again.",
        ),
    ]
    ABOUT_KEYS = [
        ("Flows", "↑ ↓  pgup pgdn", "move through the flows"),
        ("Flows", "l", "back to this list from the three panes"),
    ]

    BINDINGS: ClassVar = [
        Binding("s", "save", "Save", id="flows.save",
                tooltip="Save the selected flow as a recording (keys redacted)"),
        Binding("slash", "filter", "Filter", id="flows.filter", key_display="/",
                tooltip="Show only the flows whose line contains a text"),
        Binding("escape", "clear_filter", "Clear filter", id="flows.clear-filter", show=False,
                tooltip="Show every flow again"),
        Binding("q", "app.quit", "Quit", id="app.quit", tooltip="Stop the proxy and quit"),
    ]  # fmt: skip

    DEFAULT_CSS = """
    FlowsScreen #flows-intro { height: auto; padding: 0 1; color: $text-muted; }
    FlowsScreen #flows-table { height: 1fr; }
    FlowsScreen #flows-filter { display: none; }
    FlowsScreen #flows-filter.-shown { display: block; }
    FlowsScreen #flows-status { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, store: FlowStore, intro: str, save_dir: Path) -> None:
        super().__init__()
        self.store = store
        self.intro = intro
        self.save_dir = save_dir
        #: the cursor stays on the newest flow until the user moves it
        self.following = True
        #: flows that arrived while not following
        self.new = 0
        self.filter = ""
        self._cells: dict[int, tuple[Text, ...]] = {}
        #: rows of finished flows, drawn for good
        self._final: set[int] = set()
        self._moving = False
        #: the columns shown (keys, in COLUMNS order), for the list's width
        self._shown: list[str] = []
        self._width = 0

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(self.intro, id="flows-intro")
        yield FlowTable(id="flows-table", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="filter: a path, a model, a status, 'failed'…", id="flows-filter")
        yield Static(id="flows-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "flows"
        self.query_one(FlowTable).focus()
        self._lay_out(self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._lay_out(event.size.width)

    def _lay_out(self, width: int) -> None:
        """The columns for ``width`` cells, the rows drawn again in them."""
        keys, widths = shown_columns(width or 200)
        if keys == self._shown and width == self._width:
            return
        self._width = width
        table = self.table
        cursor, new = table.cursor_row, self.new
        table.clear(columns=True)
        labels = dict((key, label) for label, key in COLUMNS)
        for key in keys:
            table.add_column(labels[key], key=key, width=widths[key])
        self._shown = keys
        self._cells.clear()
        self._final.clear()
        self.refresh_rows()
        self.new = new  # the same flows, not new ones
        if not self.following and table.row_count:
            self._moving = True
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
            self._moving = False
        self._show_status(self.store.rows())

    # -- the rows ---------------------------------------------------------------------
    @property
    def table(self) -> FlowTable:
        return self.query_one(FlowTable)

    def refresh_rows(self) -> None:
        rows = self.store.rows()
        shown = [r for r in rows if not self.filter or self.filter in r.text()]
        table = self.table
        wanted = {r.number for r in shown}
        for number in [n for n in self._cells if n not in wanted]:
            table.remove_row(str(number))
            del self._cells[number]
            self._final.discard(number)
        added = 0
        for row in shown:
            if row.number in self._final:
                continue  # a finished flow's row never changes
            every = dict(zip((key for _, key in COLUMNS), flow_cells(row), strict=True))
            cells = tuple(every[key] for key in self._shown)
            old = self._cells.get(row.number)
            if old is None:
                table.add_row(*cells, key=str(row.number))
                added += 1
            elif old != cells:
                for column, new, before in zip(self._shown, cells, old, strict=True):
                    if new != before:
                        table.update_cell(str(row.number), column, new)
            self._cells[row.number] = cells
            if row.state not in (FlowState.WAITING, FlowState.STREAMING):
                self._final.add(row.number)
        if self.following:
            self._to_newest()
        else:
            self.new += added
        self._show_status(rows)

    def _to_newest(self) -> None:
        table = self.table
        if table.row_count and table.cursor_row != table.row_count - 1:
            self._moving = True
            table.move_cursor(row=table.row_count - 1, animate=False)
            self._moving = False

    def _show_status(self, rows: list[FlowRow]) -> None:
        live = sum(r.state in (FlowState.WAITING, FlowState.STREAMING) for r in rows)
        parts = [f"{len(rows)} flow{'s' if len(rows) != 1 else ''}", f"{live} in flight"]
        if self.filter:
            parts.append(f"filter {self.filter!r}: {len(self._cells)} shown")
        if self.following:
            parts.append("following the newest")
        elif self.new:
            parts.append(f"{self.new} new (end to follow)")
        line = Text(" · ".join(parts), no_wrap=True, overflow="ellipsis")
        flow = self.selected()
        if flow is not None:
            with self.store.lock:
                said = [flow.error] if flow.error else []
                said += flow.notes
            if said:
                line.append(f"  #{flow.number}: " + "; ".join(said), "yellow")
        self.query_one("#flows-status", Static).update(line)

    def selected(self) -> Flow | None:
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return self.store.get(int(key.value)) if key.value is not None else None

    # -- what the user does -----------------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self._moving:
            return
        self.following = event.cursor_row == self.table.row_count - 1
        if self.following:
            self.new = 0
        self._show_status(self.store.rows())

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.app.open_flow(int(event.row_key.value))  # type: ignore[attr-defined]

    def action_follow(self) -> None:
        self.following = True
        self.new = 0
        self._to_newest()
        self._show_status(self.store.rows())

    def action_save(self) -> None:
        flow = self.selected()
        if flow is None:
            self.notify("No flow yet.", severity="warning")
            return
        with self.store.lock:
            if flow.saved_to and flow.finished:
                where, fresh = flow.saved_to, False
            else:
                try:
                    where = str(save_flow(flow, self.save_dir / recording_name(flow)))
                except OSError as exc:
                    self.notify(f"Could not save flow #{flow.number}: {exc}", severity="error")
                    return
                fresh = True
            still = not flow.finished
        what = "Saved" if fresh else "Already recorded"
        tail = " (what arrived so far: it is still streaming)" if still else ""
        self.notify(f"{what}: {where}{tail}", title=f"Flow #{flow.number}")

    def action_filter(self) -> None:
        box = self.query_one("#flows-filter", Input)
        box.add_class("-shown")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#flows-filter", Input)
        box.value = ""
        box.remove_class("-shown")
        self.table.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter = event.value.strip().lower()
        self.table.clear()
        self._cells.clear()
        self._final.clear()
        self.refresh_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()


#: the debugger's own actions: they act on the panes, which the flow list hides
_PANE_ACTIONS = frozenset(b.action for b in DEBUGGER_BINDINGS) - {"quit", "help"}


class ProxyFlowsApp(FraglensApp):
    """The debugger with a flow list in front: the proxy's app."""

    BINDINGS: ClassVar = [
        *FraglensApp.BINDINGS,
        Binding("l", "show_flows", "Flows", id="proxy.flows",
                tooltip="Back to the list of flows"),
    ]  # fmt: skip
    KEY_BAR: ClassVar[tuple[str, ...]] = ("proxy.flows", *FraglensApp.KEY_BAR)

    def __init__(
        self,
        store: FlowStore,
        *,
        intro: str = "",
        save_dir: Path | None = None,
        log_lines: list[str] | None = None,
        schema_budget: float | None = DEFAULT_BUDGET,
    ) -> None:
        super().__init__(Stream(), source="fraglens proxy")
        self.store = store
        #: seconds each call's check against its tool may take (None: no limit)
        self.schema_budget = schema_budget
        self.flows = FlowsScreen(store, intro, save_dir or Path.cwd())
        self.log_lines = log_lines if log_lines is not None else []
        #: the flow the panes show, and the panes' own stream of it
        self.shown: Flow | None = None
        self._fed = 0
        self._version = -1
        self._stale = False
        #: the panes are being replaced: nothing may look for them meanwhile
        self._opening = False

    def on_mount(self) -> None:
        # no super().on_mount(): Textual calls the base's on_mount after this one
        self.install_screen(self.flows, name="flows")
        self.push_screen("flows")
        self.set_interval(POLL_SECONDS, self.poll)

    @property
    def on_flows(self) -> bool:
        stack = self.screen_stack
        return bool(stack) and stack[-1] is self.flows

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if (self.on_flows or self._opening) and action in _PANE_ACTIONS | {"show_flows"}:
            return False
        if action == "show_flows":
            return True
        return super().check_action(action, parameters)

    # -- the timer ------------------------------------------------------------------------------
    def poll(self) -> None:
        if not self.screen_stack:
            return  # the app is shutting down
        while self.log_lines:
            self.notify(self.log_lines.pop(0), title="proxy", severity="warning")
        if self.store.version != self._version:
            self._version = self.store.version
            if self.flows.is_mounted:
                self.flows.refresh_rows()
        if self._opening:
            return
        self._feed_shown()
        if self._stale and not self.on_flows:
            self._stale = False
            self.refresh_stream()
        if self.shown is not None and not self.on_flows:
            self.live_status = self._flow_status(self.shown)

    def _feed_shown(self) -> None:
        flow = self.shown
        mirror = self.stream
        if flow is None or mirror.closed or flow.stream is None:
            return
        with self.store.lock:
            new = flow.events[self._fed :]
            done = flow.stream.closed
            framing = flow.stream.framing
            request = {"body": flow.request_body}
        for ev in new:
            mirror.feed(ev)
        self._fed += len(new)
        if done:
            mirror.framing = framing
            mirror.close()
            # closed: its calls against the tools the flow's request declared
            self.index.fit = fit_for_request(mirror, request, budget=self.schema_budget)
        if new or done:
            self._stale = True

    def _flow_status(self, flow: Flow) -> str:
        with self.store.lock:
            row = flow.row()
        status = "" if row.status is None else f" {row.status}"
        return f"flow #{row.number}{status} {row.state.value}"

    # -- opening a flow ---------------------------------------------------------------------------
    def open_flow(self, number: int) -> None:
        flow = self.store.get(number)
        if flow is None:
            return
        if flow.stream is None:
            self.notify(
                f"{flow.method} {flow.path} is forwarded and listed, not decoded: "
                "only Chat Completions, Messages and Responses carry tool calls.",
                title=f"Flow #{number}",
            )
            return
        self.run_worker(self._open(flow), exclusive=True, group="open-flow")

    async def _open(self, flow: Flow) -> None:
        assert flow.stream is not None
        mirror = Stream(format=flow.format, framing=flow.stream.framing)
        # the panes draw the joined pieces: a key the upstream echoed is taken out there
        mirror.secrets = flow.secrets
        self._opening = True
        try:
            self.shown, self._fed = flow, 0
            if self.on_flows:
                await self.pop_screen()
            await self.show_stream(mirror, f"flow #{flow.number} {flow.method} {flow.path}")
            self._feed_shown()
        finally:
            self._opening = False
        first = next((e.number for e in mirror.events if e.kind != "comment"), 0)
        self._stale = False
        self.refresh_stream()
        # a finished flow opens like a file, before its first chunk; a live one at its tail
        self.goto(max(0, first - 1) if mirror.closed else self.index.last)
        self.query_one(StreamList).focus()
        self.live_status = self._flow_status(flow)

    def _show(self) -> None:
        if not self._opening:
            super()._show()

    def watch_live_status(self) -> None:
        if not self._opening and not self.on_flows:
            super().watch_live_status()

    def action_show_flows(self) -> None:
        if not self.on_flows:
            self.playing = False
            self.push_screen("flows")


def run_flows_app(
    server: Any,
    store: FlowStore,
    *,
    base_url: str,
    log_lines: list[str] | None = None,
    schema_budget: float | None = DEFAULT_BUDGET,
) -> int:
    """Start the proxy (``ChildProxy``, or ``ProxyServer`` on a thread), run the app,
    stop the proxy when the app quits."""
    intro = (
        f"Listening on {server.url}, forwarding to {redact_url(str(server.upstream))}. Point"
        " your client's "
        f"base URL at {base_url} and keep its key where it is."
    )
    if server.record_dir is not None:
        intro += f" Every flow is recorded in {server.record_dir}."
    server.start()
    try:
        app = ProxyFlowsApp(
            store,
            intro=intro,
            save_dir=server.record_dir,
            log_lines=log_lines,
            schema_budget=schema_budget,
        )
        app.run()
    finally:
        server.stop()
    # SIGTERM or SIGHUP quit the app as `q` does (the proxy stopped, its recordings
    # closed, just above), with the shell's status for the signal: 143 or 129
    return app.signal_status or 0
