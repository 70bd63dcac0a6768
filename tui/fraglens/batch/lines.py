"""One capture checked into one line of a batch: its report and its file,
or the one-line reason it could not be read.

Runs wherever the batch runs it (this process, a local worker process, a
Dask worker), so it takes and returns plain data only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..reading.capture import MAX_INPUT_BYTES, LoadError, read_bytes
from ..report.checked import CheckOptions, checked
from ..report.document import dumps, exit_code
from .paths import is_url

__all__ = ["Line", "check_line", "UNREADABLE"]

#: the status of a capture that could not be read (as ``check``'s exit code)
UNREADABLE = 2


@dataclass(frozen=True)
class Line:
    file: str
    #: the JSON line, without its line end
    text: str
    #: 0 every call ok, 1 something is wrong, 2 unreadable: ``check``'s exit code
    status: int
    #: what an OpenTelemetry span says of it, when the batch exports spans
    span: dict[str, Any] | None = None


def _read(path: str) -> bytes:
    if not is_url(path):
        return read_bytes(path)
    import fsspec  # installed with the dask extra; paths.py said so if it is not

    try:
        with fsspec.open(path, "rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise LoadError(f"{path}: {exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise LoadError(f"{path}: more than {MAX_INPUT_BYTES} bytes, the most one capture "
                        "may hold; not read")
    return data


def _error(path: str, reason: str) -> Line:
    return Line(path, dumps({"file": path, "error": reason}, pretty=False).rstrip("\n"),
                UNREADABLE)


def check_line(path: str, opts: CheckOptions, span: bool = False,
               content: bool = False) -> Line:
    """The line of the capture at ``path``; ``span``: say what its
    OpenTelemetry span holds too (``content``: with the calls' arguments)."""
    try:
        doc, stream = checked(path, opts, _read(path))
    except LoadError as exc:
        return _error(path, str(exc))
    except RecursionError:
        return _error(path, f"{path}: the input is nested too deeply to read")
    line = dumps({"file": path, **doc}, pretty=False).rstrip("\n")
    attrs = None
    if span:
        from ..report.genai_span import genai_span

        attrs = genai_span(doc, stream, content=content)
    return Line(path, line, exit_code(doc), attrs)
