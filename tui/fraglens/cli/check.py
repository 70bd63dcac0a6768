"""``fraglens check``: the verdict on a capture, for people and for scripts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..engine.plural import counted
from ..report.checked import CheckOptions, checked
from ..report.document import exact_arguments, exit_code
from .common import (
    CliError,
    add_otlp_options,
    add_price_options,
    add_schema_timeout_option,
    add_stall_option,
    add_stream_options,
    otlp_wanted,
    positive_count,
    price_options,
    prices_asked,
    read_json,
    schema_budget,
    write_json,
)

if TYPE_CHECKING:
    from ..fit.tools import Tool
    from ..reading.stream import Stream

EXAMPLES = """\
examples:
  fraglens check capture.sse
  fraglens check --tools request.json capture.sse   # do the calls fit the declared tools?
  fraglens check --stall-ms 500 rec.fraglens
  fraglens check --chunking capture.sse             # how the backend cut the calls up
  curl -sN ... | fraglens check --json - | jq '.calls[].status'
  fraglens check --jsonl recordings/ > day.jsonl     # one line per capture, on every core
  fraglens check --jsonl --dask tcp://10.0.0.5:8786 's3://bucket/2026-12-01/*.fraglens'"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path",
        nargs="+",
        help="a capture: SSE, NDJSON, JSON, HAR or a recording; - for stdin (with --jsonl: "
        "any number of files, folders and globs)",
    )
    p.add_argument("--json", action="store_true", help="print the JSON report (the contract)")
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="check every capture given (files, folders, globs, fsspec URLs): one JSON line "
        "each, the report and its file, in a stable order; a summary on stderr",
    )
    p.add_argument(
        "--jobs",
        type=positive_count,
        metavar="N",
        help="with --jsonl: check on N local processes (default: one per core)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="with --jsonl: check on the Dask cluster whose scheduler is at ADDRESS "
        "(needs fraglens[dask]); the workers read the paths",
    )
    p.add_argument(
        "--compare", action="store_true", help="add what naive by-id / by-arrival grouping gives"
    )
    p.add_argument(
        "--tools",
        metavar="FILE",
        help="the declared tools (OpenAI, Responses, Anthropic or Gemini shape, or a whole "
        "request body): check each call's arguments against its tool's schema "
        "(default: the tools of the request a recording or HAR holds)",
    )
    p.add_argument(
        "--chunking",
        action="store_true",
        help="add how the tool calls were cut into fragments (sizes, cuts mid-string...)",
    )
    add_schema_timeout_option(p)
    add_stall_option(p)
    add_stream_options(p)
    add_otlp_options(p, "capture")
    add_price_options(p)


def load_tools(path: str) -> list[Tool]:
    """The tools declared in a JSON file, or a one-line CliError."""
    from ..fit.tools import ToolsError, read_tools

    try:
        return read_tools(read_json(path, "--tools"))
    except ToolsError as exc:
        raise CliError(f"--tools {path}: {exc}") from None


def options(args: argparse.Namespace) -> CheckOptions:
    tools = load_tools(args.tools) if args.tools else None
    return CheckOptions(
        format=args.format,
        max_arg_bytes=args.max_arg_bytes,
        compare=args.compare,
        chunking=args.chunking,
        stall_ms=args.stall_ms,
        tools=tuple(tools) if tools is not None else None,
        prices=price_options(args) if prices_asked(args) else None,
        schema_budget=schema_budget(args),
    )


def run(args: argparse.Namespace) -> int:
    if args.jsonl:
        from .batch import run_batch

        return run_batch(args, options(args))
    if args.jobs is not None or args.dask is not None:
        raise CliError("--jobs and --dask check several captures: use them with --jsonl")
    if len(args.path) > 1:
        raise CliError(f"{len(args.path)} captures given: check reads one, or use --jsonl "
                       "for one line per capture")
    path = args.path[0]
    opts = options(args)
    if opts.tools:
        from ..fit.budget import start

        start()
    doc, stream = checked(path, opts)
    _export_span(args, doc, stream)
    if args.json:
        write_json(doc, exact_arguments(stream))
    else:
        from ..report.text import print_report

        print_report(doc, "stdin" if path == "-" else path)
        if args.compare and "naive" in doc:
            for how in ("by_id", "by_arrival"):
                keys = doc["naive"][how]
                sizes = " / ".join(str(k["chars"]) for k in keys)
                print(f"naive {how}: {counted(len(keys), 'key')}, {sizes} chars of arguments")
        if "chunking" in doc:
            from ..report.chunking import chunking_line

            print(f"chunking: {chunking_line(doc['chunking'])}")
    return exit_code(doc)


def _export_span(args: argparse.Namespace, doc: dict[str, Any], stream: Stream) -> None:
    """One span for the capture, when ``--otlp`` or the environment asks."""
    if not otlp_wanted(args):
        return
    from ..net.otlp import OtlpUnavailable, exporter_for

    try:
        exporter = exporter_for(args.otlp, "fraglens check")
    except OtlpUnavailable as exc:
        raise CliError(str(exc)) from None
    if exporter is None:
        return
    from ..report.genai_span import genai_span

    exporter.export(genai_span(doc, stream, content=args.otlp_content))
    exporter.close()
