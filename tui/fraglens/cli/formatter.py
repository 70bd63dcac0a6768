"""The help formatter of every parser, which measures the terminal itself.

argparse builds a formatter for every argument it is given (to check the
argument's metavar), and the stock one imports ``shutil`` (and with it
``bz2`` and ``lzma``) to measure the terminal: about 2 ms on every start of
every command, for help that is rarely printed. This one asks ``os``, already
loaded, the way ``shutil.get_terminal_size`` does.
"""

from __future__ import annotations

import argparse
import os
import sys


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        # as argparse's own default: the terminal's width less 2
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)
