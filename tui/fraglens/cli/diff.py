"""``fraglens diff A B``: two captures of one exchange, call by call.

Exit codes: 0 both carry the same calls with the same arguments; 1 they
differ (a call missing or extra, a name or an argument changed); 2 one of
them could not be read.
"""

from __future__ import annotations

import argparse

from ..engine.plural import counted
from ..reading.capture import load_stream
from ..reading.stream import Stream
from ..report.diff import diff_doc, diff_exit
from ..report.document import build_report
from .common import FORMATS, CliError, add_stream_options, write_json

EXAMPLES = """\
examples:
  fraglens diff provider.sse agui.sse          # did the agent layer change a call?
  fraglens diff rec.fraglens export.har        # a recording against the browser's view
  fraglens diff --json a.sse b.sse | jq '.calls[] | select(.differs != [])'
  fraglens diff --app a.sse b.sse              # both side by side, the differences marked"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", help="a capture (SSE, NDJSON, JSON, HAR, a recording)")
    p.add_argument("b", metavar="B", help="another capture of the same exchange")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the differences as JSON")
    out.add_argument("--app", action="store_true",
                     help="open both side by side in the app, the differences marked")
    p.add_argument("--format-b", choices=FORMATS, metavar="FORMAT",
                   help="force B's wire format when it is not A's (--format forces A's, "
                        "and B's too unless this is given)")
    add_stream_options(p)


def read(path: str, fmt: str | None, max_arg_bytes: int) -> tuple[Stream, dict]:
    """A capture's stream and report, or a one-line CliError (exit 2)."""
    stream, framed = load_stream(path, format=fmt, max_arg_bytes=max_arg_bytes)
    if not stream.events:
        raise CliError(f"{path}: no events in the stream")
    if not stream.model_response:
        raise CliError(f"{path}: no model response found ({stream.framing} of "
                       f"{counted(len(stream.events), 'event')}, none of them a model API's)")
    return stream, build_report(stream)


def run(args: argparse.Namespace) -> int:
    a_stream, a_doc = read(args.a, args.format, args.max_arg_bytes)
    b_format = args.format_b or args.format
    b_stream, b_doc = read(args.b, b_format, args.max_arg_bytes)
    doc = diff_doc(args.a, a_doc, args.b, b_doc)
    if args.app:
        from ..app.screens.diff import run_diff_app

        return run_diff_app(doc, (args.a, a_stream, a_doc), (args.b, b_stream, b_doc))
    if args.json:
        write_json(doc)
    else:
        from ..report.diff import print_diff

        print_diff(doc)
    return diff_exit(doc)
