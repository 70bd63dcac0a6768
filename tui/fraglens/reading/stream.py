"""A stream being read: framed events -> JSON -> wire-format adapter -> engine.

This is the one pipeline every view uses (``check``, the app, live calls, the
proxy): feed it ``RawEvent``s as they come, ``close()`` it at the end, and
read ``reassembler`` for calls and diagnostics. Sans-I/O like the engine.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import chain, compress, repeat
from typing import TYPE_CHECKING, Any

from ..adapters import ADAPTERS, detect, make_adapter, sniff
from ..adapters.base import Continuation
from ..adapters.envelope import MAX_ENVELOPES, Envelope, Envelopes, value_envelope
from ..engine.calls import by_owner
from ..engine.fragments import Op, StreamError, ToolDelta
from ..engine.plain_json import strict_loads
from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES, Reassembler
from ..framing.events import EventLog, RawEvent, RunLines
from .ws_responses import ABORTED, ResponseLog

if TYPE_CHECKING:  # only a stream that knows credentials holds them: check of an SSE
    # capture never loads the redaction
    from ..redact import Fingerprints, Secrets

#: every wire format fraglens reads: one per adapter, in the adapters' order
FORMATS = tuple(ADAPTERS)

#: how many undecided events to hold back while the format is still unknown
_DETECT_WINDOW = 16

#: a payload this large is read knowing whether it holds a float, for an
#: adapter that writes objects of it as text (``feed_plain``: Ollama's
#: arguments): msgspec writes a megabyte of them in about 1 ms where json
#: takes 9, and the report then writes them again (report/json_bytes.py),
#: which pays for msgspec's import (12 ms) from about this size on. A payload
#: with a float is read twice, to its first float and whole (plain_json.py).
_PLAIN_AT = 768 * 1024

# the C scanner json.loads itself uses; set in JSONDecoder.__init__, so typeshed omits it
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads(text: str) -> Any:
    """``json.loads`` for a chunk, through the same C scanner without its two
    Python layers (about a microsecond an event on 100k-event captures). A payload
    with whitespace around it or trailing data takes ``json.loads`` itself,
    which strips it or raises the same error."""
    try:
        value, end = _scan_once(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


class Stream:
    def __init__(
        self,
        format: str | None = None,
        framing: str = "sse",
        max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
        keep_naive: bool = False,
        sse_body: bool | None = None,
        source: bytes | None = None,
    ) -> None:
        self.framing = framing
        #: the events came as SSE (a recording or HAR may hold a JSON body instead)
        self.sse_body = framing == "sse" if sse_body is None else sse_body
        self.format = format
        self.format_forced = format is not None
        self.format_note: str | None = None
        self.adapter = make_adapter(format) if format else None
        self.reassembler = Reassembler(max_arg_bytes)
        #: every event read, kept compactly (payloads as ranges of ``source``,
        #: the capture the events' spans index, when it is given)
        self.events = EventLog(source)
        #: per event: a short type label for the stream view
        self.labels: list[str] = []
        self._types: dict[str, str] = {}
        self.done_at: int | None = None
        self.closed = False
        #: seconds since the request when the stream ended, where that is known (a
        #: recording's end line, a live call, a proxied flow): a wait after the last
        #: event (a read timeout) is part of the timing, not lost
        self.ended_at: float | None = None
        #: the credentials a report of this stream scrubs out (``report.document``): a
        #: live call's, a recording's fingerprints; None: nothing is known
        self.secrets: Secrets | Fingerprints | None = None
        self._pending: list[tuple[int, Any, str | None]] = []
        self._guess: str | None = None
        #: the tool deltas in arrival order, for the naive comparison
        self.naive_log: list[tuple[int, ToolDelta]] | None = [] if keep_naive else None
        self._continuation = self._shortcut()
        #: the event name the shortcut's chunk comes under, where the name (not
        #: the payload) says what a message is: Bedrock's exceptions may hold
        #: anything in their payload
        self._continues: str | None = getattr(self.adapter, "continuation_event", None)
        #: the top-level field the adapter reads as usage on a continuation too
        #: (``Adapter.usage_field``); None: its continuations carry none
        self._usage: str | None = getattr(self.adapter, "usage_field", None)
        self._envelopes = self._envelopes_for()
        #: envelopes of the events ``take_entries`` reads (``run_entries``)
        self._entry_envelopes: list[Envelope] = []
        self._piece_envelopes: list[Envelope] = []
        #: what the adapter keeps of a piece read from an envelope (AI SDK)
        self._continued: Callable[[int, str], None] | None = getattr(
            self.adapter, "continued", None
        )
        #: a WebSocket connection's responses (``ws_responses.py``); None for the rest
        self.ws: ResponseLog | None = ResponseLog() if framing == "websocket" else None
        #: the WebSocket close ``{"code", "reason", "from"}``, once it came
        self.ws_close: dict[str, Any] | None = None

    # -- feeding ---------------------------------------------------------------
    def feed(self, ev: RawEvent) -> None:
        """Read one more event (numbered by its place in the stream)."""
        number = len(self.events)
        self.events.append(ev)
        self._take(number, ev.kind, ev.data, ev.event)

    def read_log(self, log: EventLog) -> None:
        """Read every event of ``log`` (a whole capture framed), which becomes
        this stream's own: nothing is copied, and each payload is decoded from
        the source while it is read and dropped after."""
        if self.events:
            raise ValueError("read_log() reads a whole capture into an empty stream")
        self.events = log
        self.take_logged(0)

    def take_logged(self, start: int) -> None:
        """Read the events of ``events`` from ``start`` on, which a decoder
        writing into this stream's own log has just added (runs.py)."""
        log = self.events
        take, kind, data, name = self._take, log.kind, log.data, log.name
        for number in range(start, len(log)):
            take(number, kind(number), data(number), name(number))

    def continues_under(self, name: str | None) -> bool:
        """An event named ``name`` may be read as a continuation: the adapter
        names no event for its shortcut, or the event has that name. A Bedrock
        message named as an exception is none whatever its payload, and one
        with no usable name is read by the adapter's full path, which says
        what it makes of it (the shortcut would take its text silently)."""
        return self._continues is None or name == self._continues

    def run_envelope(self) -> Envelope | None:
        """The envelope the last event was read as a continuation in, if it was
        (the start of a run: runs.py reads the events that repeat it in bulk)."""
        envelopes, log = self._envelopes, self.events
        if envelopes is None or not envelopes.items or not log or log.kind(len(log) - 1) != "data":
            return None
        if not self.continues_under(log.name(len(log) - 1)):
            return None
        # the envelopes are forgotten whenever an event takes the full path, so
        # a match here is an event read as a continuation of the envelope's call
        hit = envelopes.read(log.data(len(log) - 1))
        return None if hit is None else hit[0]

    def take_run(
        self, env: Envelope, texts: list[str], name: str | None, starts: list[int],
        lead: int, trail: int, usage: list[array[int]] | None = None,
        lines: RunLines | None = None,
    ) -> int:
        """Events that are ``env`` with each of ``texts`` as the piece, named
        ``name``, the k-th from ``starts[k]`` to ``starts[k + 1]`` in the source
        with its payload ``lead`` bytes after its start to ``trail`` bytes
        before its end: what ``_take`` would do with each, at once. ``usage``:
        the numbers of each of the envelope's usage holes (``Envelope.usage``),
        one column per hole; ``lines``: what else the events carry (a comment
        event before each, ids). Returns how many were taken, from the first;
        the rest must be fed one by one."""
        number = len(self.events)
        step = 1 if lines is None or lines.comments is None else 2
        first = number + step - 1  # the first data event
        # joined once: the engine's text and the adapter's (AI SDK) are one string
        joined = "".join(texts)
        taken = self.reassembler.continue_run(first, env.choice, env.index, texts, step, joined)
        if not taken:
            return 0
        label = env.label if name is None else name
        self._run_labels(number, [self._types.setdefault(label, label)], None, taken, step)
        if self._continued is not None:
            self.adapter.continued_run(  # type: ignore[union-attr]
                env.index, [joined] if taken == len(texts) else texts[:taken]
            )
        if env.usage is not None:
            assert usage is not None
            self.reassembler.usage.add_run(range(first, first + step * taken, step), [env.usage],
                                           None, [column[:taken] for column in usage])
        self.events.add_run(name, starts, taken, lead, trail, lines)
        return taken

    def run_envelopes(self) -> list[Envelope]:
        """Every envelope the stream holds, when the last event was read in
        one of them (calls streamed in turns: sse_runs.py reads such events
        in bulk too)."""
        env = self.run_envelope()
        return [] if env is None else list(self._envelopes.items)  # type: ignore[union-attr]

    def take_mixed_run(
        self, envs: list[Envelope], which: Sequence[int], texts: list[list[str]],
        name: str | None, starts: list[int], lead: int, trail: int,
        usage: list[array[int]] | None = None, lines: RunLines | None = None,
    ) -> int:
        """``take_run`` for events each of which is one of ``envs`` (the k-th
        ``envs[which[k]]``) with another piece: several calls' continuations
        in turns. ``texts``: each envelope's pieces, in order (shared out by
        the reader, which decodes them so). ``usage``: when the envelopes
        carry it (all of them, with as many holes each), one column per hole.
        Returns how many were taken, from the first."""
        count = len(which)
        number = len(self.events)
        step = 1 if lines is None or lines.comments is None else 2
        first = number + step - 1
        events = range(first, first + step * count, step)
        numbers = by_owner(which, events, len(envs))
        keys = [(env.choice, env.index) for env in envs]
        if len(set(keys)) < len(keys):
            # two envelopes of one call: its pieces put together in their order
            unique = list(dict.fromkeys(keys))
            owner = list(map([unique.index(key) for key in keys].__getitem__, which))
            each = [iter(mine) for mine in texts]
            texts = by_owner(owner, map(next, map(each.__getitem__, which)), len(unique))
            numbers, keys = by_owner(owner, events, len(unique)), unique
        # each call's joined once: the engine's text and the adapter's are one string
        joined = ["".join(mine) for mine in texts]
        taken = self.reassembler.continue_mixed(first, keys, numbers, texts, count, step, joined)
        if not taken:
            return 0
        types = self._types
        labels = [types.setdefault(label, label)
                  for label in (env.label if name is None else name for env in envs)]
        self._run_labels(number, labels, which if len(set(labels)) > 1 else None, taken, step)
        if self._continued is not None:
            stop = first + step * taken
            for (_, index), numbers_k, texts_k, joined_k in zip(keys, numbers, texts, joined,
                                                                 strict=True):
                cut = bisect_left(numbers_k, stop)
                if cut:
                    self.adapter.continued_run(  # type: ignore[union-attr]
                        index, [joined_k] if cut == len(texts_k) else texts_k[:cut])
        if envs[0].usage is not None:
            assert usage is not None
            self.reassembler.usage.add_run(
                range(first, first + step * taken, step), [e.usage for e in envs],  # type: ignore[misc]
                bytes(which[:taken]), [column[:taken] for column in usage])
        self.events.add_run(name, starts, taken, lead, trail, lines)
        return taken

    def run_entries(
        self, pieces: bool = False, ahead: Callable[[], str | None] | None = None
    ) -> Envelope | None:
        """The envelope of the last event when it continues a streamed call
        with one entry (``Adapter.entry_chunk``: Vertex's partial arguments),
        for ``take_entries``: learned from the event's text, with a hole for
        the entry and one at each number of its usage, each proved
        (``adapters/envelope.py``). ``pieces``: the envelope around the
        entry's piece instead, when the entry continues a growing string
        (``Adapter.piece_chunk``). None when it is no such event, or when
        what ``ahead`` gives, the payload of an event that a run from here
        would hold (the reader's look further on), is no such continuation of
        it: a run of pieces of another string is not learned for nothing
        (Vertex's rows are strings of a few pieces each)."""
        adapter, log = self.adapter, self.events
        check = getattr(adapter, "piece_chunk" if pieces else "entry_chunk", None)
        if check is None or self.naive_log is not None or not log:
            return None
        last = len(log) - 1
        if log.kind(last) != "data":
            return None
        data = log.data(last)
        try:
            payload = _loads(data)
        except (ValueError, RecursionError):
            return None
        number = check(payload)
        if number is None:
            return None
        further = ahead() if ahead is not None else None
        if further is not None:
            try:
                if check(_loads(further)) != number:
                    return None
            except (ValueError, RecursionError):
                return None
        learned = self._piece_envelopes if pieces else self._entry_envelopes
        for env in learned:
            if env.choice == number and env.pattern.fullmatch(data):  # type: ignore[union-attr]
                return env
        label = label_of(payload)
        found = value_envelope(
            data, payload, adapter.piece_path if pieces else adapter.entry_path,  # type: ignore[union-attr]
            self._usage, number, label,
            lambda doc: check(doc) == number and label_of(doc) == label)
        if found is not None:
            if len(learned) >= MAX_ENVELOPES:
                learned.clear()
            learned.append(found)
        return found

    def take_entries(
        self, env: Envelope, entries: list[Any], name: str | None, starts: list[int],
        lead: int, trail: int, usage: list[array[int]] | None = None,
        lines: RunLines | None = None,
    ) -> int:
        """Events that are ``env`` (``run_entries``) with each of ``entries``
        in its entry's place (or, for an envelope around a piece, each piece
        in its place): what ``_take`` would do with each, at once. The adapter
        reads every entry (``read_entries``, ``read_pieces``); the engine
        takes their text in bulk between the events whose entries it must be
        told about (a notice), which are applied as the full path applies
        them. Returns how many were taken: all, or none when the call no
        longer streams."""
        adapter = self.adapter
        choice = env.choice
        if not adapter.streams(choice):  # type: ignore[union-attr]
            return 0
        index = adapter.streaming_index(choice)  # type: ignore[union-attr]
        read = adapter.read_entries if env in self._entry_envelopes else adapter.read_pieces  # type: ignore[union-attr]
        texts, notices = read(choice, entries)
        number, n = len(self.events), len(entries)
        step = 1 if lines is None or lines.comments is None else 2
        first = number + step - 1
        events = range(first, first + step * n, step)
        r = self.reassembler
        k = 0
        for stop in [*sorted(notices), n]:
            mine = list(compress(range(k, stop), texts[k:stop]))  # the events with a delta
            numbers = list(map(events.__getitem__, mine))
            said = list(map(texts.__getitem__, mine))
            took = r.continue_at(numbers, choice, index, said)
            for event, text in zip(numbers[took:], said[took:], strict=True):
                r.apply(event, [ToolDelta(choice=choice, index=index, args=text)])
            if stop < n:
                ops: list[Op] = [ToolDelta(choice=choice, index=index, args=texts[stop])] \
                    if texts[stop] else []
                r.apply(events[stop], ops + notices[stop])
            k = stop + 1
        label = env.label if name is None else name
        self._run_labels(number, [self._types.setdefault(label, label)], None, n, step)
        if env.usage is not None:
            assert usage is not None
            r.usage.add_run(events, [env.usage], None, usage)
        self.events.add_run(name, starts, n, lead, trail, lines)
        return n

    def _run_labels(
        self, number: int, labels: list[str], which: Sequence[int] | None, count: int, step: int
    ) -> None:
        """The labels of ``count`` events read in bulk from ``number`` on, each
        ``labels[which[k]]`` (``which`` None: the one label), each after a
        comment event when ``step`` is 2."""
        if which is None:
            mine: Any = repeat(labels[0], count)
        else:
            mine = map(labels.__getitem__, which[:count])
        if step == 1:
            self.labels.extend(mine)
            return
        self._comment(number)
        self.labels.extend(chain.from_iterable(zip(repeat("comment"), mine)))

    def _comment(self, number: int) -> None:
        self.reassembler.notice(
            "sse-comment", "SSE comments / keep-alives in the stream (shown, ignored)", number)

    def take_text_run(
        self, choice: int, channel: str, texts: list[str], label: str, starts: list[int],
        lead: int, trail: int,
    ) -> None:
        """Unnamed data events, each of which the adapter reads as one piece of
        ``texts`` and nothing else (an NDJSON run: ndjson_runs.py), labelled
        ``label``, the k-th from ``starts[k]`` to ``starts[k + 1]`` in the
        source with its payload ``lead`` bytes after its start to ``trail``
        bytes before its end: what ``_take`` would do with each, at once."""
        self.reassembler.text_run(len(self.events), choice, channel, texts)
        self.labels.extend(repeat(self._types.setdefault(label, label), len(texts)))
        self.events.add_run(None, starts, len(texts), lead, trail)

    def _take(self, number: int, kind: str, data: str, name: str | None) -> None:
        r = self.reassembler
        if kind == "data":
            if self.ws is not None and self.ws.open is not None:
                self.ws.open.last_event = number
            envelopes = self._envelopes
            continues = self.continues_under(name)
            if envelopes is not None and envelopes.items and continues:
                hit = envelopes.read(data)
                if hit is not None:
                    env, text, usage = hit
                    if r.continue_call(number, env.choice, env.index, text):
                        label = env.label if name is None else name
                        self.labels.append(self._types.setdefault(label, label))
                        if self._continued is not None:
                            self._continued(env.index, text)
                        if usage is not None:
                            r.usage.append((number, usage))
                        return
            plain = False
            try:
                if len(data) >= _PLAIN_AT and hasattr(self.adapter, "feed_plain"):
                    payload, plain = strict_loads(data)
                else:
                    payload = _loads(data)
            except ValueError:
                self.labels.append("non-json")
                r.diag("non-json-data", f"data is not JSON: {data[:60]!r}", number)
                return
            except RecursionError:
                self.labels.append("non-json")
                r.diag("non-json-data", f"data nested too deeply to read: {data[:60]!r}",
                       number)
                return
            label = name if name is not None else label_of(payload)
            # one string per type, not per event: a million events name a few types
            label = self._types.setdefault(label, label)
            self.labels.append(label)
            if self.adapter is None:
                self._detect(number, payload, name)
                return
            shortcut = self._continuation
            if shortcut is not None and continues:
                found = shortcut(payload)
                if found is not None and r.continue_call(number, *found):
                    if self._usage is not None:
                        # the usage the continuation carries, as feed reads it
                        usage = payload.get(self._usage)
                        if type(usage) is dict:
                            r.usage.append((number, dict(usage)))
                    if envelopes is not None:
                        envelopes.learn(data, *found, label_of(payload), payload)
                    return
            if envelopes is not None:
                envelopes.forget()  # the adapter's state may change from here
            self._apply(number, payload, name, plain)
            return
        if kind == "comment":
            self.labels.append("comment")
            self._comment(number)
            return
        if kind in ("sent", "binary", "close"):
            self._websocket(number, kind, data, name)
            return
        if kind == "done":
            self.labels.append("[DONE]")
            if self.done_at is None:
                self.done_at = number
            return
        if kind == "damaged":
            self.labels.append("damaged")
            code = {"cut": "frame-truncated", "too-large": "frame-too-large"}.get(
                name or "", "frame-damaged")
            r.diag(code, data, number)
            return
        # a body that is neither events nor JSON (a gateway's HTML error page)
        self.labels.append(kind)
        r.diag("non-json-data", f"the body is not a stream: {data[:60]!r}", number)

    def _websocket(self, number: int, kind: str, data: str, name: str | None) -> None:
        """A WebSocket message that is not the server's text, or the close."""
        r = self.reassembler
        if kind == "binary":
            self.labels.append("binary")
            size = len(data) * 3 // 4 - data[-2:].count("=")
            r.diag("ws-binary-frame", f"a binary message from the {name or 'server'} "
                   f"({size} bytes): kept as it came, not decoded", number)
            return
        if kind == "close":
            self.labels.append("close")
            try:
                close = json.loads(data)
            except ValueError:
                close = {}
            self.ws_close = close if isinstance(close, dict) else {}
            self._closed(number, self.ws_close)
            return
        try:
            payload = _loads(data)
        except (ValueError, RecursionError):
            self.labels.append("sent non-json")
            r.diag("non-json-data", f"the client sent a message that is not JSON: {data[:60]!r}",
                   number)
            return
        label = f"sent {_label(payload)}"
        self.labels.append(self._types.setdefault(label, label))
        if self.ws is not None:
            self.ws.sent(number, payload)

    def _closed(self, number: int, close: dict[str, Any]) -> None:
        """The connection closed: a response still open is cut off there."""
        open_response = self.ws.open if self.ws is not None else None
        if open_response is None:
            return
        open_response.status = ABORTED
        code, reason = close.get("code"), close.get("reason")
        said = f" ({reason})" if isinstance(reason, str) and reason else ""
        by = close.get("from")
        who = f"the {by}" if by in ("client", "server") else "one side"
        self.reassembler.apply(number, [StreamError(
            f"{who} closed the WebSocket connection with code {code}{said} while a "
            "response was still streaming")])

    def _detect(self, number: int, payload: Any, event: str | None) -> None:
        """Hold events back until one chunk tells the format (or too many came)."""
        fmt = detect(payload, event)
        if fmt is None and self._guess is None:
            guess = sniff(payload, event)
            self._guess = guess.format if guess is not None else None
        if fmt is None and len(self._pending) < _DETECT_WINDOW:
            self._pending.append((number, payload, event))
            return
        self._choose(fmt)
        self._apply(number, payload, event)

    def close(self) -> None:
        if self.closed:
            return
        if self.adapter is None:
            self._choose(None)
        last = max(len(self.events) - 1, 0)
        r = self.reassembler
        r.close(last)
        self.closed = True
        # say how the stream ended (no-done, eof-without-finish)
        end = self.end
        if end == "eof-without-finish" and self.events:  # nothing came: nothing stopped
            r.diag("eof-without-finish", "the stream stopped with no finish and no end event",
                   last)
        elif end == "eof-after-finish" and self.sse_body and self._ends_with != "finish":
            r.diag("no-done", "the stream ended without [DONE] or an end event", last)
        elif self.ws is not None and self.ws.open is not None and self.ws.open.begun:
            # an earlier response's end event is no end for this one
            named = f" {self.ws.open.id}" if self.ws.open.id else ""
            r.diag("eof-without-finish", f"the capture stopped while response{named} was still "
                   "streaming, with no end event and no close", last)

    # -- state -------------------------------------------------------------------
    @property
    def end(self) -> str:
        r = self.reassembler
        if r.errors:
            return "error"
        if self.done_at is not None:
            return "done"
        if r.terminal is not None:
            return "terminal-event"
        if any(ch.finishes for ch in r.choices.values()):
            return "eof-after-finish"
        return "eof-without-finish"

    @property
    def model_response(self) -> bool:
        """Something read is what a model API sends: a chunk told the format
        (or it was forced), or a call, text, a finish, usage or an error came.
        ``{"a": 1}`` or ``[1, 2, 3]`` is none of these, and ``check`` says so."""
        if self.format_note is None:
            return True
        r = self.reassembler
        return bool(
            r.calls or r.errors or r.usage or r.terminal or r.unattributed
            or any(ch.text or ch.reasoning or ch.finishes for ch in r.choices.values())
            # a payload that could not be decoded is a finding to report, not proof
            # that the file is something else
            or any(d.code == "non-json-data" for d in r.diagnostics())
        )

    @property
    def _ends_with(self) -> str:
        """How a complete stream of this format ends: done, terminal or finish."""
        return self.adapter.ends_with if self.adapter is not None else "done"

    # -- internals ---------------------------------------------------------------
    def _choose(self, fmt: str | None) -> None:
        if fmt is None:
            fmt = self._guess or "openai-chat"
            self.format_note = f"format not recognized with confidence; read as {fmt}"
        self.format = fmt
        self.adapter = make_adapter(fmt)
        self._continuation = self._shortcut()
        self._continues = getattr(self.adapter, "continuation_event", None)
        self._usage = getattr(self.adapter, "usage_field", None)
        self._envelopes = self._envelopes_for()
        self._continued = getattr(self.adapter, "continued", None)
        pending, self._pending = self._pending, []
        for number, payload, event in pending:
            self._apply(number, payload, event)

    def _shortcut(self) -> Callable[[Any], Continuation | None] | None:
        """The adapter's reader of its commonest chunk, if it has one; not when
        every fragment must be logged for the naive comparison."""
        if self.adapter is None or self.naive_log is not None:
            return None
        return self.adapter.continuation

    def _envelopes_for(self) -> Envelopes | None:
        """Envelopes of the continuation shortcut's events (``adapters/envelope.py``),
        for an adapter that says where its continuation reads the piece."""
        path = getattr(self.adapter, "continuation_path", None)
        if self._continuation is None or path is None:
            return None
        return Envelopes(path, label_of, getattr(self.adapter, "unread_fields", ()),
                         self._continuation, self._usage)

    def _apply(self, number: int, payload: Any, event: str | None, plain: bool = False) -> None:
        """``plain``: the payload holds no float (``_PLAIN_AT``)."""
        assert self.adapter is not None
        try:
            if plain:
                ops = self.adapter.feed_plain(payload, event)  # type: ignore[attr-defined]
            else:
                ops = self.adapter.feed(payload, event)
        except Exception as exc:  # an adapter bug must not lose the stream
            ops = [StreamError(f"adapter could not read event {number}: {exc}")]
        if self.naive_log is not None:
            self.naive_log.extend((number, op) for op in ops if isinstance(op, ToolDelta))
        self.reassembler.apply(number, ops)
        if self.ws is not None:
            self.ws.read(number, self.adapter)


def label_of(payload: Any) -> str:
    """The stream view's type for a decoded event that has no SSE name."""
    obj = payload.get("object") if type(payload) is dict else None
    return obj if type(obj) is str else _label(payload)


def _label(payload: Any) -> str:
    """A short type for the stream view when the event has no SSE name."""
    if isinstance(payload, dict):
        for key in ("type", "object"):
            v = payload.get(key)
            if isinstance(v, str):
                return v
        if "error" in payload:
            return "error"
        if payload.get("choices") == [] and payload.get("usage"):
            return "usage"
        if "candidates" in payload:
            return "candidates"
    return "chunk"
