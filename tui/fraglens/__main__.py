"""``python -m fraglens`` is ``fraglens``."""

from .cli import program

program()
