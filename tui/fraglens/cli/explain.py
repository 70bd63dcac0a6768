"""``fraglens explain CODE``: one entry of the diagnostics reference."""

from __future__ import annotations

import argparse
import sys

from ..engine.diagnostics import CODES
from .common import CliError

EXAMPLES = """\
examples:
  fraglens explain args-truncated
  fraglens explain --list"""


def build(p: argparse.ArgumentParser) -> None:
    p.add_argument("code", nargs="?", help="a diagnostic code, as check and the app show it")
    p.add_argument("--list", action="store_true", help="list every code with its severity")


def run(args: argparse.Namespace) -> int:
    from ..engine.explanations import explain

    if args.list or not args.code:
        for code, (severity, meaning, _) in CODES.items():
            print(f"{code:<24} {severity:<8} {meaning}")
        return 0
    if args.code not in CODES:
        known = ", ".join(CODES)
        raise CliError(f"unknown diagnostic code {args.code!r}; the codes are: {known}")
    sys.stdout.write(explain(args.code))
    return 0
