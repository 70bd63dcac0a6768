"""The one entry that opens a capture: a path, stdin or bytes in, a closed
``Stream`` out.

The only place the command line touches files for reading streams; the
readers of the table (``readers.py``) and everything below them stay sans-I/O.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from ..framing.events import Framed
from .readers import FramedReading, LoadError, Options, open_reading
from .stream import Stream

__all__ = ["LoadError", "demo_bytes", "load_stream", "read_bytes", "stream_from_bytes",
           "stream_from_framed"]

#: the most a capture may hold: reading stops one byte past it, so that
#: ``check /dev/zero`` or an endless pipe ends with a one-line error instead
#: of reading until memory runs out (a 100k-event capture is about 50 MB)
MAX_INPUT_BYTES = 1 << 30


def read_bytes(path: str) -> bytes:
    """The whole input, at most ``MAX_INPUT_BYTES``; a one-line LoadError past it."""
    limit = MAX_INPUT_BYTES
    try:
        if path == "-":
            data = _read_capped(sys.stdin.buffer, limit)
        else:
            with open(path, "rb") as f:  # not pathlib: it would cost check start-up time
                data = _read_capped(f, limit)
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise LoadError(f"{path}: is a directory") from None
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None
    if data is None:
        name = "stdin" if path == "-" else path
        raise LoadError(f"{name}: more than {limit} bytes, the most one capture may hold; not read")
    return data


def _read_capped(f: BinaryIO, limit: int) -> bytes | None:
    """A regular file whole (its size is known first); a pipe or a device a
    mebibyte at a time. None when there is more than ``limit`` bytes."""
    try:
        info = os.fstat(f.fileno())
    except (OSError, ValueError):  # no descriptor (a test's stdin): read it in pieces
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        return f.read() if info.st_size <= limit else None
    pieces: list[bytes] = []
    total = 0
    while total <= limit:
        piece = f.read(min(1 << 20, limit + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
    return b"".join(pieces) if total <= limit else None


def demo_bytes() -> bytes:
    """The bundled demo recording the app opens with no argument."""
    from importlib import resources  # with pathlib and tempfile: only for the demo

    return resources.files("fraglens.demo").joinpath("demo.sse").read_bytes()


@contextmanager
def _bulk() -> Iterator[None]:
    """Reading a capture makes a few objects per event and frees none of them
    until the end, and none of them form cycles: the cyclic garbage collector
    would only re-scan them over and over (a third of the time on 100k-event
    captures). It is paused while a whole capture is read. What the read made
    is then counted as old, not young: else the first allocation after it
    would walk all of it (the 160k objects of 10 MB of arguments, 19 ms) to
    find nothing. Objects someone froze (``gc.freeze``: the app's heap) stay
    frozen: then the young ones are left as they are."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if not gc.get_freeze_count():
                gc.freeze()  # every generation into the permanent one, counts reset,
                gc.unfreeze()  # and all of it back into the oldest
            gc.enable()


def stream_from_bytes(
    data: bytes,
    name: str = "input",
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> tuple[Stream, Framed]:
    """A whole capture, read by the reader the table picks for it: what
    ``check`` and the app open. LoadError when it cannot be read."""
    with _bulk():
        reading = open_reading(data, name, Options(format, max_arg_bytes, keep_naive))
        reading.drain()
        if (why := reading.refusal()) is not None:
            raise LoadError(f"{name}: {why}")
        framed = reading.finish()
        return reading.stream, framed


def stream_from_framed(
    framed: Framed,
    format: str | None = None,
    max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
    keep_naive: bool = False,
) -> Stream:
    """The events of a capture framed elsewhere (the proxy's, replay's), read
    into a closed stream."""
    reading = FramedReading(framed, None, Options(format, max_arg_bytes, keep_naive))
    reading.drain()
    reading.finish()
    return reading.stream


def load_stream(path: str, **kwargs) -> tuple[Stream, Framed]:
    data = demo_bytes() if path == ":demo:" else read_bytes(path)
    return stream_from_bytes(data, "demo" if path == ":demo:" else path, **kwargs)
