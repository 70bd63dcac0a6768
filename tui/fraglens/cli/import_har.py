"""``fraglens import-har``: list a HAR export's responses and turn one into a recording."""

from __future__ import annotations

import argparse
import json
import sys

from ..framing.events import FramingError
from ..framing.har import default_entry, har_entry_to_recording, list_streams
from ..reading.capture import read_bytes
from ..report.document import printable
from .common import CliError
from .export import write_output

__all__ = ["build", "run"]

EXAMPLES = """\
examples:
  fraglens import-har --list session.har
  fraglens import-har session.har --index 12 -o rec.fraglens"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="FILE.har", help="a HAR export (DevTools, Firefox, mitmproxy)")
    p.add_argument("--list", action="store_true", help="list the entries; * marks streams")
    p.add_argument(
        "--index",
        type=int,
        metavar="N",
        help="the entry to import (default: the first saved event stream)",
    )
    p.add_argument("-o", "--output", metavar="OUT", help="where to write (default: stdout)")


def _load_har(path: str) -> dict:
    data = read_bytes(path)
    try:
        har = json.loads(data)
    except ValueError:
        raise CliError(f"{path}: not a HAR export (not JSON)") from None
    if not isinstance(har, dict):
        raise CliError(f"{path}: not a HAR export (no log.entries)")
    return har


def _size(n: object) -> str:
    if not isinstance(n, int):
        return "-"
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def run(args: argparse.Namespace) -> int:
    har = _load_har(args.path)
    try:
        rows = list_streams(har)
        if args.list:
            for row in printable(rows):
                mark = "*" if row["event_stream"] else " "
                saved = "" if row["has_body"] else "  (body not saved)"
                if row["websocket_messages"]:
                    saved = f"  ({row['websocket_messages']} WebSocket messages)"
                print(
                    f"{mark}{row['index']:>4}  {row['method']:<6} {row['status']!s:>3}  "
                    f"{row['content_type'][:28]:<28} {_size(row['size']):>10}  {row['url']}{saved}"
                )
            return 0
        index = default_entry(har) if args.index is None else args.index
        recording = har_entry_to_recording(har, index)
    except FramingError as exc:
        raise CliError(f"{args.path}: {exc}") from None
    write_output(recording, args.output)
    if args.output and args.output != "-":
        row = printable(rows[index])
        print(
            f"fraglens: entry {index} ({row['method']} {row['url']}, HTTP {row['status']}) "
            f"-> {args.output}",
            file=sys.stderr,
        )
    return 0
