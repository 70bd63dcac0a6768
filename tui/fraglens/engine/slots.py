"""Which call does a tool delta belong to? Index, id and name together.

Keying in one sentence: a call is identified by (choice, slot),
and a slot is resolved from the wire ``index``, the ``id`` and the ``name``
together — never from ``id`` alone (it usually rides only on the first
fragment) and never from the position in the ``tool_calls`` array.

The rules, in the order they are tried:

with an index
  * an id that names a known call of the choice under another index, with no
    new name: the same call moved index (``index-changed``);
  * argument text with no id and no name, on an index with no call or starting
    a second value on a call that is complete, while the call the choice opened
    last has a name and no argument text yet: that call's text under another
    index (``index-changed``; some servers give a call's first fragment the
    tool's position in the request and the rest the call's ordinal, or the
    reverse); the index then leads to that call until a header (a new id or
    name) opens a call there;
  * no call on (choice, index) yet: a new call (``index-nonzero-start`` when a
    choice's first index is not 0, ``index-nonzero-start``);
  * a different non-blank id with a name, or a name (or new value) arriving
    when the open call's arguments are already a complete JSON value: a new
    call on a used index (``index-collision``);
  * a different id without a name: the same call, the id kept as an alias
    (``id-changed``);
  * equal id / equal name: no-op (``id-repeated``, ``name-repeated``);
    a different name before any argument text: appended (``name-split``); after
    argument text, a nameless call takes it (``name-late``) and a named one keeps
    its name and says what came (``name-changed``, also for a name re-sent as
    ``"null"``).

without an index (``index-missing``)
  * by id, else a non-blank name opens a new call (unless it merely repeats
    the name of the one open call whose arguments are still open), else the
    only open call; with several open calls and nothing to go on, the
    fragment is unattributed (kept aside, never guessed).

Blank ids and names (``""``, whitespace, ``"null"``, ``"None"``) are absent
(a blank id is no id; ``name-late``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .fragments import NO_OBJECT, ArgsFinal, ToolDelta

if TYPE_CHECKING:
    from .calls import Call
    from .reassembler import Reassembler

_BLANK = {"", "null", "none", "undefined"}


def clean(value: object) -> str | None:
    """A wire id or name, or None when it is absent in all but spelling."""
    if not isinstance(value, str):
        return None if value is None else str(value)
    if value.strip().lower() in _BLANK:
        return None
    return value


class SlotResolver:
    def __init__(self, owner: Reassembler) -> None:
        self.owner = owner
        self.by_index: dict[tuple[int, int], Call] = {}
        self.by_item: dict[tuple[int, str], Call] = {}
        #: (choice, id or alias) -> the latest call known by it: finding a call
        #: by id is a lookup, not a scan of every call (20k calls took 25 s)
        self.by_id: dict[tuple[int, str], Call] = {}
        self.first_index: dict[int, int] = {}
        #: choice -> the call it opened last: the one a switched index can be about
        self.latest: dict[int, Call] = {}

    # -- lookup --------------------------------------------------------------
    def _by_id(self, choice: int, cid: str) -> Call | None:
        return self.by_id.get((choice, cid))

    def _known_as(self, call: Call, cid: str) -> None:
        """Index ``call`` under an id or alias it now carries."""
        key = (call.choice, cid)
        known = self.by_id.get(key)
        if known is None or known.seq < call.seq:
            self.by_id[key] = call  # the latest call with that id

    def _open(self, choice: int) -> list[Call]:
        return [c for c in self.owner.calls if c.choice == choice and not c.finalized]

    def waiting(self, choice: int, index: int | None) -> Call | None:
        """The call the choice opened last, when it has a name, no argument text
        yet and another index: argument text with nothing else under ``index``
        may be its (``index-changed``)."""
        call = self.latest.get(choice)
        if call is None or call.finalized or call.length or call.name is None:
            return None
        return call if call.index != index else None

    def find_final(self, op: ArgsFinal) -> Call | None:
        """The call a closing restatement of arguments is about."""
        if op.item is not None and (op.choice, op.item) in self.by_item:
            return self.by_item[(op.choice, op.item)]
        if op.index is not None and (op.choice, op.index) in self.by_index:
            return self.by_index[(op.choice, op.index)]
        cid = clean(op.id)
        return self._by_id(op.choice, cid) if cid else None

    def final_id(self, event: int, call: Call, cid: str) -> None:
        """The id a format's closing event restates for ``call`` (a Responses
        ``output_item.done``): what the server stored, so what a history must
        reference. It becomes the call's id; a different earlier one is kept
        as an alias and said (``id-changed``), never dropped silently."""
        old = call.id
        call.id = cid
        call.id_history.append((event, cid))
        self._known_as(call, cid)
        if cid in call.aliases:
            call.aliases.remove(cid)
        if old is None:
            return
        call.aliases.append(old)
        self.owner.call_once(
            call,
            "id-changed",
            f"the call's closing event gives it the id {cid!r} instead of {old!r}: "
            f"{cid!r} is its id, {old!r} kept as an alias",
            event,
        )

    # -- resolving -----------------------------------------------------------
    def resolve(self, event: int, d: ToolDelta) -> Call | None:
        if d.id is None and d.name is None and d.index is not None and d.args:
            # the common case, a bare continuation on a known slot: no rule applies
            call = self.by_index.get((d.choice, d.index))
            if call is not None and not (d.args.lstrip()[:1] in ("{", "[") and call.complete):
                return call
        owner = self.owner
        cid, name = clean(d.id), clean(d.name)
        has_args = bool(d.args) or d.args_obj is not NO_OBJECT
        if not (cid or name or has_args or d.args is not None or d.args_null):
            return None if d.index is None else self.by_index.get((d.choice, d.index))

        index = d.index
        if index is None and d.item is not None:
            call = self.by_item.get((d.choice, d.item))
            if call is not None:
                return self._update(event, call, cid, name, d)
        if index is None:
            owner.note_once(
                "index-missing", "index-missing", "tool-call entries carry no index", event
            )
            return self._resolve_unindexed(event, d, cid, name, has_args)

        key = (d.choice, index)
        call = self.by_index.get(key)
        if cid:
            other = self._by_id(d.choice, cid)
            if other is not None and other is not call and not (name and other.complete):
                owner.call_once(
                    other,
                    "index-changed",
                    f"fragments of call {cid!r} arrived under index {other.index} and {index}",
                    event,
                )
                if call is None:
                    self.by_index[key] = other
                return self._update(event, other, cid, name, d)
        bare = not (cid or name or d.native_index) and bool(d.args)
        if call is None:
            switched = self._switched(event, d, index) if bare else None
            return switched or self._new(event, d, cid, name, index)
        if d.native_index:
            return self._update(event, call, cid, name, d)  # the format's own key: no guessing
        if call.index != index and (
            (cid and cid != call.id and cid not in call.aliases)
            or (name and name != call.name)
        ):
            # the index led to a call whose text switched to it: a header opens its own call
            return self._new(event, d, cid, name, index)
        starts_value = (d.args or "").lstrip()[:1] in ("{", "[")
        if bare and starts_value and call.complete:
            switched = self._switched(event, d, index)
            if switched is not None:
                return switched
        if cid and call.id and cid != call.id and cid not in call.aliases:
            if name or call.complete:
                return self._collision(event, d, cid, name, index, f"a new id {cid!r}")
            call.aliases.append(cid)
            self._known_as(call, cid)
            owner.call_once(
                call, "id-changed", f"id {cid!r} arrived for call {call.id!r}; kept as alias", event
            )
            return self._update(event, call, None, name, d)
        # a nameless call is waiting for its name (``name-late``), so a name is not a new call
        if call.complete and name and call.name is not None and (name != call.name or starts_value):
            return self._collision(event, d, cid, name, index, f"name {name!r}")
        # anything else continues the call; a second value on it (args-duplicated,
        # args-multiple-values) is decided when finalizing
        return self._update(event, call, cid, name, d)

    def _switched(self, event: int, d: ToolDelta, index: int) -> Call | None:
        """The waiting call, when text under ``index`` is its (see the rules)."""
        call = self.waiting(d.choice, index)
        if call is None:
            return None
        self.by_index[(d.choice, index)] = call
        self.owner.call_once(
            call,
            "index-changed",
            f"call {call.name!r} opened under index {call.index} and its arguments came "
            f"under index {index}: read as its arguments",
            event,
        )
        return call

    def _resolve_unindexed(
        self, event: int, d: ToolDelta, cid: str | None, name: str | None, has_args: bool
    ) -> Call | None:
        if cid:
            call = self._by_id(d.choice, cid)
            if call is not None and not (name and call.complete and call.name is not None):
                return self._update(event, call, cid, name, d)
            return self._new(event, d, cid, name, None)
        open_calls = self._open(d.choice)
        if name:
            last = open_calls[-1] if open_calls else None
            if last is not None and last.name == name and not last.complete:
                return self._update(event, last, None, name, d)
            if last is not None and last.name is None and not last.complete and last.fragments:
                return self._update(event, last, None, name, d)
            return self._new(event, d, None, name, None)
        if len(open_calls) == 1:
            return self._update(event, open_calls[0], None, None, d)
        if not open_calls:
            mine = [c for c in self.owner.calls if c.choice == d.choice]
            if len(mine) == 1:
                return self._update(event, mine[0], None, None, d)
            if not mine:
                return self._new(event, d, None, None, None)
        return None

    def _new(
        self, event: int, d: ToolDelta, cid: str | None, name: str | None, index: int | None
    ) -> Call:
        owner = self.owner
        call = owner.new_call(event, d.choice, index)
        self.latest[d.choice] = call
        if index is not None:
            self.by_index[(d.choice, index)] = call
            if d.choice not in self.first_index:
                self.first_index[d.choice] = index
                if index != 0 and not d.native_index:
                    owner.diag(
                        "index-nonzero-start",
                        f"choice {d.choice}: the first tool-call index is {index}",
                        event,
                        call,
                    )
        if d.item is not None:
            self.by_item[(d.choice, d.item)] = call
        call.hosted = d.hosted
        if cid:
            call.id = cid
            call.id_history.append((event, cid))
            self._known_as(call, cid)
        if name:
            call.name = name
            call.name_history.append((event, name))
        return call

    def _collision(
        self, event: int, d: ToolDelta, cid: str | None, name: str | None, index: int, why: str
    ) -> Call:
        old = self.by_index[(d.choice, index)]
        self.owner.diag(
            "index-collision",
            f"{why} on index {index} while call {old.name or old.seq!r} there was complete; "
            "a new call",
            event,
        )
        return self._new(event, d, cid, name, index)

    def _update(
        self, event: int, call: Call, cid: str | None, name: str | None, d: ToolDelta
    ) -> Call:
        owner = self.owner
        if d.item is not None:
            self.by_item.setdefault((d.choice, d.item), call)
        if cid:
            if call.id is None:
                call.id = cid
                call.id_history.append((event, cid))
                self._known_as(call, cid)
            elif cid == call.id or cid in call.aliases:
                owner.call_once(call, "id-repeated", "the id was re-sent on later fragments", event)
        if name:
            if call.name is None:
                call.name = name
                call.name_history.append((event, name))
                if call.fragments and call.length:
                    owner.call_once(
                        call, "name-late", f"the name {name!r} came after argument text", event
                    )
            elif name == call.name:
                owner.call_once(call, "name-repeated", "the whole name was re-sent", event)
            elif call.length:
                self._name_changed(event, call, name)
            else:
                call.name += name
                call.name_history.append((event, call.name))
                owner.call_once(call, "name-split", f"the name arrived in pieces: {name!r}", event)
        elif d.name is not None and d.name.strip() and call.name is not None and call.length:
            self._name_changed(event, call, d.name)  # "null", "None": no name, said anyway
        return call

    def _name_changed(self, event: int, call: Call, name: str) -> None:
        """A different name once argument text has come: not a piece of the
        name (those come first), so the call keeps the name it opened with."""
        self.owner.call_once(
            call,
            "name-changed",
            f"the name {name!r} arrived for call {call.name!r} after its argument text; "
            f"{call.name!r} kept",
            event,
        )
