"""JSON values that hold no float: read knowing it, and written by msgspec.

Python's json writes a container token by token, a string object for each,
and joins them: about 9 ms a megabyte of arguments objects (Ollama's, which
its adapter writes as text, and the ``arguments`` of every report). msgspec
writes the same bytes in a tenth of that time for the values it writes as
json does: objects with string keys, arrays, strings, integers of any size,
``true``, ``false`` and ``null``, with the same escapes (``\\"``, ``\\\\``,
``\\n``, ``\\r``, ``\\t``, ``\\b``, ``\\f``, ``\\u00XX`` for the other control
characters, every other character as it is).

What it is not trusted with. msgspec spells floats its own way (``1e16``
where json writes ``1e+16``, ``0.00001`` for ``1e-05``, ``null`` for NaN and
Infinity), so a value that may hold a float is never given to it. A value
holds none when ``strict_loads`` read it from text in which no number had a
fraction or an exponent and no ``NaN`` or ``Infinity`` stood: json's
decoder makes a float of exactly those, and calls its hooks for nothing
else. A string holding a lone surrogate (JSON allows ``"\\ud800"``; UTF-8
cannot write it) makes msgspec refuse, and the writers here say None: the
caller writes such a value with json, as before. Keys are strings, as json
decodes them. ``tests/test_plain_json.py`` holds every writer here to json
on generated values.

msgspec is imported on the first write: that costs about 12 ms (it loads
``typing_extensions``, ``inspect``, ``uuid``...), what json spends on 1.3 MB
of objects, so the callers write with it only large values, or once it is
loaded.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["compact_text", "strict_loads", "utf8"]


class _Float(Exception):
    """A number with a fraction or an exponent, or NaN or Infinity, was read."""


def _refuse(_: str) -> Any:
    raise _Float


#: json's decoder stopping at the first number it would make a float of: on
#: text with none it reads what ``json.loads`` reads (the same C scanner, which
#: calls these hooks only for such numbers)
_no_floats = json.JSONDecoder(parse_float=_refuse, parse_constant=_refuse)


def strict_loads(text: str) -> tuple[Any, bool]:
    """``json.loads(text)``, and whether the value holds no float. Text with
    such a number is read a second time, by ``json.loads``, from the start
    (the first read stops at the first of them). It raises what ``json.loads``
    raises: an error before any float is the same error in both reads."""
    if not text.startswith("\ufeff"):  # a BOM: json.loads refuses it, the decoder would not
        try:
            return _no_floats.decode(text), True
        except _Float:
            pass
    return json.loads(text), False


def _encode(value: Any) -> bytes | None:
    import msgspec  # see the module's doc: about 12 ms, for large values only

    try:
        return msgspec.json.encode(value)
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError, RecursionError):
        return None  # a lone surrogate (UnicodeEncodeError), or no JSON value


def compact_text(value: Any) -> str | None:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` of a
    value ``strict_loads`` read with no float in it; None where msgspec cannot
    write it."""
    raw = _encode(value)
    return None if raw is None else raw.decode("utf-8")


def utf8(value: Any) -> bytes | None:
    """``json.dumps(value, ensure_ascii=False)`` encoded as UTF-8 (``, `` and
    ``: `` between members) of a string, or of a value ``strict_loads`` read
    with no float in it; None where msgspec cannot write it, as UTF-8 cannot
    hold a lone surrogate."""
    if type(value) is str:
        # msgspec keeps the UTF-8 it makes of a string that is not ASCII with
        # the string, as long as it lives (a copy of it): it is given a copy
        return _encode(value if value.isascii() else "".join((value, "")))
    raw = _encode(value)
    if raw is None:
        return None
    import msgspec

    # the same tokens, each ``,`` and ``:`` between them followed by a space:
    # msgspec's reformatting copies strings and numbers as they are
    return msgspec.json.format(raw, indent=0)
