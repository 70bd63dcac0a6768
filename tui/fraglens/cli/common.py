"""What every subcommand shares: the usage error, argument types, JSON output.

Exit codes everywhere: 0 all good, 1 read but something is wrong, 2 could not
read / bad usage: always with a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import Any

from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from ..reading.capture import LoadError, read_bytes
from ..reading.stream import FORMATS
from ..report.document import dumps
from .exits import EXIT_CODES, CliError

__all__ = [
    "CliError",
    "EXIT_CODES",
    "add_stall_option",
    "add_stream_options",
    "count",
    "non_negative",
    "positive",
    "read_json",
    "size",
    "write_json",
]

def size(text: str) -> int:
    """An argparse type: a positive byte count, ``512k``, ``4M``, ``1GiB``..."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    mult = units.get(t[-1:], 1)
    number = t[:-1] if t[-1:] in units else t
    try:
        value = float(number) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if not math.isfinite(value) or value >= 2**63:
        raise argparse.ArgumentTypeError(f"not a usable size: {text!r}")
    if int(value) <= 0:
        raise argparse.ArgumentTypeError("the size must be positive")
    return int(value)


def _number(kind: type, above_zero: bool) -> Callable[[str], Any]:
    """An argparse type: a float or int that must be > 0, or >= 0."""
    word = "a number" if kind is float else "a whole number"
    bound = "more than 0" if above_zero else "0 or more"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {word}: {text!r}") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
        if value < 0 or (above_zero and value == 0):
            raise argparse.ArgumentTypeError(f"must be {bound}")
        return value

    return parse


positive = _number(float, above_zero=True)
non_negative = _number(float, above_zero=False)
count = _number(int, above_zero=False)


def add_stream_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, help="force the wire format (default: detect)")
    p.add_argument(
        "--max-arg-bytes",
        type=size,
        default=DEFAULT_MAX_ARG_BYTES,
        metavar="N",
        help="stop buffering a call past this size (default 16MiB; 512k, 4M, ... accepted)",
    )


def add_stall_option(p: argparse.ArgumentParser) -> None:
    from ..report.timing import DEFAULT_STALL_MS

    p.add_argument(
        "--stall-ms",
        type=positive,
        default=DEFAULT_STALL_MS,
        metavar="MS",
        help="a gap between two events longer than this is a stall (default 1000)",
    )


def add_read_caps(group: argparse._ArgumentGroup, *, line: str, decoded: str) -> None:
    """``--max-line-bytes`` and ``--max-decoded-bytes``: the caps on what a
    network read decodes, spelled and defaulted once for ``live`` and ``proxy``;
    ``line`` and ``decoded`` say what each caps in that command."""
    from ..net.limits import DEFAULT_LIMITS  # not for check, which reads no network

    group.add_argument(
        "--max-line-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_line,
        metavar="N",
        help=f"{line} (default 4M)",
    )
    group.add_argument(
        "--max-decoded-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_decoded,
        metavar="N",
        help=f"{decoded} (default 64M)",
    )


def write_json(doc: object) -> None:
    """JSON on stdout as UTF-8, whatever the terminal's locale says: indented
    for a person at a terminal, one line for a pipe or a file (as ``gh`` does)."""
    sys.stdout.buffer.write(dumps(doc, pretty=sys.stdout.isatty()).encode("utf-8"))
    sys.stdout.flush()


def read_json(path: str, what: str) -> Any:
    """A JSON file named on the command line, or a one-line CliError."""
    try:
        data = read_bytes(path)
    except LoadError as exc:
        raise CliError(f"{what}: {exc}") from None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{what} {path}: not JSON ({exc})") from None
