"""``fraglens proxy --headless``: one line per flow, then its ``check`` summary
(calls checked against the request's tools, the stream's timing and stalls).

For terminals without a TUI and for logs. A flow is printed when it ends, so
concurrent flows never interleave their lines; ``--json`` prints one JSON
object per flow instead (the flow line's fields plus the ``check --json``
document), for machines.
"""

from __future__ import annotations

import json
import sys
import time
from typing import IO, Any

from rich.console import Console

from ...fit.budget import DEFAULT_BUDGET
from ...report.text import print_report
from ...report.timing import DEFAULT_STALL_MS
from .flows import Flow, FlowRow, FlowStore
from .verdict import flow_report

__all__ = ["HeadlessPrinter", "flow_line"]


def flow_line(row: FlowRow) -> str:
    """One line: ``#3 12:04:05 POST /v1/chat/completions gpt-4o 200 1.24s 2 calls (worst
    ok), 0 diagnostics``, then the state and the error when it did not end well."""
    clock = time.strftime("%H:%M:%S", time.localtime(row.started))
    parts = [f"#{row.number}", clock, row.method, row.path]
    if row.model:
        parts.append(row.model)
    parts.append(str(row.status) if row.status is not None else "---")
    parts.append(f"{row.duration:.2f}s")
    if row.calls is None:
        parts.append("(not decoded)")
    else:
        worst = f" (worst {row.worst})" if row.worst else ""
        plural = "" if row.calls == 1 else "s"
        diag = "" if row.diagnostics == 1 else "s"
        parts.append(f"{row.calls} call{plural}{worst}, {row.diagnostics} diagnostic{diag}")
    if row.state.value not in ("done",):
        parts.append(f"[{row.state.value}]")
    if row.error:
        parts.append(f"- {row.error}")
    return " ".join(parts)


class HeadlessPrinter:
    """Subscribes to a store and prints each flow once it has ended."""

    def __init__(
        self,
        store: FlowStore,
        out: IO[str] | None = None,
        as_json: bool = False,
        stall_ms: float = DEFAULT_STALL_MS,
        schema_budget: float | None = DEFAULT_BUDGET,
    ) -> None:
        self.store = store
        self.stall_ms = stall_ms
        self.schema_budget = schema_budget
        self.out = out or sys.stdout
        self.as_json = as_json
        self.console = Console(file=self.out, highlight=False, soft_wrap=True)
        self.printed = 0
        self.unsubscribe = store.subscribe(self._changed)

    def _changed(self, flow: Flow, change: str) -> None:
        if change != "end":
            return
        with self.store.lock:
            row = flow.row()
            doc = flow_report(flow, self.stall_ms, self.schema_budget)
            notes = list(flow.notes)
            saved = flow.saved_to
        if self.as_json:
            self.out.write(json.dumps(_json(row, doc, notes, saved), ensure_ascii=False) + "\n")
            self.out.flush()
        else:
            self.console.print(flow_line(row), markup=False)
            for note in notes:
                self.console.print(f"  note: {note}", markup=False)
            if doc is not None and (doc["calls"] or doc["diagnostics"]):
                print_report(doc, f"flow #{row.number}", console=self.console)
            if saved:
                self.console.print(f"  recorded: {saved}", markup=False)
            self.out.flush()
        self.printed += 1


def _json(row: FlowRow, doc: dict[str, Any] | None, notes: list[str], saved: str | None) -> dict:
    return {
        "flow": row.number,
        "started": row.started,
        "method": row.method,
        "path": row.path,
        "model": row.model,
        "state": row.state.value,
        "status": row.status,
        "duration": round(row.duration, 6),
        "calls": row.calls,
        "worst": row.worst,
        "diagnostics": row.diagnostics,
        "error": row.error,
        "notes": notes,
        "recording": saved,
        "check": doc,
    }
