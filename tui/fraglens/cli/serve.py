"""``fraglens serve``: replay captures from a local server, with chaos on request."""

from __future__ import annotations

import argparse

from ..engine.plural import counted
from ..net.replay import Chaos, Pace, load_source
from ..net.request import is_loopback
from .common import CliError, count, non_negative

__all__ = ["build", "chaos_from_args", "run"]

EXAMPLES = """\
examples:
  fraglens serve rec.fraglens --port 8765            then point a client at http://127.0.0.1:8765/v1
  fraglens serve capture.sse --split-random 7 --stall-after 20"""


def build(p: argparse.ArgumentParser) -> None:
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
        type=non_negative,
        default=50.0,
        metavar="EVENTS_PER_S",
        help="events per second for --pace fixed (default 50; 0: no pauses)",
    )
    chaos = p.add_argument_group("chaos")
    split = chaos.add_mutually_exclusive_group()
    split.add_argument(
        "--split-bytes", type=count, metavar="N", help="write the body N bytes at a time"
    )
    split.add_argument(
        "--split-random",
        type=int,
        metavar="SEED",
        help="cut the body at random offsets (mid UTF-8 character too), reproducibly",
    )
    chaos.add_argument(
        "--drop-after", type=count, metavar="N", help="close the connection after N events"
    )
    chaos.add_argument("--stall-after", type=count, metavar="N", help="stall after N events")
    chaos.add_argument(
        "--stall-seconds",
        type=non_negative,
        default=30.0,
        metavar="S",
        help="how long to stall (default 30)",
    )
    chaos.add_argument(
        "--chaos-odds",
        type=float,
        default=1.0,
        metavar="P",
        help="apply the chaos to this share of requests only, 0 to 1 (default 1: all): "
        "a flaky backend",
    )
    chaos.add_argument(
        "--chaos-seed",
        type=int,
        default=0,
        metavar="N",
        help="the seed of the draw --chaos-odds makes per request (default 0: reproducible)",
    )
    p.add_argument(
        "--answer-nonstream",
        action="store_true",
        help='answer "stream": false with the non-streamed body the provider sends (Chat '
        "Completions, Messages, Responses), made from the capture, instead of HTTP 400",
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
    if not 0.0 <= args.chaos_odds <= 1.0:
        raise CliError(f"--chaos-odds {args.chaos_odds}: give a share from 0 to 1")
    return Chaos(
        split_bytes=args.split_bytes,
        split_seed=args.split_random,
        drop_after=args.drop_after,
        stall_after=args.stall_after,
        stall_seconds=args.stall_seconds,
        http_error=args.http_error,
        odds=args.chaos_odds,
        odds_seed=args.chaos_seed,
    )


def run(args: argparse.Namespace) -> int:
    from ..net.serve import ReplayApp, bind, make_server, url_of

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

    app = ReplayApp(
        sources, chaos, Pace(args.pace, args.rate), log, answer_nonstream=args.answer_nonstream
    )
    url = url_of(sock)
    if not is_loopback(args.host):
        print(f"fraglens: note: serving on {args.host}: reachable beyond this machine")
    for source in sources:
        fmt = source.format or "unknown format"
        if source.websocket is not None:
            answers = counted(len(source.websocket.responses), "response")
            print(f"  {source.name}: {fmt}, a WebSocket connection: {answers}, "
                  f"{counted(source.events, 'server message')}, on /v1/responses and "
                  "/v1/realtime")
        else:
            print(f"  {source.name}: {fmt}, {counted(source.events, 'event')}")
    print(f"chaos: {chaos.describe()}")
    print(f"fraglens serve: listening on {url} (base URL {url}/v1); ctrl+c stops", flush=True)
    try:
        make_server(app).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0
