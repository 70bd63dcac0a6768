"""``fraglens check``: the verdict on a capture, for people and for scripts."""

from __future__ import annotations

import argparse

from ..load import load_stream
from ..report import build_report, exit_code
from .common import CliError, add_stream_options, write_json

EXAMPLES = """\
examples:
  fraglens check capture.sse
  fraglens check --chunking capture.sse     how the backend cut the calls into fragments
  curl -sN ... | fraglens check --json - | jq '.calls[].status'"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a capture: SSE, NDJSON, JSON, HAR or a recording; - for stdin")
    p.add_argument("--json", action="store_true", help="print the JSON report (the contract)")
    p.add_argument(
        "--compare", action="store_true", help="add what naive by-id / by-arrival grouping gives"
    )
    p.add_argument(
        "--chunking",
        action="store_true",
        help="add how the tool calls were cut into fragments (sizes, cuts mid-string...)",
    )
    add_stream_options(p)


def run(args: argparse.Namespace) -> int:
    stream, _ = load_stream(
        args.path, format=args.format, max_arg_bytes=args.max_arg_bytes, keep_naive=args.compare
    )
    if not stream.events:
        raise CliError(f"{args.path}: no events in the stream")
    if not stream.model_response:
        raise CliError(f"{args.path}: no model response found ({stream.framing} of "
                       f"{len(stream.events)} event(s), none of them a model API's)")
    doc = build_report(stream, compare=args.compare)
    if args.chunking:
        from ..chunking import chunking_profile

        doc["chunking"] = chunking_profile(stream)
    if args.json:
        write_json(doc)
    else:
        from ..report_text import print_report

        print_report(doc, "stdin" if args.path == "-" else args.path)
        if args.compare and "naive" in doc:
            for how in ("by_id", "by_arrival"):
                keys = doc["naive"][how]
                sizes = " / ".join(str(k["chars"]) for k in keys)
                print(f"naive {how}: {len(keys)} key(s), {sizes} chars of arguments")
        if "chunking" in doc:
            from ..chunking import chunking_line

            print(f"chunking: {chunking_line(doc['chunking'])}")
    return exit_code(doc)
