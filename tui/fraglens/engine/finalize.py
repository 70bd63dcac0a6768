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
6. trailing commas dropped and missing commas put in (engine/commas.py): the
   strict parser reads the mended text, so the value is exact and every edit
   is listed where it was made;
7. json-repair, on texts up to ``REPAIR_LIMIT`` characters (on the damaged
   members alone when the damage can be held to members, the rest read
   strictly: engine/local_repair.py), whose result is verified by walking
   the untouched text and the repaired value's serialization side by side
   (engine/changes.py): every difference is listed as a change, because
   json-repair's own log misses some and can alter good values. A result
   that changes the top-level type, drops a key or more than a few
   characters, or cannot be followed, is a guess: the call is ``invalid``
   and the guess is kept only for showing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord
from .plain_json import strict_loads
from .plural import counted
from .scanner import ScanState

if TYPE_CHECKING:
    from typing import Final

    from .changes import Walk

OK_STATUSES = ("ok", "empty")

#: json-repair is not run on longer texts: its guess would cost seconds and
#: could not be checked change by change in that time (QUIRKS.md "Repair")
REPAIR_LIMIT = 256 * 1024
#: a repair may drop this many characters of content (commas and whitespace
#: aside); past it, json-repair deleted something the model wrote
_MAX_DROPPED = 8
_decoder = json.JSONDecoder()


class Result(FrozenRecord):
    """The verdict on one call's arguments."""

    __slots__ = (
        "status",
        "arguments",
        "has_value",
        "repairs",
        "findings",
        "values",
        "repaired_text",
        "whole_value",
        "no_floats",
    )
    status: Final[str]
    #: the parsed value (best effort for truncated/aborted; None when none)
    arguments: Final[Any]
    has_value: Final[bool]
    #: what was changed to get ``arguments``, in words, in order
    repairs: Final[tuple[str, ...]]
    #: (code, message) findings for the diagnostics list
    findings: Final[tuple[tuple[str, str], ...]]
    #: the separate values, when several different ones were found (args-multiple-values)
    values: Final[tuple[Any, ...]]
    #: the repaired value as JSON text, for a side-by-side view
    repaired_text: Final[str | None]
    #: the untouched text parsed strictly as one JSON object or array, which
    #: proves what the scanner would say after it (valid, complete, depth 0)
    whole_value: Final[bool]
    #: with ``whole_value``: no number of the text had a fraction or an
    #: exponent, so ``arguments`` holds no float, and any JSON writer spells
    #: its numbers as Python's json does (report/json_bytes.py writes it so)
    no_floats: Final[bool]

    def __init__(
        self, status: str, arguments: Any, has_value: bool, repairs: tuple[str, ...] = (),
        findings: tuple[tuple[str, str], ...] = (), values: tuple[Any, ...] = (),
        repaired_text: str | None = None, whole_value: bool = False, no_floats: bool = False,
    ) -> None:
        self.status = status
        self.arguments = arguments
        self.has_value = has_value
        self.repairs = repairs
        self.findings = findings
        self.values = values
        self.repaired_text = repaired_text
        self.whole_value = whole_value
        self.no_floats = no_floats


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
    known: tuple[str, Any, bool] | None = None,
) -> Result:
    """Decide a call's status and value. ``finish`` is the choice's normalized
    finish reason (None when the stream gave none). ``known``: a text, the
    value it is the JSON text of and whether that holds no float
    (``Call.text_value``), taken for ``json.loads`` of ``text`` when it is
    that very string."""
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
        if known is not None and known[0] is text:
            _, value, no_floats = known
        else:
            value, no_floats = strict_loads(text)
    except json.JSONDecodeError as e:
        error = e
    else:
        constant = _constant(text)
        if constant is not None:
            # Python's json reads NaN and Infinity; JSON has no such values,
            # and JSON.parse (or any strict parser the tool may use) refuses them
            findings.append(("args-invalid", constant))
            status = "aborted" if aborted else "invalid"
            return Result(status, None, False, tuple(repairs), tuple(findings))
        result = _checked_value(value, repairs, findings, aborted)
        if untouched and isinstance(value, (dict, list)):
            result = result.replace(whole_value=True, no_floats=no_floats)
        return result

    # trailing data after a first value (args-duplicated / args-multiple-values);
    # any other error stops reading the first value too
    values = _split_values(text) if error.msg == "Extra data" else None
    if values is not None and len(values) > 1:
        first = values[0]
        if all(v == first for v in values[1:]):
            copies = counted(len(values) - 1, "repeated copy", "repeated copies")
            repairs.append(f"dropped {copies} of the arguments")
            findings.append(
                (
                    "args-duplicated",
                    f"the complete arguments were sent {counted(len(values), 'time')}",
                )
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

    # the repairs' modules are loaded on the first text that is not JSON: a
    # check of sound calls never compiles their expressions
    from .changes import dump, walk
    from .commas import read_commas

    scan = scan_state()
    # the comma defects have one exact reading, found by the strict parser; a
    # text it reads closes everything it opens, so it cannot end open
    readable = not scan.valid and len(text) <= REPAIR_LIMIT and _constant(text) is None
    commas = read_commas(text, error) if readable else None
    open_in = None if scan.valid or commas is not None else _open_in(text)
    ends_open = (scan.valid and not scan.complete) or open_in is not None
    if aborted or ends_open or (finish in (None, "length", "error") and not scan.valid):
        # the text stops inside a value: whatever a lenient parser builds is made up
        if commas is not None:
            best, changes = commas.value, list(commas.listed)
        else:
            best = _best_effort(text)
            changed = _type_changed(text, best) if best is not None else None
            if changed is not None:
                # a best effort of another type is no reading of this text at all
                best, changes = None, [f"no best-effort value: json-repair's guess {changed}"]
            else:
                changes = walk(text, best).listed if best is not None else []
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
            repaired_text=dump(best) if best is not None else None,
        )

    if commas is not None:
        findings.append(("args-repaired", "; ".join(commas.listed[:3])))
        return Result(
            "repaired", commas.value, True, tuple(repairs + commas.listed), tuple(findings),
            repaired_text=dump(commas.value),
        )
    if len(text) > REPAIR_LIMIT:
        findings.append((
            "args-invalid",
            f"not JSON (first bad character at {scan.bad_offset}), and {len(text)} characters "
            f"are too large to repair (the limit is {REPAIR_LIMIT})",
        ))
        return Result("invalid", None, False, tuple(repairs), tuple(findings))
    best = _best_effort(text, error.pos)
    if best is None:
        findings.append(("args-invalid", f"not JSON (first bad character at {scan.bad_offset})"))
        return Result("invalid", None, False, tuple(repairs), tuple(findings))
    serialized = dump(best)
    diff = walk(text, best, serialized)
    guess = _guess_reason(text, best, diff)
    if guess is not None:
        # not a repair: json-repair made something up; shown, never used
        why = f"not JSON; json-repair's guess {guess}, so it is not used"
        findings.append(("args-invalid", why))
        return Result(
            "invalid", None, False, tuple(repairs + diff.listed), tuple(findings),
            repaired_text=serialized,
        )
    findings.append(("args-repaired", "; ".join(diff.listed[:3]) or "re-serialized"))
    return Result(
        "repaired", best, True, tuple(repairs + diff.listed), tuple(findings),
        repaired_text=serialized,
    )


def _type_changed(text: str, value: Any) -> str | None:
    """How ``value`` changes the top-level type ``text`` begins with, or None."""
    first = text.lstrip()[:1]
    want = {"{": (dict, "object"), "[": (list, "array"), '"': (str, "string")}.get(first)
    if want is not None and not isinstance(value, want[0]):
        return f"turns the {want[1]} into {_kind(value)}"
    return None


def _guess_reason(text: str, value: Any, changes: Walk) -> str | None:
    """Why json-repair's result is a guess rather than a repair, or None."""
    changed = _type_changed(text, value)
    if changed is not None:
        return changed
    constant = _constant(text)
    if constant is not None:
        return f"cannot stand: {constant}"
    if changes.lost:
        return "rewrites the text past where its changes can be followed"
    if changes.dropped_key:
        return "drops a key or a string"
    if changes.invented:
        return "makes up an empty string where the text has no value"
    if changes.dropped > _MAX_DROPPED:
        return f"drops {counted(changes.dropped, 'character')} of the text"
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
# strings in double quotes (and in single quotes where a key or value starts)
# and brackets. A run holds anything but single quotes, double-quoted strings
# whole: most texts are one run, read by counting its brackets. These, like
# the other expressions here, are compiled when first needed (``re`` keeps
# them): most checks never read a defective text, and start faster.
_RUN = r'(?:[^"\']+|"[^"\\]*(?:\\.[^"\\]*)*")+'
_DOUBLE = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_SINGLE = r"'[^'\\]*(?:\\.[^'\\]*)*'"
_BRACKET = r"[{}\[\]]"
_STEP = {"{": 1, "[": 1, "}": -1, "]": -1}


def _open_in(text: str) -> str | None:
    """Where ``text`` ends inside an open string, object or array, reading past
    defects a strict parser stops at; None when everything it opened is closed.
    A closer with nothing open is passed over."""
    run, double = re.compile(_RUN, re.S), re.compile(_DOUBLE, re.S)
    single, bracket = re.compile(_SINGLE, re.S), re.compile(_BRACKET)
    depth = 0
    prev = ""  # the last significant character outside strings
    i, n = 0, len(text)
    while i < n:
        m = run.match(text, i)
        if m is not None:
            bare = double.sub('"', m.group(0))  # a string counts as its quote
            brackets = bracket.findall(bare)
            if brackets:
                steps = list(accumulate(map(_STEP.__getitem__, brackets), initial=depth))
                if min(steps) >= 0:  # no closer without an opener: the count is the depth
                    depth = steps[-1]
                else:
                    for b in brackets:
                        depth = depth + 1 if b in "{[" else max(0, depth - 1)
            prev = bare.rstrip()[-1:] or prev
            i = m.end()
        elif text[i] == '"':  # a run takes a closed string whole
            return "an open string"
        else:  # a single quote
            if prev in ("", "{", "[", ",", ":"):
                sm = single.match(text, i)
                if sm is None:
                    return "an open string"
                i = sm.end()
            else:
                i += 1
            prev = "'"
    return f"depth {depth}" if depth else None


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


#: a string in double or single quotes (stepped over), or a constant
#: Python's json reads and JSON lacks
_CONSTANT = r'"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\'|(-?Infinity|NaN)'


def _constant(text: str) -> str | None:
    """Where ``text`` holds NaN or Infinity outside a string, in words, or None."""
    if "NaN" not in text and "Infinity" not in text:
        return None
    for m in re.finditer(_CONSTANT, text, re.S):
        if m.group(1) is not None:
            return f"{m.group(1)} at {m.start(1)} is not JSON (Python's json reads it as a float)"
    return None


def _has_lone_surrogate(text: str) -> bool:
    """Does ``text`` hold a code point of a UTF-16 surrogate?"""
    if text.isascii():
        return False
    try:
        # every character below U+0100 (accented Latin): a copy, ten times as
        # fast as the search, says there is no surrogate
        text.encode("latin-1")
    except UnicodeEncodeError:
        pass
    else:
        return False
    try:
        # a surrogate is the one thing UTF-8 refuses to encode: one pass in C,
        # where a search of their class took tens of steps a character
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _best_effort(text: str, stop: int | None = None) -> Any:
    """json-repair's reading of ``text``, or None; never tried past
    ``REPAIR_LIMIT`` (a call cut at the 16 MiB size limit would take minutes).
    With ``stop``, where the strict parser stopped in a text that ends where
    it should, json-repair reads the damaged members alone when it can
    (engine/local_repair.py), and the whole text when it cannot."""
    if len(text) > REPAIR_LIMIT:
        return None
    if stop is not None:
        from .local_repair import repair_locally

        value = repair_locally(text, stop, _json_repair)
        if value is not None:
            return value
    value = _json_repair(text)
    if value is None or (value == "" and text.strip() not in ('""', "''")):
        return None
    return value


def _json_repair(text: str) -> Any:
    import json_repair  # loaded on the first repair: most runs never need it

    try:
        return json_repair.repair_json(text, return_objects=True, skip_json_loads=True)
    except Exception:  # json-repair raises odd things on odd input; it is best effort
        return None
