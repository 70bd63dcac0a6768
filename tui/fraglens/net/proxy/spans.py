"""``proxy --otlp``: one OpenTelemetry span per flow, queued when the flow ends.

A subscriber of the flow store, in the process that shows the flows: the
relay runs in its own process and never waits on it, and the SDK sends the
spans from its own thread (``net/otlp.py``).
"""

from __future__ import annotations

from ...fit.budget import DEFAULT_BUDGET
from ...report.timing import DEFAULT_STALL_MS
from ..otlp import Exporter, export_exchange
from .flows import Flow, FlowStore
from .verdict import flow_report

__all__ = ["FlowSpans"]


class FlowSpans:
    def __init__(self, store: FlowStore, exporter: Exporter, content: bool = False,
                 stall_ms: float = DEFAULT_STALL_MS,
                 schema_budget: float | None = DEFAULT_BUDGET) -> None:
        self.store = store
        self.schema_budget = schema_budget
        self.exporter = exporter
        self.content = content
        self.stall_ms = stall_ms
        self.unsubscribe = store.subscribe(self._changed)

    def _changed(self, flow: Flow, change: str) -> None:
        if change != "end":
            return
        with self.store.lock:
            row = flow.row()
            doc = flow_report(flow, self.stall_ms, self.schema_budget)
            error = row.error or (None if row.state.value == "done" else row.state.value)
            export_exchange(self.exporter, doc, flow.stream, content=self.content,
                            model=row.model, started=row.started, duration=row.duration,
                            error=error)
