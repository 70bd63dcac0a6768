"""Where a batch's captures are checked: here, on local processes, or on a
Dask cluster; the lines come back in the order of the captures.

A runner keeps a window of captures in flight (a few per worker) and hands
each line on as soon as every line before it is out, so a batch holds a few
reports at a time, never the folder's: memory is bounded by the largest
captures, not their number.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Protocol

from ..report.checked import CheckOptions
from .lines import Line, check_line

__all__ = ["DaskUnavailable", "run_dask", "run_local"]

#: captures in flight per worker: enough to keep each busy while the next
#: line waits for an earlier one
_PER_WORKER = 4


class _Pending(Protocol):
    """A line on its way: a local future or a Dask one."""

    def result(self) -> Line: ...


class DaskUnavailable(RuntimeError):
    """``--dask`` without the extra installed, or no scheduler at the address."""


def _in_order(submit: Callable[[str], _Pending], paths: Sequence[str],
              window: int) -> Iterator[Line]:
    """Submit ``paths`` a window at a time and yield their lines in order."""
    pending: deque[_Pending] = deque()
    todo = iter(paths)
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


def run_local(paths: Sequence[str], opts: CheckOptions, jobs: int, span: bool = False,
              content: bool = False) -> Iterator[Line]:
    """The lines of ``paths`` checked on ``jobs`` processes (1: in this one)."""
    one = partial(check_line, opts=opts, span=span, content=content)
    if jobs <= 1 or len(paths) <= 1:
        for path in paths:
            yield one(path)
        return
    # fork where there is one: the workers start with fraglens already imported
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from _in_order(partial(pool.submit, one), paths, jobs * _PER_WORKER)


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

        def submit(path: str) -> _Pending:
            # pure=False: the same path checked again is checked again (the file may change)
            pending: _Pending = client.submit(check_line, path, opts, span, content, pure=False)
            return pending

        yield from _in_order(submit, paths, workers * _PER_WORKER)
    finally:
        client.close()
