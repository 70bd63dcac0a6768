"""The ``fraglens check --json`` document: the contract other tools read.

A view over a closed ``Stream``; it computes nothing the engine did not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..engine.calls import Call
from ..engine.diagnostics import SEVERITY_RANK
from ..engine.finalize import OK_STATUSES
from ..reading.stream import Stream
from .identity import streamed_identity
from .timing import DEFAULT_STALL_MS, stream_timing
from .usage import NO_USAGE, Usage, read_usage

if TYPE_CHECKING:  # these load only where there are tools, markup, usage (start-up)
    from ..engine.leaks import Leaked
    from ..fit.verdicts import Fit
    from .cost import PriceOptions

#: 2: ``usage`` is read into one shape (the reported numbers under ``reported``),
#: and ``model`` and ``cost`` are given
SCHEMA_VERSION = 2


def exact_arguments(stream: Stream) -> list[Any]:
    """The calls' parsed arguments that hold no float (``Result.no_floats``):
    the values ``utf8_parts`` may have msgspec write, kept alive while it does
    (it knows them by identity)."""
    return [c.result.arguments for c in stream.reassembler.calls
            if c.result is not None and c.result.no_floats]


def ordered_calls(stream: Stream) -> list[Call]:
    """Calls by choice, then by first appearance."""
    return sorted(stream.reassembler.calls, key=lambda c: (c.choice, c.seq))


def call_json(call: Call, position: int) -> dict[str, Any]:
    result = call.result
    out: dict[str, Any] = {
        "position": position,
        "choice": call.choice,
        "index": call.index,
        "id": call.id,
        "name": call.name,
        "arguments_raw": call.final_text,
        "status": result.status if result else "open",
        "arguments": result.arguments if result else None,
        "repairs": list(result.repairs) if result else [],
        "fragments": call.fragments,
        "first_event": call.first_event,
        "last_event": call.last_event,
        "scan": call.scan_state().as_json(),
    }
    if call.hosted:
        out["hosted"] = True
    if call.synthetic_id:
        out["synthetic_id"] = call.synthetic_id
    if call.aliases:
        out["id_aliases"] = list(call.aliases)
    if call.restated is not None and call.restated != call.text:
        out["arguments_streamed"] = call.text  # what the pieces said, kept raw
    if result and result.values:
        out["values"] = list(result.values)
    if result and result.repaired_text is not None and result.status != "ok":
        out["repaired_text"] = result.repaired_text
    if call.over_limit:
        out["dropped_bytes"] = call.dropped_bytes
    if call.inner_calls is not None:
        out["inner_calls"] = call.inner_calls  # what a parallel wrapper meant; shown, not run
    if call.notes:
        out["notes"] = list(call.notes)
    if call.outputs:
        # the tool's result as the stream carried it: the last one (earlier
        # ones are preliminary)
        event, output, error = call.outputs[-1]
        out["output"] = {"event": event, "error": error} if error is not None else {
            "event": event, "value": output}
    return out


def leaked_json(found: Leaked, errors: dict[int, str]) -> dict[str, Any]:
    """A call the model meant that never became one (engine/leaks.py); one a
    provider refused carries the error it came in."""
    piece, result = found.piece, found.result
    out: dict[str, Any] = {
        "family": piece.family,
        "name": piece.name,
        "arguments_raw": piece.raw,
        "status": result.status,
        "arguments": result.arguments,
        "repairs": list(result.repairs),
        "source": found.source,
        "choice": found.choice,
        "offset": piece.start,
        "event": found.event,
    }
    if piece.built is not None:
        out["arguments_built"] = piece.built  # what the XML pairs say, as JSON
    if found.source == "error":
        out["error"] = errors.get(found.event)
    return out


def stream_cost(
    stream: Stream, prices: PriceOptions | None = None, model: str | None = None
) -> tuple[Usage | None, dict[str, Any] | None, str | None]:
    """The usage the stream reported, in one shape, and what it cost (the
    report's ``usage`` and ``cost``), or the note that says why there is no
    cost. ``model``: else the one the stream names."""
    r = stream.reassembler
    usage = read_usage(r.usage[-1][1] if r.usage else None)
    if usage is None:
        return None, None, NO_USAGE
    from .cost import PriceOptions, cost_of  # the price table loads only for usage

    identity = streamed_identity(stream.events)
    cost, note = cost_of(usage, model or identity.model, stream.format, prices or PriceOptions(),
                         at=identity.created)
    return usage, cost, note


def build_report(
    stream: Stream,
    compare: bool = False,
    fit: Fit | None = None,
    stall_ms: float = DEFAULT_STALL_MS,
    prices: PriceOptions | None = None,
    request_model: str | None = None,
) -> dict[str, Any]:
    """``fit``: the calls checked against the declared tools, when they are known;
    ``prices``: how to price the usage (the table's prices by default);
    ``request_model``: the model the request named, where it is known. Every
    credential the stream knows of (``Stream.secrets``) is scrubbed out."""
    r = stream.reassembler
    calls = ordered_calls(stream)
    position = {c.seq: i for i, c in enumerate(calls)}
    found = r.diagnostics()
    if fit is not None:
        found = sorted(found + fit.diagnostics, key=lambda d: (d.event is None, d.event or 0))
    model = streamed_identity(stream.events).model or request_model
    usage, cost, cost_note = stream_cost(stream, prices, model)
    diagnostics = []
    for d in found:
        item = d.as_json()
        if d.call is not None:
            item["call"] = position[d.call]
        diagnostics.append(item)
    doc: dict[str, Any] = {
        "fraglens": SCHEMA_VERSION,
        "format": stream.format,
        # the model the stream names (else the request's: Bedrock's stream names none)
        "model": model,
        "framing": stream.framing,
        "end": stream.end,
        "events": len(stream.events),
        "finish_reasons": {
            str(n): (ch.finishes[-1][2] if ch.finishes else None)
            for n, ch in sorted(r.choices.items())
        },
        "usage": usage.as_json() if usage is not None else None,
        "cost": cost,
        "text": {
            str(n): ch.text.text for n, ch in sorted(r.choices.items()) if ch.text
        },
        "calls": [call_json(c, i) for i, c in enumerate(calls)],
        # always present, so scripts can read it without a guard: calls that
        # leaked into the text or a rejected generation, never counted as calls
        "leaked": [leaked_json(found, dict(r.errors)) for found in r.leaked],
        "diagnostics": diagnostics,
    }
    reasoning = {
        str(n): ch.reasoning.text
        for n, ch in sorted(r.choices.items())
        if ch.reasoning
    }
    if reasoning:
        doc["reasoning"] = reasoning
    if fit is not None:
        doc["tools"] = [t.name for t in fit.tools]
        for item, call in zip(doc["calls"], calls, strict=True):
            verdict = fit.calls.get(call.seq)
            if verdict is not None:
                item["fit"] = verdict.as_json()
    timing = stream_timing(stream, stall_ms)
    if timing is not None:
        # per call in the report's order, named by position like the diagnostics
        by_seq = {t["call"]: t for t in timing["calls"]}
        timing["calls"] = [dict(by_seq[c.seq], call=position[c.seq]) for c in calls]
        doc["timing"] = timing
    if cost_note is not None:
        doc["cost_note"] = cost_note
    if stream.format_note:
        doc["format_note"] = stream.format_note
    if r.errors:
        doc["errors"] = [{"event": e, "message": m} for e, m in r.errors]
    if r.unattributed:
        doc["unattributed"] = [
            {"event": e, "choice": d.choice, "arguments": d.args} for e, d in r.unattributed
        ]
    if stream.ws is not None:
        _websocket(doc, stream, calls)
    if compare and stream.naive_log is not None:
        doc["naive"] = naive(stream)
    if stream.secrets:
        # a key the response streamed in pieces is whole only here, where they are joined
        doc = stream.secrets.scrub_value(doc)
    return doc


def _websocket(doc: dict[str, Any], stream: Stream, calls: list[Call]) -> None:
    """A WebSocket connection's responses in order, each with its calls (by
    position) and its own usage (the report's ``usage`` and ``cost`` are the
    last one's, as for any stream), every call with its response's id, and how
    the connection closed."""
    log = stream.ws
    assert log is not None
    responses = [dict(response.as_json(), calls=[], usage=None) for response in log.responses]
    at = {id(response): n for n, response in enumerate(log.responses)}
    for event, reported in stream.reassembler.usage:
        owner = log.of_event(event)
        used = read_usage(reported)
        if owner is not None and used is not None:
            responses[at[id(owner)]]["usage"] = used.as_json()
    for position, (item, call) in enumerate(zip(doc["calls"], calls, strict=True)):
        response = log.of_event(call.first_event)
        item["response_id"] = response.id if response is not None else None
        if response is not None:
            responses[at[id(response)]]["calls"].append(position)
    doc["responses"] = responses
    doc["close"] = stream.ws_close


def naive(stream: Stream) -> dict[str, Any]:
    """What two classic naive reassemblers would have produced."""
    by_id: dict[str, dict[str, Any]] = {}
    arrival: list[dict[str, Any]] = []
    for _, d in stream.naive_log or []:
        text = d.args or ""
        key = "null" if d.id is None else str(d.id)
        slot = by_id.setdefault(key, {"id": d.id, "name": None, "arguments": ""})
        if d.name:
            slot["name"] = d.name
        slot["arguments"] += text
        if d.id or d.name or not arrival:
            arrival.append({"id": d.id, "name": d.name, "arguments": ""})
        arrival[-1]["arguments"] += text
    return {
        "by_id": [dict(v, chars=len(v["arguments"])) for v in by_id.values()],
        "by_arrival": [dict(v, chars=len(v["arguments"])) for v in arrival],
    }


def dumps(doc: Any, pretty: bool = True) -> str:
    """The report as JSON text: UTF-8 readable where it can be; arguments
    holding lone surrogates (as some gateways send them) are escaped instead.
    ``pretty=False`` is one line, and several times faster to write: Python's
    C encoder only runs without indentation, which matters for 1 MB arguments."""
    indent = 2 if pretty else None
    text = json.dumps(doc, ensure_ascii=False, indent=indent) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(doc, ensure_ascii=True, indent=indent) + "\n"
    return text


def utf8_parts(doc: Any, pretty: bool = True, exact: Iterable[Any] = ()) -> list[bytes]:
    """``dumps`` encoded as UTF-8, as it is written: encoded once (the test
    of whether it can be is the encoding itself), in parts written one after
    the other. On one line, a report's large values are written by msgspec,
    each a part of its own (json_bytes.py); ``exact``: the calls' arguments
    known to hold no float (``exact_arguments``)."""
    if not pretty and isinstance(doc, dict):
        from .json_bytes import spliced_parts

        spliced = spliced_parts(doc, exact)
        if spliced is not None:
            return spliced
    indent = 2 if pretty else None
    try:
        text = json.dumps(doc, ensure_ascii=False, indent=indent).encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(doc, ensure_ascii=True, indent=indent).encode("utf-8")
    return [text, b"\n"]  # not the text and its line end joined: a copy of it


_LONE = re.compile("[\ud800-\udfff]")


def printable(value: Any) -> Any:
    """``value`` with every string made writable as UTF-8: a lone surrogate
    (JSON allows ``"\\ud800"``, UTF-8 has no way to write it) is spelled as the
    escape it came as. Text output must never crash on what JSON output prints."""
    if isinstance(value, str):
        if value.isascii() or not _LONE.search(value):
            return value
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable(v) for v in value]
    return value


def exit_code(doc: dict[str, Any]) -> int:
    """0: every call ok/empty and no error diagnostic; 1: something is wrong."""
    if any(c["status"] not in OK_STATUSES for c in doc["calls"]):
        return 1
    if any(SEVERITY_RANK[d["severity"]] >= 2 for d in doc["diagnostics"]):
        return 1
    return 0
