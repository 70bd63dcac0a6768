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
"""

from __future__ import annotations

import json
import json.decoder
from collections.abc import Callable
from typing import Any

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


class Envelope:
    """The exact text around one call's argument string, and what it means."""

    __slots__ = ("choice", "index", "label", "prefix", "suffix")

    def __init__(self, prefix: str, suffix: str, choice: int, index: int, label: str) -> None:
        self.prefix = prefix  # ends with the string's opening quote
        self.suffix = suffix  # what follows its closing quote, to the end
        self.choice = choice
        self.index = index
        #: the stream view's type for such an event when it has no SSE name
        self.label = label

    def encoded(self) -> tuple[bytes, bytes]:
        """The payload's bytes before the piece (opening quote included) and
        after it (closing quote included), as the input holds them when it is
        UTF-8: what the bulk readers look for around each piece."""
        return (self.prefix.encode("utf-8", "surrogatepass"),
                b'"' + self.suffix.encode("utf-8", "surrogatepass"))


class Envelopes:
    """The envelopes learned in one stream, for one adapter's path."""

    def __init__(self, path: tuple[str | int, ...], label_of: Callable[[Any], str]) -> None:
        self.path = path
        #: the stream view's type for a decoded event with no SSE name
        self._label_of = label_of
        self._key = json.dumps(path[-1]) if isinstance(path[-1], str) else None
        self.items: list[Envelope] = []
        self.misses = 0

    def read(self, data: str) -> tuple[Envelope, str] | None:
        """The envelope ``data`` is, and the piece it carries; None when it is
        none of them exactly (then the event takes the full path)."""
        for env in self.items:
            if data.startswith(env.prefix):
                try:
                    text, end = scanstring(data, len(env.prefix))
                except ValueError:  # no closing quote, a control character, a bad escape
                    return None
                suffix = env.suffix
                if text and end + len(suffix) == len(data) and data.endswith(suffix):
                    return env, text
                return None
        return None

    def learn(self, data: str, choice: int, index: int, text: str, label: str) -> None:
        """Keep the envelope of ``data``, an event the continuation read as
        ``(choice, index, text)``, if it can be proved to be one."""
        if len(self.items) >= MAX_ENVELOPES or self.misses >= MAX_MISSES or not text:
            return
        env = self._find(data, choice, index, text, label)
        if env is None:
            self.misses += 1
        else:
            self.items.append(env)

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


def _skip(data: str, i: int) -> int:
    while i < len(data) and data[i] in _WS:
        i += 1
    return i
