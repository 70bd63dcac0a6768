"""The commonest event of a long call, read without decoding its envelope.

A long call streams as thousands of events that differ only in their argument
piece; in Anthropic's Messages stream, for instance, every one reads
``{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",
"partial_json":"`` + the piece's JSON string + ``}}``. Once an adapter's
continuation shortcut (``Adapter.continuation``) has read one such event the
full way, the text before the piece's string and the text after it are kept
as an :class:`Envelope`. A later payload that is exactly that prefix, one
JSON string, and exactly that suffix is the same continuation with another
piece: json's own string scanner (``scanstring``, which ``json.loads`` uses
for every string) reads the piece, and nothing else is decoded.

Why this is exact. JSON's grammar is context-free: putting another string
token in place of one string token changes that value and nothing else, so
such a payload decodes to the learned event with the piece replaced. An
envelope is kept only when a probe string put in the piece's place is read
back at the path where the adapter takes the piece (``continuation_path``):
a key repeated elsewhere in the event cannot mislead it. The continuations
read the piece as any non-empty string, so the answer is the learned one with
the new piece. Whatever differs - whitespace, another field or order, another
index or id, an escape the scanner refuses, an empty piece - does not match,
and the event takes the full path. An adapter's state can change only when an
event takes its full path, so the stream forgets every envelope then
(:meth:`Envelopes.forget`), and learns again from the next continuation.

Holes: what real streams vary from event to event. Providers send no two
continuations alike: Chat Completions adds an ``obfuscation`` string of random
length to every chunk, Responses an increasing ``sequence_number`` and an
``obfuscation``, Anthropic pads its payloads with 0-15 spaces before the last
brace. The stream's envelopes (``Envelopes(..., unread=...)``) are therefore
patterns, not texts: the learned payload's tokens with any run of spaces or
tabs allowed where it has whitespace between two of them and before its last
one (where providers pad), the piece, and a hole for each top-level field the
adapter says it never reads (``unread_fields``) that holds a string or a
whole number. Both are exact. Whitespace between tokens means nothing in
JSON, so such a payload decodes to the learned one. A field's hole is
proved as the piece is, and more: the learned payload with another value
there decodes to the same document but for that field, and the adapter's
shortcut reads the same continuation from it. A hole takes a value of the
learned kind only (a string without raw control characters, a whole
number); anything else takes the full path.

Read holes: the usage some formats carry on every event. Vertex repeats
``usageMetadata`` with a growing token count on every chunk, DashScope a
growing ``usage``; the adapter reads it (``Usage``), so no hole may skip it.
An adapter that names the field (``usage_field``: a top-level object ``feed``
reads as ``Usage(dict(value))`` and nothing else reads) has a hole at each
whole number inside it that is proved as a field's hole is: another number
there decodes to the learned document with that number changed at one place
(its path in the usage object, found by the probe) and the shortcut reads the
same continuation. Each hole is a group of the pattern: an event's numbers
and the learned usage object make its usage (``engine/usage_log.py``),
equal to what decoding it gives.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..engine.usage_log import UsageShape, copy_json

#: json's C string scanner (what json.loads reads every string with); typeshed omits it
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

#: put in the piece's place to find where the adapter reads it
_PROBE = "\x00fraglens probe \u2028"
_PROBE_TOKEN = json.dumps(_PROBE)[1:]  # the opening quote stays in the prefix
#: envelopes kept at once (one per call being streamed, in interleaved calls)
MAX_ENVELOPES = 8
#: continuations whose envelope could not be learned, after which a stream
#: stops trying (a format whose envelopes vary from event to event)
MAX_MISSES = 32

_WS = " \t\r\n"
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

#: a piece's contents in a pattern: a JSON string's that the scanner accepts,
#: not empty (an unrolled loop: it backtracks in linear time)
PIECE = r'(?!")[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
_ESCAPE = r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'
#: an object with no object or array in it (a Vertex ``partialArgs`` entry),
#: on one line: its last brace is the one that closes it
ENTRY = (r'\{[^{}\[\]"\r\n]*(?:"[^"\\\x00-\x1f]*(?:' + _ESCAPE + r'[^"\\\x00-\x1f]*)*"'
         r'[^{}\[\]"\r\n]*)*\}')
#: a hole's value, by kind, as text and as bytes: in bytes a string's hole
#: takes printable ASCII only, so that whatever fills it is valid UTF-8 as it is
_HOLES = {
    "string": (r'"(?:[^"\\\x00-\x1f]|' + _ESCAPE + r')*"',
               r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|' + _ESCAPE + r')*"'),
    "int": (r"-?(?:0|[1-9][0-9]*)", r"-?(?:0|[1-9][0-9]*)"),
    # a whole number the adapter reads (in usage): a group, as the piece is
    "usage": (r"(-?(?:0|[1-9][0-9]*))", r"(-?(?:0|[1-9][0-9]*))"),
}
#: a number the probe puts in a usage hole (any number no usage object holds)
_SENTINEL = 987_654_321_987_654
#: what may stand between two tokens (no line end: a payload is one line)
_GAP = r"[ \t]*"
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)(?![0-9.eE])")
_BARE = re.compile(r'[^ \t\r\n{}\[\],:"]+')


class Envelope:
    """The exact text around one call's argument string, and what it means."""

    __slots__ = ("_pattern", "_source", "choice", "index", "label", "lead", "lead_groups",
                 "opening", "parts", "prefix", "suffix", "trail", "usage")

    def __init__(self, prefix: str, suffix: str, choice: int, index: int, label: str) -> None:
        self.prefix = prefix  # ends with the string's opening quote
        self.suffix = suffix  # what follows its closing quote, to the end
        self.choice = choice
        self.index = index
        #: the stream view's type for such an event when it has no SSE name
        self.label = label
        #: with holes: the payloads this envelope is (the piece and each usage
        #: hole a group, in the order of the text; compiled when first used,
        #: see ``pattern``), and the bytes before the piece and after it as
        #: expressions
        self._source: str | None = None
        self._pattern: re.Pattern[str] | None = None
        self.lead = self.trail = b""
        #: with holes: what every such payload opens with (its tokens before
        #: the first hole or space), which a payload is tested for first
        self.opening = ""
        #: the usage every such event carries, with a hole per whole number in
        #: it (the groups other than the piece's, in order); None: no usage
        self.usage: UsageShape | None = None
        #: how many of those groups come before the piece (in ``lead``)
        self.lead_groups = 0
        #: ``lead`` and ``trail`` token by token (quote and spaces around the
        #: piece aside), each with its text when it is that text and nothing
        #: else (no hole, no spaces before it): where envelopes of several
        #: calls differ (sse_runs.py reads their events in bulk)
        self.parts: tuple[list[tuple[bytes, bytes | None]], ...] = ([], [])

    def with_holes(self, data: str, holes: Sequence[tuple[int, int, str]],
                   usage: UsageShape | None = None,
                   piece: tuple[int, int, str] | None = None) -> Envelope:
        """This envelope, learned from the payload ``data``, as a pattern:
        spaces allowed between tokens, and each ``(start, end, kind)`` span of
        ``data`` a hole of that kind (``usage``: the holes of that shape).
        ``piece``: the piece's span and kind, when it is no string between
        the prefix and the suffix (an ``entry``)."""
        if piece is None:
            piece = (len(self.prefix) - 1, len(data) - len(self.suffix), "piece")
        piece_at = piece[0]
        self._source, (self.lead, self.trail), self.parts, self.opening = _tokens(
            data, sorted([piece, *holes]))
        self.usage = usage
        self.lead_groups = sum(kind == "usage" and start < piece_at for start, _, kind in holes)
        return self

    @property
    def pattern(self) -> re.Pattern[str] | None:
        """With holes: the payloads this envelope is, as an expression. It is
        compiled when first used: a stream learns the envelope of every call
        from its first continuation, and a reader in bulk may read all the
        others (several calls in turn each compiled one, a millisecond each,
        for a stream that never used it)."""
        if self._pattern is None and self._source is not None:
            self._pattern = re.compile(self._source)
        return self._pattern

    def match(self, data: str) -> tuple[str, dict[str, Any] | None] | None:
        """The piece of ``data`` and its usage (None when it carries none),
        when ``data`` is this envelope's pattern; None when it is not."""
        if not data.startswith(self.opening):
            return None
        found = self.pattern.fullmatch(data)  # type: ignore[union-attr]
        if found is None:
            return None
        piece = 1 + self.lead_groups
        # the pattern took a string's contents the scanner accepts
        text = scanstring(data, found.start(piece))[0]
        if self.usage is None:
            return text, None
        numbers = found.groups()
        try:
            values = list(map(int, numbers[: piece - 1] + numbers[piece:]))
        except ValueError:  # more digits than Python turns into a number: no JSON to json either
            return None
        return text, self.usage.make(values)

    def encoded(self) -> tuple[bytes, bytes]:
        """The payload's bytes before the piece (opening quote included) and
        after it (closing quote included), as the input holds them when it is
        UTF-8: what the bulk readers look for around each piece."""
        return (self.prefix.encode("utf-8", "surrogatepass"),
                b'"' + self.suffix.encode("utf-8", "surrogatepass"))


def _tokens(
    text: str, marks: list[tuple[int, int, str]]
) -> tuple[str, tuple[bytes, bytes], tuple[list[tuple[bytes, bytes | None]], ...], str]:
    """The pattern of ``text``'s tokens, each marked span replaced by its hole
    (the piece: a group), and the same as bytes, cut where the piece is
    (before it, after it); and the text of its tokens before the first hole
    or gap, which every payload the pattern takes opens with. A gap of spaces
    is allowed where ``text`` has whitespace between two tokens and before its
    last token (where providers pad); a gap between any two would be as
    exact, and cost a step of the expression per token on every event."""
    out: list[tuple[str, str]] = []
    literal: list[str | None] = []  # each token's text, when it is no hole
    gaps: list[bool] = []  # before each token
    i, n, m = 0, len(text), 0
    spaced = False
    while i < n:
        if text[i] not in _WS:
            gaps.append(spaced)
            spaced = False
        if m < len(marks) and i == marks[m][0]:
            _, i, kind = marks[m]
            m += 1
            if kind == "piece":
                out.append(('"(' + PIECE + ')"', ""))
            elif kind == "entry":
                out.append(("(" + ENTRY + ")", ""))
            else:
                out.append(_HOLES[kind])
            literal.append(None)
            continue
        c = text[i]
        if c in _WS:
            spaced = True
            i += 1
            continue
        if c == '"':
            j = scanstring(text, i + 1)[1]
        elif c in "{}[],:":
            j = i + 1
        else:
            found = _BARE.match(text, i)
            j = found.end() if found else i + 1
        token = re.escape(text[i:j])
        out.append((token, token))
        literal.append(text[i:j])
        i = j
    gaps[0], gaps[-1] = False, True
    glued = [(_GAP + t, _GAP + r) if gap else (t, r) for (t, r), gap in zip(out, gaps, strict=True)]
    pattern = "".join(t for t, _ in glued)
    cut = [r for _, r in out].index("")
    quote = "" if any(kind == "entry" for _, _, kind in marks) else '"'
    lead = "".join(r for _, r in glued[:cut]) + (_GAP if gaps[cut] else "") + quote
    trail = quote + "".join(r for _, r in glued[cut + 1 :])
    parts = [(r.encode("utf-8", "surrogatepass"),
              None if gap or t is None else t.encode("utf-8", "surrogatepass"))
             for (_, r), gap, t in zip(glued, gaps, literal, strict=True)]
    opening: list[str] = []
    for word, gap in zip(literal, gaps, strict=True):
        if word is None or gap:
            break
        opening.append(word)
    return pattern, (lead.encode("utf-8", "surrogatepass"),
                     trail.encode("utf-8", "surrogatepass")), (parts[:cut], parts[cut + 1 :]), \
        "".join(opening)


class Envelopes:
    """The envelopes learned in one stream, for one adapter's path."""

    def __init__(
        self, path: tuple[str | int, ...], label_of: Callable[[Any], str],
        unread: tuple[str, ...] | None = None,
        continuation: Callable[[Any], Any] | None = None,
        usage: str | None = None,
    ) -> None:
        self.path = path
        #: the stream view's type for a decoded event with no SSE name
        self._label_of = label_of
        #: with holes (see the module's doc): the top-level fields the adapter
        #: never reads, and its shortcut, which must read the same with another
        #: value in them; None: envelopes are exact texts
        self._unread = unread
        self._continuation = continuation
        #: the top-level field the adapter reads as usage (see the module's doc)
        self._usage = usage
        self._key = json.dumps(path[-1]) if isinstance(path[-1], str) else None
        self.items: list[Envelope] = []
        self.misses = 0

    def read(self, data: str) -> tuple[Envelope, str, dict[str, Any] | None] | None:
        """The envelope ``data`` is, the piece it carries and its usage (None:
        none); None when it is none of them exactly (then the event takes the
        full path)."""
        if self._unread is not None:
            for env in self.items:
                found = env.match(data)
                if found is not None:
                    return env, *found
            return None
        for env in self.items:
            if data.startswith(env.prefix):
                try:
                    text, end = scanstring(data, len(env.prefix))
                except ValueError:  # no closing quote, a control character, a bad escape
                    return None
                suffix = env.suffix
                if text and end + len(suffix) == len(data) and data.endswith(suffix):
                    return env, text, None
                return None
        return None

    def learn(
        self, data: str, choice: int, index: int, text: str, label: str, doc: Any = None
    ) -> None:
        """Keep the envelope of ``data`` (``doc`` decoded), an event the
        continuation read as ``(choice, index, text)``, if it can be proved to be one."""
        if len(self.items) >= MAX_ENVELOPES or self.misses >= MAX_MISSES or not text:
            return
        env = self._find(data, choice, index, text, label)
        if env is not None and self._unread is not None:
            env = self._holed(env, data, doc, (choice, index, text))
        if env is None:
            self.misses += 1
        else:
            self.items.append(env)

    def _holed(self, env: Envelope, data: str, doc: Any, found: Any) -> Envelope | None:
        """``env`` with a hole for each unread field proved to be one: another
        value there changes neither the continuation nor the event's label."""
        if type(doc) is not dict or self._continuation is None:
            return None
        holes = []
        piece_at, piece_end = len(env.prefix), len(data) - len(env.suffix) - 1
        for field in self._unread or ():
            hole = _value_hole(data, doc, field)
            if hole is None:
                continue
            start, end, kind, other = hole
            if start < piece_end and piece_at < end:
                continue
            changed = {**doc, field: other}
            if self._continuation(changed) != found or self._label_of(changed) != env.label:
                continue
            holes.append((start, end, kind))
        usage = None
        if self._usage is not None:
            found_usage = usage_holes(data, doc, self._usage, (piece_at, piece_end),
                                      lambda changed: self._continuation(changed) == found  # type: ignore[misc]
                                      and self._label_of(changed) == env.label)
            if found_usage is not None:
                usage, read = found_usage
                holes.extend(read)
        return env.with_holes(data, holes, usage)

    def forget(self) -> None:
        self.items.clear()

    def _find(self, data: str, choice: int, index: int, text: str, label: str) -> Envelope | None:
        key = self._key
        if key is None:
            return None
        at = len(data)
        while True:  # the key's occurrences, last first: json keeps the last of twins
            at = data.rfind(key, 0, at)
            if at < 0:
                return None
            i = _skip(data, at + len(key))
            if data[i : i + 1] != ":":
                continue
            i = _skip(data, i + 1)
            if data[i : i + 1] != '"':
                continue
            try:
                found, end = scanstring(data, i + 1)
            except ValueError:
                continue
            if found != text:
                continue
            prefix, suffix = data[: i + 1], data[end:]
            if self._proved(prefix, suffix, label):
                return Envelope(prefix, suffix, choice, index, label)

    def _proved(self, prefix: str, suffix: str, label: str) -> bool:
        """A probe string in the piece's place is read back at the path."""
        probe = prefix + _PROBE_TOKEN + suffix
        try:
            value, end = _scan_once(probe, 0)
        except (StopIteration, ValueError, RecursionError):
            return False
        if end != len(probe):
            return False
        doc = value
        for step in self.path:
            if isinstance(step, int):
                if type(value) is not list or len(value) <= step:
                    return False
            elif type(value) is not dict or step not in value:
                return False
            value = value[step]
        return value == _PROBE and self._label_of(doc) == label


def _value_hole(data: str, doc: dict[str, Any], field: str) -> tuple[int, int, str, Any] | None:
    """Where ``data`` (``doc`` encoded) holds ``field``'s value, a string or a
    whole number, as ``(start, end, kind, other)``: proved by putting ``other``
    there, which must decode to ``doc`` with ``other`` at ``field`` and
    nothing else changed. None when it cannot be."""
    value = doc.get(field)
    other: Any
    if type(value) is str:
        kind, other, token = "string", value + "x", json.dumps(value + "x")
    elif type(value) is int:
        kind, other = "int", value + 1
        token = str(other)
    else:
        return None
    key = json.dumps(field)
    at = len(data)
    while True:  # the last of twins is the one json keeps
        at = data.rfind(key, 0, at)
        if at < 0:
            return None
        i = _skip(data, at + len(key))
        if data[i : i + 1] != ":":
            continue
        i = _skip(data, i + 1)
        if kind == "string":
            if data[i : i + 1] != '"':
                continue
            try:
                end = scanstring(data, i + 1)[1]
            except ValueError:
                continue
        else:
            found = _INT.match(data, i)
            if found is None:
                continue
            end = found.end()
        probe = data[:i] + token + data[end:]
        try:
            decoded, stop = _scan_once(probe, 0)
        except (StopIteration, ValueError, RecursionError):
            continue
        if stop == len(probe) and decoded == {**doc, field: other}:
            return i, end, kind, other


def _skip(data: str, i: int) -> int:
    while i < len(data) and data[i] in _WS:
        i += 1
    return i


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def usage_holes(
    data: str, doc: Any, field: str, piece: tuple[int, int], same: Callable[[Any], bool]
) -> tuple[UsageShape, list[tuple[int, int, str]]] | None:
    """The usage ``doc`` (``data`` decoded) carries in ``field`` as a shape,
    with a hole ``(start, end, "usage")`` at each whole number in it that is
    proved to be one: another number there decodes to ``doc`` with that
    number changed (at the path the shape records) and nothing else, outside
    the ``piece`` span, and ``same`` holds of the changed document (the
    adapter's shortcut and the event's label read it as they read ``doc``).
    None when ``field`` holds no object: the event then carries no usage."""
    value = doc.get(field) if type(doc) is dict else None
    if type(value) is not dict:
        return None
    holes: list[tuple[int, int, str]] = []
    paths: list[tuple[str | int, ...]] = []
    span = _field_span(data, field)
    for start, end in _whole_numbers(data, *span) if span is not None else ():
        if start < piece[1] and piece[0] < end:
            continue
        probe = data[:start] + str(_SENTINEL) + data[end:]
        try:
            decoded, stop = _scan_once(probe, 0)
        except (StopIteration, ValueError, RecursionError):
            continue
        if stop != len(probe) or type(decoded) is not dict:
            continue
        path = _path_of(decoded.get(field), _SENTINEL)
        if path is None or path in paths:
            continue
        changed = copy_json(value)
        _set(changed, path, _SENTINEL)
        if decoded != {**doc, field: changed} or not same(decoded):
            continue
        holes.append((start, end, "usage"))
        paths.append(path)
    return UsageShape(copy_json(value), paths), holes


def _field_span(data: str, field: str) -> tuple[int, int] | None:
    """Where the last occurrence of ``field``'s key in ``data`` has its value
    (the probes prove that it is the top-level one)."""
    key = json.dumps(field)
    at = data.rfind(key)
    while at >= 0:
        i = _skip(data, at + len(key))
        if data[i : i + 1] == ":":
            i = _skip(data, i + 1)
            try:
                return i, _scan_once(data, i)[1]
            except (StopIteration, ValueError, RecursionError):
                return None
        at = data.rfind(key, 0, at)
    return None


def _whole_numbers(data: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the whole-number tokens of ``data[start:end]``, one JSON value."""
    out: list[tuple[int, int]] = []
    i = start
    while i < end:
        c = data[i]
        if c == '"':
            i = scanstring(data, i + 1)[1]
        elif c == "-" or "0" <= c <= "9":
            found = _NUMBER.match(data, i)
            if found is None:
                return out
            if found.group(1) is None and found.group(2) is None:
                out.append((i, found.end()))
            i = found.end()
        else:
            i += 1
    return out


def _path_of(value: Any, target: int) -> tuple[str | int, ...] | None:
    if type(value) is int and value == target:
        return ()
    steps: Any = value.items() if type(value) is dict else (
        enumerate(value) if type(value) is list else ())
    for key, inner in steps:
        found = _path_of(inner, target)
        if found is not None:
            return (key, *found)
    return None


def _set(value: Any, path: tuple[str | int, ...], new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


#: put in an entry's place to find where the adapter reads it
_PROBE_ENTRY = {"jsonPath": _PROBE, "stringValue": _PROBE}


def value_envelope(
    data: str, doc: Any, path: tuple[str | int, ...], usage: str | None, choice: int,
    label: str, same: Callable[[Any], bool],
) -> Envelope | None:
    """The envelope of ``data`` (``doc`` decoded) around the value at
    ``path`` - a string (the piece) or an object (a Vertex ``partialArgs``
    entry, a hole of kind ``entry``) - and around each whole number of the
    ``usage`` field (``usage_holes``): None unless a probe of that kind put
    in its place decodes to ``doc`` with the probe at ``path`` and nothing
    else changed, and ``same`` holds of it (the adapter reads such a chunk as
    it reads ``doc``). Such a payload with any value of that kind there (a
    non-empty string, a flat object) is the same chunk with that value. For
    an adapter whose continuation cannot be asked (it changes its state):
    ``same`` reads the chunk without changing anything."""
    span = _span_at(data, _skip(data, 0), path)
    kind = {"{": "entry", '"': "piece"}.get(data[span[0] : span[0] + 1]) if span else None
    if span is None or kind is None:
        return None
    start, end = span
    value: Any = _PROBE_ENTRY if kind == "entry" else _PROBE
    probe = data[:start] + json.dumps(value) + data[end:]
    try:
        decoded, stop = _scan_once(probe, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    changed = copy_json(doc)
    try:
        _set(changed, path, value)
    except (KeyError, IndexError, TypeError):
        return None
    if stop != len(probe) or decoded != changed or not same(decoded):
        return None
    holes: list[tuple[int, int, str]] = []
    shape = None
    if usage is not None:
        found = usage_holes(data, doc, usage, span, same)
        if found is not None:
            shape, holes = found
    if kind == "piece":  # the prefix ends with the opening quote, as a continuation's does
        env = Envelope(data[: start + 1], data[end:], choice, -1, label)
        return env.with_holes(data, holes, shape)
    env = Envelope(data[:start], data[end:], choice, -1, label)
    return env.with_holes(data, holes, shape, (start, end, "entry"))


def _span_at(data: str, i: int, path: tuple[str | int, ...]) -> tuple[int, int] | None:
    """Where the value at ``path`` lies in ``data``, one JSON value from
    ``i``: the last of twin keys, as json keeps it."""
    try:
        if not path:
            return i, _scan_once(data, i)[1]
        step, c = path[0], data[i : i + 1]
        if c == "{" and type(step) is str:
            at, i = None, _skip(data, i + 1)
            while data[i : i + 1] == '"':
                key, i = scanstring(data, i + 1)
                i = _skip(data, i)
                if data[i : i + 1] != ":":
                    return None
                i = _skip(data, i + 1)
                if key == step:
                    at = i
                i = _skip(data, _scan_once(data, i)[1])
                if data[i : i + 1] == ",":
                    i = _skip(data, i + 1)
            return None if at is None else _span_at(data, at, path[1:])
        if c == "[" and type(step) is int:
            i = _skip(data, i + 1)
            for _ in range(step):
                i = _skip(data, _scan_once(data, i)[1])
                if data[i : i + 1] != ",":
                    return None
                i = _skip(data, i + 1)
            return _span_at(data, i, path[1:])
    except (StopIteration, ValueError, RecursionError):
        return None
    return None
