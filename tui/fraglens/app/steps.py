"""What the panes read at a step: thin lookups over the engine's append-only arrays.

The engine already keeps, per call, the event and end offset of every
fragment; the state after event N is a set of prefix lengths. This module only
turns those arrays into the questions the app asks ("which bytes did event N
add to this call?", "where is the next event with a diagnostic?"), each a
binary search. It never reassembles anything, and it never imports Textual.

A ``StepIndex`` is rebuilt cheaply with :meth:`StepIndex.refresh` when a live
stream grows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from ..engine.calls import Call
from ..engine.diagnostics import SEVERITY_RANK, Diagnostic
from ..engine.plural import counted
from ..engine.text_pieces import TextPieces
from ..fit.verdicts import Fit
from ..reading.stream import Stream
from ..redact import TextScrub
from ..report.document import ordered_calls, stream_cost


@dataclass(frozen=True, slots=True)
class Added:
    """The text one event added to one call: ``text[start:end]``."""

    call: Call
    start: int
    end: int
    #: fragments this event carried for the call (usually 1)
    fragments: int

    @property
    def text(self) -> str:
        return self.call.text[self.start : self.end]


@dataclass(frozen=True, slots=True)
class Said:
    """What one choice had said (its text, or its reasoning) after a step."""

    choice: int
    #: "content" or "reasoning"
    channel: str
    #: the newest characters, at most the number asked for
    tail: str
    #: how many characters had come in all
    length: int
    #: what the step itself added ("" when nothing)
    added: str


class StepIndex:
    """Read-only lookups the panes share. Call :meth:`refresh` after the
    stream grew (live calls, the proxy)."""

    def __init__(self, stream: Stream, fit: Fit | None = None) -> None:
        self.stream = stream
        #: the calls against the declared tools, when whoever opened the stream knew them
        self.fit = fit
        self.calls: list[Call] = []
        #: call seq -> position in display order (the report's ``calls`` order)
        self.position: dict[int, int] = {}
        #: sorted event numbers that carry at least one diagnostic
        self.diagnostic_events: list[int] = []
        #: event -> highest severity rank of its diagnostics
        self.severity: dict[int, int] = {}
        #: event -> its diagnostics, most severe first (what ] and [ go through)
        self.at_event: dict[int, list[Diagnostic]] = {}
        #: (event, call seq) -> the diagnostics that call raised at that event
        self.raised: dict[tuple[int, int], list[Diagnostic]] = {}
        #: call seq -> the event whose id-missing gave it fraglens's own id
        self.id_made_up: dict[int, int] = {}
        self._scrub = TextScrub(None)
        self.refresh()

    @property
    def scrub(self) -> TextScrub:
        """The stream's credentials, to take out of what a pane draws
        (``app/scrubbed.py``); a live call learns them once it has begun."""
        if self._scrub.known is not self.stream.secrets:
            self._scrub = TextScrub(self.stream.secrets)
        return self._scrub

    def refresh(self) -> None:
        #: the recording has receive times (a recording, HAR): shown and played by
        self.timed = any(ev.time is not None for ev in self.stream.events[:64])
        self.calls = ordered_calls(self.stream)
        self.position = {c.seq: i for i, c in enumerate(self.calls)}
        severity: dict[int, int] = {}
        at_event: dict[int, list[Diagnostic]] = {}
        raised: dict[tuple[int, int], list[Diagnostic]] = {}
        made_up: dict[int, int] = {}
        for d in self.diagnostics_at(None):
            if d.event is not None:
                rank = SEVERITY_RANK[d.severity]
                severity[d.event] = max(rank, severity.get(d.event, -1))
                at_event.setdefault(d.event, []).append(d)
                if d.call is not None:
                    raised.setdefault((d.event, d.call), []).append(d)
                    if d.code == "id-missing":
                        made_up[d.call] = d.event
        for found in at_event.values():
            found.sort(key=lambda d: -SEVERITY_RANK[d.severity])  # stable: calls in order
        self.severity = severity
        self.at_event = at_event
        self.raised = raised
        self.id_made_up = made_up
        self.diagnostic_events = sorted(severity)

    # -- the stream --------------------------------------------------------
    @property
    def last(self) -> int:
        """The last event number (-1 for an empty stream)."""
        return len(self.stream.events) - 1

    def calls_at(self, step: int) -> list[Call]:
        """The calls that existed after event ``step``, in display order."""
        return [c for c in self.calls if c.first_event <= step]

    def diagnostics_at(self, step: int | None) -> list[Diagnostic]:
        """The engine's diagnostics up to event ``step`` (None: all), and the
        fit's when the tools are known, in event order."""
        found = self.stream.reassembler.diagnostics(step)
        if self.fit is None:
            return found
        extra = [d for d in self.fit.diagnostics if step is None or (d.event or 0) <= step]
        return sorted(found + extra, key=lambda d: (d.event is None, d.event or 0))

    def next_diagnostic(self, step: int) -> int | None:
        i = bisect_right(self.diagnostic_events, step)
        return self.diagnostic_events[i] if i < len(self.diagnostic_events) else None

    def previous_diagnostic(self, step: int) -> int | None:
        i = bisect_left(self.diagnostic_events, step)
        return self.diagnostic_events[i - 1] if i else None

    # -- one call ----------------------------------------------------------
    @staticmethod
    def added(call: Call, step: int) -> Added | None:
        """What event ``step`` added to ``call``, or None if it added nothing:
        the difference between the prefixes after ``step - 1`` and ``step``."""
        fragments = call.fragments_at(step) - call.fragments_at(step - 1)
        if not fragments:
            return None
        return Added(call, call.length_at(step - 1), call.length_at(step), fragments)

    def added_at(self, step: int) -> list[Added]:
        """Every call's text added by event ``step``, in display order."""
        out = []
        for call in self.calls:
            if call.first_event <= step <= call.last_event:
                found = self.added(call, step)
                if found is not None:
                    out.append(found)
        return out

    @staticmethod
    def next_fragment(call: Call, step: int) -> int | None:
        """The next event after ``step`` that carried a fragment of ``call``."""
        i = bisect_right(call.frag_event, step)
        return call.frag_event[i] if i < len(call.frag_event) else None

    @staticmethod
    def previous_fragment(call: Call, step: int) -> int | None:
        i = bisect_left(call.frag_event, step)
        return call.frag_event[i - 1] if i else None

    def latest_call(self, step: int) -> Call | None:
        """The call that most recently received a fragment at or before ``step``
        (what the Buffers pane selects when the user has not picked one)."""
        best: Call | None = None
        best_event = -1
        for call in self.calls:
            if call.first_event > step:
                continue
            k = call.fragments_at(step)
            event = call.frag_event[k - 1] if k else call.first_event
            if event >= best_event:
                best, best_event = call, event
        return best

    # -- the assistant's text ------------------------------------------------
    def _pieces(self, choice: int, channel: str) -> TextPieces:
        state = self.stream.reassembler.choices[choice]
        return state.text if channel == "content" else state.reasoning

    def said_at(self, step: int, chars: int) -> list[Said]:
        """Each choice's text and reasoning after ``step``: the last ``chars``
        characters and what ``step`` added, found by binary search."""
        out = []
        for choice in sorted(self.stream.reassembler.choices):
            for channel in ("reasoning", "content"):
                pieces = self._pieces(choice, channel)
                k = bisect_right(pieces.events, step)
                if not k:
                    continue
                first_now = bisect_left(pieces.events, step, 0, k)
                tail: list[str] = []
                size = 0
                i = k
                while i > 0 and size < chars:
                    i -= 1
                    tail.append(pieces[i][1])
                    size += len(pieces[i][1])
                text = "".join(reversed(tail))[-chars:]
                added = "".join(p for _, p in pieces[first_now:k])
                out.append(Said(choice, channel, text, self._length(choice, channel, k), added))
        return out

    def text_added_at(self, step: int) -> list[str]:
        """The text and reasoning pieces event ``step`` carried."""
        found: list[str] = []
        for choice in sorted(self.stream.reassembler.choices):
            for channel in ("reasoning", "content"):
                pieces = self._pieces(choice, channel)
                lo = bisect_left(pieces.events, step)
                hi = bisect_right(pieces.events, step, lo)
                found.extend(p for _, p in pieces[lo:hi])
        return found

    def _length(self, choice: int, channel: str, k: int) -> int:
        """Characters in the first ``k`` pieces."""
        return self._pieces(choice, channel).ends[k - 1] if k else 0

    def call(self, seq: int | None) -> Call | None:
        if seq is None or seq not in self.position:
            return None
        return self.calls[self.position[seq]]



def verdict_summary(index: StepIndex) -> str:
    """The whole stream's verdicts in one line: "3 calls: 2 ok · 1 repaired ·
    1 warning" (warnings and errors are the diagnostics of those severities,
    the fit's among them when the tools are known: the ones check counts)."""
    counts: dict[str, int] = {}
    for call in index.calls:
        status = call.result.status if call.result is not None else "open"
        counts[status] = counts.get(status, 0) + 1
    severities: dict[str, int] = {}
    for d in index.diagnostics_at(None):
        if d.severity != "info":
            severities[d.severity] = severities.get(d.severity, 0) + 1
    head = counted(len(index.calls), "call")
    parts = [f"{k} {status}" for status, k in counts.items()]
    parts += [
        counted(k, sev) for sev, k in sorted(severities.items(), key=lambda x: x[0] != "error")
    ]
    _, cost, _ = stream_cost(index.stream)
    if cost is not None:  # the figure check gives, at the table's prices
        parts.append(f"{cost['total']:.6f} {cost['currency']}")
    return head + (": " + " · ".join(parts) if parts else "")
