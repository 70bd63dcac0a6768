"""A batch's local processes where the system forks: children forked with the
tasks already in their memory, each sent the number of its next task down one
pipe and answering with the task's result, pickled, up another; the results
come back in the order of the tasks.

Why not ``concurrent.futures.ProcessPoolExecutor``: its machinery (a thread
that feeds the task queue, another that collects the results and wakes the
caller, a selector built for every wait) cost this process about 30 ms of CPU
on a batch of 1,000 captures, taken from the workers on the cores they share.
Here one loop in the caller's thread writes numbers and reads answers.

Ctrl-C reaches the whole process group: the children ignore it and the parent,
where it lands, ends them. A child that ends before it answers (killed, out of
memory) is ``WorkerLost``; an exception a task raised is raised again here.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import struct
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, NoReturn, TypeVar

__all__ = ["WorkerLost", "run_forked"]

T = TypeVar("T")
R = TypeVar("R")

#: a task's number, or the length of the answer that follows
_HEAD = struct.Struct("<q")
#: bytes read from a child's pipe at once (an answer is a task's lines: tens of kB)
_READ = 1 << 18


class WorkerLost(RuntimeError):
    """A child process ended before answering: a one-line reason."""


class _Child(Generic[R]):
    """The parent's side of one child: its pid, its two pipes, the numbers of
    the tasks it was sent and has not answered (it answers in turn), and the
    bytes of an answer not yet whole."""

    def __init__(self, pid: int, tasks: int, answers: int) -> None:
        self.pid = pid
        self.tasks = tasks
        self.answers = answers
        self.waiting: deque[int] = deque()
        self.buffer = bytearray()

    def send(self, number: int) -> None:
        try:
            os.write(self.tasks, _HEAD.pack(number))
        except BrokenPipeError:
            self.lost()
        self.waiting.append(number)

    def read(self, done: dict[int, R]) -> None:
        """What the child wrote: each whole answer into ``done`` by its task's number."""
        chunk = os.read(self.answers, _READ)
        if not chunk:
            self.lost()
        self.buffer += chunk
        while len(self.buffer) >= _HEAD.size:
            (size,) = _HEAD.unpack_from(self.buffer)
            end = _HEAD.size + size
            if len(self.buffer) < end:
                return
            ok, value = pickle.loads(self.buffer[_HEAD.size : end])
            del self.buffer[:end]
            number = self.waiting.popleft()
            if not ok:
                raise value
            done[number] = value

    def lost(self) -> NoReturn:
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0  # reaped
        raise WorkerLost(f"a batch process ended before it answered (exit status "
                         f"{os.waitstatus_to_exitcode(status)})")


def _serve(run: Callable[[Any], Any], tasks: Sequence[Any], read_fd: int,
           write_fd: int) -> NoReturn:
    """A child's life: tasks' numbers in, their results out, until the parent
    closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's to handle: it ends us
    status = 1
    try:
        with os.fdopen(read_fd, "rb") as numbers, os.fdopen(write_fd, "wb") as answers:
            while len(head := numbers.read(_HEAD.size)) == _HEAD.size:
                (number,) = _HEAD.unpack(head)
                try:
                    answer = (True, run(tasks[number]))
                except Exception as exc:  # raised again in the parent, with where it was
                    if hasattr(exc, "add_note"):  # Python 3.11
                        exc.add_note("in a batch process:\n" + traceback.format_exc().rstrip())
                    answer = (False, exc)
                try:
                    blob = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # an exception that does not pickle: its text
                    blob = pickle.dumps((False, RuntimeError(traceback.format_exc())))
                answers.write(_HEAD.pack(len(blob)) + blob)
                answers.flush()
        status = 0
    finally:
        os._exit(status)  # never back into the parent's stack, its buffers unflushed


def _fork(run: Callable[[T], R], tasks: Sequence[T], others: list[_Child[R]]) -> _Child[R]:
    numbers_r, numbers_w = os.pipe()
    answers_r, answers_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for fd in (numbers_r, numbers_w, answers_r, answers_w):
            os.close(fd)
        raise
    if pid == 0:
        # only its own ends: a sibling's pipes held open here would never end
        for fd in (numbers_w, answers_r, *(f for c in others for f in (c.tasks, c.answers))):
            os.close(fd)
        _serve(run, tasks, numbers_r, answers_w)
    os.close(numbers_r)
    os.close(answers_w)
    return _Child(pid, numbers_w, answers_r)


def run_forked(run: Callable[[T], R], tasks: Sequence[T], jobs: int,
               window: int) -> Iterator[R]:
    """``run(task)`` for each of ``tasks`` on ``jobs`` forked children, in the
    order of the tasks; no more than ``window`` tasks sent and not yet
    yielded. ``run`` and ``tasks`` reach the children through the fork."""
    children: list[_Child[R]] = []
    try:
        for _ in range(min(jobs, len(tasks))):
            children.append(_fork(run, tasks, children))
        with selectors.DefaultSelector() as selector:
            for child in children:
                selector.register(child.answers, selectors.EVENT_READ, child)
            done: dict[int, R] = {}
            sent = taken = 0
            while taken < len(tasks):
                # the window's room to the children with the fewest tasks waiting
                while sent < len(tasks) and sent - taken < window:
                    min(children, key=lambda c: len(c.waiting)).send(sent)
                    sent += 1
                if taken in done:
                    taken += 1
                    yield done.pop(taken - 1)
                    continue
                for key, _ in selector.select():
                    key.data.read(done)
    finally:
        _end(children)


def _end(children: list[_Child[Any]]) -> None:
    """Close the children's pipes (a child waiting for a task then ends) and
    reap them; one still busy (the batch stopped early) is killed first."""
    for child in children:
        if child.pid and child.waiting:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.close(child.tasks)
        os.close(child.answers)
    for child in children:
        if child.pid:
            os.waitpid(child.pid, 0)
