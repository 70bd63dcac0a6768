"""The captures opened before, most recent first, for ``o``.

Kept in the user's state directory, as the XDG base directory spec places
such history: ``$XDG_STATE_HOME/fraglens/recent`` (``~/.local/state`` when the
variable is unset or not an absolute path), one absolute path a line, at most
``KEPT``. Remembering is best effort: a read-only home or a full disk never
stops a capture from opening, and a file that has gone is left out of the list.
"""

from __future__ import annotations

import os
from pathlib import Path

#: paths kept
KEPT = 20


def state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "fraglens" / "recent"


def _read() -> list[str]:
    try:
        text = state_file().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [line for line in text.splitlines() if line]


def recent_files() -> list[str]:
    """The captures opened before that are still there, most recent first."""
    return [path for path in _read() if os.path.isfile(path)]


def remember(path: str) -> None:
    """Put ``path`` first in the list (once)."""
    full = os.path.abspath(path)
    if "\n" in full or "\r" in full:
        return  # the list is one path a line
    kept = [full, *(p for p in _read() if p != full)][:KEPT]
    target = state_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"recent.{os.getpid()}.tmp")
        partial.write_text("".join(f"{p}\n" for p in kept), encoding="utf-8")
        partial.replace(target)  # whole or not at all, if two apps write at once
    except OSError:
        return
