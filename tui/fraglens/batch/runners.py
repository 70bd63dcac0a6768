"""Where a batch's captures are checked: here, on local processes, or on a
Dask cluster; the lines come back in the order of the captures.

A runner keeps a window of captures in flight (a few per worker) and hands
each line on as soon as every line before it is out, so a batch holds a few
reports at a time, never the folder's: memory is bounded by the largest
captures, not their number.
"""

from __future__ import annotations

import importlib
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Protocol, TypeVar

from ..report.checked import CheckOptions
from .lines import Line, check_line

__all__ = ["DaskUnavailable", "run_dask", "run_local"]

#: tasks in flight per worker: enough to keep each busy while the next line
#: waits for an earlier one
_PER_WORKER = 4
#: captures per task at most: a task per capture would spend more on passing
#: it between processes than on checking a small one
_PER_TASK = 16


T = TypeVar("T")
R = TypeVar("R", covariant=True)


class _Pending(Protocol[R]):
    """A result on its way: a local future or a Dask one."""

    def result(self) -> R: ...


class DaskUnavailable(RuntimeError):
    """``--dask`` without the extra installed, or no scheduler at the address."""


def _in_order(submit: Callable[[T], _Pending[R]], tasks: Sequence[T],
              window: int) -> Iterator[R]:
    """Submit ``tasks`` a window at a time and yield their results in order."""
    pending: deque[_Pending[R]] = deque()
    todo = iter(tasks)
    for path in todo:
        pending.append(submit(path))
        if len(pending) >= window:
            break
    while pending:
        line = pending.popleft().result()
        nxt = next(todo, None)
        if nxt is not None:
            pending.append(submit(nxt))
        yield line


def check_lines(paths: Sequence[str], opts: CheckOptions, span: bool = False,
                content: bool = False) -> list[Line]:
    """One task: the lines of a few captures, in order."""
    return [check_line(path, opts, span, content) for path in paths]


def _tasks(paths: Sequence[str], workers: int) -> list[tuple[str, ...]]:
    """``paths`` cut into tasks: small enough that every worker gets several
    (the last ones finish together), at most ``_PER_TASK`` captures each."""
    size = max(1, min(_PER_TASK, len(paths) // (workers * _PER_WORKER * 2)))
    return [tuple(paths[i : i + size]) for i in range(0, len(paths), size)]


#: what checking a capture imports on first need (repairs, the leaked-markup scan,
#: prices, recordings, the schema checks): imported here before the workers
#: fork, so that each does not import them again
_SHARED_MODULES = (
    "json_repair", "fraglens.engine.local_repair", "fraglens.engine.leaks",
    "fraglens.report.cost", "fraglens.fit.verdicts", "fraglens.framing.recording",
    "fraglens.reading.recording_times", "fraglens.reading.recording_runs",
    "fraglens.framing.recording_reads", "fraglens.redact",
)


def run_local(paths: Sequence[str], opts: CheckOptions, jobs: int, span: bool = False,
              content: bool = False) -> Iterator[Line]:
    """The lines of ``paths`` checked on ``jobs`` processes (1: in this one)."""
    if jobs <= 1 or len(paths) <= 1:
        for path in paths:
            yield check_line(path, opts, span, content)
        return
    task = partial(check_lines, opts=opts, span=span, content=content)
    # fork where there is one: the workers start with fraglens already imported
    for name in _SHARED_MODULES:
        importlib.import_module(name)
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for lines in _in_order(partial(pool.submit, task), _tasks(paths, jobs),
                               jobs * _PER_WORKER):
            yield from lines


def run_dask(paths: Sequence[str], opts: CheckOptions, address: str, span: bool = False,
             content: bool = False) -> Iterator[Line]:
    """The lines of ``paths`` checked on the Dask cluster at ``address``; the
    workers read the paths themselves (shared storage, or fsspec URLs)."""
    try:
        from distributed import Client
    except ImportError:
        raise DaskUnavailable("--dask needs Dask's distributed scheduler: "
                              "pip install 'fraglens[dask]'") from None
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError) as exc:
        raise DaskUnavailable(f"--dask {address}: no scheduler answered ({exc})") from None
    try:
        workers = max(1, sum(client.nthreads().values()))

        def submit(task: tuple[str, ...]) -> _Pending[list[Line]]:
            # pure=False: the same path checked again is checked again (the file may change)
            pending: _Pending[list[Line]] = client.submit(check_lines, task, opts, span,
                                                          content, pure=False)
            return pending

        for lines in _in_order(submit, _tasks(paths, workers), workers * _PER_WORKER):
            yield from lines
    finally:
        client.close()
