"""A finished flow's ``check`` report: its calls held to the tools its own
request declared. What the headless printer prints and what ``--otlp``
sends, built the one way."""

from __future__ import annotations

from typing import Any

from ...fit.verdicts import fit_for_request
from ...report.document import build_report
from .flows import Flow

__all__ = ["flow_report"]


def flow_report(flow: Flow, stall_ms: float, budget: float | None) -> dict[str, Any] | None:
    """The report of ``flow`` (hold the store's lock); None when nothing was decoded."""
    if flow.stream is None or not flow.events:
        return None
    fit = fit_for_request(flow.stream, {"body": flow.request_body}, budget=budget)
    return build_report(flow.stream, fit=fit, stall_ms=stall_ms, request_model=flow.row().model)
