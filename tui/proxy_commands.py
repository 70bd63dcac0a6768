"""``fraglens proxy``: the command line of proxy mode (``tui/net/proxy.py``).

Registered with :func:`tui.cli.register`; the app and the server load only
when the command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from .cli import CliError, register

DEFAULT_PORT = 8788
HELP = "a reverse proxy for your own app: watch every tool call it receives, live"


def build_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="where requests go, e.g. https://api.openai.com/v1 (its path is a prefix)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    p.add_argument(
        "--record-dir",
        type=Path,
        metavar="DIR",
        help="save every flow there as a recording (keys and cookies redacted)",
    )
    p.add_argument(
        "--headless",
        action="store_true",
        help="no app: print one line per flow and its check summary",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="headless, one JSON object per flow (with its check --json document)",
    )


def exposure_warning(host: str) -> str | None:
    from .net.proxy import is_loopback

    if is_loopback(host):
        return None
    return (
        f"fraglens proxy: warning: listening on {host}, not loopback: anyone who can reach "
        "this machine can send requests through the proxy, and the flows show what they carry"
    )


def run(args: argparse.Namespace) -> int:
    from .net.proxy import ProxyApp, ProxyServer
    from .net.proxy_flows import FlowStore

    store = FlowStore()
    try:
        app = ProxyApp(args.upstream, store, record_dir=args.record_dir)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be between 0 and 65535, not {args.port}")
    warning = exposure_warning(args.host)
    if warning:
        print(warning, file=sys.stderr)
    headless = args.headless or args.json
    lines: list[str] = []
    try:
        server = ProxyServer(
            app,
            host=args.host,
            port=args.port,
            log=(lambda line: print(f"fraglens proxy: {line}", file=sys.stderr))
            if headless
            else lines.append,
        )
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    base = server.url + app.upstream.path.rstrip("/")
    if not headless:
        try:
            from .app.screens.flows import run_flows_app
        except ImportError:
            print("fraglens proxy: the app is not available; running headless", file=sys.stderr)
            headless = True
        else:
            return run_flows_app(server, store, base_url=base, log_lines=lines)
    print(
        f"fraglens proxy: {server.url} -> {app.upstream}\n"
        f"fraglens proxy: point your client's base URL at {base}",
        file=sys.stderr,
        flush=True,
    )
    from .net.proxy_headless import HeadlessPrinter

    HeadlessPrinter(store, as_json=args.json)
    asyncio.run(server.serve())
    return 0


register("proxy", HELP, build_parser, run)
