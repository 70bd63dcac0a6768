"""``fraglens check --jsonl``: many captures, one JSON line each, on local
processes or a Dask cluster; a summary on stderr."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from ..batch.forks import WorkerLost
from ..batch.lines import UNREADABLE, Line
from ..batch.paths import BatchPathError, captures
from ..batch.runners import DaskUnavailable, run_dask, run_local
from ..engine.plural import counted
from ..report.checked import CheckOptions
from .common import CliError, otlp_wanted

__all__ = ["run_batch"]


def _lines(args: argparse.Namespace, paths: list[str], opts: CheckOptions,
           span: bool) -> Iterator[Line]:
    content = bool(args.otlp_content)
    if args.dask is not None:
        if args.jobs is not None:
            raise CliError("--jobs is for local processes; the Dask cluster has its own workers")
        try:
            yield from run_dask(paths, opts, args.dask, span, content)
        except DaskUnavailable as exc:
            raise CliError(str(exc)) from None
        return
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    try:
        yield from run_local(paths, opts, jobs, span, content)
    except WorkerLost as exc:
        raise CliError(str(exc)) from None


def run_batch(args: argparse.Namespace, opts: CheckOptions) -> int:
    if args.json:
        raise CliError("--json and --jsonl: choose one (--jsonl is one report per line)")
    if "-" in args.path:
        raise CliError("--jsonl reads files, folders and globs, not stdin")
    try:
        paths = captures(args.path)
    except BatchPathError as exc:
        raise CliError(str(exc)) from None
    exporter = None
    if otlp_wanted(args):
        from ..net.otlp import OtlpUnavailable, exporter_for

        try:
            exporter = exporter_for(args.otlp, "fraglens check")
        except OtlpUnavailable as exc:
            raise CliError(str(exc)) from None
    counts = [0, 0, 0]
    out = sys.stdout
    try:
        for line in _lines(args, paths, opts, exporter is not None):
            out.write(line.text + "\n")
            out.flush()
            counts[line.status] += 1
            if exporter is not None and line.span is not None:
                exporter.export(line.span)
    finally:
        if exporter is not None:
            exporter.close()
    ok, wrong, unreadable = counts
    print(f"fraglens: {counted(len(paths), 'capture')}: {ok:,} ok, {wrong:,} not ok, "
          f"{unreadable:,} unreadable", file=sys.stderr)
    if unreadable:
        return UNREADABLE
    return 1 if wrong else 0
