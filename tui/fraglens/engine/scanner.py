"""An incremental JSON scanner: follows argument text fragment by fragment.

Theory of operation. A tool call's arguments arrive as arbitrary slices of one
JSON text. Re-parsing the whole buffer after every fragment is quadratic (the
official SDK's partial parsing is, and it shows on 1 MB arguments), so instead
this is a pushdown automaton fed only the new characters. After each fragment
it knows the nesting depth, whether it stands inside a string or an escape,
whether everything so far is a prefix of some valid JSON text, and the offset
of the first character that made it impossible. It agrees with ``json.loads``
(strict: no control characters inside strings, no NaN, no trailing commas).

Speed comes from regular expressions that swallow runs of ordinary string
characters, whitespace and number characters in one step, and whole tokens
(a plain key with its colon, a plain string, a number, a literal) when a
fragment holds them; the per-character Python path handles the rest of the
structure and tokens cut by a fragment's end. Total work is linear in the text.

The scanner never builds values: ``json.loads`` does that once, at the end.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..records import FrozenRecord

if TYPE_CHECKING:
    from typing import Final

# states
_VALUE = 0  # a value must come next
_ARRAY_FIRST = 1  # just after '[': a value or ']'
_KEY_FIRST = 2  # just after '{': a key or '}'
_KEY = 3  # after ',' in an object: a key
_COLON = 4  # after a key: ':'
_AFTER = 5  # after a value: ',' or a closer (or, at top level, the end)
_STRING = 6
_LITERAL = 7
_NUMBER = 8
_DEAD = 9  # invalid: nothing more is scanned

_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = frozenset('"\\/bfnrt')
_LITERALS = {"t": "true", "f": "false", "n": "null"}

# The expressions below are compiled when the first scanner is made (``_compile``):
# ``check`` makes none for calls whose text ``json.loads`` reads as one value.
#
# Each of these patterns matches the empty string, so ``match`` never returns
# None: the ``type: ignore[union-attr]`` below says so without a check per call.
_STR_RUN: re.Pattern[str]
_WS_RUN: re.Pattern[str]
# A number prefix that may still grow into a valid number, and a complete one.
_NUM_PREFIX: re.Pattern[str]
_NUM_FULL: re.Pattern[str]
_NUM_CHARS: re.Pattern[str]
# Whole tokens, read in one step where the automaton would take several:
# a key without escapes and its colon; a value that is a string without
# escapes, a number with the delimiter that ends it in the same fragment (it
# could go on in the next one otherwise), or a literal.
_KEY_WHOLE: re.Pattern[str]
_VALUE_WHOLE: re.Pattern[str]
_compiled = False


def _compile() -> None:
    global _STR_RUN, _WS_RUN, _NUM_PREFIX, _NUM_FULL, _NUM_CHARS, _KEY_WHOLE, _VALUE_WHOLE
    global _compiled
    _STR_RUN = re.compile(r'[^"\\\x00-\x1f]*')
    _WS_RUN = re.compile(r"[ \t\n\r]*")
    _NUM_PREFIX = re.compile(
        r"-?(?:(?:0|[1-9][0-9]*)(?:\.(?:[0-9]+(?:[eE][+-]?[0-9]*)?)?|[eE][+-]?[0-9]*)?)?"
    )
    _NUM_FULL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
    _NUM_CHARS = re.compile(r"[0-9eE.+\-]*")
    _KEY_WHOLE = re.compile(r'"[^"\\\x00-\x1f]*"[ \t\n\r]*:')
    _VALUE_WHOLE = re.compile(
        r'"[^"\\\x00-\x1f]*"|true|false|null'
        r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?=[ \t\n\r,}\]])"
    )
    _compiled = True


#: bit flags of the per-fragment record ``feed`` returns
IN_STRING = 1
IN_ESCAPE = 2
COMPLETE = 4


class ScanState(FrozenRecord):
    """The scanner's view after some prefix of the text."""

    __slots__ = ("offset", "depth", "in_string", "in_escape", "valid", "complete", "bad_offset")
    #: characters seen so far
    offset: Final[int]
    #: open objects and arrays
    depth: Final[int]
    in_string: Final[bool]
    in_escape: Final[bool]
    #: everything so far is a prefix of some valid JSON text
    valid: Final[bool]
    #: a whole top-level value has been read (trailing whitespace allowed)
    complete: Final[bool]
    #: offset of the first impossible character, when not valid
    bad_offset: Final[int | None]

    def __init__(
        self, offset: int, depth: int, in_string: bool, in_escape: bool, valid: bool,
        complete: bool, bad_offset: int | None,
    ) -> None:
        self.offset = offset
        self.depth = depth
        self.in_string = in_string
        self.in_escape = in_escape
        self.valid = valid
        self.complete = complete
        self.bad_offset = bad_offset

    def as_json(self) -> dict[str, object]:
        return {
            "offset": self.offset,
            "depth": self.depth,
            "in_string": self.in_string,
            "in_escape": self.in_escape,
            "valid_prefix": self.valid,
            "complete": self.complete,
            "bad_offset": self.bad_offset,
        }


EMPTY_STATE = ScanState(0, 0, False, False, True, False, None)


class Scanner:
    """Feed it text with :meth:`feed`; read :meth:`state` at any time."""

    __slots__ = (
        "_state",
        "_stack",
        "_offset",
        "_bad",
        "_complete",
        "_esc",
        "_uni",
        "_lit",
        "_num",
        "_num_start",
        "_str_is_key",
        "_pending_high",
        "_fragment_start",
        "surrogate_split",
    )

    def __init__(self) -> None:
        if not _compiled:
            _compile()
        self._state = _VALUE
        self._stack: list[str] = []  # '{' or '['
        self._offset = 0
        self._bad: int | None = None
        self._complete = False
        self._esc = False  # just read a backslash inside a string
        self._uni = ""  # hex digits of a \u escape read so far ("" when none open)
        self._lit = ""  # the literal being read ("tr" of "true")
        self._num = ""  # the number being read
        self._num_start = 0
        self._str_is_key = False
        # (start offset of a \uD800-\uDBFF escape, its value) awaiting its low half
        self._pending_high: int | None = None
        self._fragment_start = 0
        #: a surrogate pair escape was split across fragments (args-surrogate-split)
        self.surrogate_split = False

    # -- public -----------------------------------------------------------
    @property
    def complete(self) -> bool:
        return self._complete and self._bad is None

    @property
    def bad_offset(self) -> int | None:
        return self._bad

    def _record(self) -> tuple[int, int, int]:
        """(offset, depth, flags): what a call keeps after each fragment,
        without building a ScanState."""
        if self._state == _STRING:
            return self._offset, len(self._stack), (
                IN_STRING | IN_ESCAPE if self._esc or self._uni else IN_STRING
            )
        return self._offset, len(self._stack), (
            COMPLETE if self._complete and self._bad is None else 0
        )

    def state(self) -> ScanState:
        in_string = self._state == _STRING
        return ScanState(
            offset=self._offset,
            depth=len(self._stack),
            in_string=in_string,
            in_escape=in_string and (self._esc or self._uni != ""),
            valid=self._bad is None,
            complete=self._complete and self._bad is None,
            bad_offset=self._bad,
        )

    def feed(self, text: str) -> tuple[int, int, int]:
        """Read the next fragment; returns ``(offset, depth, flags)`` after it."""
        base = self._offset
        self._fragment_start = base
        self._offset = offset = base + len(text)
        state = self._state
        start = 0
        if state == _STRING and not self._esc and not self._uni:
            start = _STR_RUN.match(text).end()  # type: ignore[union-attr]
            if start:
                self._pending_high = None
            if start == len(text):
                # a piece of string content: the commonest fragment
                return offset, len(self._stack), IN_STRING
        elif state == _DEAD:
            return offset, len(self._stack), 0
        self._scan(text, base, start)
        return self._record()

    # -- the automaton ----------------------------------------------------
    def _fail(self, at: int) -> None:
        self._bad = at
        self._state = _DEAD

    def _scan(self, text: str, base: int, i: int) -> None:  # noqa: C901 - one automaton
        # The state lives in a local while the loop runs (it changes at every
        # token) and is stored back on every way out. ``i``: where to start.
        n = len(text)
        stack = self._stack
        st = self._state
        while i < n:
            if st == _STRING:
                if self._uni != "" or self._esc:
                    self._state = st
                    i = self._escape(text, i, base)
                    if self._state == _DEAD:
                        return
                    continue
                j = _STR_RUN.match(text, i).end()  # type: ignore[union-attr]
                if j > i:
                    self._pending_high = None  # text between the halves: no pair
                    i = j
                    if i >= n:
                        break
                c = text[i]
                i += 1
                if c == '"':
                    self._pending_high = None
                    if self._str_is_key:
                        st = _COLON
                    else:
                        st = _AFTER
                        if not stack:
                            self._complete = True
                elif c == "\\":
                    self._esc = True
                else:  # a raw control character: json.loads (strict) refuses it
                    self._fail(base + i - 1)
                    return
                continue
            if st == _NUMBER:
                j = _NUM_CHARS.match(text, i).end()  # type: ignore[union-attr]
                self._num += text[i:j]
                good = _NUM_PREFIX.match(self._num).end()  # type: ignore[union-attr]
                if good < len(self._num):
                    self._fail(self._num_start + good)
                    return
                i = j
                if i >= n:
                    break  # the number may continue in the next fragment
                if not _NUM_FULL.match(self._num):
                    self._fail(base + i)
                    return
                self._num = ""
                st = _AFTER
                if not stack:
                    self._complete = True
                continue
            if st == _LITERAL:
                want = _LITERALS[self._lit[0]]
                while i < n and len(self._lit) < len(want):
                    if text[i] != want[len(self._lit)]:
                        self._fail(base + i)
                        return
                    self._lit += text[i]
                    i += 1
                if len(self._lit) == len(want):
                    self._lit = ""
                    st = _AFTER
                    if not stack:
                        self._complete = True
                continue
            # structural states: skip whitespace first
            c = text[i]
            if c in " \t\n\r":
                i = _WS_RUN.match(text, i).end()  # type: ignore[union-attr]
                if i >= n:
                    break
                c = text[i]
            # whole tokens in one step, when the fragment holds them whole:
            # a plain key and its colon, a plain string, a number that a
            # delimiter ends, a literal (what follows is judged as before)
            if st == _KEY or st == _KEY_FIRST:
                m = _KEY_WHOLE.match(text, i)
                if m is not None:  # (outside strings no surrogate half is pending)
                    st = _VALUE
                    i = m.end()
                    continue
            elif st == _VALUE or st == _ARRAY_FIRST:
                m = _VALUE_WHOLE.match(text, i)
                if m is not None:
                    st = _AFTER
                    if not stack:
                        self._complete = True
                    i = m.end()
                    continue
            if st == _AFTER:
                if not stack:
                    self._fail(base + i)  # data after a complete value
                    return
                top = stack[-1]
                if c == ",":
                    st = _KEY if top == "{" else _VALUE
                elif (c == "}" and top == "{") or (c == "]" and top == "["):
                    stack.pop()
                    if not stack:
                        self._complete = True
                else:
                    self._fail(base + i)
                    return
                i += 1
                continue
            if st == _COLON:
                if c != ":":
                    self._fail(base + i)
                    return
                st = _VALUE
                i += 1
                continue
            if st == _KEY_FIRST or st == _KEY:
                if c == '"':
                    st = _STRING
                    self._str_is_key = True
                elif c == "}" and st == _KEY_FIRST:
                    stack.pop()
                    st = _AFTER
                    if not stack:
                        self._complete = True
                else:
                    self._fail(base + i)
                    return
                i += 1
                continue
            # _VALUE or _ARRAY_FIRST
            if c == '"':
                st = _STRING
                self._str_is_key = False
                i += 1
            elif c == "{":
                stack.append("{")
                st = _KEY_FIRST
                i += 1
            elif c == "[":
                stack.append("[")
                st = _ARRAY_FIRST
                i += 1
            elif c == "]" and st == _ARRAY_FIRST:
                stack.pop()
                st = _AFTER
                if not stack:
                    self._complete = True
                i += 1
            elif c in "tfn":
                st = _LITERAL
                self._lit = c
                i += 1
            elif c == "-" or "0" <= c <= "9":
                st = _NUMBER
                self._num = ""
                self._num_start = base + i
            else:
                self._fail(base + i)
                return
        self._state = st

    def _escape(self, text: str, i: int, base: int) -> int:
        """Continue an escape sequence inside a string; returns the new index."""
        n = len(text)
        if self._esc:
            c = text[i]
            self._esc = False
            if c == "u":
                self._uni = "u"
                return i + 1
            if c not in _ESCAPES:
                self._fail(base + i)
                return i
            self._pending_high = None
            return i + 1
        # inside \uXXXX: self._uni is "u" + the hex digits read so far
        start = base + i - len(self._uni) - 1  # offset of the backslash
        while i < n and len(self._uni) < 5:
            c = text[i]
            if c not in _HEX:
                self._fail(base + i)
                return i
            self._uni += c
            i += 1
        if len(self._uni) == 5:
            code = int(self._uni[1:], 16)
            self._uni = ""
            if 0xD800 <= code <= 0xDBFF:
                self._pending_high = start
            elif 0xDC00 <= code <= 0xDFFF and self._pending_high is not None:
                if self._pending_high < self._fragment_start:
                    self.surrogate_split = True
                self._pending_high = None
            else:
                self._pending_high = None
        return i
