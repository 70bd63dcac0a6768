"""``fraglens compare``: one request to every model behind one endpoint, side by side.

Exit codes: 0 every backend answered, every call ok, and the backends agree;
1 a backend failed, a call is not ok, or they disagree; 2 the command could
not run (bad usage, an unwritable --record-dir, no backend reachable at all).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..net.request import RequestSpec
from .common import (
    CliError,
    add_otlp_options,
    add_price_options,
    count,
    price_options,
    write_json,
)
from .live import (
    add_request_options,
    bedrock_signer,
    is_bedrock,
    spec_from_args,
)

if TYPE_CHECKING:  # httpx and asyncio load only when the calls are made
    from ..net.compare import Backend

__all__ = ["build", "run"]

EXAMPLES = """\
examples:
  AGGREGATOR_KEY=... fraglens compare --url https://gateway.example/v1 \\
      --api-key-env AGGREGATOR_KEY --models claude-sonnet-4-5,gpt-4o,glm-4.6 \\
      --prompt "Weather in Paris?" --tools tools.json --prices prices.json --markup 1.3
  fraglens serve captures/*.sse &    # one capture per model, no network
  fraglens compare --url http://127.0.0.1:8765/v1 --models glm-4.6,qwen3-coder --prompt hi --json
  fraglens compare --url ... --models gpt-4o --prompt hi --repeat 5 --nonstream   # flaky?"""


def build(p: argparse.ArgumentParser) -> None:
    add_request_options(p, one_model=False)
    p.add_argument(
        "--models", required=True, metavar="A,B,C", help="the models to send the request to"
    )
    p.add_argument(
        "--concurrency",
        type=count,
        default=4,
        metavar="N",
        help="how many models are called at once (default 4)",
    )
    p.add_argument(
        "--repeat",
        type=count,
        default=1,
        metavar="N",
        help="send the request N times per model and report how often each diagnostic and "
        "each call shape occurred (a flaky backend; default 1)",
    )
    p.add_argument(
        "--nonstream",
        action="store_true",
        help="also send it once per model without streaming, and report every streamed call "
        "that differs from the non-streamed answer",
    )
    p.add_argument(
        "--record-dir",
        metavar="DIR",
        help="write one recording per model there (MODEL.fraglens); created if missing",
    )
    add_price_options(p, ", every model")
    add_otlp_options(p, "backend")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the comparison as JSON")
    out.add_argument(
        "--app", action="store_true", help="list the backends in the app as they finish"
    )


def _models(text: str) -> list[str]:
    models = [m.strip() for m in text.split(",") if m.strip()]
    if not models:
        raise CliError("--models: give at least one model, comma-separated")
    seen = set()
    for m in models:
        if m in seen:
            raise CliError(f"--models: {m!r} is listed twice")
        seen.add(m)
    return models


def _spec_for(args: argparse.Namespace, models: list[str]) -> Callable[[str], RequestSpec]:
    if not (args.request or args.prompt):
        raise CliError("say what to send: --request FILE.json, or --prompt TEXT")
    from ..net.ws_request import is_websocket_url

    if is_websocket_url(args.url):
        raise CliError("compare calls models over HTTP: give an http(s) --url (fraglens live "
                       "speaks WebSocket)")
    # live's builder reads args.model; the request is built and checked once, with
    # the first model (a typo is one usage error, not N failures), then re-aimed
    args.model = models[0]
    if is_bedrock(args):
        # the model is in the path, and the path is signed: one request signed per
        # model, with credentials loaded once
        signer = bedrock_signer(args)
        first = spec_from_args(args, signer=signer)
        return lambda model: (
            first if model == models[0] else spec_from_args(args, model=model, signer=signer)
        )
    spec = spec_from_args(args)
    return lambda model: dataclasses.replace(spec, body={**spec.body, "model": model})


def _record_dir(path: str | None) -> Path | None:
    if path is None:
        return None
    where = Path(path)
    try:
        where.mkdir(parents=True, exist_ok=True)
        probe = where / ".fraglens-write-test"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise CliError(f"--record-dir {path}: {exc.strerror or exc}") from None
    return where


def backends_from_args(args: argparse.Namespace) -> list[Backend]:
    from ..net.compare import make_backends

    models = _models(args.models)
    if args.concurrency < 1:
        raise CliError("--concurrency: at least 1")
    spec_for = _spec_for(args, models)
    prices = price_options(args)
    record_dir = _record_dir(args.record_dir)
    if args.repeat < 1:
        raise CliError("--repeat: at least 1")
    return make_backends(
        spec_for, models, record_dir=record_dir, timeout=args.timeout, prices=prices,
        repeat=args.repeat,
    )


def run(args: argparse.Namespace) -> int:
    if args.app and (args.repeat > 1 or args.nonstream):
        raise CliError("--repeat and --nonstream print their rates and mismatches: not with --app")
    from ..net.otlp import OtlpUnavailable, exporter_for

    try:
        exporter = exporter_for(args.otlp, "fraglens compare")
    except OtlpUnavailable as exc:
        raise CliError(str(exc)) from None
    try:
        return _run(args, exporter)
    finally:
        if exporter is not None:
            exporter.close()


def _span(args: argparse.Namespace, exporter: Any, backend: Backend) -> None:
    """The span of one backend's call, once it has ended."""
    from ..net.live import Phase
    from ..net.otlp import export_exchange
    from ..report.document import build_report

    call = backend.call
    status, stream = call.status, call.stream
    doc = build_report(stream) if stream.events else None
    error = None if status.phase is Phase.DONE else (status.message or status.phase.value)
    export_exchange(exporter, doc, stream, content=args.otlp_content, model=backend.model,
                    duration=status.elapsed, error=error)


def _run(args: argparse.Namespace, exporter: Any) -> int:
    backends = backends_from_args(args)
    if args.app:
        from ..app.screens.compare import run_compare_app

        url = backends[0].call.spec.for_record()["url"]  # a key in the URL never shows
        code = run_compare_app(backends, concurrency=args.concurrency, source=url)
        if exporter is not None:
            for backend in backends:
                if backend.call.status.elapsed:
                    _span(args, exporter, backend)
        return code
    import asyncio

    from ..net.compare import compare_doc, compare_exit, nonstream_answer, run_backends

    def done(backend: Backend) -> None:
        if exporter is not None:
            _span(args, exporter, backend)
        if not args.json and backend.row is not None:
            state = backend.row["error"] or "done"
            run = f" (run {backend.run + 1})" if args.repeat > 1 else ""
            print(f"fraglens: compare: {backend.model}{run}: {state}", file=sys.stderr)

    async def calls() -> dict[str, dict[str, Any]] | None:
        await run_backends(backends, concurrency=args.concurrency, on_done=done)
        if not args.nonstream:
            return None
        firsts = {b.model: b for b in backends if b.run == 0}
        found = await asyncio.gather(
            *(nonstream_answer(b.call.spec, args.timeout) for b in firsts.values())
        )
        return dict(zip(firsts, found, strict=True))

    try:
        answers = asyncio.run(calls())
    except KeyboardInterrupt:
        return 130
    doc = compare_doc([b.row for b in backends if b.row is not None], answers)
    if args.json:
        write_json(doc)
    else:
        from ..report.comparison import print_compare

        print_compare(doc)
    return compare_exit(doc)
