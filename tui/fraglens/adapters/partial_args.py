"""Vertex AI streamed function-call arguments: ``partialArgs`` entries -> JSON text.

With streamed arguments Vertex does not send argument text at all. Each chunk
carries entries like ``{"jsonPath": "$.recipe.steps[4]", "stringValue": "In a
9x13 dish,", "willContinue": true}``: a value for one leaf of the arguments
object, where a string may arrive in pieces (``willContinue`` on the entry)
and an empty ``stringValue`` without ``willContinue`` ends it.

``PartialArgs`` does two things with every entry. It builds the value by
path, which is the ground truth. And, as long as the paths arrive in
document order (depth first, keys never revisited, array items in sequence,
which is what Vertex sends), it writes the JSON text of that value as it
goes, so the engine sees ordinary argument deltas and the text view streams.
The moment a path breaks that order the text written so far can no longer be
extended honestly: it stops writing, and ``close`` hands back the whole value
for the adapter to restate as ``ArgsFinal`` instead.
"""

from __future__ import annotations

import json
import re
from itertools import repeat
from json.encoder import encode_basestring
from operator import getitem
from typing import Any

from ..records import Record
from .base import dump

Segment = str | int

_STEP = re.compile(r"""\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")


#: a path of plain keys and indexes only: its steps are the first two of _STEP's
_PLAIN = re.compile(r"\$(?:\.[^.\[\]]+|\[\d+\])*")
_PLAIN_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")
#: a plain key, as ``.key`` spells it
_KEY = re.compile(r"[^.\[\]]+")


def parse_path(path: Any) -> tuple[Segment, ...] | None:
    """``$.a.b[2]['c d']`` -> ``("a", "b", 2, "c d")``; None when it is not such a path."""
    if not isinstance(path, str) or not path.startswith("$"):
        return None
    if _PLAIN.fullmatch(path):  # the common spelling, read in one pass
        return tuple([int(number) if number else key
                      for key, number in _PLAIN_STEP.findall(path)])
    segments: list[Segment] = []
    pos = 1
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return None
        key, number, single, double = m.groups()
        if number is not None:
            segments.append(int(number))
        else:
            quoted = single if single is not None else double
            segments.append(key if key is not None else re.sub(r"\\(.)", r"\1", quoted or ""))
        pos = m.end()
    return tuple(segments)


_MISSING = object()
_CONTRADICTS = "its path contradicts the paths before it"

#: Array items skipped by one path, past which the path is refused rather than
#: padded with nulls (``$.a[999999999]`` must not allocate a billion slots).
MAX_GAP = 1000


def entry_value(entry: dict[str, Any]) -> Any:
    """The value an entry carries, or ``_MISSING``."""
    if isinstance(entry.get("stringValue"), str):
        return entry["stringValue"]
    number = entry.get("numberValue", _MISSING)
    if isinstance(number, (int, float)) and not isinstance(number, bool):
        return number
    if isinstance(number, str):  # int64 values may come as strings
        try:
            parsed = json.loads(number)
        except ValueError:
            return _MISSING
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            return parsed
        return _MISSING
    if isinstance(entry.get("boolValue"), bool):
        return entry["boolValue"]
    if "nullValue" in entry:
        return None
    return _MISSING


def escape(text: str) -> str:
    """``text`` as the JSON text of a string's contents (what ``add`` writes of it)."""
    return encode_basestring(text)[1:-1]


def escaped(pieces: list[str]) -> list[str]:
    """Each piece as the JSON text of a string's contents (what ``add`` writes
    of a piece of a growing string), in one pass of C calls."""
    return list(map(getitem, map(encode_basestring, pieces), repeat(slice(1, -1))))


class _Frame(Record):
    __slots__ = ("kind", "count", "keys", "node")
    kind: type  # dict or list
    count: int
    keys: set[str]
    #: the container the frame writes, in the value built by path
    node: Any

    def __init__(self, kind: type, count: int = 0, keys: set[str] | None = None,
                 node: Any = None) -> None:
        self.kind = kind
        self.count = count
        self.keys = set() if keys is None else keys
        self.node = node


class PartialArgs:
    """One streamed call's arguments."""

    def __init__(self) -> None:
        self._value: Any = _MISSING
        #: the string value still growing, as (its container, its key, its
        #: pieces): joined once when something else is placed or the value is
        #: read, so that a value sent in n pieces costs O(total), not O(n²)
        self._growing: tuple[Any, Segment, list[str]] | None = None
        self.in_order = True
        self._stack: list[_Frame] = []
        self._path: tuple[Segment, ...] = ()  # the path of the deepest open container
        self._string: tuple[Segment, ...] | None = None  # an open string in the text
        self._leaf: tuple[Segment, ...] | None = None  # a string value still growing
        self._leaf_text: Any = None  # the jsonPath that named it, as the entry spelled it
        #: the container the last entry was placed in, and its path
        self._cursor: tuple[tuple[Segment, ...], Any] | None = None
        #: paths as the entries spell them, read
        self._paths: dict[str, tuple[Segment, ...] | None] = {}
        self._wrote = False
        #: why the last entry given to ``add`` was not placed, in words (no
        #: readable path or value, a path that contradicts the value built so
        #: far); None when it was
        self.problem: str | None = None
        #: what the last entry replaced: its path had another whole value already
        #: (a string closed before, a number); the later value is kept and this
        #: says which one was lost. None when nothing was (the same value again
        #: says nothing)
        self.replaced: str | None = None
        self._old: Any = _MISSING

    @property
    def value(self) -> Any:
        """The arguments built so far by path (``_MISSING`` before any entry)."""
        self._join()
        return self._value

    @property
    def empty(self) -> bool:
        return self._value is _MISSING

    def add(self, entry: Any) -> str:
        """Take one ``partialArgs`` entry; return the JSON text it adds ('' if none).

        An entry whose path or value cannot be read is skipped (``problem``
        says why): it carries nothing that could be placed in the arguments.
        """
        self.problem = self.replaced = None
        self._old = _MISSING
        if not isinstance(entry, dict):
            self.problem = "not an object"
            return ""
        spelled = entry.get("jsonPath")
        path = self._paths.get(spelled) if type(spelled) is str else None
        if path is None:
            path = self._parse(spelled)
        value = entry.get("stringValue", _MISSING)
        if type(value) is not str:  # (a string wins: entry_value's first rule)
            value = entry_value(entry)
        if path is None or value is _MISSING:
            self.problem = "no readable jsonPath" if path is None else "no readable value"
            return ""
        more = entry.get("willContinue") is True
        appending = isinstance(value, str) and self._leaf == path
        self._leaf = path if isinstance(value, str) and more else None
        self._leaf_text = entry["jsonPath"] if self._leaf is not None else None
        if self.in_order and path and self._stack and not appending:
            text = self._in_order(path, value, more)
            if text is not None:
                return text
        placed = self._build(path, value, appending)
        if self._old is not _MISSING and dump(self._old) != dump(value):
            old = dump(self._old)
            old = old if len(old) <= 60 else old[:59] + "…"
            self.replaced = (
                f"{entry['jsonPath']} was given a second value; the first, {old}, was replaced"
            )
        if not placed:
            self.in_order = False
            return ""
        if not self.in_order:
            return ""
        return self._write(path, value, more, appending)

    def _parse(self, spelled: Any) -> tuple[Segment, ...] | None:
        """``parse_path``, each spelling read once: a path whose last step is
        a plain key after a parent read before (``$.rows[5].text`` after
        ``$.rows[5].line``) is that parent's steps and the key, as the
        parser reads it (its steps end where each ``.`` begins)."""
        if type(spelled) is not str:
            return parse_path(spelled)
        paths = self._paths
        if len(paths) >= 1024:
            paths.clear()
        head, dot, key = spelled.rpartition(".")
        plain = bool(dot) and _KEY.fullmatch(key) is not None
        parent = paths.get(head) if plain else None
        if parent is not None:
            path: tuple[Segment, ...] | None = (*parent, key)
        else:
            path = parse_path(spelled)
            if plain and path is not None:
                paths[head] = path[:-1]
        paths[spelled] = path
        return path

    def continues(self, path: Any) -> bool:
        """An entry at ``path`` (the jsonPath as spelled) with a non-empty
        ``stringValue`` and ``willContinue`` would only add to the string
        value still growing, whose text is open: ``add`` would return the
        piece escaped and change nothing but that value (``extend``)."""
        return path is not None and path == self.growing_path()

    def growing_path(self) -> str | None:
        """The path (as spelled) that ``continues`` takes, if any: it stays
        the same until an entry goes to ``add`` or ``finish``."""
        text = self._leaf_text
        if type(text) is str and self.in_order and self._string is not None and (
                self._string == self._leaf):
            return text
        return None

    def extend(self, pieces: list[str]) -> None:
        """``add`` of one entry per piece that ``continues`` the growing
        string: the value grows by the pieces; the text they add is each
        piece escaped (``escaped``), which the caller takes."""
        self.problem = self.replaced = None
        self._old = _MISSING
        growing = self._growing
        if growing is None:  # one piece so far: the value where _build placed it
            leaf = self._leaf
            assert leaf is not None
            node = self._value
            for seg in leaf[:-1]:
                node = node[seg]
            growing = self._growing = (node, leaf[-1], [node[leaf[-1]]])
        growing[2].extend(pieces)

    def finish(self, piece: str) -> str:
        """``add`` of an entry of only ``jsonPath`` and ``stringValue`` (no
        ``willContinue``) that ``continues`` the growing string: its last
        piece. The text it adds: the piece escaped and the closing quote."""
        self.extend([piece])
        self._string = self._leaf = self._leaf_text = None
        return escape(piece) + '"'

    def close(self) -> str:
        """The call ended: the text that closes what is open ('' when out of order)."""
        if not self.in_order:
            return ""
        out = '"' if self._string is not None else ""
        self._string = None
        while self._stack:
            out += "}" if self._stack.pop().kind is dict else "]"
        return out

    def text(self) -> str:
        """The whole value as JSON text ('' when no entry ever came)."""
        value = self.value
        return "" if value is _MISSING else dump(value)

    # -- the value, by path ------------------------------------------------------
    def _build(self, path: tuple[Segment, ...], value: Any, appending: bool) -> bool:
        """Place ``value`` at ``path``; False when the path contradicts what is there."""
        if not appending:
            self._join()
        cursor, self._cursor = self._cursor, None
        if not path:
            if self._value is not _MISSING:
                self.problem = _CONTRADICTS  # a second root value
                return False
            self._value = value
            return False  # a bare root value is kept, but cannot be streamed as text
        parent = path[:-1]
        if cursor is not None and cursor[0] == parent:
            # in the container the entry before went in: walking there again
            # from the root would find it and change nothing on the way
            node = cursor[1]
        else:
            if self._value is _MISSING:
                self._value = {} if isinstance(path[0], str) else []
            node = self._value
            for i, seg in enumerate(parent):
                new: Any = {} if isinstance(path[i + 1], str) else []
                if isinstance(seg, str):
                    if not isinstance(node, dict):
                        self.problem = _CONTRADICTS
                        return False
                    if node.get(seg) is None:
                        node[seg] = new
                    node = node[seg]
                else:
                    if not self._reaches(node, seg):
                        return False
                    if seg == len(node):
                        node.append(new)
                    elif node[seg] is None:  # a gap left by an item that came early
                        node[seg] = new
                    node = node[seg]
        if not self._place(node, path[-1], value, appending):
            return False
        self._cursor = (parent, node)
        return True

    def _reaches(self, node: Any, seg: int) -> bool:
        """Whether ``node`` is a list that can hold an item at ``seg`` (its
        gaps before it filled with None); else the problem is said."""
        if not isinstance(node, list) or seg > len(node) + MAX_GAP:
            self.problem = _CONTRADICTS
            return False
        while len(node) < seg:
            node.append(None)  # a gap: only possible out of order
        return True

    def _place(self, node: Any, seg: Segment, value: Any, appending: bool) -> bool:
        """Put ``value`` under ``seg`` of ``node`` (growing the string there
        when ``appending``); False when ``node`` cannot hold it."""
        if isinstance(seg, str):
            if not isinstance(node, dict):
                self.problem = _CONTRADICTS
                return False
            if appending and isinstance(node.get(seg), str):
                self._grow(node, seg, value)
            else:
                self._old = node.get(seg, _MISSING)
                node[seg] = value
            return True
        if not self._reaches(node, seg):
            return False
        if seg == len(node):
            node.append(value)
        elif appending and isinstance(node[seg], str):
            self._grow(node, seg, value)
        else:
            if node[seg] is not None:  # None: a gap an early item left
                self._old = node[seg]
            node[seg] = value
        return True

    def _grow(self, node: Any, seg: Segment, piece: str) -> None:
        growing = self._growing
        if growing is not None and growing[0] is node and growing[1] == seg:
            growing[2].append(piece)
            return
        self._join()
        self._growing = (node, seg, [node[seg], piece])

    def _join(self) -> None:
        if self._growing is not None:
            node, seg, pieces = self._growing
            node[seg] = "".join(pieces)
            self._growing = None

    # -- the text, in document order ---------------------------------------------
    def _sibling(
        self, path: tuple[Segment, ...], parent: tuple[Segment, ...], value: Any, more: bool
    ) -> str | None:
        """``_in_order`` for a value in the deepest open container: the next
        key of an object, the next item of an array."""
        frame, seg = self._stack[-1], path[-1]
        if frame.kind is dict:
            if type(seg) is not str or seg in frame.keys:
                return None
            frame.keys.add(seg)
            out = ("," if frame.count else "") + encode_basestring(seg) + ":"
        elif type(seg) is not int or seg != frame.count:
            return None
        else:
            out = "," if frame.count else ""
        frame.count += 1
        if self._growing is not None:
            self._join()
        if self._string is not None:
            out = '"' + out
            self._string = None
        node = frame.node
        if type(node) is dict:
            node[seg] = value
        else:
            node.append(value)
        self._cursor = (parent, node)
        if type(value) is str:
            if more:
                self._string = path
                return out + '"' + encode_basestring(value)[1:-1]
            return out + encode_basestring(value)
        return out + (repr(value) if type(value) is int else json.dumps(value))

    def _in_order(self, path: tuple[Segment, ...], value: Any, more: bool) -> str | None:
        """``_build`` and ``_write`` at once for a new value at a path that
        keeps document order (None, and nothing done, for any other): every
        container it goes through is open in the text (its frame holds it),
        the rest are new, so nothing is replaced and nothing contradicts."""
        stack, now = self._stack, self._path
        parent = path[:-1]
        if parent == now:
            return self._sibling(path, parent, value, more)
        common, most = 0, min(len(now), len(parent))
        while common < most and now[common] == parent[common]:
            common += 1
        frame, seg = stack[common], path[common]
        if frame.kind is dict:
            if type(seg) is not str or seg in frame.keys:
                return None
        elif type(seg) is not int or seg != frame.count:
            return None
        for later in path[common + 1 :]:
            if type(later) is int and later:  # a new array starts at 0
                return None
        if self._growing is not None:
            self._join()
        out = ""
        if self._string is not None:
            out = '"'
            self._string = None
        while len(stack) > common + 1:
            out += "}" if stack.pop().kind is dict else "]"
        node = frame.node
        last = len(path) - 1
        for i in range(common, len(path)):
            seg = path[i]
            if frame.kind is dict:
                key: str = seg  # type: ignore[assignment]  # an object frame's step is a key
                frame.keys.add(key)
                out += ("," if frame.count else "") + encode_basestring(key) + ":"
            elif frame.count:
                out += ","
            frame.count += 1
            if i == last:
                break
            child: Any = {} if type(path[i + 1]) is str else []
            if type(node) is dict:
                node[seg] = child
            else:
                node.append(child)
            frame = _Frame(type(child), node=child)
            stack.append(frame)
            node = child
            out += "{" if type(child) is dict else "["
        if type(node) is dict:
            node[seg] = value
        else:
            node.append(value)
        self._path = parent
        self._cursor = (parent, node)
        if isinstance(value, str):
            if more:
                self._string = path
                return out + '"' + encode_basestring(value)[1:-1]
            return out + encode_basestring(value)
        return out + (repr(value) if type(value) is int else json.dumps(value))

    def _write(self, path: tuple[Segment, ...], value: Any, more: bool, appending: bool) -> str:
        out = ""
        if self._string is not None:
            if appending:
                out = escape(value)
                if not more:
                    out += '"'
                    self._string = None
                return out
            out = '"'
            self._string = None
        if not self._stack:
            if self._wrote:
                self.in_order = False  # the root was already closed
                return ""
            kind = dict if isinstance(path[0], str) else list
            self._stack.append(_Frame(kind, node=self._value))
            self._path = ()
            self._wrote = True
            out += "{" if kind is dict else "["
        parent = path[:-1]
        common = len(parent)
        if parent != self._path:  # else a sibling of the value before: nothing to close
            common = 0
            while (
                common < len(self._path)
                and common < len(parent)
                and self._path[common] == parent[common]
            ):
                common += 1
            while len(self._stack) > common + 1:
                out += "}" if self._stack.pop().kind is dict else "]"
            self._path = self._path[:common]
        for i in range(common, len(path)):
            frame, seg = self._stack[-1], path[i]
            if frame.kind is dict:
                if not isinstance(seg, str) or seg in frame.keys:
                    self.in_order = False
                    return ""
                frame.keys.add(seg)
                out += ("," if frame.count else "") + _esc_key(seg)
            else:
                if not isinstance(seg, int) or seg != frame.count:
                    self.in_order = False
                    return ""
                out += "," if frame.count else ""
            frame.count += 1
            if i < len(path) - 1:
                kind = dict if isinstance(path[i + 1], str) else list
                # the container _build made (or found) there
                self._stack.append(_Frame(kind, node=frame.node[seg]))
                self._path = path[: i + 1]
                out += "{" if kind is dict else "["
            elif isinstance(value, str):
                out += '"' + escape(value)
                if more:
                    self._string = path
                else:
                    out += '"'
            else:
                out += repr(value) if type(value) is int else json.dumps(value)
        return out


def _esc_key(key: str) -> str:
    return encode_basestring(key) + ":"
