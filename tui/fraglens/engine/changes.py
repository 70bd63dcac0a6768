"""What a repair changed: the text as sent against the repaired value, walked
side by side, every difference listed at its offset in the text as sent.

json-repair's own log misses some of its changes and it can alter good values,
so its result is checked here rather than trusted. The walk is linear in the
text: the layout is normalized first (insignificant whitespace dropped, plain
``\\u`` escapes spelled as characters), then equal runs are skipped a block at a
time and only the neighbourhood of each difference is diffed.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord

if TYPE_CHECKING:
    from typing import Final

#: changes listed one by one; past these, one line says there were more
MAX_CHANGES = 40


def dump(value: Any) -> str:
    """A value as compact JSON text: how a repaired value is shown and compared."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def describe(old: str, new: str, at: str) -> str:
    """One change in words: ``old`` became ``new`` at ``at`` ("at 12", "at the end")."""
    if not old:
        return f"added {_show(new)} {at}"
    if not new:
        return f"removed {_show(old)} {at}"
    if {old, new} <= {"'", '"'}:
        return f"quoted: {_show(old)} -> {_show(new)} {at}"
    return f"replaced {_show(old)} with {_show(new)} {at}"


def _show(s: str, limit: int = 24) -> str:
    shown = s if len(s) <= limit else s[: limit - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)


# The layout's tokens. ``plain`` is a run copied as it is: characters outside
# strings other than quotes, whitespace and backslashes, and double-quoted
# strings with no \u escape (an escaped backslash is skipped as a pair, so
# "\\u0041" is not an escape). Most JSON is one or a few such runs, which is
# what keeps this pass cheap. Then whitespace (dropped), a string that holds a
# \u escape or is cut at the very end (truncated text ends in one), a
# single-quoted string, an escape outside strings, any other character.
_TOKEN = re.compile(
    r'(?P<plain>(?:[^"\' \t\r\n\\]+|"[^"\\]*(?:\\[^u][^"\\]*)*")+)'
    r"|(?P<space>[ \t\r\n]+)"
    r'|(?P<string>"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
    r"|'[^'\\]*(?:\\.[^'\\]*)*(?:'|\\?\Z))"
    r"|\\u[0-9a-fA-F]{4}|.",
    re.S,
)
#: a surrogate pair spelled as two escapes (one character), one \u escape, or
#: any other escape (skipped whole, so that its second character starts nothing)
_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\.",
    re.S,
)


def _plain_u(m: re.Match[str]) -> str:
    if m.group(1) is not None:  # the pair is the character a repaired value holds
        high, low = int(m.group(1), 16), int(m.group(2), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    if m.group(3) is None:  # \n, \", \\ ...: the value's serialization keeps them
        return m.group(0)
    c = chr(int(m.group(3), 16))
    if c in '"\\' or c < " " or "\ud800" <= c <= "\udfff":
        return m.group(0)
    return c


class Offsets:
    """Where each character of a normalized text came from in the raw text,
    held as runs (a run is copied text, or one decoded escape whose characters
    all come from the escape's offset), so the map costs per run, not per
    character."""

    __slots__ = ("_at", "_raw", "_copied")

    def __init__(self) -> None:
        self._at: list[int] = []  # where each run starts in the normalized text
        self._raw: list[int] = []  # ... and in the raw text
        self._copied: list[bool] = []

    def add(self, at: int, raw: int, copied: bool) -> None:
        self._at.append(at)
        self._raw.append(raw)
        self._copied.append(copied)

    def __getitem__(self, i: int) -> int:
        k = bisect_right(self._at, i) - 1
        return self._raw[k] + (i - self._at[k] if self._copied[k] else 0)


def normalize(text: str) -> tuple[str, Offsets]:
    """Drop insignificant whitespace and spell plain \\u escapes as characters,
    so that the walk shows changes of meaning, not of layout. Returns the text
    and the offset in ``text`` each of its characters came from."""
    out: list[str] = []
    where = Offsets()
    size = 0

    def copy(piece: str, raw: int, copied: bool = True) -> None:
        nonlocal size
        if piece:
            out.append(piece)
            where.add(size, raw, copied)
            size += len(piece)

    for m in _TOKEN.finditer(text):
        tok, start = m.group(0), m.start()
        if m.group("plain") is not None:
            copy(tok, start)
        elif m.group("space") is not None:
            continue
        elif m.group("string") is not None:
            pos = 0
            for em in _ESCAPE.finditer(tok):
                if em.group(1) is None and em.group(3) is None:
                    continue  # not a \u escape: stays in the copied run
                copy(tok[pos : em.start()], start + pos)
                copy(_plain_u(em), start + em.start(), copied=False)
                pos = em.end()
            copy(tok[pos:], start + pos)
        elif len(tok) == 6:  # an escape outside a string (text cut inside one)
            copy(_ESCAPE.sub(_plain_u, tok), start, copied=False)
        else:
            copy(tok, start)
    return "".join(out), where


class Walk(FrozenRecord):
    """The differences between a raw text and a repaired value's serialization."""

    __slots__ = ("listed", "dropped", "dropped_key", "invented", "lost")
    #: in words, with offsets into the raw text, at most ``MAX_CHANGES``
    listed: Final[list[str]]
    #: characters of the raw text removed (commas, quotes and whitespace aside)
    dropped: Final[int]
    #: a removed span held a whole string or a key's colon
    dropped_key: Final[bool]
    #: an empty string was put where the text had none (a value made up)
    invented: Final[bool]
    #: the two texts could not be lined up again after a difference
    lost: Final[bool]

    def __init__(
        self, listed: list[str], dropped: int = 0, dropped_key: bool = False,
        invented: bool = False, lost: bool = False,
    ) -> None:
        self.listed = listed
        self.dropped = dropped
        self.dropped_key = dropped_key
        self.invented = invented
        self.lost = lost


#: what a repair may remove or change without losing content
_PUNCT = re.compile(r"[,'\"]")
#: the stretch of each text compared at a time, after a difference
_WINDOW = 64


def walk(raw: str, value: Any, serialized: str | None = None) -> Walk:
    """Every difference between the raw text and the repaired value (or its
    ``serialized`` form, when the caller has it), in one walk over both: equal
    runs are skipped a block at a time, and at a difference the next
    ``_WINDOW`` characters of each are diffed; the edits before the window's
    last common stretch are kept and the walk goes on from there. Each
    difference costs at most one window's diff, so the walk is linear in the
    text (a diff of the whole texts is quadratic: an 8 KB call took a second)."""
    a, where = normalize(raw)
    b = dump(value) if serialized is None else serialized
    if a == b:
        return Walk([])
    n, m = len(a), len(b)
    i = j = 0
    listed: list[str] = []
    dropped = 0
    dropped_key = invented = False
    more = False

    def note(old: str, new: str, at: int) -> None:
        nonlocal dropped, dropped_key, invented, more
        dropped += max(0, len(_PUNCT.sub("", old)) - len(_PUNCT.sub("", new)))
        if len(old) > len(new) and (":" in old or old.count('"') + old.count("'") >= 2):
            dropped_key = True
        if '""' in new and '""' not in old and "''" not in old:
            invented = True
        if len(listed) < MAX_CHANGES:
            listed.append(describe(old, new, "at the end" if at >= n else f"at {where[at]}"))
        else:
            more = True

    while True:
        while i < n and j < m:
            x, y = a[i : i + 256], b[j : j + 256]
            same = len(x) if x == y else _common(x, y)
            i += same
            j += same
            if same < min(len(x), len(y)) or not same:
                break
        if i >= n or j >= m:
            if i < n or j < m:
                note(a[i:], b[j:], i)
            break
        small = _small_edit(a, b, i, j)
        if small is not None:
            note(a[i : i + small[0]], b[j : j + small[1]], i)
            i += small[0]
            j += small[1]
            continue
        x, y = a[i : i + _WINDOW], b[j : j + _WINDOW]
        ops = SequenceMatcher(None, x, y, autojunk=False).get_opcodes()
        if i + len(x) < n or j + len(y) < m:
            # the window's end may cut a difference in two: keep the edits
            # before its last common stretch, and look again from there
            last = max((k for k, op in enumerate(ops) if op[0] == "equal" and k), default=0)
            if not last:
                listed.append(f"rewrote everything from offset {where[i]} on")
                return Walk(listed, dropped + n - i, dropped_key, invented, True)
            ops = ops[:last]
        for tag, i1, i2, j1, j2 in ops:
            if tag != "equal":
                note(x[i1:i2], y[j1:j2], i + i1)
        i += ops[-1][2]
        j += ops[-1][4]
    if more:
        listed.append("… more changes not listed")
    return Walk(listed, dropped, dropped_key, invented)


#: the usual repairs, tried before a window's diff: (characters removed,
#: characters added) - a comma dropped, a quote swapped, a newline escaped
_SMALL = ((1, 0), (0, 1), (1, 1), (1, 2), (2, 1), (2, 0), (0, 2), (2, 2))
_ANCHOR = 8


def _small_edit(a: str, b: str, i: int, j: int) -> tuple[int, int] | None:
    """A one- or two-character edit after which the texts agree for
    ``_ANCHOR`` characters (or to both ends), if there is one."""
    n, m = len(a), len(b)
    for k1, k2 in _SMALL:
        x, y = i + k1, j + k2
        if x > n or y > m or n - x < min(_ANCHOR, m - y) or m - y < min(_ANCHOR, n - x):
            continue
        if a[x : x + _ANCHOR] == b[y : y + _ANCHOR]:
            return k1, k2
    return None


def _common(x: str, y: str) -> int:
    """How many characters two short texts share at their start."""
    k = 0
    for cx, cy in zip(x, y, strict=False):
        if cx != cy:
            break
        k += 1
    return k
