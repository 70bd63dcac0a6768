"""The ``live`` and ``serve`` subcommands: arguments in, exit codes out.

``live`` exits like ``check`` (0 all good, 1 the stream has a problem) when the
call went through, and 2 with a one-line reason when it did not (refused,
timed out, HTTP error, cut off, not a stream) — after printing the report of
whatever arrived, so a script sees both.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..cli import CliError, register, write_json
from ..load import LoadError, read_bytes
from .cost import Prices
from .replay import Chaos, Pace, load_source
from .request import (
    DEFAULT_TIMEOUT,
    LIVE_FORMATS,
    RequestError,
    RequestSpec,
    build_spec,
    is_loopback,
)

if TYPE_CHECKING:  # httpx and asyncio load only when a call is made, not for `check`
    from .live import LiveCall, LiveStatus

__all__ = ["build_live_parser", "build_serve_parser", "run_live", "run_serve"]


# -- live -------------------------------------------------------------------------------


def _number(kind: type, above_zero: bool):
    """An argparse type: a float or int that must be > 0, or >= 0."""
    word = "a number" if kind is float else "a whole number"
    bound = "more than 0" if above_zero else "0 or more"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {word}: {text!r}") from None
        if value < 0 or (above_zero and value == 0):
            raise argparse.ArgumentTypeError(f"must be {bound}")
        return value

    return parse


_positive = _number(float, above_zero=True)
_non_negative = _number(float, above_zero=False)
_count = _number(int, above_zero=False)


def build_live_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", required=True, help="a base URL (https://host/v1) or a full endpoint")
    what = p.add_argument_group("what to send")
    what.add_argument("--request", metavar="FILE.json", help="the JSON body to send")
    what.add_argument("--model", metavar="M", help="the model (overrides the request file's)")
    what.add_argument("--prompt", metavar="TEXT", help="one user message")
    what.add_argument(
        "--tools", metavar="FILE.json", help="tools, in OpenAI, Anthropic or Responses shape"
    )
    p.add_argument(
        "--format",
        choices=LIVE_FORMATS,
        help="the API spoken (default: from the URL's path, else openai-chat)",
    )
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the environment variable holding the key "
        "(default: OPENAI_API_KEY, or ANTHROPIC_API_KEY for anthropic)",
    )
    p.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'Name: value'",
        help="an extra request header (repeatable)",
    )
    p.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for a connection or between two reads (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument("--record", metavar="FILE", help="write a recording as the events arrive")
    price = p.add_argument_group("cost")
    price.add_argument(
        "--price-in", type=_non_negative, metavar="X", help="per million input tokens"
    )
    price.add_argument(
        "--price-out", type=_non_negative, metavar="Y", help="per million output tokens"
    )
    price.add_argument(
        "--markup", type=_positive, default=1.0, metavar="M", help="multiplies the cost (1.3)"
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument(
        "--headless", action="store_true", help="print the check report instead of the app"
    )
    out.add_argument("--json", action="store_true", help="print the check --json report")


def _read_json(path: str, what: str) -> Any:
    try:
        data = read_bytes(path)
    except LoadError as exc:
        raise CliError(f"{what}: {exc}") from None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise CliError(f"{what} {path}: not JSON ({exc})") from None


def spec_from_args(args: argparse.Namespace) -> RequestSpec:
    body = None
    if args.request:
        body = _read_json(args.request, "--request")
        if not isinstance(body, dict):
            raise CliError(f"--request {args.request}: the body must be a JSON object")
    tools = None
    if args.tools:
        tools = _read_json(args.tools, "--tools")
        if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
            tools = tools["tools"]
        if not isinstance(tools, list):
            raise CliError(f"--tools {args.tools}: expected a JSON list of tools")
    try:
        spec, note = build_spec(
            args.url,
            format=args.format,
            body=body,
            model=args.model,
            prompt=args.prompt,
            tools=tools,
            headers=args.header,
            key_env=args.api_key_env,
        )
    except RequestError as exc:
        raise CliError(str(exc)) from None
    if note:
        print(f"fraglens: note: {note}", file=sys.stderr)
    return spec


def prices_from_args(args: argparse.Namespace) -> Prices | None:
    if args.price_in is None and args.price_out is None:
        return None
    return Prices(args.price_in or 0.0, args.price_out or 0.0, args.markup)


def call_from_args(args: argparse.Namespace) -> LiveCall:
    from .live import LiveCall

    spec = spec_from_args(args)
    if args.record:
        try:
            open(args.record, "wb").close()
        except OSError as exc:
            raise CliError(f"--record {args.record}: {exc.strerror or exc}") from None
    return LiveCall(spec, record=args.record, timeout=args.timeout, prices=prices_from_args(args))


def run_live(args: argparse.Namespace) -> int:
    call = call_from_args(args)
    if not (args.headless or args.json):
        from .live_app import run_live_app

        return run_live_app(args, call)
    return run_headless(args, call)


def run_headless(args: argparse.Namespace, call: LiveCall) -> int:
    """Make the call, print the report of what arrived, and say how it went."""
    import asyncio

    from ..report import build_report

    try:
        status = asyncio.run(call.run())
    except KeyboardInterrupt:
        status = call.status
    stream = call.stream
    doc = build_report(stream) if stream.events else None
    if doc is not None:
        if args.json:
            write_json(doc)  # exactly as check --json writes it
        else:
            from ..report_text import print_report

            print_report(doc, call.spec.for_record()["url"])
        sys.stdout.flush()
    print(f"fraglens: live: {status.line(message=False)}", file=sys.stderr)
    if args.record:
        print(f"fraglens: recorded to {args.record}", file=sys.stderr)
    return finish_code(status, doc)


def finish_code(status: LiveStatus, doc: dict[str, Any] | None) -> int:
    from ..report import exit_code
    from .live import Phase

    if status.phase is Phase.DONE and doc is not None:
        return exit_code(doc)
    if status.phase is Phase.DONE:
        print("fraglens: error: the stream ended with no events", file=sys.stderr)
        return 2
    print(f"fraglens: error: {status.message or status.phase.value}", file=sys.stderr)
    return 130 if status.phase is Phase.CANCELLED else 2


register(
    "live",
    "send a request, watch the tool calls assemble as they stream, record it",
    build_live_parser,
    run_live,
)


# -- serve ------------------------------------------------------------------------------


def build_serve_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "captures",
        nargs="*",
        metavar="CAPTURE",
        help="recordings or any capture (SSE, NDJSON, JSON, HAR); default: the demo",
    )
    p.add_argument("--port", type=int, default=8765, help="default 8765; 0 picks a free port")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (loopback only)")
    p.add_argument(
        "--pace",
        choices=("recorded", "fixed"),
        default="recorded",
        help="the capture's own timing (default; --rate when it has none) or --rate",
    )
    p.add_argument(
        "--rate",
        type=_non_negative,
        default=50.0,
        metavar="EVENTS_PER_S",
        help="events per second for --pace fixed (default 50; 0: no pauses)",
    )
    chaos = p.add_argument_group("chaos")
    split = chaos.add_mutually_exclusive_group()
    split.add_argument(
        "--split-bytes", type=_count, metavar="N", help="write the body N bytes at a time"
    )
    split.add_argument(
        "--split-random",
        type=int,
        metavar="SEED",
        help="cut the body at random offsets (mid UTF-8 character too), reproducibly",
    )
    chaos.add_argument(
        "--drop-after", type=_count, metavar="N", help="close the connection after N events"
    )
    chaos.add_argument("--stall-after", type=_count, metavar="N", help="stall after N events")
    chaos.add_argument(
        "--stall-seconds",
        type=_non_negative,
        default=30.0,
        metavar="S",
        help="how long to stall (default 30)",
    )
    chaos.add_argument(
        "--http-error",
        type=int,
        metavar="STATUS",
        help="answer with this status and a provider-shaped JSON error body",
    )


def chaos_from_args(args: argparse.Namespace) -> Chaos:
    if args.http_error is not None and not 400 <= args.http_error <= 599:
        raise CliError(f"--http-error {args.http_error}: give a status from 400 to 599")
    if args.split_bytes == 0:
        raise CliError("--split-bytes must be at least 1")
    return Chaos(
        split_bytes=args.split_bytes,
        split_seed=args.split_random,
        drop_after=args.drop_after,
        stall_after=args.stall_after,
        stall_seconds=args.stall_seconds,
        http_error=args.http_error,
    )


def run_serve(args: argparse.Namespace) -> int:
    from .serve import ReplayApp, bind, make_server, url_of

    chaos = chaos_from_args(args)
    paths = args.captures or [":demo:"]
    sources = [load_source(path) for path in paths]
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: not a port number")
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None

    def log(line: str) -> None:
        print(line, flush=True)

    app = ReplayApp(sources, chaos, Pace(args.pace, args.rate), log)
    url = url_of(sock)
    if not is_loopback(args.host):
        print(f"fraglens: note: serving on {args.host}: reachable beyond this machine")
    for source in sources:
        print(f"  {source.name}: {source.format or 'unknown format'}, {source.events} events")
    print(f"chaos: {chaos.describe()}")
    print(f"fraglens serve: listening on {url} (base URL {url}/v1); ctrl+c stops", flush=True)
    try:
        make_server(app).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


register(
    "serve",
    "replay captures from a local OpenAI/Anthropic/Responses-compatible server, with chaos",
    build_serve_parser,
    run_serve,
)
