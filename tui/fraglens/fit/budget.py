"""Each call's validation run in the validation worker (``fit/worker.py``)
under a time budget, so that no schema can hang fraglens or stop Ctrl-C.

One worker serves the whole program, started at the first call to validate
and reused (a lock keeps the proxy's threads to one request at a time). While
it works, this process waits on a pipe, where Ctrl-C interrupts it: the worker
is then ended and the KeyboardInterrupt goes on. A worker that ran out of
budget has ended itself; its stack names the keyword it was in, and the next
call starts a new one.

A batch's local processes (``check --jsonl --jobs N``) share one worker:
the process that forks them starts it first (``shared``) and each child
takes turns on it, a lock held across a request and its answers, each
child's keys tagged with its pid. Each starting its own cost every child an
interpreter and jsonschema's import, on cores the batch keeps busy. A
shared worker that ends (out of budget, or stopped) is marked ended for
all, and each child starts its own from then on, as one that shares
nothing does; a call the shared worker stopped on is tried again on the
child's own, which alone can say with what exit status it stops.
"""

from __future__ import annotations

import atexit
import mmap
import os
import pickle
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .timeout import DEFAULT_BUDGET
from .validation import Outcome, keyword_of
from .worker import HEADER

__all__ = ["DEFAULT_BUDGET", "Item", "run", "shared", "start"]

#: a budget this long is no limit: the clocks that keep one stop at about 10**12 s
_UNBOUNDED = 1e6
#: how much longer than the budget this process waits for the worker's own
#: watchdog before ending the worker itself (moving a large value through the pipe)
_GRACE = 10.0

#: the worker's program. ``-c`` (as ``-m``) puts the current directory first on
#: the import path, where a ``jsonschema.py`` of whatever folder fraglens was
#: run in would be imported and run: it is replaced, before any import, by the
#: folder that holds this fraglens
_BOOT = ("import sys; sys.path[0] = {here!r}; from fraglens.fit.worker import main; "
         "main(warm={warm})")

#: a frame of the watchdog's stack: ``  File "PATH", line N in NAME``
_FRAME = re.compile(r'^\s*File "(?P<filename>.*)", line \d+ in (?P<name>\S+)', re.M)


class _Frame:
    def __init__(self, filename: str, name: str) -> None:
        self.filename = filename
        self.name = name


#: calls sent to the worker in one message: a round trip per call was most of the cost
#: of a capture of many small calls, a whole capture's arguments at once too much memory
_BATCH = 256
#: and no more bytes of them than this, past the first (one call may hold 16 MiB)
_BATCH_BYTES = 8 << 20
_TOO_DEEP: Outcome = ("too-deep", "the arguments or the schema are nested too deeply to check")

#: one call to check: (the key the worker knows its tool's validator by, the schema, the value)
Item = tuple[int, Any, Any]


class _Turns:
    """A worker the processes forked from its parent take turns on: a token
    in a pipe, which the process whose turn it is holds from its request to
    its last answer, and whether the worker has ended (then each starts its
    own), a byte of memory they share."""

    def __init__(self) -> None:
        self._take, self._give = os.pipe()
        os.write(self._give, b"t")
        self._ended = mmap.mmap(-1, 1)  # anonymous: shared with the children forked from here

    @contextmanager
    def turn(self) -> Iterator[None]:
        os.read(self._take, 1)  # waits while another holds the token
        try:
            yield
        finally:
            os.write(self._give, b"t")

    @property
    def ended(self) -> bool:
        return self._ended[0] == 1

    def end(self) -> None:
        self._ended[0] = 1

    def close(self) -> None:
        os.close(self._take)
        os.close(self._give)
        self._ended.close()


class _Worker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.answers: _Answers | None = None
        #: the keys whose schema the running worker was sent
        self.sent: set[int] = set()
        self.registered = False
        #: the turns on a worker this process shares with its siblings, and
        #: what its keys are tagged with there (its pid); None: its own worker
        self.turns: _Turns | None = None
        self.tag: int | None = None

    def run(self, items: list[Item], budget: float | None) -> list[Outcome]:
        with self.lock:
            outcomes: list[Outcome | None] = [None] * len(items)
            pending = list(range(len(items)))
            #: the items the worker answered "unknown": it let their validator go
            #: (it keeps the latest few), so they go again with their schema
            forced: set[int] = set()
            #: the keys of a call that ran out of budget or stopped the worker,
            #: with which: the other calls of that tool would most likely do
            #: the same, a budget or a new worker each
            failed: dict[int, str] = {}
            while pending:
                for i in pending:
                    if items[i][0] in failed:
                        outcomes[i] = ("skipped", failed[items[i][0]])
                pending = [i for i in pending if items[i][0] not in failed]
                if not pending:
                    break
                batch = pending[:_BATCH]
                answered = self._batch([(items[i], i in forced) for i in batch], budget)
                for i, outcome in zip(batch, answered, strict=False):
                    outcomes[i] = outcome
                    if outcome[0] in ("too-slow", "stopped"):
                        failed[items[i][0]] = outcome[0]
                pending = pending[len(answered) :]
                again = [i for i in batch[: len(answered)] if outcomes[i] == ("unknown",)]
                forced.update(again)
                pending += again
            return [o if o is not None else _TOO_DEEP for o in outcomes]

    def _batch(self, items: list[tuple[Item, bool]], budget: float | None) -> list[Outcome]:
        """Outcomes for ``items`` (each with whether its schema must go with
        it) in order, up to and including the first the worker did not live
        through (it ran out of budget, or stopped), or as many as
        ``_BATCH_BYTES`` holds; on a shared worker that stopped, up to that
        one only (it goes again to this process's own)."""
        turns = self.turns
        if turns is not None:
            with turns.turn():
                if not turns.ended:
                    return self._exchange(items, budget)
            self._leave()
        return self._exchange(items, budget)

    def _exchange(self, items: list[tuple[Item, bool]], budget: float | None) -> list[Outcome]:
        try:
            proc = self._started()
        except OSError as exc:
            return [("stopped", f"the validator could not start: {exc.strerror or exc}")]
        answers = self.answers
        assert proc.stdin is not None and answers is not None
        blobs: list[bytes | None] = []
        sending = set(self.sent)
        size = 0
        for (key, schema, value), force in items:
            if size > _BATCH_BYTES:
                break
            known = key in sending and not force
            try:
                wire = key if self.tag is None else (self.tag, key)
                blobs.append(pickle.dumps((wire, None if known else schema, value)))
                sending.add(key)
                size += len(blobs[-1] or b"")
            except RecursionError:
                blobs.append(None)
        items = items[: len(blobs)]
        request = pickle.dumps((budget, [b for b in blobs if b is not None]))
        timeout = None if budget is None else budget + _GRACE
        outcomes: list[Outcome] = []
        try:
            proc.stdin.write(HEADER.pack(len(request)) + request)
            proc.stdin.flush()
            for ((key, _, _), _), blob in zip(items, blobs, strict=True):
                if blob is None:
                    outcomes.append(_TOO_DEEP)
                    continue
                answer = answers.next(timeout)
                if answer is None:
                    return self._ended(outcomes)
                outcomes.append(pickle.loads(answer))
                self.sent.add(key)
        except BrokenPipeError:
            return self._ended(outcomes)
        except TimeoutError:  # past even the grace: this process ends it
            self.stop()
            outcomes.append(("too-slow", None))
        except BaseException:  # Ctrl-C while it works: end the worker with this process
            self.stop()
            raise
        return outcomes

    def _ended(self, outcomes: list[Outcome]) -> list[Outcome]:
        """``outcomes`` and what became of a worker that closed its answer's
        pipe: it ran out of budget, or stopped (a shared worker that stopped:
        nothing, the call goes again to this process's own)."""
        proc = self.proc
        assert proc is not None and proc.stderr is not None
        stack = proc.stderr.read().decode("utf-8", "replace")  # to its end: the worker's exit
        if self.turns is not None:  # another process's child: its exit status is not ours to read
            self.turns.end()
            self._leave()
            if not stack.startswith("Timeout ("):
                return outcomes
        else:
            proc.wait()
            code = proc.returncode
            self.stop()
            if not stack.startswith("Timeout ("):
                return [*outcomes, ("stopped", f"the validator stopped (exit status {code})")]
        # the watchdog writes the innermost frame first
        frames = [_Frame(m["filename"], m["name"]) for m in _FRAME.finditer(stack)]
        return [*outcomes, ("too-slow", keyword_of(reversed(frames)))]

    def _started(self, warm: bool = True) -> subprocess.Popen[bytes]:
        """The running worker, started if there is none (``warm``: it loads
        jsonschema at once, else at its first request)."""
        if self.proc is not None and self.answers is None:  # the shared worker, first used here
            assert self.proc.stdout is not None
            self.answers = _Answers(self.proc.stdout.fileno())
        if self.proc is None:
            here = str(Path(__file__).resolve().parent.parent.parent)  # the dir holding fraglens
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT.format(here=here, warm=warm)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert self.proc.stdout is not None
            self.answers = _Answers(self.proc.stdout.fileno())
            if not self.registered:
                atexit.register(self.stop)
                self.registered = True
        return self.proc

    def _leave(self) -> None:
        """Stop taking turns on the shared worker: this process starts its
        own when it next needs one."""
        self.turns = self.tag = None
        self.proc = None
        self.sent = set()
        if self.answers is not None:
            self.answers.close()
            self.answers = None

    def stop(self) -> None:
        if self.turns is not None:  # held by this process's turn: end it for all
            self.turns.end()
            if self.proc is not None:
                try:
                    os.kill(self.proc.pid, signal.SIGKILL)  # its parent reaps it
                except ProcessLookupError:
                    pass
            self._leave()
            return
        proc, self.proc = self.proc, None
        self.sent = set()
        if self.answers is not None:
            self.answers.close()
            self.answers = None
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


class _Answers:
    """The worker's answers, one message at a time, from the pipe of its
    stdout: a read may hold the start of the next answer, kept for it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.selector = selectors.DefaultSelector()
        self.selector.register(fd, selectors.EVENT_READ)

    def next(self, timeout: float | None) -> bytes | None:
        """The next answer; None when the worker ended, TimeoutError when
        ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            need = HEADER.size
            if len(self.buffer) >= HEADER.size:
                need += HEADER.unpack_from(self.buffer)[0]
                if len(self.buffer) >= need:
                    answer = bytes(self.buffer[HEADER.size : need])
                    del self.buffer[:need]
                    return answer
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            if not self.selector.select(left):
                continue
            chunk = os.read(self.fd, max(65536, need - len(self.buffer)))
            if not chunk:
                return None
            self.buffer += chunk

    def close(self) -> None:
        self.selector.close()


_WORKER = _Worker()
#: in a process about to fork a batch's processes: the turns they take on its worker
_SHARING: _Turns | None = None


def _forked() -> None:
    """A child forked from this process must not use the parent's worker and
    its pipes: it starts its own, or, forked by ``shared``, takes turns on
    the parent's."""
    global _WORKER, _SHARING
    parents = _WORKER
    _WORKER = _Worker()
    if _SHARING is not None and parents.proc is not None:
        _WORKER.proc, _WORKER.turns, _WORKER.tag = parents.proc, _SHARING, os.getpid()
    _SHARING = None  # a child of this child starts its own
    parents.proc = parents.answers = None  # the parent's, not this process's to end


@contextmanager
def shared() -> Iterator[None]:
    """Start the worker now, and have the processes forked from this one in
    the block take turns on it instead of starting one each; it is ended
    when the block is (they must be gone by then)."""
    global _SHARING
    turns = None
    with _WORKER.lock:
        try:
            # jsonschema loaded at the first call: a batch whose captures declare
            # no tools spends nothing more on it (its start-up would otherwise
            # run on the cores the batch's processes are busy on)
            _WORKER._started(warm=False)
            turns = _SHARING = _Turns()
        except OSError:
            pass  # each starts its own, whose failure gives the reason
    try:
        yield
    finally:
        _SHARING = None
        _WORKER.stop()
        if turns is not None:
            turns.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def start() -> None:
    """Start the worker now, when calls are sure to come: its start-up (an
    interpreter, jsonschema's import) then overlaps with reading the capture
    instead of following it."""
    with _WORKER.lock:
        try:
            _WORKER._started()
        except OSError:
            pass  # the first call gives the reason


def run(items: list[Item], budget: float | None) -> list[Outcome]:
    """Each item's value against its schema (known to the worker by the
    item's key), in the worker, each within ``budget`` seconds (None: as long
    as it takes)."""
    return _WORKER.run(items, None if budget is None or budget >= _UNBOUNDED else budget)
