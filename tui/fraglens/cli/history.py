"""``fraglens history build|check``: the history library on the command line."""

from __future__ import annotations

import argparse
import sys

from ..history import (
    SHAPES,
    HistoryError,
    build_history,
    check_conversation,
    exit_code,
    format_problems,
    load_conversation,
    problems_json,
)
from ..reading.capture import load_stream, read_bytes
from ..report.document import build_report, dumps, printable
from .common import CliError, add_schema_timeout_option, add_stream_options, schema_budget

EXAMPLES = """\
examples:
  fraglens history build capture.sse > messages.json
  fraglens history check request.json"""


def build(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="history_command", metavar="build|check", required=True)
    b = sub.add_parser("build", help="the messages that go back to the model for a stream's calls")
    b.add_argument("path", help="any capture fraglens check reads; - for stdin")
    b.add_argument("--json", action="store_true", help="messages and notes as one JSON document")
    b.add_argument("--shape", choices=SHAPES, help="force the API shape (default: the stream's)")
    b.add_argument("--include-broken", action="store_true",
                   help="also include calls whose status is not ok/empty (marked in the notes)")
    b.add_argument("--choice", type=int, default=0, help="which choice (default 0)")
    add_stream_options(b)
    c = sub.add_parser("check", help="validate a conversation before sending it")
    c.add_argument("path", help="a messages array or a request body (JSON); - for stdin")
    c.add_argument("--json", action="store_true", help="problems as JSON")
    add_schema_timeout_option(c)


def run(args: argparse.Namespace) -> int:
    if args.history_command == "build":
        stream, _ = load_stream(args.path, format=args.format, max_arg_bytes=args.max_arg_bytes)
        try:
            built = build_history(build_report(stream), shape=args.shape,
                                  include_broken=args.include_broken, choice=args.choice)
        except HistoryError as exc:
            raise CliError(str(exc)) from None
        if args.json:
            sys.stdout.write(dumps(built))
        else:
            sys.stdout.write(dumps(built["messages"]))
            for note in built["notes"]:
                print(f"note: {printable(note)}", file=sys.stderr)
        return 0
    try:
        doc = load_conversation(read_bytes(args.path))
        problems = check_conversation(doc, schema_budget(args))
    except HistoryError as exc:
        raise CliError(f"{args.path}: {exc}") from None
    if args.json:
        sys.stdout.write(dumps(problems_json(problems)))
    else:
        print(printable(format_problems(problems)) if problems else "no problems")
    return exit_code(problems)
