"""``fraglens export``: a recording's body back out as the plain capture ``curl -N`` saves.

A WebSocket connection's recording has no body: its server messages are
written as the SSE events the same API streams over HTTP.

The framing package does the reading; this module only writes and says what it did.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..framing.detect import read_stream
from ..framing.events import FramingError
from ..framing.har import default_entry, har_entry_to_recording
from ..framing.recording import is_recording, parse_recording, to_json_lines
from ..reading.capture import read_bytes
from .common import CliError

__all__ = ["body_of", "build", "run", "write_output"]

EXAMPLES = """\
examples:
  fraglens export --sse rec.fraglens > capture.sse
  fraglens export --jsonl rec.fraglens | jq -c 'select(.t > 1.5)'   # JSON Lines, for jq"""


def write_output(data: bytes, out: str | None) -> None:
    if out is None or out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(out).write_bytes(data)
    except OSError as exc:
        raise CliError(f"-o {out}: {exc.strerror or exc}") from None


def _json_lines(data: bytes, name: str) -> bytes:
    """A recording (or a HAR's entry) as JSON lines, version 1."""
    try:
        framed = read_stream(data)
    except FramingError as exc:
        raise CliError(f"{name}: {exc}") from None
    if framed.framing == "har" or "har" in framed.meta:
        har = json.loads(data)
        data = har_entry_to_recording(har, default_entry(har), fingerprints=False)
    elif framed.framing not in ("recording", "websocket") or not is_recording(data):
        raise CliError(f"{name}: --jsonl writes a recording or a HAR entry; this is "
                       f"{framed.framing}")
    return to_json_lines(data)


# -- export --------------------------------------------------------------------------------


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="RECORDING", help="a recording, a HAR, or any capture")
    p.add_argument(
        "--sse",
        action="store_true",
        help="write the response body as plain SSE text (the default)",
    )
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="write a recording as JSON lines, a line per read (version 1: for jq, "
        "or a fraglens older than version 3 recordings)",
    )
    p.add_argument("-o", "--output", metavar="OUT", help="where to write (default: stdout)")


def body_of(data: bytes, name: str) -> tuple[bytes, str | None]:
    """The response body of a capture, and what it is when not SSE."""
    try:
        framed = read_stream(data)
    except FramingError as exc:
        raise CliError(f"{name}: {exc}") from None
    if framed.framing == "websocket":
        from ..framing.websocket import websocket_to_sse

        if "har" in framed.meta:
            har = json.loads(data)
            rec = parse_recording(har_entry_to_recording(har, default_entry(har)))
        else:
            rec = parse_recording(data)
        # the server's messages are the events an SSE body carries over HTTP
        return websocket_to_sse(rec), None
    if framed.framing == "recording":
        body = parse_recording(data).body
    elif framed.framing == "har":
        har = json.loads(data)
        recording = har_entry_to_recording(har, default_entry(har), fingerprints=False)
        body = parse_recording(recording).body
    else:
        body = data
    inner = framed.meta.get("body_framing") if framed.framing in ("recording", "har") else None
    kind = inner if framed.framing in ("recording", "har") else framed.framing
    return body, None if kind == "sse" else kind


def run(args: argparse.Namespace) -> int:
    if args.jsonl:
        write_output(_json_lines(read_bytes(args.path), args.path), args.output)
        return 0
    body, other = body_of(read_bytes(args.path), args.path)
    if not body:
        raise CliError(f"{args.path}: the recording holds no response body")
    if other is not None:
        print(
            f"fraglens: note: {args.path}: the body is {other}, not SSE: written as received",
            file=sys.stderr,
        )
    write_output(body, args.output)
    return 0
