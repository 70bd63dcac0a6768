"""One call's parsed arguments held to one tool's JSON Schema, as the
validation worker (``fit/worker.py``) runs it.

``jsonschema`` is the reference validator; the draft comes from the schema's
``$schema``, 2020-12 when it names none (what the providers document).

Nothing is ever fetched. jsonschema, given no registry, still retrieves an
``http(s)://`` or ``file://`` ``$ref`` with ``urlopen`` (a deprecated default),
so the validator is built over a registry whose retrieval refuses: a
reference resolves inside the tool's own schema or not at all, and one that
does not becomes the verdict ``unresolved``, never a fetch or an exception.

Every way the validator can fail on hostile input is a verdict too: a
reference cycle or a value nested past the interpreter's depth
(``too-deep``), and the arithmetic jsonschema itself cannot do (``multipleOf:
0.5`` against ``1e999``, which Python reads as infinity, or NaN, or an
integer too large for a float), which names the keyword that failed.
Plain values in and out, so that they cross a pipe as they are.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MAX_ERRORS",
    "Outcome",
    "compile_schema",
    "keyword_of",
    "pointer",
    "validate",
]

#: schema errors kept per call; a wrong type on every item of a long array stops here
MAX_ERRORS = 50

#: what the worker answers, a tuple whose first item says which:
#: ("ok", [(pointer, rule, schema_path, message), ...], errors past MAX_ERRORS)
#: ("schema-invalid", reason)   the tool's schema is no valid JSON Schema
#: ("unresolved", reference)    a $ref fraglens does not follow
#: ("too-deep", reason)         a reference cycle, or nesting past Python's stack
#: ("failed", keyword, reason)  the validator could not do a keyword's sums
#: and, from the parent (``fit.budget``), never the worker:
#: ("too-slow", keyword or None) the call ran past its budget
#: ("skipped", "too-slow" or "stopped")  not sent: an earlier call of its tool did that
#: ("stopped", reason)          the worker ended otherwise
Outcome = tuple[Any, ...]

#: where jsonschema keeps its keyword functions: a frame in one of these is a keyword at work
_KEYWORD_MODULES = ("jsonschema/_keywords", "jsonschema/_legacy_keywords")


def pointer(path: Iterable[Any]) -> str:
    """A jsonschema path (keys and indexes) as an RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _never_fetch(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class


def compile_schema(schema: Any) -> Any:
    """A validator for ``schema`` whose references never leave it; an Outcome
    (``schema-invalid``, ``too-deep``) when there can be none."""
    from jsonschema import exceptions, validators
    from referencing import Registry

    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        return ("schema-invalid", f"the tool's schema is not valid JSON Schema: {exc.message}")
    except RecursionError:
        return ("too-deep", "the tool's schema is nested too deeply to check")
    return cls(schema, registry=Registry(retrieve=_never_fetch))  # type: ignore[call-arg]


def validate(validator: Any, value: Any) -> Outcome:
    """``value`` against a validator from :func:`compile_schema`."""
    from referencing.exceptions import Unresolvable

    try:
        errors = sorted(
            validator.iter_errors(value),
            key=lambda e: (pointer(e.absolute_path), pointer(e.absolute_schema_path)),
        )
    except RecursionError:
        return ("too-deep", "the arguments or the schema's references nest too deeply to check")
    except Unresolvable as exc:
        return ("unresolved", _reference(exc))
    except (ArithmeticError, ValueError, TypeError) as exc:
        # jsonschema's own sums on a value JSON allows and Python cannot hold
        keyword = keyword_of(traceback.extract_tb(exc.__traceback__)) or "validation"
        return ("failed", keyword, f"{type(exc).__name__}: {exc}")
    kept = [
        (
            pointer(error.absolute_path),
            str(error.validator),
            pointer(error.absolute_schema_path),
            error.message,
        )
        for error in errors[:MAX_ERRORS]
    ]
    return ("ok", kept, max(0, len(errors) - MAX_ERRORS))


def _reference(exc: Exception) -> str:
    """The ``$ref`` that did not resolve, as the schema writes it."""
    from referencing.exceptions import NoSuchAnchor, PointerToNowhere

    found = getattr(exc, "_wrapped", exc)  # jsonschema wraps referencing's error
    if isinstance(found, NoSuchAnchor):
        return f"{found.ref}#{found.anchor}"
    if isinstance(found, PointerToNowhere):
        return f"#{found.ref}"  # the pointer, a fragment of the schema's own URI
    return str(getattr(found, "ref", found))


def keyword_of(frames: Iterable[Any]) -> str | None:
    """The schema keyword whose code is the innermost of ``frames``
    (``traceback.FrameSummary``-like: a ``filename`` and a ``name``), or None."""
    names = _keyword_names()
    found = None
    for frame in frames:
        if _module_of(frame.filename) in _KEYWORD_MODULES and frame.name in names:
            found = names[frame.name]
    return found


def _module_of(filename: str) -> str:
    parts = filename.replace("\\", "/").removesuffix(".py").split("/")
    return "/".join(parts[-2:])


_NAMES: dict[str, str] = {}


def _keyword_names() -> dict[str, str]:
    """jsonschema's keyword functions by name (``items_draft3_draft4``), each
    with the keyword it checks (``items``), over every draft it knows."""
    if not _NAMES:
        from jsonschema import validators

        for cls in validators._VALIDATORS.values():  # type: ignore[attr-defined]
            for keyword, function in cls.VALIDATORS.items():
                _NAMES[function.__name__] = keyword
    return _NAMES
