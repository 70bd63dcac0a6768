"""``python -m tui`` is ``fraglens``."""

from .cli import main

raise SystemExit(main())
