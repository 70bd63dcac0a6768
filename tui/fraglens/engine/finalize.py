"""Finalize one call's argument text: strict first, then an honest repair.

Order matters and every step taken is reported (docs/diagnostics.md says what each code means):

1. empty text -> ``{}``, status ``empty``;
2. lone UTF-16 surrogates (a JS/Java gateway decoded half a pair) joined;
3. strict ``json.loads``; a whole value that is a string holding JSON is
   decoded once more (``args-double-encoded``, status ``repaired``);
4. trailing data after the first value: the same value again is
   ``args-duplicated`` (repaired), different values ``args-multiple-values``;
5. text that ends inside an open value is ``truncated`` — never ``repaired``,
   whatever a lenient parser can make of it;
6. json-repair, whose result is verified by diffing the untouched text against
   the repaired value's serialization: every difference is listed as a change,
   because json-repair's own log misses some and can alter good values.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .scanner import ScanState

OK_STATUSES = ("ok", "empty")

_MAX_CHANGES = 40
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
    #: the separate values, when several different ones were found (Q14b)
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
        return Result("truncated", best, best is not None, ("buffering stopped at the size limit",))
    if obj_seen:
        # arguments came as objects (Q15): they are values already
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

    # trailing data after a first value (Q14 / Q14b)
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
    ends_open = scan.valid and not scan.complete
    if aborted or ends_open or (finish in (None, "length", "error") and not scan.valid):
        # the text stops inside a value: whatever a lenient parser builds is made up
        best = _best_effort(text)
        changes = _changes(text, best) if best is not None else []
        if not aborted:
            where = "an open string" if scan.in_string else f"depth {scan.depth}"
            if not scan.valid:
                where = f"invalid text from offset {scan.bad_offset}"
            findings.append(("args-truncated", f"arguments end inside {where}"))
        status = "aborted" if aborted else "truncated"
        return Result(
            status, best, best is not None, tuple(repairs + changes), tuple(findings),
            repaired_text=_dump(best) if best is not None else None,
        )

    best = _best_effort(text)
    if best is None:
        findings.append(("args-invalid", f"not JSON (first bad character at {scan.bad_offset})"))
        return Result("invalid", None, False, tuple(repairs), tuple(findings))
    changes = _changes(text, best)
    findings.append(("args-repaired", "; ".join(changes[:3]) or "re-serialized"))
    return Result(
        "repaired", best, True, tuple(repairs + changes), tuple(findings), repaired_text=_dump(best)
    )


def _checked_value(
    value: Any, repairs: list[str], findings: list[tuple[str, str]], aborted: bool
) -> Result:
    # joining surrogate halves loses nothing and guesses nothing: still ok (Q42 is info)
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


def _best_effort(text: str) -> Any:
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
_SIMPLE_U = re.compile(r"\\u([0-9a-fA-F]{4})")


def _plain_u(m: re.Match[str]) -> str:
    c = chr(int(m.group(1), 16))
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


def _changes(raw: str, value: Any) -> list[str]:
    """Every difference between the raw text and the repaired value, in words,
    with offsets into the raw text."""
    a, where = _minify(raw)
    b = _dump(value)
    if a == b:
        return []
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if len(out) == _MAX_CHANGES:
            out.append("… more changes not listed")
            break
        old, new = _show(a[i1:i2]), _show(b[j1:j2])
        at = "at the end" if i1 >= len(a) else f"at {where[i1]}"
        if tag == "insert":
            out.append(f"added {new} {at}")
        elif tag == "delete":
            out.append(f"removed {old} {at}")
        elif {a[i1:i2], b[j1:j2]} <= {"'", '"'}:
            out.append(f"quoted: {old} -> {new} {at}")
        else:
            out.append(f"replaced {old} with {new} {at}")
    return out


def _show(s: str, limit: int = 24) -> str:
    shown = s if len(s) <= limit else s[: limit - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)
