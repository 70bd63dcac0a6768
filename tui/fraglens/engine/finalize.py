"""Finalize one call's argument text: strict first, then an honest repair.

Order matters and every step taken is reported (docs/diagnostics.md says what each code means):

1. empty text -> ``{}``, status ``empty``;
2. lone UTF-16 surrogates (a JS/Java gateway decoded half a pair) joined;
3. strict ``json.loads``; a whole value that is a string holding JSON is
   decoded once more (``args-double-encoded``, status ``repaired``);
4. trailing data after the first value: the same value again is
   ``args-duplicated`` (repaired), different values ``args-multiple-values``;
5. text that ends inside an open value is ``truncated`` — never ``repaired``,
   whatever a lenient parser can make of it, and even when an earlier defect
   (a raw newline in a string, a trailing comma) stops the strict scanner
   before the end: a lenient reading of the nesting decides;
6. json-repair, on texts up to ``REPAIR_LIMIT`` characters, whose result is
   verified by walking the untouched text and the repaired value's
   serialization side by side: every difference is listed as a change,
   because json-repair's own log misses some and can alter good values. A
   result that changes the top-level type, drops a key or more than a few
   characters, or cannot be followed, is a guess: the call is ``invalid`` and
   the guess is kept only for showing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Any

from .scanner import ScanState

OK_STATUSES = ("ok", "empty")

_MAX_CHANGES = 40
#: json-repair is not run on longer texts: its guess would cost seconds and
#: could not be checked change by change in that time (QUIRKS.md "Repair")
REPAIR_LIMIT = 256 * 1024
#: a repair may drop this many characters of content (commas and whitespace
#: aside); past it, json-repair deleted something the model wrote
_MAX_DROPPED = 8
_decoder = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict on one call's arguments."""

    status: str
    #: the parsed value (best effort for truncated/aborted; None when none)
    arguments: Any
    has_value: bool
    #: what was changed to get ``arguments``, in words, in order
    repairs: tuple[str, ...] = ()
    #: (code, message) findings for the diagnostics list
    findings: tuple[tuple[str, str], ...] = ()
    #: the separate values, when several different ones were found (args-multiple-values)
    values: tuple[Any, ...] = ()
    #: the repaired value as JSON text, for a side-by-side view
    repaired_text: str | None = None
    #: the untouched text parsed strictly as one JSON object or array, which
    #: proves what the scanner would say after it (valid, complete, depth 0)
    whole_value: bool = False


def finalize(text: str, scan: Callable[[], ScanState], **kwargs: Any) -> Result:
    """Decide a call's status and value: see :func:`_finalize` for the keywords.

    ``scan`` gives the scanner's state after the whole text; it is asked only
    when a strict parse fails (to tell a cut-off text from a broken one)."""
    try:
        return _finalize(text, scan, **kwargs)
    except RecursionError:
        # no JSON parser in Python builds a value this deep (neither would the
        # user's tool): say so, and still tell a cut-off text from a whole one
        if kwargs.get("aborted"):
            return Result("aborted", None, False)
        state = scan()
        if state.valid and not state.complete:
            where = f"arguments end inside depth {state.depth}, too deep to show a value"
            return Result("truncated", None, False, (), (("args-truncated", where),))
        return Result(
            "invalid", None, False, (), (("args-invalid", "arguments nested too deeply to parse"),)
        )


def _finalize(
    text: str,
    scan_state: Callable[[], ScanState],
    *,
    obj: Any = None,
    obj_seen: bool = False,
    over_limit: bool = False,
    aborted: bool = False,
    finish: str | None = None,
) -> Result:
    """Decide a call's status and value. ``finish`` is the choice's normalized
    finish reason (None when the stream gave none)."""
    if over_limit:
        best = _best_effort(text)
        note = "buffering stopped at the size limit"
        if best is None and len(text) > REPAIR_LIMIT:
            note += f"; {len(text)} characters are too many to build a best-effort value"
        return Result("truncated", best, best is not None, (note,))
    if obj_seen:
        # arguments came as objects (args-object): they are values already
        return Result("aborted" if aborted else "ok", obj, True)
    if not text.strip():
        if aborted:
            return Result("aborted", None, False)
        return Result("empty", {}, True, (), (("args-empty", "no argument text; parsed as {}"),))

    repairs: list[str] = []
    findings: list[tuple[str, str]] = []
    if _has_lone_surrogate(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        repairs.append("joined a UTF-16 surrogate pair that arrived as two lone halves")
        findings.append(("args-surrogate-split", "a surrogate pair arrived as lone halves; joined"))

    untouched = not repairs
    try:
        value = json.loads(text)
    except ValueError:
        pass
    else:
        result = _checked_value(value, repairs, findings, aborted)
        if untouched and isinstance(value, (dict, list)):
            result = replace(result, whole_value=True)
        return result

    # trailing data after a first value (args-duplicated / args-multiple-values)
    values = _split_values(text)
    if values is not None and len(values) > 1:
        first = values[0]
        if all(v == first for v in values[1:]):
            repairs.append(f"dropped {len(values) - 1} repeated copy of the arguments")
            findings.append(
                ("args-duplicated", f"the complete arguments were sent {len(values)} times")
            )
            status = "aborted" if aborted else "repaired"
            return Result(status, first, True, tuple(repairs), tuple(findings))
        findings.append(
            ("args-multiple-values", f"{len(values)} different JSON values under one call")
        )
        return Result(
            "aborted" if aborted else "invalid", None, False, tuple(repairs), tuple(findings),
            tuple(values),
        )

    scan = scan_state()
    open_in = None if scan.valid else _open_in(text)
    ends_open = (scan.valid and not scan.complete) or open_in is not None
    if aborted or ends_open or (finish in (None, "length", "error") and not scan.valid):
        # the text stops inside a value: whatever a lenient parser builds is made up
        best = _best_effort(text)
        changed = _type_changed(text, best) if best is not None else None
        if changed is not None:
            # a best effort of another type is no reading of this text at all
            best, changes = None, [f"no best-effort value: json-repair's guess {changed}"]
        else:
            changes = _changes(text, best).listed if best is not None else []
        if len(text) > REPAIR_LIMIT:
            changes = [f"no best-effort value: {len(text)} characters are too many to build one"]
        if not aborted:
            if scan.valid:
                where = "an open string" if scan.in_string else f"depth {scan.depth}"
            elif open_in is not None:
                where = f"{open_in} (and are malformed from offset {scan.bad_offset})"
            else:
                where = f"invalid text from offset {scan.bad_offset}"
            findings.append(("args-truncated", f"arguments end inside {where}"))
        status = "aborted" if aborted else "truncated"
        return Result(
            status, best, best is not None, tuple(repairs + changes), tuple(findings),
            repaired_text=_dump(best) if best is not None else None,
        )

    if len(text) > REPAIR_LIMIT:
        findings.append((
            "args-invalid",
            f"not JSON (first bad character at {scan.bad_offset}), and {len(text)} characters "
            f"are too large to repair (the limit is {REPAIR_LIMIT})",
        ))
        return Result("invalid", None, False, tuple(repairs), tuple(findings))
    best = _best_effort(text)
    if best is None:
        findings.append(("args-invalid", f"not JSON (first bad character at {scan.bad_offset})"))
        return Result("invalid", None, False, tuple(repairs), tuple(findings))
    walk = _changes(text, best)
    guess = _guess_reason(text, best, walk)
    if guess is not None:
        # not a repair: json-repair made something up; shown, never used
        why = f"not JSON; json-repair's guess {guess}, so it is not used"
        findings.append(("args-invalid", why))
        return Result(
            "invalid", None, False, tuple(repairs + walk.listed), tuple(findings),
            repaired_text=_dump(best),
        )
    findings.append(("args-repaired", "; ".join(walk.listed[:3]) or "re-serialized"))
    return Result(
        "repaired", best, True, tuple(repairs + walk.listed), tuple(findings),
        repaired_text=_dump(best),
    )


def _type_changed(text: str, value: Any) -> str | None:
    """How ``value`` changes the top-level type ``text`` begins with, or None."""
    first = text.lstrip()[:1]
    want = {"{": (dict, "object"), "[": (list, "array"), '"': (str, "string")}.get(first)
    if want is not None and not isinstance(value, want[0]):
        return f"turns the {want[1]} into {_kind(value)}"
    return None


def _guess_reason(text: str, value: Any, walk: Walk) -> str | None:
    """Why json-repair's result is a guess rather than a repair, or None."""
    changed = _type_changed(text, value)
    if changed is not None:
        return changed
    if walk.lost:
        return "rewrites the text past where its changes can be followed"
    if walk.dropped_key:
        return "drops a key or a string"
    if walk.invented:
        return "makes up an empty string where the text has no value"
    if walk.dropped > _MAX_DROPPED:
        return f"drops {walk.dropped} characters of the text"
    return None


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a " + type(value).__name__.replace("NoneType", "null")


# A lenient reading of the nesting, for text the strict scanner gave up on:
# strings in double quotes (and in single quotes where a key or value starts),
# brackets, and runs of anything else.
_LENIENT = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*("|\\?\Z)|[{}\[\]]|\'|[^"\'{}\[\]]+', re.S
)
_SINGLE = re.compile(r"'[^'\\]*(?:\\.[^'\\]*)*('|\\?\Z)", re.S)


def _open_in(text: str) -> str | None:
    """Where ``text`` ends inside an open string, object or array, reading past
    defects a strict parser stops at; None when everything it opened is closed."""
    stack: list[str] = []
    i, n = 0, len(text)
    prev = ""  # the last significant character outside strings
    while i < n:
        m = _LENIENT.match(text, i)
        assert m is not None  # the alternatives cover every character
        tok = m.group(0)
        c = tok[0]
        if c == "'":
            if prev in ("", "{", "[", ",", ":"):
                sm = _SINGLE.match(text, i)
                assert sm is not None
                if sm.group(1) != "'":
                    return "an open string"
                m = sm
            prev = "'"
        elif c == '"':
            if m.group(1) != '"':
                return "an open string"
            prev = '"'
        elif c in "{[":
            stack.append(c)
            prev = c
        elif c in "}]":
            if stack:
                stack.pop()
            prev = c
        else:
            rest = tok.rstrip()
            if rest:
                prev = rest[-1]
        i = m.end()
    return f"depth {len(stack)}" if stack else None


def _checked_value(
    value: Any, repairs: list[str], findings: list[tuple[str, str]], aborted: bool
) -> Result:
    # joining surrogate halves loses nothing and guesses nothing: still ok
    # (args-surrogate-split is info)
    status = "ok"
    if isinstance(value, str):
        inner = _json_container(value)
        if inner is not None:
            repairs.append("decoded a JSON string holding the arguments once more")
            findings.append(("args-double-encoded", "the arguments were a JSON string of JSON"))
            value, status = inner, "repaired"
    elif isinstance(value, dict):
        nested = [k for k, v in value.items() if isinstance(v, str) and _json_container(v)]
        if nested:
            keys = ", ".join(repr(k) for k in nested[:5])
            findings.append(("args-double-encoded", f"values hold JSON as strings: {keys}"))
    if aborted:
        status = "aborted"
    return Result(status, value, True, tuple(repairs), tuple(findings))


def _json_container(s: str) -> Any:
    t = s.strip()
    if not t or t[0] not in "{[":
        return None
    try:
        inner = json.loads(t)
    except ValueError:
        return None
    return inner if isinstance(inner, (dict, list)) else None


def _split_values(text: str) -> list[Any] | None:
    """All whitespace-separated JSON values of ``text``, or None if it isn't
    such a sequence."""
    values: list[Any] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return values
        try:
            value, i = _decoder.raw_decode(text, i)
        except ValueError:
            return None
        values.append(value)


_LONE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(text: str) -> bool:
    return _LONE.search(text) is not None


#: a string (kept as it is), or a comma outside strings that a closer follows
_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(?=\s*[}\]])', re.S)


def _without_trailing_commas(text: str) -> Any:
    """The value of ``text`` once trailing commas are removed, or
    ``_NO_VALUE`` when that does not make it JSON. The commonest defect has
    one exact reading; json-repair's can differ in what it keeps of the rest
    (it has dropped a backslash from a string beside one), so this reading
    comes first."""
    fixed = _TRAILING_COMMA.sub(lambda m: m.group(0) if m.group(0) != "," else "", text)
    if fixed == text:
        return _NO_VALUE
    try:
        return json.loads(fixed)
    except (ValueError, RecursionError):
        return _NO_VALUE


_NO_VALUE: Any = object()


def _best_effort(text: str) -> Any:
    """The reading of ``text`` with trailing commas dropped when
    that is JSON, else json-repair's, or None; never tried past
    ``REPAIR_LIMIT`` (a call cut at the 16 MiB size limit would take minutes)."""
    if len(text) > REPAIR_LIMIT:
        return None
    exact = _without_trailing_commas(text)
    if exact is not _NO_VALUE:
        return exact
    import json_repair  # loaded on the first repair: most runs never need it

    try:
        value = json_repair.repair_json(text, return_objects=True, skip_json_loads=True)
    except Exception:  # json-repair raises odd things on odd input; it is best effort
        return None
    if value == "" and text.strip() not in ('""', "''"):
        return None
    return value


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# strings (an unterminated one at the very end too: truncated text ends in one),
# runs of whitespace, a \uXXXX escape, or any other single character
_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|\'(?:[^\'\\]|\\.)*(?:\'|\\?\Z)|[ \t\r\n]+'
    r"|\\u[0-9a-fA-F]{4}|.",
    re.S,
)
#: a surrogate pair spelled as two escapes (one character), or one escape
_SIMPLE_U = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})"
)


def _plain_u(m: re.Match[str]) -> str:
    if m.group(1) is not None:  # the pair is the character a repaired value holds
        high, low = int(m.group(1), 16), int(m.group(2), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    c = chr(int(m.group(3), 16))
    if c in '"\\' or c < " " or "\ud800" <= c <= "\udfff":
        return m.group(0)
    return c


def _minify(text: str) -> tuple[str, list[int]]:
    """Drop insignificant whitespace and spell plain \\u escapes as characters,
    so that the diff below shows changes of meaning, not of layout. Returns the
    text and, for each of its characters, the offset it came from in ``text``."""
    out: list[str] = []
    where: list[int] = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok[0] in " \t\r\n":
            continue
        start = m.start()
        if tok[0] in "\"'" and len(tok) > 1:
            # inside a string: decode \uXXXX, keeping each char's source offset
            pos = 0
            for um in _SIMPLE_U.finditer(tok):
                piece = tok[pos : um.start()]
                out.append(piece)
                where.extend(range(start + pos, start + um.start()))
                plain = _plain_u(um)
                out.append(plain)
                where.extend([start + um.start()] * len(plain))
                pos = um.end()
            out.append(tok[pos:])
            where.extend(range(start + pos, start + len(tok)))
        else:
            if tok[0] == "\\" and len(tok) == 6:  # an escape in an unterminated string
                tok = _SIMPLE_U.sub(_plain_u, tok)
            out.append(tok)
            where.extend([start] * len(tok))
    return "".join(out), where


@dataclass(frozen=True, slots=True)
class Walk:
    """The differences between a raw text and a repaired value's serialization."""

    #: in words, with offsets into the raw text, at most ``_MAX_CHANGES``
    listed: list[str]
    #: characters of the raw text removed (commas, quotes and whitespace aside)
    dropped: int = 0
    #: a removed span held a whole string or a key's colon
    dropped_key: bool = False
    #: an empty string was put where the text had none (a value made up)
    invented: bool = False
    #: the two texts could not be lined up again after a difference
    lost: bool = False


#: what a repair may remove or change without losing content
_PUNCT = re.compile(r"[,'\"]")
#: the stretch of each text compared at a time, after a difference
_WINDOW = 64


def _changes(raw: str, value: Any) -> Walk:
    """Every difference between the raw text and the repaired value, in one
    walk over both: equal runs are skipped a block at a time, and at a
    difference the next ``_WINDOW`` characters of each are diffed; the edits
    before the window's last common stretch are kept and the walk goes on
    from there. Each difference costs at most one window's diff, so the walk
    is linear in the text (a diff of the whole texts is quadratic: an 8 KB
    call took a second)."""
    a, where = _minify(raw)
    b = _dump(value)
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
        if len(listed) < _MAX_CHANGES:
            listed.append(_describe(old, new, "at the end" if at >= n else f"at {where[at]}"))
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


def _describe(old: str, new: str, at: str) -> str:
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
