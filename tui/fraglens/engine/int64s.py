"""Signed 64-bit arrays (``array("q")``) filled from Python ints in bulk.

A run of 100k events read at once records an offset or a number per event in
such arrays (a fragment's event and end, an event's span), and filling them
was the most a run spent on anything but the search of its bytes:
``array("q")`` converts each item with ``PyArg_Parse``, the general
argument parser, about 180 machine instructions an item. An unsigned array
converts with ``PyLong_AsUnsignedLongLong``, several times fewer, and a
non-negative int is the same eight bytes in both, so those values (offsets,
lengths, event numbers: none negative) are made unsigned and their bytes put
in place.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

__all__ = ["extend", "of"]


def extend(target: array[int], values: Iterable[int]) -> None:
    """``target.extend(values)``, for an ``array("q")`` and values none of
    which is negative (OverflowError if one is, and ``target`` unchanged)."""
    target.frombytes(array("Q", values).tobytes())


def of(values: Iterable[int]) -> array[int]:
    """``array("q", values)``, for values none of which is negative."""
    out = array("q")
    extend(out, values)
    return out
