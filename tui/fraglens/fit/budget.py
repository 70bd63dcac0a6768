"""Each call's validation run in the validation worker (``fit/worker.py``)
under a time budget, so that no schema can hang fraglens or stop Ctrl-C.

One worker serves the whole program, started at the first call to validate
and reused (a lock keeps the proxy's threads to one request at a time). While
it works, this process waits on a pipe, where Ctrl-C interrupts it: the worker
is then ended and the KeyboardInterrupt goes on. A worker that ran out of
budget has ended itself; its stack names the keyword it was in, and the next
call starts a new one.
"""

from __future__ import annotations

import atexit
import os
import pickle
import re
import selectors
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from .validation import Outcome, keyword_of
from .worker import HEADER

__all__ = ["DEFAULT_BUDGET", "run"]

#: seconds one call's validation may take (``--schema-timeout``)
DEFAULT_BUDGET = 1.0
#: how much longer than the budget this process waits for the worker's own
#: watchdog before ending the worker itself (moving a large value through the pipe)
_GRACE = 10.0

#: a frame of the watchdog's stack: ``  File "PATH", line N in NAME``
_FRAME = re.compile(r'^\s*File "(?P<filename>.*)", line \d+ in (?P<name>\S+)', re.M)


class _Frame:
    def __init__(self, filename: str, name: str) -> None:
        self.filename = filename
        self.name = name


class _Worker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        #: the keys whose schema the running worker was sent
        self.sent: set[int] = set()
        self.registered = False

    def run(self, key: int, schema: Any, value: Any, budget: float | None) -> Outcome:
        with self.lock:
            outcome = self._send(key, None if key in self.sent else schema, value, budget)
            if outcome == ("unknown",):  # the worker let this validator go: send the schema
                outcome = self._send(key, schema, value, budget)
            if outcome[0] not in ("too-slow", "stopped", "too-deep"):
                self.sent.add(key)
            return outcome

    def _send(self, key: int, schema: Any, value: Any, budget: float | None) -> Outcome:
        try:
            request = pickle.dumps((key, schema, value, budget), pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            return ("too-deep", "the arguments or the schema are nested too deeply to check")
        return self._round_trip(request, budget)

    def _round_trip(self, request: bytes, budget: float | None) -> Outcome:
        proc = self._started()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(HEADER.pack(len(request)) + request)
            proc.stdin.flush()
            answer = _read(proc.stdout.fileno(), None if budget is None else budget + _GRACE)
        except BrokenPipeError:
            answer = None
        except TimeoutError:  # past even the grace: this process ends it
            self.stop()
            return ("too-slow", None)
        except BaseException:  # Ctrl-C while it works: end the worker with this process
            self.stop()
            raise
        if answer is not None:
            outcome: Outcome = pickle.loads(answer)
            return outcome
        return self._ended()

    def _ended(self) -> Outcome:
        """What became of a worker that closed its answer's pipe: it ran out of
        budget, or stopped."""
        proc = self.proc
        assert proc is not None and proc.stderr is not None
        stack = proc.stderr.read().decode("utf-8", "replace")  # to its end: the worker's exit
        proc.wait()
        code = proc.returncode
        self.stop()
        if not stack.startswith("Timeout ("):
            return ("stopped", f"the validator stopped (exit status {code})")
        # the watchdog writes the innermost frame first
        frames = [_Frame(m["filename"], m["name"]) for m in _FRAME.finditer(stack)]
        return ("too-slow", keyword_of(reversed(frames)))

    def _started(self) -> subprocess.Popen[bytes]:
        if self.proc is None:
            self.sent = set()
            here = str(Path(__file__).resolve().parent.parent.parent)  # the dir holding fraglens
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "fraglens.fit.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            if not self.registered:
                atexit.register(self.stop)
                self.registered = True
        return self.proc

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


def _read(fd: int, timeout: float | None) -> bytes | None:
    """One message from ``fd``; None when the worker ended, TimeoutError when
    ``timeout`` passed first."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    buffer = bytearray()
    need = HEADER.size
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while len(buffer) < need:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            if not selector.select(left):
                continue
            chunk = os.read(fd, max(65536, need - len(buffer)))
            if not chunk:
                return None
            buffer += chunk
            if need == HEADER.size and len(buffer) >= HEADER.size:
                need += HEADER.unpack_from(buffer)[0]
    return bytes(buffer[HEADER.size :])


_WORKER = _Worker()


def run(key: int, schema: Any, value: Any, budget: float | None) -> Outcome:
    """``value`` against ``schema`` (known to the worker as ``key``) in the
    worker, within ``budget`` seconds (None: as long as it takes)."""
    return _WORKER.run(key, schema, value, budget)
