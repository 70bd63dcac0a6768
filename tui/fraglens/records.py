"""Plain records: equality, a readable repr and ``replace`` from ``__slots__``.

The records that ``fraglens check`` makes on its way (events, fragments,
diagnostics, verdicts) were dataclasses. A dataclass is built when its module
is imported: ``dataclasses`` brings ``inspect`` (and ``ast``, ``dis``,
``tokenize``) with it, and each class then has its methods written as source
and compiled, about 0.35 ms a class, twice for ``slots=True``. On a small
capture that was a third of the whole command. Here each class writes its own
``__init__`` and lists its fields once, in ``__slots__``; what a dataclass
would derive from them is derived here, once, for all.

A record compares equal to another of the same class with equal fields, in
order, as a dataclass does. A ``FrozenRecord`` is hashable by its fields: it
stands for a frozen dataclass, which nothing may change after it is made
(nothing stops it at run time; mypy does, as its fields are ``Final``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeVar

    _R = TypeVar("_R", bound="Record")

__all__ = ["FrozenRecord", "Record"]


class Record:
    """A record whose fields are its class's ``__slots__``, in that order."""

    __slots__: tuple[str, ...] = ()
    #: the fields that say what the record is (all of them unless a class says
    #: otherwise): equality, hashing and the repr read these
    _compared: tuple[str, ...] | None = None

    def _fields(self) -> tuple[str, ...]:
        return self._compared or self.__slots__

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._fields()])

    # a class that defines __eq__ and no __hash__ has none: records that may
    # change are not hashable, as a dataclass (eq=True, not frozen) is not
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with ``changes`` made, as ``dataclasses.replace`` makes one."""
        unknown = set(changes).difference(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {sorted(unknown)[0]!r}")
        new = object.__new__(type(self))
        for name in self.__slots__:
            object.__setattr__(new, name, changes.get(name, getattr(self, name)))
        return new


class FrozenRecord(Record):
    """A record nothing changes once made: hashable by its fields."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())
