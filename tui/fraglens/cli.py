"""The ``fraglens`` command line: subcommands, argument checks, exit codes.

Exit codes everywhere: 0 all good, 1 read but something is wrong, 2 could not
read / bad usage — always with a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from . import __version__
from .engine.reassembler import DEFAULT_MAX_ARG_BYTES
from .load import LoadError, load_stream
from .report import build_report, dumps, exit_code
from .stream import FORMATS


class CliError(Exception):
    """A usage or input problem: printed as one line, exit 2."""


def _size(text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    mult = units.get(t[-1:], 1)
    number = t[:-1] if t[-1:] in units else t
    try:
        value = int(float(number) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the size must be positive")
    return value


def _add_stream_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, help="force the wire format (default: detect)")
    p.add_argument(
        "--max-arg-bytes",
        type=_size,
        default=DEFAULT_MAX_ARG_BYTES,
        metavar="N",
        help="stop buffering a call past this size (default 16MiB; 512k, 4M, ... accepted)",
    )


# -- check --------------------------------------------------------------------


def write_json(doc: object) -> None:
    """JSON on stdout as UTF-8, whatever the terminal's locale says: indented
    for a person at a terminal, one line for a pipe or a file (as ``gh`` does)."""
    sys.stdout.buffer.write(dumps(doc, pretty=sys.stdout.isatty()).encode("utf-8"))
    sys.stdout.flush()


def cmd_check(args: argparse.Namespace) -> int:
    stream, _ = load_stream(
        args.path, format=args.format, max_arg_bytes=args.max_arg_bytes, keep_naive=args.compare
    )
    if not stream.events:
        raise CliError(f"{args.path}: no events in the stream")
    doc = build_report(stream, compare=args.compare)
    if args.json:
        write_json(doc)
    else:
        from .report_text import print_report

        print_report(doc, "stdin" if args.path == "-" else args.path)
        if args.compare and "naive" in doc:
            for how in ("by_id", "by_arrival"):
                keys = doc["naive"][how]
                sizes = " / ".join(str(k["chars"]) for k in keys)
                print(f"naive {how}: {len(keys)} key(s), {sizes} chars of arguments")
    return exit_code(doc)


# -- the app ------------------------------------------------------------------


def cmd_app(args: argparse.Namespace) -> int:
    try:
        from .app.main import run_app
    except ImportError:  # the app is not built yet: the headless verdict instead
        args.json = False
        args.compare = False
        args.path = args.path or ":demo:"
        return cmd_check(args)
    return run_app(args)


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable]] = {}


def _check_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a capture: SSE, NDJSON, JSON, HAR or a recording; - for stdin")
    p.add_argument("--json", action="store_true", help="print the JSON report (the contract)")
    p.add_argument(
        "--compare", action="store_true", help="add what naive by-id / by-arrival grouping gives"
    )
    _add_stream_options(p)


SUBCOMMANDS["check"] = ("the calls and diagnostics of a capture, headless", _check_parser,
                        cmd_check)


def register(name: str, help: str, build: Callable, run: Callable) -> None:
    """Subcommands from other modules (live, serve, history, proxy) hook in here."""
    SUBCOMMANDS[name] = (help, build, run)


def _load_plugins() -> None:
    for module in (
        "fraglens.net.commands",
        "fraglens.history.commands",
        "fraglens.recording_commands",
        "fraglens.proxy_commands",
    ):
        try:
            __import__(module)
        except ImportError as exc:
            if not exc.name or not module.startswith(exc.name):
                raise  # a real import error inside the plugin


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fraglens",
        description="A terminal debugger for streamed LLM tool calls. "
        "`fraglens PATH` opens the app; `fraglens` alone opens the demo.",
    )
    parser.add_argument("--version", action="version", version=f"fraglens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, build, run) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        build(p)
        p.set_defaults(run=run)
    return parser


def app_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fraglens", description="Open a capture in the debugger.")
    p.add_argument("path", nargs="?", help="a capture (default: the bundled demo)")
    _add_stream_options(p)
    p.set_defaults(run=cmd_app)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not (argv and argv[0] in SUBCOMMANDS):  # `check` is built in: no plugin to import
        _load_plugins()
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "--version")):
        args = build_parser().parse_args(argv)
    else:
        args = app_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (CliError, LoadError) as exc:
        print(f"fraglens: error: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        # JSON nested thousands deep: Python's json module gives up, and so do we,
        # in one line (the commands that read streams report it as a finding)
        print("fraglens: error: the input is nested too deeply to read", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
