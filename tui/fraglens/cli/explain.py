"""``fraglens explain CODE``: one entry of the diagnostics reference."""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys

from ..engine.diagnostics import CODES
from .common import CliError

EXAMPLES = """\
examples:
  fraglens explain args-truncated      what it means, the wire shape, what to do
  fraglens explain --list              every code with its severity"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", nargs="?", help="a diagnostic code, as check and the app show it")
    p.add_argument("--list", action="store_true", help="list every code with its severity")


def run(args: argparse.Namespace) -> int:
    from ..engine.explanations import explain

    if args.list or not args.code:
        for code, (severity, meaning) in CODES.items():
            print(f"{code:<24} {severity:<8} {meaning}")
        return 0
    code = args.code.strip().lower()
    if code not in CODES:
        close = difflib.get_close_matches(code, CODES, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise CliError(
            f"unknown diagnostic code {args.code!r}; {hint}the codes are: {', '.join(CODES)}"
        )
    width = min(shutil.get_terminal_size((80, 24)).columns, 100) - 2
    sys.stdout.write(explain(code, width=max(width, 40)))
    return 0
