"""The one entry that opens a capture: a path, stdin or bytes in, a closed
``Stream`` out.

The only place the command line touches files for reading streams; the
readers of the table (``readers.py``) and everything below them stay sans-I/O.
"""

from __future__ import annotations

import gc
import io
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from ..framing.events import Framed
from ..framing.recording_header import WRITTEN_START
from .readers import FramedReading, LoadError, Options, Reading, open_reading, open_recording
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
        opts = Options(format, max_arg_bytes, keep_naive)
        return _read_whole(open_reading(data, name, opts), name)


def _read_whole(reading: Reading, name: str) -> tuple[Stream, Framed]:
    reading.drain()
    if (why := reading.refusal()) is not None:
        raise LoadError(f"{name}: {why}")
    framed = reading.finish()
    return reading.stream, framed


#: a recording of at least this many bytes is read a chunk of ``_CHUNK`` at a
#: time (``_recording_in_chunks``); a smaller one is read whole, in one call
_CHUNKED_FROM = 1 << 20
_CHUNK = 1 << 20


def _recording_in_chunks(path: str, name: str, opts: Options) -> tuple[Stream, Framed] | None:
    """A recording of version 3 (of an SSE body, in a regular file of a
    mebibyte or more) read a mebibyte at a time into one buffer, its reads'
    bytes copied out of it as they are found (``RawReads``); None for any
    other file, or when reading it so fails: it is then read whole, as any
    capture is, which says what is wrong. Read whole, the file is a fresh
    block of memory as large as itself, every page of it faulted in, and the
    body copied out of it another: half of what a recording cost beyond the
    same body as SSE."""
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or not (
                    _CHUNKED_FROM <= info.st_size <= MAX_INPUT_BYTES):
                return None
            if f.read(len(WRITTEN_START)) != WRITTEN_START:
                return None  # no recording: its reader is not even imported
            f.seek(0)
            from ..framing.recording import RawReads
            from .recording_runs import parsed

            buf = bytearray(_CHUNK)
            got = f.readinto(buf)
            body = io.BytesIO()
            opened = RawReads.open(bytes(buf[:got]), body)
            if opened is None:
                return None
            reads, start = opened
            total = got
            while got:
                reads.feed(buf, start, got)
                start = 0
                got = f.readinto(buf)
                total += got
                if total > MAX_INPUT_BYTES:  # grown since: read whole, which says so
                    return None
            reads.close()
    except OSError:
        return None
    head = parsed(reads.lines, reads.times, reads.sizes, body.getvalue())
    if head is None:
        return None
    with _bulk():
        return _read_whole(open_recording(head, name, opts), name)


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


def load_stream(path: str, format: str | None = None,
                max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
                keep_naive: bool = False) -> tuple[Stream, Framed]:
    """The capture at ``path`` (``-``: stdin, ``:demo:``: the bundled demo)."""
    if path not in ("-", ":demo:"):
        opts = Options(format, max_arg_bytes, keep_naive)
        chunked = _recording_in_chunks(path, path, opts)
        if chunked is not None:
            return chunked
    data = demo_bytes() if path == ":demo:" else read_bytes(path)
    return stream_from_bytes(data, "demo" if path == ":demo:" else path, format,
                             max_arg_bytes, keep_naive)
