"""``fraglens [PATH]``: load the capture, then open it in the app."""

from __future__ import annotations

import argparse
import os
import sys

from ..fit.tools import Tool
from ..fit.verdicts import Fit, fit_for_request
from ..reading.capture import LoadError, demo_bytes, read_bytes
from ..reading.progressive import Loading
from ..reading.stream import Stream
from .check import load_tools
from .common import (
    EXIT_CODES,
    CliError,
    add_schema_timeout_option,
    add_stream_options,
    schema_budget,
)

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
    add_schema_timeout_option(p)
    add_stream_options(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Open ``args.path`` (None: the bundled demo) in the debugger. A stream
    that cannot be read exits 2 with a one-line reason, never a traceback.
    Without a terminal to draw on (``fraglens FILE > out``, a pipe, cron) it
    prints the ``fraglens check`` report instead, as ``git log`` prints
    without a pager."""
    path = args.path
    source = "demo" if not path else ("stdin" if path == "-" else path)
    try:
        tools = load_tools(args.tools) if args.tools else None
        if tools:
            from ..fit.budget import start

            start()  # while the capture is read
        data = demo_bytes() if not path else read_bytes(path)
        # an SSE capture is read while it is shown; any other framing is framed here
        loading = Loading(data, source, format=args.format, max_arg_bytes=args.max_arg_bytes)
    except (LoadError, CliError) as exc:
        print(f"fraglens: error: {exc}", file=sys.stderr)
        return 2
    if loading.known_empty:
        print(f"fraglens: error: {source}: no events in the stream", file=sys.stderr)
        return 2
    if path == "-":
        # the stream came on stdin: the keyboard is the terminal, not the pipe
        _reopen_stdin()
    if not (sys.stdout.isatty() and sys.stdin.isatty()):
        return _print_report(loading, source, tools, schema_budget(args))
    from ..app.app import FraglensApp  # Textual loads only once there is something to show

    def fit(stream: Stream) -> Fit | None:
        """The calls against the declared tools, once the capture is read."""
        return fit_for_request(stream, loading.meta.get("request"), tools, schema_budget(args))

    app = FraglensApp(loading=loading, source=source, fit_when_loaded=fit)
    app.run()
    # SIGTERM or SIGHUP ended it (terminal restored, as on `q`): 143 or 129
    return app.signal_status or 0


def _print_report(
    loading: Loading, source: str, tools: list[Tool] | None, budget: float | None
) -> int:
    """No terminal to show the app on: the check report, and a line saying so;
    what ``check`` refuses is refused here with its line and exit code."""
    while not loading.done:
        loading.advance()
    from ..report.checked import refuse_unread

    try:
        refuse_unread(loading.stream, source, loading.meta)
    except LoadError as exc:
        print(f"fraglens: error: {exc}", file=sys.stderr)
        return 2
    print(
        "fraglens: not a terminal, so not opening the debugger: this is the "
        "`fraglens check` report (run `fraglens check --help` for its options)",
        file=sys.stderr,
    )
    from ..report.document import build_report, exit_code
    from ..report.text import print_report

    fit = fit_for_request(loading.stream, loading.meta.get("request"), tools, budget)
    doc = build_report(loading.stream, fit=fit)
    print_report(doc, source)
    return exit_code(doc)


def _reopen_stdin() -> None:
    """Textual reads keys from file descriptor 0: point it at the terminal."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return
    os.dup2(fd, 0)
    os.close(fd)
