"""``fraglens [PATH]``: load the capture, then open it in the app."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from ..fit import fit_for_request
from ..load import LoadError, load_stream
from .check import load_tools
from .common import EXIT_CODES, CliError, add_stream_options

EXAMPLES = """\
examples:
  fraglens                      the bundled demo
  fraglens capture.sse          any capture `fraglens check` reads
  fraglens --tools t.json c.sse each call checked against its tool (t shows the tools)
  curl -sN ... | fraglens -     a stream on stdin (keys come from the terminal)"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fraglens",
        description="Open a capture in the debugger. `fraglens --help` lists the commands.",
        epilog=f"{EXAMPLES}\n\n{EXIT_CODES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", nargs="?", help="a capture (default: the bundled demo)")
    p.add_argument(
        "--tools",
        metavar="FILE",
        help="the declared tools, to check each call against (default: the recorded request's)",
    )
    add_stream_options(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Open ``args.path`` (None: the bundled demo) in the debugger. A stream
    that cannot be read exits 2 with a one-line reason, never a traceback."""
    path = args.path
    try:
        tools = load_tools(args.tools) if args.tools else None
        stream, framed = load_stream(
            path or ":demo:", format=args.format, max_arg_bytes=args.max_arg_bytes
        )
    except (LoadError, CliError) as exc:
        print(f"fraglens: error: {exc}", file=sys.stderr)
        return 2
    source = "demo" if not path else ("stdin" if path == "-" else path)
    if not stream.events:
        print(f"fraglens: error: {source}: no events in the stream", file=sys.stderr)
        return 2
    if path == "-":
        # the stream came on stdin: the keyboard is the terminal, not the pipe
        _reopen_stdin()
    from ..app.app import FraglensApp  # Textual loads only once there is something to show

    # A big recording is a few hundred thousand objects that live until exit:
    # keep the garbage collector from walking them on every collection (the
    # pauses it caused were the slowest steps in bench/tui.py).
    gc.freeze()
    fit = fit_for_request(stream, framed.meta.get("request"), tools)
    app = FraglensApp(stream, source=source, fit=fit)
    app.run()
    # SIGTERM or SIGHUP ended it (terminal restored, as on `q`): 143 or 129
    return app.signal_status or 0


def _reopen_stdin() -> None:
    """Textual reads keys from file descriptor 0: point it at the terminal."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return
    os.dup2(fd, 0)
    os.close(fd)
