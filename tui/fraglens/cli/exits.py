"""How every command ends: its exit codes and the one-line error.

Kept apart from ``common`` (which loads the reading stack) so that the entry
point can name them without loading anything: ``fraglens --version`` and
``--help`` start as fast as Python does.
"""

from __future__ import annotations

__all__ = ["EXIT_CODES", "CliError"]

#: the epilog every command's --help ends with
EXIT_CODES = (
    "exit codes: 0 all good, 1 read but something is wrong (a call not ok, an error "
    "diagnostic), 2 could not run (bad usage, unreadable input), 130 interrupted"
)


class CliError(Exception):
    """A usage or input problem: printed as one line, exit 2."""
