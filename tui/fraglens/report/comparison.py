"""The ``fraglens compare`` report for people: one row per backend, then the differences.

Reads the ``compare --json`` document, so both views always agree.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..engine.plural import counted
from .diff import change_line
from .text import STATUS_STYLE

__all__ = [
    "COLUMNS",
    "agreement_lines",
    "backend_cells",
    "nonstream_lines",
    "print_compare",
    "render_compare",
    "repeat_lines",
]

#: the table's columns, in order (the app's comparison screen shows the same):
#: "median" is the median fragment size in characters, "1st tool" the time from
#: the request to the event that opened the first tool call
COLUMNS = ("model", "calls", "worst", "codes raised", "fragments", "median", "1st tool", "cost")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.2f} s"


def _first_tool_byte(row: dict[str, Any]) -> float | None:
    value = (row.get("timing") or {}).get("first_tool_byte_ms")
    return value if isinstance(value, (int, float)) else None


def backend_cells(row: dict[str, Any]) -> tuple[Text, ...]:
    """One backend's row, in COLUMNS order; a failed backend says why in ``worst``."""
    codes = sorted({d["code"] for d in row["diagnostics"]})
    chunking = row.get("chunking") or {}
    median = (chunking.get("fragment_chars") or {}).get("median")
    if row["error"] is not None:
        worst = Text("✖ failed", "bold red")
    elif row["worst"] is None:
        worst = Text("no calls", "dim")
    else:
        worst = Text(row["worst"], STATUS_STYLE.get(row["worst"], ""))
    return (
        Text(row["model"], "bold"),
        Text(str(len(row["calls"]))),
        worst,
        Text("\n".join(codes) or "-", "dim" if not codes else ""),
        Text(str(chunking.get("fragments", "-"))),
        Text("-" if median is None else f"{median:g}"),
        Text(_ms(_first_tool_byte(row))),
        Text("-" if not row["cost"] else f"{row['cost']['total']:.6f} {row['cost']['currency']}"),
    )


def _value(call: dict[str, Any] | None) -> str:
    if call is None:
        return "(no call)"
    args = json.dumps(call["arguments"], ensure_ascii=False)
    return f"{call['name']} {args} ({call['status']})"


def _difference_lines(difference: dict[str, Any]) -> list[Text]:
    what = difference["what"]
    keys = difference.get("keys")
    head = f"call {difference['call']}: {what} differ"
    if what == "missing":
        head = f"call {difference['call']}: not made by every backend"
    elif what == "status":
        head = f"call {difference['call']}: same value, but not ok everywhere"
    if keys:
        head += f" (keys: {', '.join(keys)})"
    lines = [Text(head, style="yellow")]
    # backends that made the same call share one line
    groups: dict[str, list[str]] = {}
    for model, call in difference["backends"].items():
        groups.setdefault(_value(call), []).append(model)
    for value, models in groups.items():
        lines.append(Text(f"  {', '.join(models)}: {value}"))
    return lines


def render_compare(doc: dict[str, Any]) -> Group:
    rows = doc["backends"]
    table = Table(title=counted(len(rows), "backend"), title_justify="left", expand=False)
    for name in COLUMNS:
        if name in ("model", "codes raised"):
            table.add_column(name, overflow="fold", ratio=1)
        else:  # short values, never cut
            table.add_column(name, no_wrap=True, min_width=len(name))
    for row in rows:
        table.add_row(*backend_cells(row))
    parts: list[Any] = [table]
    for row in rows:
        if row["error"] is not None:
            parts.append(Text(f"{row['model']} failed: {row['error']}", style="red"))
    recorded = [row["recording"] for row in rows if row.get("recording")]
    if recorded:
        parts.append(Text(f"recorded: {' '.join(recorded)}", style="dim"))
    if doc.get("by_cost"):
        prices = ", ".join(doc.get("prices") or [])
        parts.append(Text(f"by cost, cheapest first: {', '.join(doc['by_cost'])} "
                          f"(prices: {prices})"))
    parts.extend(agreement_lines(doc))
    parts.extend(repeat_lines(doc))
    parts.extend(nonstream_lines(doc))
    return Group(*parts)


def repeat_lines(doc: dict[str, Any]) -> list[Text]:
    """With ``--repeat``: per model, in how many runs each code and call shape came."""
    lines = []
    for entry in doc.get("repeats", []):
        runs = entry["runs"]
        lines.append(Text(f"{entry['model']}: {runs} runs, {entry['answered']} answered",
                          style="bold"))
        for code, n in entry["diagnostics"].items():
            lines.append(Text(f"  {code}: {n}/{runs} runs"))
        for shape in entry["shapes"]:
            lines.append(Text(f"  calls {shape['shape']}: {shape['runs']}/{runs} runs"))
        for failure in entry["failures"]:
            lines.append(Text(f"  failed: {failure['error']}: {failure['runs']}/{runs} runs",
                              "red"))
    return lines


def nonstream_lines(doc: dict[str, Any]) -> list[Text]:
    """With ``--nonstream``: per model, the streamed runs whose calls are not the
    non-streamed answer's, and what differs."""
    lines = []
    for entry in doc.get("nonstream", []):
        model = entry["model"]
        if entry["error"] is not None:
            lines.append(Text(f"{model}: no non-streamed answer: {entry['error']}", "red"))
            continue
        if not entry["runs"]:
            lines.append(Text(f"{model}: every streamed run is the non-streamed answer", "green"))
            continue
        runs = ", ".join(str(r["run"] + 1) for r in entry["runs"])
        said = f"run {runs} differs" if len(entry["runs"]) == 1 else f"runs {runs} differ"
        lines.append(Text(f"{model}: {said} from the non-streamed answer:", "bold yellow"))
        for run in entry["runs"]:
            for call in run["calls"]:
                what = ", ".join(call["differs"])
                head = f"  run {run['run'] + 1}: call #{call['a']} {call['name']} ({what})"
                lines.append(Text(head, "yellow"))
                lines.extend(Text(f"    {change_line(c)}") for c in call.get("changes", []))
                if "verdict" in call["differs"]:
                    st = call["status"]
                    lines.append(Text(f"    streamed {st['a']}, non-streamed {st['b']}"))
            for side, key in (("only streamed", "only_streamed"),
                              ("only non-streamed", "only_nonstreamed")):
                for call in run[key]:
                    lines.append(Text(f"  run {run['run'] + 1}: {side}: {call['name']} "
                                      f"{call['arguments_raw']}", "yellow"))
    return lines


def agreement_lines(doc: dict[str, Any]) -> list[Text]:
    """Whether the backends that answered agree, then each difference."""
    # with --repeat, the backends are held to each other on their first run
    answered = sum(r["error"] is None for r in doc["backends"] if r.get("run", 0) == 0)
    if doc["agree"]:
        return [Text(f"the {counted(answered, 'backend')} that answered agree", style="green")]
    lines = [
        Text(f"the {counted(answered, 'backend')} that answered disagree:", style="bold yellow")
    ]
    for difference in doc["differences"]:
        lines.extend(_difference_lines(difference))
    return lines


def print_compare(doc: dict[str, Any], console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:  # a pipe or a file: no terminal to fit, room for the table
            console = Console(width=120)
    console.print(render_compare(doc))
