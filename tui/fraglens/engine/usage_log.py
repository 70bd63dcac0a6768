"""The usage a stream reported, event by event, kept compactly.

Some formats carry usage on every event (Vertex's ``usageMetadata`` with a
growing token count, DashScope's ``usage``): a 100k-event call is 100k usage
objects, read by the report (the last one), the app's filter that hides
usage-only events, a WebSocket response's own usage and the live status line.
Kept as dicts they weigh more than the input. Events read in bulk
(``reading/sse_runs.py``) give their usage as one shape - the learned event's
usage, with a hole at each whole number in it - and each event's numbers, in
columns; an item is made again from them when it is asked for, equal to the
one the event's payload decodes to. Events read one by one are kept as they
came.

A sequence of ``(event, usage)`` in event order, as the list it replaces was.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any, overload

Path = tuple[str | int, ...]


class UsageShape:
    """A usage object with a hole at each of ``paths`` (whole numbers)."""

    __slots__ = ("flat", "key", "paths", "template")

    def __init__(self, template: dict[str, Any], paths: list[Path]) -> None:
        self.template = template
        self.paths = paths
        #: no object or array inside: an item is one copy of the template
        self.flat = not any(type(v) in (dict, list) for v in template.values())
        #: equal for two shapes that make the same objects from the same numbers
        self.key = repr((self.make([0] * len(paths)), paths))

    def make(self, values: Sequence[int]) -> dict[str, Any]:
        """The usage object with ``values`` in its holes, made anew (nothing
        shared with the template or another item, as decoding makes it)."""
        made: Any = dict(self.template) if self.flat else copy_json(self.template)
        for path, value in zip(self.paths, values, strict=True):
            node = made
            for step in path[:-1]:
                node = node[step]
            node[path[-1]] = value
        return made  # type: ignore[no-any-return]


def copy_json(value: Any) -> Any:
    """A decoded JSON value, its objects and arrays made anew."""
    if type(value) is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_json(v) for v in value]
    return value


class _Run:
    """Usage of events read in bulk: event ``events[k]``'s is the shape
    ``shapes[which[k]]`` (``which`` None: the only one) with the k-th value of
    each column in its holes, in order."""

    __slots__ = ("columns", "events", "shapes", "which")

    def __init__(self, events: range | array[int], shapes: list[UsageShape],
                 which: bytes | None, columns: list[array[int]]) -> None:
        self.events, self.shapes, self.which, self.columns = events, shapes, which, columns

    def __len__(self) -> int:
        return len(self.events)

    def item(self, k: int) -> tuple[int, dict[str, Any]]:
        shape = self.shapes[0 if self.which is None else self.which[k]]
        return self.events[k], shape.make([column[k] for column in self.columns])


class UsageLog(Sequence[tuple[int, dict[str, Any]]]):
    """``(event, usage)`` per event that carried usage, in event order."""

    def __init__(self) -> None:
        #: lists of items appended one by one, and runs, in order
        self._parts: list[list[tuple[int, dict[str, Any]]] | _Run] = []
        #: how many items there are up to the end of each part
        self._ends: list[int] = []

    def append(self, item: tuple[int, dict[str, Any]]) -> None:
        parts = self._parts
        if parts and type(parts[-1]) is list:
            parts[-1].append(item)
            self._ends[-1] += 1
            return
        parts.append([item])
        self._ends.append(len(self) + 1)

    def add_run(self, events: range | array[int], shapes: list[UsageShape],
                which: bytes | None, columns: list[array[int]]) -> None:
        """The usage of events read in bulk (see ``_Run``)."""
        if not len(events):
            return
        self._ends.append(len(self) + len(events))
        self._parts.append(_Run(events, shapes, which, columns))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, i: int) -> tuple[int, dict[str, Any]]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, dict[str, Any]]]: ...
    def __getitem__(
        self, i: int | slice
    ) -> tuple[int, dict[str, Any]] | list[tuple[int, dict[str, Any]]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("usage index out of range")
        n = bisect_right(self._ends, i)
        part = self._parts[n]
        k = i - (self._ends[n - 1] if n else 0)
        return part[k] if type(part) is list else part.item(k)  # type: ignore[union-attr]

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for part in self._parts:
            if type(part) is list:
                yield from part
            else:
                yield from map(part.item, range(len(part)))  # type: ignore[union-attr]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (UsageLog, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"UsageLog({list(self)!r})"
