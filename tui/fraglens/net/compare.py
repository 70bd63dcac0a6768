"""One request, several models behind one endpoint: run them all, then line them up.

:func:`make_backends` prepares one :class:`~fraglens.net.live.LiveCall`
per model, each recorded to its own file, and :func:`run_backends` runs them
a few at a time; a backend that fails (HTTP error, dropped connection, timeout) ends
as a row with its error, never as the end of the run. :func:`backend_row`
turns one finished call into its row (the ``check`` report's calls and
diagnostics, the chunking profile, timing, usage, cost) and
:func:`agreement` says whether the backends that answered made the same calls:
the same tool names with equal parsed arguments, in the same order, and where
not, the differences call by call.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from ..engine.finalize import OK_STATUSES
from ..framing.recording import RECORDING_SUFFIX
from ..reading.capture import LoadError, stream_from_bytes
from ..reading.stream import Stream
from ..report.chunking import chunking_profile
from ..report.cost import PriceOptions, warm
from ..report.diff import diff_doc
from ..report.document import build_report, exit_code, ordered_calls
from ..report.timing import stream_timing
from .live import LiveCall, LiveStatus, Phase
from .proxy.flows import worst_status
from .request import RequestSpec, is_loopback

__all__ = [
    "CONCURRENCY",
    "Backend",
    "agreement",
    "backend_row",
    "compare_doc",
    "compare_exit",
    "call_shape",
    "make_backends",
    "nonstream_answer",
    "nonstream_mismatches",
    "repeat_summary",
    "recording_path",
    "run_backends",
]

#: backends called at once: enough to overlap the waiting, few enough for a rate limit
CONCURRENCY = 4


@dataclass
class Backend:
    """One model's call, and its row once the call has finished."""

    model: str
    call: LiveCall
    recording: str | None = None
    row: dict[str, Any] | None = None
    #: which of the model's repeated calls this is (0 when it is called once)
    run: int = 0


def recording_path(record_dir: Path, model: str, run: int | None = None) -> Path:
    """``provider/model:tag`` -> ``record_dir/provider_model_tag.fraglens``
    (``..._tag.2.fraglens`` for the second of repeated calls)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "model"
    numbered = safe if run is None else f"{safe}.{run + 1}"
    return record_dir / (numbered + RECORDING_SUFFIX)


def make_backends(
    spec_for: Callable[[str], RequestSpec],
    models: Sequence[str],
    *,
    record_dir: Path | None,
    timeout: float,
    prices: PriceOptions | None = None,
    repeat: int = 1,
) -> list[Backend]:
    """``repeat`` calls per model, each with its own request body and recording file."""
    backends = []
    for model, run in ((m, k) for m in models for k in range(repeat)):
        numbered = run if repeat > 1 else None
        record = recording_path(record_dir, model, numbered) if record_dir is not None else None
        # each call's transport is made here, before any clock starts: making one
        # (its TLS context) blocks the event loop for a tenth of a second or more,
        # which would otherwise count in the timing of every call already running
        call = LiveCall(
            spec_for(model),
            record=record,
            timeout=timeout,
            prices=prices,
            transport=httpx.AsyncHTTPTransport(),
        )
        backends.append(Backend(model, call, None if record is None else str(record), run=run))
    return backends


async def run_backends(
    backends: Sequence[Backend],
    *,
    concurrency: int = CONCURRENCY,
    on_done: Callable[[Backend], None] | None = None,
) -> list[Backend]:
    """Run every call, ``concurrency`` at a time; ``on_done`` as each one finishes
    (its ``row`` filled in). Returns the backends in the order given."""
    gate = asyncio.Semaphore(max(1, concurrency))
    # httpcore's first request makes an anyio Event, and anyio loads its asyncio
    # backend then (a fifth of a second on a busy machine, the event loop blocked):
    # loaded here, it counts in no backend's timing instead of in every one running
    anyio.Event()
    # and the price table: loaded when the first usage came, it stalled every stream
    for backend in backends:
        warm(backend.model, backend.call.spec.format, backend.call.prices or PriceOptions())

    async def one(backend: Backend) -> None:
        async with gate:
            status = await backend.call.run()
        backend.row = backend_row(backend.model, backend.recording, status, backend.call)
        backend.row["run"] = backend.run
        if on_done is not None:
            on_done(backend)

    await asyncio.gather(*(one(b) for b in backends))
    return list(backends)


def backend_row(
    model: str, recording: str | None, status: LiveStatus, call: LiveCall
) -> dict[str, Any]:
    """What one backend did, as ``compare --json`` prints it."""
    stream = call.stream
    doc = build_report(stream, prices=call.prices, request_model=model) if stream.events \
        else None
    failed = status.phase is not Phase.DONE or doc is None
    error = None
    if failed:
        error = status.message or ("no events in the stream" if doc is None else status.phase.value)
    calls = doc["calls"] if doc else []
    return {
        "model": model,
        "run": 0,
        "recording": recording,
        "error": error,
        "http_status": status.http_status,
        "calls": calls,
        "worst": worst_status([c["status"] for c in calls]),
        "diagnostics": doc["diagnostics"] if doc else [],
        "chunking": chunking_profile(stream) if doc else None,
        "timing": _timing(stream, status) if doc else None,
        "usage": doc["usage"] if doc else None,
        # the report's: the same figure check and the app give for the recording
        "cost": doc["cost"] if doc else None,
        "ok": doc is not None and not failed and exit_code(doc) == 0,
    }


def _timing(stream: Stream, status: LiveStatus) -> dict[str, Any] | None:
    """The stream's timing, its calls named by their position in ``calls`` as the
    diagnostics name them (the engine numbers them in creation order), and when
    the response's status line came (``first_byte_ms``: before any event)."""
    timing = stream_timing(stream)
    if timing is not None:
        position = {c.seq: i for i, c in enumerate(ordered_calls(stream))}
        timing["calls"] = [dict(c, call=position[c["call"]]) for c in timing["calls"]]
        first_byte = status.first_byte
        timing["first_byte_ms"] = None if first_byte is None else round(first_byte * 1000, 1)
    return timing


def _key(value: Any) -> str:
    """Equal parsed arguments give equal keys, whatever their key order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _shown(call: dict[str, Any] | None) -> dict[str, Any] | None:
    if call is None:
        return None
    return {"name": call["name"], "arguments": call["arguments"], "status": call["status"]}


def agreement(rows: Sequence[dict[str, Any]]) -> tuple[bool, list[dict[str, Any]]]:
    """Whether the backends that answered made the same calls, and where not.

    A call agrees when every backend has one at that position with the same
    name and equal parsed arguments, and its status is ok or empty everywhere
    (a truncated call's best-effort value is not the call it was meant to be).
    Each difference names the call's position, what differs (``missing``,
    ``name``, ``arguments``, ``status``), the top-level argument keys whose
    values differ, and every backend's call."""
    answered = [r for r in rows if r["error"] is None]
    if len(answered) < 2:
        return True, []
    longest = max(len(r["calls"]) for r in answered)
    differences = []
    for position in range(longest):
        calls = [r["calls"][position] if position < len(r["calls"]) else None for r in answered]
        present = [c for c in calls if c is not None]
        if len(present) < len(calls):
            what = "missing"
        elif len({c["name"] for c in present}) > 1:
            what = "name"
        elif len({_key(c["arguments"]) for c in present}) > 1:
            what = "arguments"
        elif any(c["status"] not in OK_STATUSES for c in present):
            what = "status"
        else:
            continue
        difference: dict[str, Any] = {
            "call": position,
            "what": what,
            "backends": {r["model"]: _shown(c) for r, c in zip(answered, calls, strict=True)},
        }
        if what == "arguments":
            difference["keys"] = _differing_keys([c["arguments"] for c in present])
        differences.append(difference)
    return not differences, differences


def _differing_keys(values: list[Any]) -> list[str]:
    """The top-level keys whose values are not the same in every object."""
    if not all(isinstance(v, dict) for v in values):
        return []
    keys = sorted({k for v in values for k in v})
    # an absent key differs from every value, null included
    return [k for k in keys if len({_key(v[k]) if k in v else "" for v in values}) > 1]


def call_shape(calls: Sequence[dict[str, Any]]) -> str:
    """What a run's calls look like, to count how often each look occurred: each
    call's name, its top-level argument keys and its status, in order."""
    if not calls:
        return "(no calls)"
    parts = []
    for call in calls:
        value = call["arguments"]
        keys = ",".join(sorted(value)) if isinstance(value, dict) else "…"
        parts.append(f"{call['name']}({keys}) {call['status']}")
    return "; ".join(parts)


def repeat_summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model, over its repeated runs: how many answered, and in how many
    runs each diagnostic code and each call shape occurred."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_model.setdefault(row["model"], []).append(row)
    out = []
    for model, runs in by_model.items():
        codes: dict[str, int] = {}
        shapes: dict[str, int] = {}
        failures: dict[str, int] = {}
        # a run cut off mid-stream counts with what it streamed: that is the flaky bug
        for row in runs:
            for code in sorted({d["code"] for d in row["diagnostics"]}):
                codes[code] = codes.get(code, 0) + 1
            shape = call_shape(row["calls"])
            shapes[shape] = shapes.get(shape, 0) + 1
            if row["error"] is not None:
                failures[row["error"]] = failures.get(row["error"], 0) + 1
        out.append({
            "model": model,
            "runs": len(runs),
            "answered": sum(r["error"] is None for r in runs),
            "diagnostics": dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))),
            "shapes": [{"shape": k, "runs": n}
                       for k, n in sorted(shapes.items(), key=lambda kv: -kv[1])],
            "failures": [{"error": k, "runs": n} for k, n in failures.items()],
        })
    return out


#: the formats whose non-streamed request is the streamed one with ``"stream": false``
NONSTREAM_FORMATS = frozenset({"openai-chat", "anthropic", "openai-responses", "ollama"})


async def nonstream_answer(spec: RequestSpec, timeout: float) -> dict[str, Any]:
    """The same request sent once without streaming: its calls as ``check``
    reads the JSON answer, or why there are none (``error``)."""
    if spec.format not in NONSTREAM_FORMATS:
        return {"error": f"no non-streamed request for {spec.format}", "calls": []}
    body = {k: v for k, v in spec.body.items() if k != "stream_options"}
    body["stream"] = False
    host = urlsplit(spec.url).hostname or ""
    headers = {k: v for k, v in spec.headers if k.lower() != "accept"}
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=not is_loopback(host)) as client:
            response = await client.post(spec.url, headers=headers,
                                         content=json.dumps(body).encode())
    except httpx.HTTPError as exc:
        return {"error": spec.safe(f"the non-streamed request failed: {exc}"), "calls": []}
    if response.status_code >= 400:
        said = spec.safe(" ".join(response.text.split())[:200])
        return {"error": f"HTTP {response.status_code}: {said}", "calls": []}
    try:
        stream, _ = stream_from_bytes(response.content, "non-streamed answer",
                                      format=spec.format)
    except LoadError as exc:
        return {"error": spec.safe(str(exc)), "calls": []}
    return {"error": None, "calls": build_report(stream)["calls"]}


def nonstream_mismatches(
    rows: Sequence[dict[str, Any]], answers: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per model with a non-streamed answer: each streamed run whose calls are
    not that answer's (a call missing or extra, a name or an argument changed:
    ``fraglens diff``'s matching), with what differs."""
    out = []
    for model, answer in answers.items():
        entry: dict[str, Any] = {"model": model, "error": answer["error"],
                                 "calls": [_shown(c) for c in answer["calls"]], "runs": []}
        if answer["error"] is None:
            for row in rows:
                if row["model"] != model:
                    continue  # a run cut off is held to the answer with what it streamed
                doc = diff_doc("stream", {"calls": row["calls"]}, "non-stream",
                               {"calls": answer["calls"]})
                if not doc["same"]:
                    entry["runs"].append({
                        "run": row["run"],
                        "calls": [c for c in doc["calls"] if c["differs"]],
                        "only_streamed": doc["missing_in_b"],
                        "only_nonstreamed": doc["extra_in_b"],
                    })
        out.append(entry)
    return out


def compare_doc(
    rows: Sequence[dict[str, Any]], answers: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The comparison: the backends agree on their first run's calls; with
    repeats, each model's rates; with non-streamed answers, the mismatches."""
    first = [r for r in rows if r.get("run", 0) == 0]
    agree, differences = agreement(first)
    priced = sorted((r for r in first if r.get("cost")), key=lambda r: r["cost"]["total"])
    doc: dict[str, Any] = {
        "backends": list(rows),
        "agree": agree,
        "differences": differences,
        # cheapest first (by the first run); a backend without a cost (no usage,
        # no price) is not ranked
        "by_cost": [r["model"] for r in priced],
        "prices": sorted({r["cost"]["source"] for r in priced}),
    }
    if any(r.get("run", 0) > 0 for r in rows):
        doc["repeats"] = repeat_summary(rows)
    if answers is not None:
        doc["nonstream"] = nonstream_mismatches(rows, answers)
    return doc


def compare_exit(doc: dict[str, Any]) -> int:
    """0: every backend answered, every call ok, they agree, and every stream
    is its non-streamed answer; 2: no backend could even be reached (nothing
    ran); 1: anything else."""
    rows = doc["backends"]
    if rows and all(r["error"] is not None and r["http_status"] is None for r in rows):
        return 2
    mismatched = any(e["error"] is not None or e["runs"] for e in doc.get("nonstream", []))
    return 0 if doc["agree"] and all(r["ok"] for r in rows) and not mismatched else 1
