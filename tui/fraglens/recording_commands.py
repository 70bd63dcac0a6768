"""``fraglens export`` and ``fraglens import-har``: moving captures in and out of recordings.

``export --sse`` writes the response body a plain capture (``curl -N``) would
have saved; ``import-har`` lists the requests of a browser / mitmproxy HAR
export and turns the chosen one into a fraglens recording. The framing
package does the reading; this module only picks, writes and says what it did.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .cli import CliError, register
from .framing.detect import read_stream
from .framing.events import FramingError
from .framing.har import default_entry, har_entry_to_recording, list_streams
from .framing.recording import parse_recording
from .load import read_bytes

__all__ = ["run_export", "run_import_har"]


def _write(data: bytes, out: str | None) -> None:
    if out is None or out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(out).write_bytes(data)
    except OSError as exc:
        raise CliError(f"-o {out}: {exc.strerror or exc}") from None


# -- export --------------------------------------------------------------------------------


def _export_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="RECORDING", help="a recording, a HAR, or any capture")
    p.add_argument(
        "--sse",
        action="store_true",
        help="write the response body as plain SSE text (the default and only format)",
    )
    p.add_argument("-o", "--output", metavar="OUT", help="where to write (default: stdout)")


def body_of(data: bytes, name: str) -> tuple[bytes, str | None]:
    """The response body of a capture, and what it is when not SSE."""
    try:
        framed = read_stream(data)
    except FramingError as exc:
        raise CliError(f"{name}: {exc}") from None
    if framed.framing == "recording":
        body = parse_recording(data).body
    elif framed.framing == "har":
        har = json.loads(data)
        body = parse_recording(har_entry_to_recording(har, default_entry(har))).body
    else:
        body = data
    inner = framed.meta.get("body_framing") if framed.framing in ("recording", "har") else None
    kind = inner if framed.framing in ("recording", "har") else framed.framing
    return body, None if kind == "sse" else kind


def run_export(args: argparse.Namespace) -> int:
    body, other = body_of(read_bytes(args.path), args.path)
    if not body:
        raise CliError(f"{args.path}: the recording holds no response body")
    if other is not None:
        print(
            f"fraglens: note: {args.path}: the body is {other}, not SSE: written as received",
            file=sys.stderr,
        )
    _write(body, args.output)
    return 0


register("export", "write a recording's body back out as plain SSE", _export_parser, run_export)


# -- import-har ------------------------------------------------------------------------------


def _import_parser(p: argparse.ArgumentParser) -> None:
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


def run_import_har(args: argparse.Namespace) -> int:
    har = _load_har(args.path)
    try:
        rows = list_streams(har)
        if args.list:
            for row in rows:
                mark = "*" if row["event_stream"] else " "
                saved = "" if row["has_body"] else "  (body not saved)"
                print(
                    f"{mark}{row['index']:>4}  {row['method']:<6} {row['status']!s:>3}  "
                    f"{row['content_type'][:28]:<28} {_size(row['size']):>10}  {row['url']}{saved}"
                )
            return 0
        index = default_entry(har) if args.index is None else args.index
        recording = har_entry_to_recording(har, index)
    except FramingError as exc:
        raise CliError(f"{args.path}: {exc}") from None
    _write(recording, args.output)
    if args.output and args.output != "-":
        row = rows[index]
        print(
            f"fraglens: entry {index} ({row['method']} {row['url']}, HTTP {row['status']}) "
            f"-> {args.output}",
            file=sys.stderr,
        )
    return 0


register(
    "import-har",
    "list a HAR export's responses and turn one into a recording",
    _import_parser,
    run_import_har,
)
