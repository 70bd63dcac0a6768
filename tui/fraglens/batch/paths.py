"""The captures a batch checks, from the files, folders and globs named.

A file named is always checked. A folder is walked (sorted, hidden entries
skipped) for files that look like captures; a glob is expanded and sorted.
A URL with a scheme (``s3://``, ``gs://``, ``memory://``…) is listed through
fsspec, the filesystem layer Dask itself uses, when it is installed. The
order is the order things were named, then sorted within each: the same
every run, whatever the filesystem lists first.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator

__all__ = ["BatchPathError", "CAPTURE_SUFFIXES", "captures", "is_url"]

#: what a file in a folder must end with to be read as a capture (``.fraglens``:
#: the recordings fraglens writes); a file named outright is read whatever its name
CAPTURE_SUFFIXES = (".fraglens", ".sse", ".txt", ".jsonl", ".ndjson", ".json", ".har",
                    ".eventstream", ".log", ".bin")
#: fraglens's own companions of a capture, never captures themselves
_COMPANIONS = (".expected.json", ".tools.json")


class BatchPathError(ValueError):
    """A path names nothing: a one-line reason."""


def is_url(path: str) -> bool:
    """``s3://bucket/x`` and the like; a Windows drive (``C:\\``) is no URL."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and len(scheme) > 1 and scheme.replace("+", "").isalnum()


def _is_capture(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return (not base.startswith(".") and base.endswith(CAPTURE_SUFFIXES)
            and not base.endswith(_COMPANIONS))


def _walk(folder: str) -> Iterator[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if _is_capture(name):
                yield os.path.join(root, name)


def _local(path: str) -> list[str]:
    if os.path.isdir(path):
        return list(_walk(path))
    if os.path.exists(path) or path == "-":
        return [path]
    if glob.has_magic(path):
        found: list[str] = []
        for match in sorted(glob.glob(path, recursive=True)):
            found += list(_walk(match)) if os.path.isdir(match) else [match]
        if found:
            return found
        raise BatchPathError(f"{path}: no file matches")
    raise BatchPathError(f"{path}: no such file or folder")


def _remote(url: str) -> list[str]:
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise BatchPathError(f"{url}: reading URLs needs fsspec (pip install "
                             "'fraglens[dask]')") from None
    try:
        fs, root = url_to_fs(url)
    except (ImportError, ValueError) as exc:  # an unknown scheme, its package missing
        raise BatchPathError(f"{url}: {exc}") from None
    if glob.has_magic(root):
        names = sorted(fs.glob(root))
    elif fs.isdir(root):
        names = sorted(n for n in fs.find(root) if _is_capture(n))
    elif fs.exists(root):
        names = [root]
    else:
        raise BatchPathError(f"{url}: no such file or folder")
    if not names:
        raise BatchPathError(f"{url}: no file matches")
    return [n if is_url(n) else fs.unstrip_protocol(n) for n in names]


def captures(named: Iterable[str]) -> list[str]:
    """Every capture the paths name, each once, in a stable order."""
    seen: set[str] = set()
    out: list[str] = []
    for path in named:
        for found in _remote(path) if is_url(path) else _local(path):
            if found not in seen:
                seen.add(found)
                out.append(found)
    return out
