"""The ``fraglens check`` report for people: a table of calls, then diagnostics
grouped by severity. Reads the JSON document, so both views always agree."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from .report import printable

STATUS_STYLE = {
    "ok": "bold green",
    "empty": "green",
    "repaired": "bold yellow",
    "truncated": "bold red",
    "invalid": "bold magenta",
    "aborted": "bold red reverse",
    "open": "cyan",
}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def _preview(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return printable(text if len(text) <= limit else text[: limit - 1] + "…")


def render(doc: dict[str, Any], source: str) -> Group:
    head = Text.assemble(
        (printable(source), "bold"),
        f": {doc['framing']} framing, {doc['format']} format, {doc['events']} events, "
        f"ended: {doc['end']}",
    )
    parts: list[Any] = [head]
    if doc.get("format_note"):
        parts.append(Text(printable(doc["format_note"]), style="yellow"))
    table = Table(title=f"{len(doc['calls'])} tool call(s)", title_justify="left", expand=False)
    for col in ("#", "choice", "index", "id", "name", "status", "arguments"):
        table.add_column(col, overflow="fold")
    for c in doc["calls"]:
        shown_id = printable(c["id"]) if c["id"] else f"{c.get('synthetic_id')} (synthesized)"
        args = c["arguments"] if c["arguments"] is not None else c["arguments_raw"]
        table.add_row(
            str(c["position"]),
            str(c["choice"]),
            "-" if c["index"] is None else str(c["index"]),
            shown_id,
            printable(c["name"]) or "(none)",
            Text(c["status"], style=STATUS_STYLE.get(c["status"], "")),
            _preview(args),
        )
    parts.append(table)
    for c in doc["calls"]:
        for k, inner in enumerate(c.get("inner_calls") or ()):
            line = f"  call {c['position']} wraps #{k}: {printable(inner['name'])} "
            parts.append(Text(line + _preview(inner["arguments"], 80), style="cyan"))
        for change in c["repairs"]:
            line = f"  call {c['position']} {c['status']}: {printable(change)}"
            parts.append(Text(line, style="yellow"))
    for severity in ("error", "warning", "info"):
        found = [d for d in doc["diagnostics"] if d["severity"] == severity]
        if not found:
            continue
        parts.append(Text(f"{severity}s ({len(found)})", style=SEVERITY_STYLE[severity]))
        for d in found:
            where = []
            if "event" in d:
                where.append(f"event {d['event']}")
            if "call" in d:
                where.append(f"call {d['call']}")
            loc = f" [{', '.join(where)}]" if where else ""
            parts.append(Text(f"  {d['code']}{loc}: {printable(d['message'])}"))
    if doc["diagnostics"]:
        parts.append(Text("fraglens explain CODE: what a code means and what to do", "dim"))
    text = doc.get("text") or {}
    for choice, value in text.items():
        parts.append(Text(f"text (choice {choice}): {_preview(value, 100)}", style="dim"))
    return Group(*parts)


def print_report(doc: dict[str, Any], source: str, console: Console | None = None) -> None:
    (console or Console()).print(render(doc, source))
