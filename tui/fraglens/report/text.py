"""The ``fraglens check`` report for people: a table of calls, then diagnostics
grouped by severity. Reads the JSON document, so both views always agree."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..engine.plural import counted
from .cost import cost_text
from .document import printable
from .usage import usage_text

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
#: the most of one message a line of the report shows. Rich wraps a long line
#: in time that grows with its square (a 1M-entry enum's message, 11 MB, took
#: a minute), and no one reads past a screenful: --json keeps it whole
LINE_LIMIT = 2000


def clip(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` made printable, cut at ``limit`` characters with a note of the rest."""
    if len(text) <= limit:
        return printable(text)
    rest = len(text) - limit
    return printable(text[:limit]) + f" … ({rest:,} more characters: --json has them all)"


def _preview(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return printable(text if len(text) <= limit else text[: limit - 1] + "…")


def render(doc: dict[str, Any], source: str) -> Group:
    head = Text.assemble(
        (printable(source), "bold"),
        f": {doc['framing']} framing, {doc['format']} format, {counted(doc['events'], 'event')}, "
        f"ended: {doc['end']}",
    )
    parts: list[Any] = [head]
    if doc.get("format_note"):
        parts.append(Text(clip(doc["format_note"]), style="yellow"))
    table = Table(title=counted(len(doc["calls"]), "tool call"), title_justify="left", expand=False)
    for col in ("#", "choice", "index", "id", "name", "status", "arguments"):
        table.add_column(col, overflow="fold")
    for c in doc["calls"]:
        shown_id = clip(c["id"], 200) if c["id"] else f"{c.get('synthetic_id')} (synthesized)"
        args = c["arguments"] if c["arguments"] is not None else c["arguments_raw"]
        table.add_row(
            str(c["position"]),
            str(c["choice"]),
            "-" if c["index"] is None else str(c["index"]),
            shown_id,
            clip(c["name"] or "", 200) or "(none)",
            Text(c["status"], style=STATUS_STYLE.get(c["status"], "")),
            _preview(args),
        )
    parts.append(table)
    parts.extend(leaked_lines(doc))
    for c in doc["calls"]:
        for k, inner in enumerate(c.get("inner_calls") or ()):
            line = f"  call {c['position']} wraps #{k}: {clip(inner['name'] or '', 200)} "
            parts.append(Text(line + _preview(inner["arguments"], 80), style="cyan"))
        for change in c["repairs"]:
            line = f"  call {c['position']} {c['status']}: {clip(change)}"
            parts.append(Text(line, style="yellow"))
    if "tools" in doc:
        parts.append(
            Text(f"fit against {counted(len(doc['tools']), 'declared tool')}", style="bold")
        )
        for c in doc["calls"]:
            if "fit" in c:
                line, style = fit_line(c)
                name = clip(c["name"] or "", 200)
                parts.append(Text(f"  call {c['position']} {name}: {clip(line)}", style=style))
    parts.extend(Text(clip(line)) for line in response_lines(doc))
    parts.extend(Text(clip(line)) for line in timing_lines(doc))
    used = usage_text(doc.get("usage"))
    if used is not None:
        parts.append(Text(f"usage: {used}"))
        parts.append(Text(f"cost: {cost_text(doc.get('cost'), doc.get('cost_note'))}"))
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
            parts.append(Text(f"  {d['code']}{loc}: {clip(d['message'])}"))
    if doc["diagnostics"]:
        parts.append(Text("fraglens explain CODE: what a code means and what to do", "dim"))
    text = doc.get("text") or {}
    for choice, value in text.items():
        parts.append(Text(f"text (choice {choice}): {_preview(value, 100)}", style="dim"))
    return Group(*parts)


def leaked_lines(doc: dict[str, Any]) -> list[Text]:
    """Calls the model meant that never became calls: one line each."""
    leaked = doc.get("leaked") or []
    if not leaked:
        return []
    codes = sorted({"tool-call-rejected" if f["source"] == "error" else "tool-markup-in-content"
                    for f in leaked})
    out = [Text(f"{counted(len(leaked), 'leaked call')}, not made (fraglens explain "
                f"{' / '.join(codes)})", style="bold yellow")]
    for k, found in enumerate(leaked):
        where = (f"error at event {found['event']}" if found["source"] == "error" else
                 f"choice {found['choice']} text at offset {found['offset']}, "
                 f"event {found['event']}")
        args = found["arguments"] if found["arguments"] is not None else found["arguments_raw"]
        line = Text(f"  leaked {k} [{found['family'] or 'unread'}, {where}] "
                    f"{clip(found['name'] or '', 200) or '(no name)'} ")
        line.append(found["status"], STATUS_STYLE.get(found["status"], ""))
        line.append(" " + _preview(args, 80))
        out.append(line)
    return out


def fit_line(call: dict[str, Any]) -> tuple[str, str]:
    """A call's fit verdict in a few words, and its style."""
    fit = call["fit"]
    if not fit["checked"]:
        style = "bold red" if fit["tool"] is None and call["name"] else "dim"
        return f"not checked: {fit['reason']}", style
    count = len(fit["errors"]) + fit.get("more_errors", 0)
    if not count:
        return f"fits {fit['tool']}'s schema", "green"
    strict = " (declared strict: the provider broke its promise)" if fit.get("strict") else ""
    return f"{counted(count, 'schema error')}{strict}", "bold red"


def response_lines(doc: dict[str, Any]) -> list[str]:
    """A WebSocket connection's responses, one line each, then how it closed."""
    if "responses" not in doc:
        return []
    lines = [f"{counted(len(doc['responses']), 'response')} on one WebSocket connection"]
    for n, response in enumerate(doc["responses"]):
        calls = response["calls"]
        said = ("calls " + ", ".join(map(str, calls))) if calls else "no calls"
        lines.append(f"  {n + 1}. {response['id'] or '(no id)'}: {response['status']}, {said}")
    close = doc.get("close")
    if close:
        by = f" by the {close['from']}" if close.get("from") else ""
        reason = f" ({close['reason']})" if close.get("reason") else ""
        lines.append(f"  closed{by} with code {close.get('code')}{reason}")
    return lines


def timing_lines(doc: dict[str, Any]) -> list[str]:
    """The report's timing in plain lines: a summary, one per call, one per stall."""
    timing = doc.get("timing")
    if timing is None:
        return []

    def ms(value: float | None) -> str:
        return "?" if value is None else f"{value:,.1f} ms"

    head = f"timing: duration {ms(timing['duration_ms'])}"
    if timing["first_event_ms"] is not None:
        head += f", first event {ms(timing['first_event_ms'])}"
    if timing["first_tool_byte_ms"] is not None:
        head += f", first tool byte {ms(timing['first_tool_byte_ms'])}"
    if timing["output_tokens_per_s"] is not None:
        head += f", {timing['output_tokens_per_s']:,.1f} output tokens/s"
    lines = [head]
    if timing.get("note"):
        lines.append(f"  {timing['note']}")
    names = {c["position"]: c["name"] for c in doc["calls"]}
    for t in timing["calls"]:
        if t["first_ms"] is not None:
            lines.append(
                f"  call {t['call']} {names.get(t['call']) or '(no name)'}: "
                f"{ms(t['first_ms'])} -> {ms(t['last_ms'])}"
            )
    for stall in timing["stalls"] or []:
        before = "the end" if stall["event"] is None else f"event {stall['event']}"
        lines.append(f"  stall: {ms(stall['gap_ms'])} with nothing, before {before}")
    return lines


def print_report(doc: dict[str, Any], source: str, console: Console | None = None) -> None:
    (console or Console()).print(render(doc, source))
