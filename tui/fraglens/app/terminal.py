"""Textual's Linux driver, made safe for a terminal that goes away.

When the terminal window is closed, every write to it fails (EIO). Textual's
writer thread dies on the first one, with a traceback; the app's later writes
are queued for it, and the queue, once full (30 writes), blocks the app for
good, on its way out too: SIGHUP, which ends the app as ``q`` does, would never
get it out. Here the writer writes through :class:`TerminalOutput`, which drops
the output once the terminal has hung up: nothing can show it any more.

It wraps the driver's ``_file`` (where Textual's writer thread writes), not a
public attribute: Textual is pinned (8.2.8), and ``tests/test_app_signals.py``
closes a terminal for real.
"""

from __future__ import annotations

import errno
from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver


class TerminalOutput:
    """The terminal as Textual's writer thread sees it: ``write`` and ``flush``,
    dropped from the first one that fails with EIO (the terminal hung up).
    Any other error is raised, as before."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False

    def _attempt(self, operation: Any, *args: Any) -> None:
        if self.gone:
            return
        try:
            operation(*args)
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            self.gone = True

    def write(self, text: str) -> None:
        self._attempt(self._file.write, text)

    def flush(self) -> None:
        self._attempt(self._file.flush)

    def fileno(self) -> int:
        return self._file.fileno()


class TerminalDriver(LinuxDriver):
    """``LinuxDriver``, writing through :class:`TerminalOutput`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._file is not None:
            # the driver types _file as the text stream it opened; ours wraps it
            self._file = TerminalOutput(self._file)  # type: ignore[assignment]
