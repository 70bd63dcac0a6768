"""``python -m fraglens`` is ``fraglens``."""

from .cli import main

raise SystemExit(main())
