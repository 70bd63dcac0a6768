"""The ``fraglens`` command line: one table of subcommands, each loaded when used.

Every subcommand is a module of this package with ``EXAMPLES``,
``build(parser)`` and ``run(args) -> int``. Only the module of the command
being run is imported, so ``fraglens check`` never loads httpx, uvicorn or
Textual, and ``fraglens --version`` loads nothing at all. ``fraglens PATH``
(no subcommand) opens the app (``debugger.py``); a first word that is neither
a command nor a file, and has no dot or slash, is a mistyped command: it says
so and suggests the nearest.

Exit codes everywhere: 0 all good, 1 read but something is wrong, 2 could not
read / bad usage, always with a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import gc
import os
import sys

from .. import __version__
from .exits import EXIT_CODES, CliError

# ``typing`` (with ``re``, ``enum``, ``contextlib``) is most of what importing
# this module would cost, and ``fraglens --version`` should cost nothing:
# mypy reads the block below as it reads ``typing.TYPE_CHECKING``
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import ModuleType

__all__ = ["COMMANDS", "CliError", "batch_collector", "build_parser", "main"]

#: name -> (module in this package, one-line help). The help is here so that
#: ``fraglens --help`` lists every command without importing any of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "the calls and diagnostics of a capture, headless"),
    "explain": ("explain", "what a diagnostic code means and what to do about it"),
    "diff": ("diff", "two captures of one exchange, call by call: what changed between layers"),
    "live": ("live", "send a request, watch the tool calls assemble as they stream, record it"),
    "compare": (
        "compare",
        "send one request to several models behind one endpoint; compare their tool calls",
    ),
    "serve": (
        "serve",
        "replay captures from a local OpenAI/Anthropic/Responses-compatible server, with chaos",
    ),
    "proxy": ("proxy", "a reverse proxy for your own app: watch every tool call it receives, live"),
    "history": ("history", "build tool-call history from a stream, or check a conversation"),
    "export": ("export", "write a recording's body back out as plain SSE"),
    "import-har": ("import_har", "list a HAR export's responses and turn one into a recording"),
}

DESCRIPTION = """\
A terminal debugger for streamed LLM tool calls.
`fraglens PATH` opens a capture in the app; `fraglens` alone opens the demo."""

TOP_EXAMPLES = """\
examples:
  fraglens capture.sse                 step through a capture in the app
  fraglens check --json capture.sse    the verdict, for scripts and CI
  fraglens explain args-truncated      what a diagnostic means

""" + EXIT_CODES


def command_module(name: str) -> ModuleType:
    import importlib

    return importlib.import_module(f"{__name__}.{COMMANDS[name][0]}")


def _epilog(module: ModuleType) -> str:
    examples = getattr(module, "EXAMPLES", "")
    return f"{examples}\n\n{EXIT_CODES}" if examples else EXIT_CODES


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only``, the other commands are listed but
    not built (their modules are not imported)."""
    import argparse

    from .formatter import Formatter

    parser = argparse.ArgumentParser(
        prog="fraglens",
        description=DESCRIPTION,
        epilog=TOP_EXAMPLES,
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"fraglens {__version__}")
    # prog given: argparse would otherwise format a usage line to find it (and
    # import shutil to measure the terminal) on every start
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", prog="fraglens")
    for name, (_, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text, formatter_class=Formatter)
            continue
        module = command_module(name)
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=_epilog(module),
            formatter_class=Formatter,
        )
        module.build(p)
        p.set_defaults(run=module.run)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one command alone: the one ``build_parser`` makes for it
    among the others (its prog, help, arguments and defaults), without the
    ten parsers around it, which cost about a millisecond on every start."""
    import argparse

    from .formatter import Formatter

    module = command_module(name)
    help_text = COMMANDS[name][1]
    parser = argparse.ArgumentParser(
        prog=f"fraglens {name}",
        description=help_text,
        epilog=_epilog(module),
        formatter_class=Formatter,
    )
    module.build(parser)
    parser.set_defaults(run=module.run, command=name)
    return parser


def _looks_like_a_command(word: str) -> bool:
    """``fraglens WORD``: a capture to open, or a mistyped command? A file that
    exists is opened; otherwise a bare word (no dot, no slash, not an option or
    ``-``) is taken for a command, as no capture is named like one."""
    if word.startswith("-") or "." in word or "/" in word or os.sep in word:
        return False
    return not os.path.exists(word)


def _unknown_command(word: str, *, as_file: bool = True) -> CliError:
    """``fraglens: error: unknown command 'chek'; did you mean `fraglens check`?``
    (exit 2); without a near one, the commands there are."""
    import difflib

    near = difflib.get_close_matches(word, [*COMMANDS, "help"], n=1, cutoff=0.6)
    if near:
        return CliError(f"unknown command {word!r}; did you mean `fraglens {near[0]}`?")
    nor = ", and no file by that name" if as_file else ""
    return CliError(
        f"unknown command {word!r}{nor}; the commands: {', '.join(COMMANDS)} "
        "(fraglens help says what each does)"
    )


def _parse(argv: list[str]) -> argparse.Namespace:
    if argv and argv[0] == "help":  # `fraglens help [COMMAND]`, as git and pip have it
        topic = argv[1:2]
        if topic and topic[0] in COMMANDS:
            return build_parser(only=topic[0]).parse_args([topic[0], "--help"])
        if topic:
            raise _unknown_command(topic[0], as_file=False)
        return build_parser().parse_args(["--help"])
    if argv and argv[0] in COMMANDS:
        args, unknown = command_parser(argv[0]).parse_known_args(argv[1:])
        if unknown:  # said by the whole command line, as it always was
            return build_parser(only=argv[0]).parse_args(argv)
        return args
    if argv and argv[0] in ("-h", "--help", "--version"):
        return build_parser().parse_args(argv)
    if argv and _looks_like_a_command(argv[0]):
        raise _unknown_command(argv[0])
    from . import debugger

    return debugger.parser().parse_args(argv)


#: the commands that read their input, report and exit (the others run servers or the app)
BATCH = frozenset({"check", "history", "export", "import-har", "explain", "diff"})


def batch_collector() -> None:
    """Set the cyclic garbage collector for a command that builds one large
    graph of objects from its input and exits. With CPython's thresholds (a
    young collection every 700 allocations, a full one whenever survivors
    have grown by a quarter) the collector traverses the whole input again
    and again: on 50,000 calls it was a third of ``history check``'s time,
    and the reason 10x the calls took 20x the time. Young objects are
    collected every 100,000 allocations instead, and full collections are
    rare, as mypy sets it for its builds. The app and the servers keep
    the defaults: short pauses matter more there than throughput."""
    gc.set_threshold(100_000, 50, 50)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` says (None: the program's own command line,
    which it exits with the status of next)."""
    status = _command(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        # what the command built is left as it is to the exit: the collector's
        # full passes over the heap on the way out were 20 ms of check --jsonl's
        # 0.6 s on 1,000 captures, a third of any command's exit (atexit
        # handlers still run; the app freezes its heap itself)
        gc.freeze()
    return status


def _command(argv: list[str]) -> int:
    if argv == ["--version"]:  # what scripts ask first: answered before any import
        print(f"fraglens {__version__}")
        return 0
    if argv and argv[0] in BATCH:
        batch_collector()  # before the imports, which would start a dozen collections
    from ..reading.capture import LoadError

    try:
        args = _parse(argv)
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

