"""``fraglens check``: the verdict on a capture, for people and for scripts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..reading.capture import load_stream
from ..report.document import build_report, exit_code
from .common import CliError, add_stall_option, add_stream_options, read_json, write_json

if TYPE_CHECKING:
    from ..fit.tools import Tool

EXAMPLES = """\
examples:
  fraglens check capture.sse
  fraglens check --tools request.json capture.sse   # do the calls fit the declared tools?
  fraglens check --stall-ms 500 recording.jsonl
  fraglens check --chunking capture.sse             # how the backend cut the calls up
  curl -sN ... | fraglens check --json - | jq '.calls[].status'"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a capture: SSE, NDJSON, JSON, HAR or a recording; - for stdin")
    p.add_argument("--json", action="store_true", help="print the JSON report (the contract)")
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
    add_stall_option(p)
    add_stream_options(p)


def load_tools(path: str) -> list[Tool]:
    """The tools declared in a JSON file, or a one-line CliError."""
    from ..fit.tools import ToolsError, read_tools

    try:
        return read_tools(read_json(path, "--tools"))
    except ToolsError as exc:
        raise CliError(f"--tools {path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    tools = load_tools(args.tools) if args.tools else None
    stream, framed = load_stream(
        args.path, format=args.format, max_arg_bytes=args.max_arg_bytes, keep_naive=args.compare
    )
    if not stream.events:
        raise CliError(f"{args.path}: no events in the stream")
    if not stream.model_response:
        raise CliError(f"{args.path}: no model response found ({stream.framing} of "
                       f"{len(stream.events)} event(s), none of them a model API's)")
    fit = None
    request = framed.meta.get("request")
    if tools is not None or request is not None:  # the schema checks load only then
        from ..fit.verdicts import fit_for_request

        fit = fit_for_request(stream, request, tools)
    doc = build_report(stream, compare=args.compare, fit=fit, stall_ms=args.stall_ms)
    if args.chunking:
        from ..report.chunking import chunking_profile

        doc["chunking"] = chunking_profile(stream)
    if args.json:
        write_json(doc)
    else:
        from ..report.text import print_report

        print_report(doc, "stdin" if args.path == "-" else args.path)
        if args.compare and "naive" in doc:
            for how in ("by_id", "by_arrival"):
                keys = doc["naive"][how]
                sizes = " / ".join(str(k["chars"]) for k in keys)
                print(f"naive {how}: {len(keys)} key(s), {sizes} chars of arguments")
        if "chunking" in doc:
            from ..report.chunking import chunking_line

            print(f"chunking: {chunking_line(doc['chunking'])}")
    return exit_code(doc)
