"""What a naive client would have built from the stream the app shows.

``check --compare`` keeps every tool delta in arrival order while it reads
(``Stream(keep_naive=True)``) and groups them by id and by arrival
(``report.naive``). The app reads without that log, which would slow every
load for a view few open; so ``g`` feeds the events read so far once more
through the same pipeline with the log on, a slice at a time between two
looks at the keyboard, and hands the log to ``report.naive``. Nothing here
groups or joins fragments itself: it only compares what the two give.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..reading.stream import Stream
from ..report.document import naive

#: events fed again per slice: tens of milliseconds, so keys stay answered
#: (without the log, the pipeline reads its commonest chunk by a shortcut; with
#: it, every event takes the adapter's full path)
SLICE_EVENTS = 1_000
#: a naive text longer than this is not parsed to say whether it is JSON
PARSE_LIMIT = 4 * 2**20


@dataclass(frozen=True)
class Grouped:
    """One key of a naive grouping, and how it compares with the real calls."""

    id: str | None
    name: str | None
    arguments: str
    #: the position of the real call whose text is exactly this one, if any
    same_as: int | None
    #: True / False: the text parses as JSON or not; None: too long to check
    json: bool | None


class NaiveReplay:
    """The events of ``stream`` (as many as it holds now) fed again with the
    naive log kept. Call :meth:`advance` until it returns True."""

    def __init__(self, stream: Stream) -> None:
        self.events = stream.events[:]  # a live stream grows: this many
        self.copy = Stream(format=stream.format, framing=stream.framing, keep_naive=True)
        self._pos = 0

    @property
    def fraction(self) -> float:
        return self._pos / max(1, len(self.events))

    def advance(self) -> bool:
        end = min(len(self.events), self._pos + SLICE_EVENTS)
        feed = self.copy.feed
        for ev in self.events[self._pos : end]:
            feed(ev)
        self._pos = end
        return end == len(self.events)

    def groupings(self, real: list[str]) -> dict[str, list[Grouped]]:
        """``by_id`` and ``by_arrival``, each key compared with the real calls'
        texts (``real``, in display order)."""
        position = {text: i for i, text in reversed(list(enumerate(real)))}
        found = naive(self.copy)
        return {how: [_grouped(item, position) for item in found[how]]
                for how in ("by_id", "by_arrival")}


def _grouped(item: dict[str, Any], position: dict[str, int]) -> Grouped:
    text = item["arguments"]
    valid: bool | None = None
    if len(text) <= PARSE_LIMIT:
        try:
            json.loads(text)
            valid = True
        except ValueError:
            valid = False
    return Grouped(item["id"], item["name"], text, position.get(text), valid)
