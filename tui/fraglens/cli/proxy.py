"""``fraglens proxy``: the command line of proxy mode (``fraglens.net.proxy``).

The app and the server load only when the command runs.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from ..net.limits import DEFAULT_LIMITS, Limits
from ..redact import redact_url
from .common import (
    CliError,
    add_otlp_options,
    add_read_caps,
    add_schema_timeout_option,
    add_stall_option,
    schema_budget,
    size,
)

DEFAULT_PORT = 8788
EXAMPLES = """\
examples:
  fraglens proxy --upstream https://api.openai.com/v1      then OPENAI_BASE_URL=http://127.0.0.1:8788/v1
  fraglens proxy --upstream http://127.0.0.1:8765/v1 --headless --record-dir flows/"""


def build(p: argparse.ArgumentParser) -> None:
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
    caps = p.add_argument_group("caps (the client's bytes are never cut by the flows' caps)")
    caps.add_argument(
        "--max-body-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_body,
        metavar="N",
        help="the largest request body forwarded; larger gets HTTP 413 (default 64M)",
    )
    add_read_caps(
        caps,
        line="the longest SSE line or event a flow decodes",
        decoded="the most of a compressed body a flow inflates",
    )
    caps.add_argument(
        "--max-backlog-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_backlog,
        metavar="N",
        help="how far the flows may fall behind the forwarding before the streams then "
        "open stop being decoded (default 64M)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="headless, one JSON object per flow (with its check --json document)",
    )
    add_stall_option(p)
    add_schema_timeout_option(p)
    add_otlp_options(p, "flow")


def exposure_warning(host: str) -> str | None:
    from ..net.proxy.server import is_loopback

    if is_loopback(host):
        return None
    return (
        f"fraglens proxy: warning: listening on {host}, not loopback: anyone who can reach "
        "this machine can send requests through the proxy, and the flows show what they carry"
    )


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C raises KeyboardInterrupt.

    A KeyboardInterrupt, so that every layer that handles Ctrl-C (headless
    mode's stop, ``cli.main``) handles ``kill``, systemd, ``docker stop`` and
    CI runners the same way.
    """


class StopOnSigterm:
    """While in the block, SIGTERM stops headless mode the way Ctrl-C does.

    The handler is installed with ``signal.signal`` for SIGTERM alone: it does
    not depend on SIGINT's disposition, so it works in a process started with
    SIGINT ignored (a background job), where Python installs no Ctrl-C
    handler. It raises :class:`Terminated` once; once the stop has begun
    (``stopping``), a repeated SIGTERM is ignored, so that the stop, which is
    bounded, finishes and prints what was in flight. The previous handler is
    restored on the way out. Outside the main thread (where signals cannot be
    handled) it does nothing.
    """

    def __init__(self) -> None:
        self.stopping = False
        self._previous: Any = None
        self._installed = False

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        if not self.stopping:
            self.stopping = True
            raise Terminated

    def __enter__(self) -> StopOnSigterm:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._raise)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            # None: a handler installed from C, which Python cannot restore
            previous = signal.SIG_DFL if self._previous is None else self._previous
            signal.signal(signal.SIGTERM, previous)
            self._installed = False


def run(args: argparse.Namespace) -> int:
    from ..net.proxy.server import bind, parse_upstream

    try:
        upstream = parse_upstream(args.upstream)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be between 0 and 65535, not {args.port}")
    warning = exposure_warning(args.host)
    if warning:
        print(warning, file=sys.stderr)
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    from ..net.otlp import OtlpUnavailable, exporter_for

    try:
        exporter = exporter_for(args.otlp, "fraglens proxy")
    except OtlpUnavailable as exc:
        raise CliError(str(exc)) from None
    try:
        return _serve(args, upstream, sock, exporter)
    finally:
        if exporter is not None:
            exporter.close()


def _serve(args: argparse.Namespace, upstream: Any, sock: Any, exporter: Any) -> int:
    from ..net.proxy.child import ChildProxy
    from ..net.proxy.flows import FlowStore

    headless = args.headless or args.json
    store = FlowStore()
    if exporter is not None:
        from ..net.proxy.spans import FlowSpans

        FlowSpans(store, exporter, content=args.otlp_content, stall_ms=args.stall_ms,
                  schema_budget=schema_budget(args))
    lines: list[str] = []
    proxy = ChildProxy(
        args.upstream,
        store,
        sock=sock,
        record_dir=args.record_dir,
        log=None if headless else lines.append,
        limits=Limits(
            max_line=args.max_line_bytes,
            max_decoded=args.max_decoded_bytes,
            max_body=args.max_body_bytes,
            max_backlog=args.max_backlog_bytes,
        ),
    )
    base = proxy.url + upstream.path.rstrip("/")
    if not headless:
        try:
            from ..app.screens.flows import run_flows_app
        except ImportError:
            print("fraglens proxy: the app is not available; running headless", file=sys.stderr)
            headless = True
        else:
            return run_flows_app(
                proxy, store, base_url=base, log_lines=lines, schema_budget=schema_budget(args)
            )
    from ..net.proxy.headless import HeadlessPrinter

    HeadlessPrinter(
        store, as_json=args.json, stall_ms=args.stall_ms, schema_budget=schema_budget(args)
    )
    with StopOnSigterm() as sigterm:
        try:
            # Ctrl-C or SIGTERM from the moment the child is started, not only once
            # wait() has begun: whatever it lands on, the child is stopped and flows
            # printed
            proxy.start()
            print(
                f"fraglens proxy: {proxy.url} -> {redact_url(str(upstream))}\n"
                f"fraglens proxy: point your client's base URL at {base}",
                file=sys.stderr,
                flush=True,
            )
            code = proxy.wait()
            sigterm.stopping = True  # the child is gone: a SIGTERM now changes nothing
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (Terminated): the same stop
            sigterm.stopping = True
            # what is in flight finishes (or is cut after a grace period) and is
            # printed; the child is waited for (killed if it will not stop)
            proxy.stop()
            return 0
    print(f"fraglens proxy: error: the forwarding process exited ({code})", file=sys.stderr)
    return 2
