"""The Stream pane's filter: which events it shows, as a sorted list of numbers.

A filter is four choices: only some calls, only some event types, only events
that carry a diagnostic (any, or some codes), and whether keep-alives and
usage-only chunks are hidden. Within one choice any match counts; across
choices every one must hold (as DevTools' filter chips do).

``Rows`` keeps the numbers of the events the filter lets through, built once
when the filter is set and then only extended over the events that came since
(a loading or live stream grows): a key never re-filters the stream. Each
choice reads an index the engine keeps already (a call's fragment events, the
type labels, the sorted diagnostic events), restricted to the new range.
Stepping over hidden rows is a binary search in the list.

The filter only hides rows: every step still shows the state after the real
event, with every hidden event before it applied.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from .steps import StepIndex

#: the label the stream gives a keep-alive (an SSE comment)
KEEP_ALIVE = "comment"


@dataclass(frozen=True)
class RowFilter:
    """What the Stream pane shows. Empty sets mean "no constraint"."""

    #: call seqs: events that opened or fed one of them
    calls: frozenset[int] = frozenset()
    #: type labels, as ``Stream.labels`` holds them
    types: frozenset[str] = frozenset()
    #: events that carry a diagnostic with one of these codes
    codes: frozenset[str] = frozenset()
    #: any diagnostic at all (``codes`` narrows nothing then)
    any_diagnostic: bool = False
    hide_keep_alives: bool = False
    #: events that carried usage and nothing else: no call, text, finish or error
    hide_usage: bool = False

    @property
    def active(self) -> bool:
        return self != RowFilter()

    def describe(self, index: StepIndex) -> str:
        """A few words for the pane's title: ``#0 #2 · block_delta · hide keep-alives``."""
        parts: list[str] = []
        if self.calls:
            parts.append(" ".join(
                f"#{index.position[s]}" for s in sorted(self.calls, key=_by(index))
                if s in index.position))
        if self.types:
            parts.append(" ".join(sorted(self.types)))
        if self.any_diagnostic:
            parts.append("any diagnostic")
        elif self.codes:
            parts.append(" ".join(sorted(self.codes)))
        if self.hide_keep_alives:
            parts.append("no keep-alives")
        if self.hide_usage:
            parts.append("no usage")
        return " · ".join(parts)


def _by(index: StepIndex):  # noqa: ANN202 (a sort key)
    return lambda seq: index.position.get(seq, seq)


class Rows:
    """The event numbers ``flt`` shows, kept up to date as the stream grows."""

    def __init__(self, index: StepIndex, flt: RowFilter) -> None:
        self.index = index
        self.filter = flt
        self.events: array[int] = array("q")
        #: events up to this one (exclusive) have been judged
        self._judged = 0
        #: diagnostics known when the list was built: a new one on an old event
        #: (the stream's end adds some) means building it again
        self._diagnostics = -1
        self.update()

    def update(self) -> None:
        """Judge the events that came since the last call (cheap when none did)."""
        index = self.index
        wants_diagnostics = self.filter.any_diagnostic or bool(self.filter.codes)
        if wants_diagnostics and len(index.diagnostic_events) != self._diagnostics:
            self.events = array("q")
            self._judged = 0
        self._diagnostics = len(index.diagnostic_events)
        end = index.last + 1
        if end > self._judged:
            self.events.extend(self._judge(self._judged, end))
            self._judged = end

    def _judge(self, lo: int, hi: int) -> list[int]:
        """The events in ``[lo, hi)`` the filter lets through, in order."""
        flt, index = self.filter, self.index
        found: set[int] | None = None  # None: every event so far
        if flt.calls:
            picked: set[int] = set()
            for seq in flt.calls:
                call = index.call(seq)
                if call is None:
                    continue
                if lo <= call.first_event < hi:
                    picked.add(call.first_event)
                frags = call.frag_event
                picked.update(frags[bisect_left(frags, lo) : bisect_left(frags, hi)])
            found = picked
        if flt.types:
            labels = index.stream.labels
            typed = {e for e in range(lo, min(hi, len(labels))) if labels[e] in flt.types}
            found = typed if found is None else found & typed
        if flt.any_diagnostic or flt.codes:
            marked = index.diagnostic_events
            near = marked[bisect_left(marked, lo) : bisect_left(marked, hi)]
            if not flt.any_diagnostic:
                coded = {d.event for d in index.diagnostics_at(None) if d.code in flt.codes}
                near = [e for e in near if e in coded]
            found = set(near) if found is None else found & set(near)
        hidden = self._hidden(lo, hi)
        if found is None:
            return [e for e in range(lo, hi) if e not in hidden]
        return sorted(found - hidden)

    def _hidden(self, lo: int, hi: int) -> set[int]:
        flt, index = self.filter, self.index
        hidden: set[int] = set()
        if flt.hide_keep_alives:
            labels = index.stream.labels
            hidden.update(e for e in range(lo, min(hi, len(labels))) if labels[e] == KEEP_ALIVE)
        if flt.hide_usage:
            r = index.stream.reassembler
            said = {e for e, _ in r.errors}
            said.update(e for ch in r.choices.values() for e, _, _ in ch.finishes)
            usage = r.usage  # in event order: only the new range is read
            for i in range(bisect_left(usage, lo, key=_first), len(usage)):
                event = usage[i][0]
                if event >= hi:
                    break
                if event not in said and not _fed(index, event):
                    hidden.add(event)
        return hidden

    # -- where things are ------------------------------------------------------
    def __len__(self) -> int:
        return len(self.events)

    def shown(self, event: int) -> bool:
        i = bisect_left(self.events, event)
        return i < len(self.events) and self.events[i] == event

    def after(self, event: int) -> int | None:
        """The first shown event after ``event``."""
        i = bisect_right(self.events, event)
        return self.events[i] if i < len(self.events) else None

    def before(self, event: int) -> int | None:
        i = bisect_left(self.events, event)
        return self.events[i - 1] if i else None

    def position(self, event: int) -> int:
        """How many shown events come before ``event``."""
        return bisect_left(self.events, event)


def _first(item: tuple[int, object]) -> int:
    return item[0]


def _fed(index: StepIndex, event: int) -> bool:
    """The event opened or fed a call, or carried the assistant's text."""
    if any(c.first_event == event for c in index.calls):
        return True
    return bool(index.added_at(event) or index.text_added_at(event))
