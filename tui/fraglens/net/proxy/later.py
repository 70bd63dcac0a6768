"""The flows' share of the forwarding loop's work, done after the reads it passed on.

For each read the relay sends the bytes to the client, then the flows need a
copy of them (the content-encoding undone, keys scrubbed: ``decoded.py``) and
the fact reported to the sink. Done at once, that work delays every other
stream's read that is ready on the same turn of the event loop: with 50
streams, the last read of a turn waited for 49 copies. So the relay only
appends the work here, and it runs once per turn, after every read that was
ready has gone to its client. Every fact of the sink goes through the same
queue, so each exchange's facts keep their order (opened, response, body,
ended).

The queue holds at most one turn's reads (it is emptied on the next turn), so
its size is bounded by what the sockets hand over in one turn; what the flows
do with the facts after that is bounded elsewhere (``child.py``'s backlog).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["Later"]
_LOG = logging.getLogger("fraglens.proxy")


class Later:
    """Calls put off to the loop's next turn, in the order they were put."""

    def __init__(self) -> None:
        self._calls: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._scheduled = False

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        self._calls.append((fn, args))
        if not self._scheduled:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a test, or the server stopping): now
                self.run()
                return
            self._scheduled = True
            loop.call_soon(self.run)

    def run(self) -> None:
        """Everything put off so far, in order (also called once at shutdown)."""
        self._scheduled = False
        calls = self._calls
        while calls:
            fn, args = calls.popleft()
            try:
                fn(*args)
            except Exception:  # a bug in one flow's fact must cost that fact, not the rest
                _LOG.exception("fraglens proxy: unexpected error reporting to the flows")
