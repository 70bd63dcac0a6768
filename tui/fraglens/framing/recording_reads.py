"""A recording's read lines decoded in bulk, by msgspec.

Nearly every line of a recording is the writer's read line,
``{"t":0.412,"b":"data: {\\"id\\":..."}``: a JSON string full of escaped
quotes. The standard library's decoder undoes those escapes more slowly than
the whole SSE reading of the same body takes (docs/benchmarks.md,
"Recordings"); msgspec's, a compiled one, about five times as fast. Here a
run of lines is decoded by msgspec when it can vouch that the result is the
standard library's, and else not at all: the caller then reads the lines
with ``json`` (framing/recording.py), which stays the definition.

What msgspec is trusted with. Only lines that are each one object with a
number ``t`` and a string ``b`` or ``b64`` and no other key (msgspec refuses
any other key, type or shape, and the run falls back). On such a line it
gives what ``json.loads`` gives: the same strings (it refuses lone surrogate
escapes, bytes that are not UTF-8 and raw control characters, where the
standard library reads the first two and the writer writes neither), the same
correctly rounded numbers, the last of duplicate keys; it refuses ``NaN``,
``Infinity`` and numbers out of a float's range, which the line reader turns
into no time. ``tests/test_recording_reads.py`` holds it to the standard
library's reading on generated lines of every such kind.

One line, one value. msgspec's ``decode_lines`` reads values separated by
any whitespace, newlines or not: ``{..} {..}`` on one line would be two reads
where ``json.loads`` refuses the line. So each line is wrapped in brackets
(every line end becomes ``]\\n[``) and read as a one-element array: no value
can span a line end (a string cannot hold a raw newline, and a read holds no
array to close), every line starts a value, and the count of values is
checked against the count of lines, which the replacement's growth gives.
"""

from __future__ import annotations

import math
from base64 import b64decode
from itertools import compress, count, repeat
from operator import attrgetter, is_, itemgetter

import msgspec

__all__ = ["decode_reads"]


class _Read(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A read line: its time and its bytes, as text or as base64."""

    t: float
    b: str | msgspec.UnsetType = msgspec.UNSET
    b64: str | msgspec.UnsetType = msgspec.UNSET


_DECODER = msgspec.json.Decoder(tuple[_Read])
_UNSET = msgspec.UNSET
_first, _time, _text = itemgetter(0), attrgetter("t"), attrgetter("b")


def decode_reads(data: bytes, start: int, end: int
                 ) -> tuple[list[float], list[bytes], list[int]] | None:
    """The time and bytes of each line of ``data[start:end]``, whole lines
    (``data[start - 1]`` and ``data[end - 1]`` end lines), when every one of
    them is a read line this module may read (see above), and which of them
    are base64 (the others' bytes are UTF-8: text that msgspec read as
    such, encoded); else None."""
    text = data[start - 1 : end]
    wrapped = text.replace(b"\n", b"]\n[")
    lines = (len(wrapped) - len(text)) // 2 - 1
    try:
        reads: list[_Read] = list(map(_first, _DECODER.decode_lines(memoryview(wrapped)[2:-1])))
    except (msgspec.DecodeError, ValueError, RecursionError):  # json reads them, and says
        return None
    if len(reads) != lines:
        return None  # a line held two values
    times: list[float] = list(map(_time, reads))
    if not math.isfinite(sum(times)):  # msgspec reads none that is not; an overflow goes to json
        return None
    texts: list[str] = list(map(_text, reads))  # UNSET on a b64 line, made "" below
    based: list[int] = []  # b64 lines
    if texts.count(_UNSET):  # type: ignore[arg-type]
        based = list(compress(count(), map(is_, texts, repeat(_UNSET))))
        for i in based:
            texts[i] = ""
    try:
        chunks = list(map(str.encode, texts))
        for i in based:
            b64 = reads[i].b64
            if b64 is _UNSET:
                return None  # a time alone: a line the general reading ignores
            chunks[i] = b64decode(b64, validate=True)
    except ValueError:  # a base64 line that is not base64 (the line is skipped): not here
        return None
    return times, chunks, based
