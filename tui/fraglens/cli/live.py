"""``fraglens live``: arguments in, exit codes out.

``live`` exits like ``check`` (0 all good, 1 the stream has a problem) when the
call went through, and 2 with a one-line reason when it did not (refused,
timed out, HTTP error, cut off, not a stream) — after printing the report of
whatever arrived, so a script sees both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..net.limits import DEFAULT_LIMITS, Limits
from ..net.request import (
    DEFAULT_TIMEOUT,
    EVENTSTREAM_FORMATS,
    LIVE_FORMATS,
    RequestError,
    RequestSpec,
    build_spec,
)
from .common import (
    CliError,
    add_otlp_options,
    add_price_options,
    add_read_caps,
    add_schema_timeout_option,
    add_stall_option,
    positive,
    price_options,
    read_json,
    schema_budget,
    size,
    write_json,
)

if TYPE_CHECKING:  # httpx and asyncio load only when a call is made, not for `check`
    from ..net.bedrock import Signer
    from ..net.live import LiveCall, LiveStatus
    from ..net.ws_live import WSLiveCall

__all__ = [
    "add_request_options",
    "bedrock_signer",
    "build",
    "call_from_args",
    "is_bedrock",
    "run",
    "run_app",
    "run_headless",
    "spec_from_args",
]

EXAMPLES = """\
examples:
  OPENAI_API_KEY=... fraglens live --url https://api.openai.com/v1 --model gpt-4o \\
      --prompt "Weather in Paris and Tokyo?" --tools tools.json --record rec.fraglens
  fraglens live --url http://127.0.0.1:8765/v1 --model demo --prompt hi --json
                                                 # against fraglens serve, no key needed
  fraglens live --url ws://127.0.0.1:8765/v1 --model gpt-5.1 --prompt hi --json
                                                 # the Responses API's WebSocket mode
  fraglens live --url wss://api.openai.com/v1 --format realtime --model gpt-realtime \
      --prompt "Weather in Lyon?" --tools tools.json   # the Realtime API
  fraglens live --url http://localhost:11434 --format ollama --model qwen3 --prompt hi
                                                 # Ollama's native API, no key
  fraglens live --format bedrock-converse --region us-east-1 --profile dev \
      --model anthropic.claude-3-5-haiku-20241022-v1:0 --prompt "Weather in Paris?" \
      --tools tools.json                        # Bedrock, SigV4: pip install 'fraglens[bedrock]'"""


# -- live -------------------------------------------------------------------------------


def add_request_options(p: argparse.ArgumentParser, *, one_model: bool = True) -> None:
    """What to send and how to reach it: ``live`` and ``compare`` share these
    (compare names its models with --models instead of --model)."""
    p.add_argument(
        "--url",
        help="a base URL (https://host/v1) or a full endpoint; ws:// or wss:// speaks"
        " WebSocket (the Responses API's WebSocket mode, or --format realtime); for"
        " Bedrock, optional: an endpoint override (a VPC endpoint), else the region's",
    )
    what = p.add_argument_group("what to send")
    what.add_argument("--request", metavar="FILE.json", help="the JSON body to send")
    if one_model:
        what.add_argument("--model", metavar="M", help="the model (overrides the request file's)")
    what.add_argument("--prompt", metavar="TEXT", help="one user message")
    what.add_argument(
        "--tools",
        metavar="FILE.json",
        help="tools, in OpenAI, Anthropic, Responses or Converse (toolSpec) shape",
    )
    p.add_argument(
        "--format",
        choices=(*LIVE_FORMATS, "openai-realtime", "realtime"),
        help="the API spoken (default: from the URL's path, else openai-chat;"
        " openai-responses over a ws:// URL); realtime: the Realtime API, over ws://",
    )
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the environment variable holding the key "
        "(default: OPENAI_API_KEY, or ANTHROPIC_API_KEY for anthropic; none for ollama)",
    )
    aws = p.add_argument_group("AWS Bedrock (--format bedrock-converse | bedrock-invoke)")
    aws.add_argument(
        "--region",
        metavar="R",
        help="the AWS region (default: the profile's, AWS_DEFAULT_REGION or AWS_REGION)",
    )
    aws.add_argument(
        "--profile",
        metavar="NAME",
        help="the AWS profile to sign with (default: AWS_PROFILE, else the default chain)",
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
        type=positive,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for a connection or between two reads (default {DEFAULT_TIMEOUT:g})",
    )


def build(p: argparse.ArgumentParser) -> None:
    add_request_options(p)
    p.add_argument("--record", metavar="FILE", help="write a recording as the events arrive")
    caps = p.add_argument_group("caps (past one, the call ends with a clear error)")
    add_read_caps(
        caps,
        line="the longest SSE line or event, event-stream message, or WebSocket message, read",
        decoded="the most a compressed body may inflate to (a body sent uncompressed is not "
        "limited by it)",
    )
    caps.add_argument(
        "--max-stream-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_stream,
        metavar="N",
        help="the longest HTTP response body kept, decoded (default 1G, the most `check` "
        "reads back from a recording)",
    )
    add_stall_option(p)
    add_schema_timeout_option(p)
    add_otlp_options(p, "call")
    add_price_options(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument(
        "--headless", action="store_true", help="print the check report instead of the app"
    )
    out.add_argument("--json", action="store_true", help="print the check --json report")


def spec_from_args(
    args: argparse.Namespace, model: str | None = None, signer: Signer | None = None
) -> RequestSpec:
    """The request the arguments describe; ``model`` overrides ``--model``, and
    ``signer`` (Bedrock) is credentials already loaded."""
    body, tools = _inputs(args)
    if args.format == "realtime":
        args.format = "openai-realtime"
    from ..net.ws_request import is_websocket_url

    if is_websocket_url(args.url):
        return _websocket_spec(args, body, tools, model)
    if args.format == "openai-realtime":
        raise CliError("the Realtime API speaks WebSocket: give a ws:// or wss:// --url")
    if is_bedrock(args):
        return _bedrock_spec(args, body, tools, model, signer)
    if not args.url:
        raise CliError(
            "--url is required (a base URL or a full endpoint); only the Bedrock formats"
            " find theirs from --region"
        )
    if args.region or args.profile:
        raise CliError("--region and --profile are for the Bedrock formats (--format bedrock-…)")
    try:
        spec, note = build_spec(
            args.url,
            format=args.format,
            body=body,
            model=model or args.model,
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


def _websocket_spec(
    args: argparse.Namespace, body: dict[str, Any] | None, tools: list[Any] | None,
    model: str | None,
) -> RequestSpec:
    from ..net.ws_request import build_ws_spec

    if args.region or args.profile:
        raise CliError("--region and --profile are for the Bedrock formats (--format bedrock-…)")
    try:
        spec, note = build_ws_spec(
            args.url, format=args.format, body=body, model=model or args.model,
            prompt=args.prompt, tools=tools, headers=args.header, key_env=args.api_key_env,
        )
    except RequestError as exc:
        raise CliError(str(exc)) from None
    if note:
        print(f"fraglens: note: {note}", file=sys.stderr)
    return spec


def is_bedrock(args: argparse.Namespace) -> bool:
    """Do the arguments ask for Bedrock (--format, or a URL naming its operation)?
    Sets ``args.format`` from the URL when it was not given."""
    if args.format is not None:
        return args.format in EVENTSTREAM_FORMATS
    from ..net.bedrock import format_for_bedrock_path

    found = format_for_bedrock_path(args.url.partition("?")[0]) if args.url else None
    if found is not None:
        args.format = found
    return found is not None


def bedrock_signer(args: argparse.Namespace) -> Signer | None:
    """AWS credentials and region for the Bedrock formats, loaded once; None when
    a Bedrock API key is set (it is sent instead of a signature)."""
    import os

    from ..net.bedrock import BEARER_ENV, load_signer

    if os.environ.get(BEARER_ENV, "").strip():
        return None
    try:
        return load_signer(args.region, args.profile)
    except RequestError as exc:
        raise CliError(str(exc)) from None


def _bedrock_spec(
    args: argparse.Namespace,
    body: dict[str, Any] | None,
    tools: list[Any] | None,
    model: str | None,
    signer: Signer | None,
) -> RequestSpec:
    from ..net.bedrock import build_bedrock_spec

    if args.api_key_env:
        raise CliError(
            "--api-key-env does not apply to Bedrock: requests are signed with AWS"
            " credentials (--profile, AWS_ACCESS_KEY_ID...), or carry the Bedrock API key"
            " in AWS_BEARER_TOKEN_BEDROCK"
        )
    try:
        spec, note = build_bedrock_spec(
            args.format,
            url=args.url,
            region=args.region,
            profile=args.profile,
            body=body,
            model=model or args.model,
            prompt=args.prompt,
            tools=tools,
            headers=args.header,
            signer=signer,
        )
    except RequestError as exc:
        raise CliError(str(exc)) from None
    if note:
        print(f"fraglens: note: {note}", file=sys.stderr)
    return spec


def _inputs(args: argparse.Namespace) -> tuple[dict[str, Any] | None, list[Any] | None]:
    """The request file and the tools file, read and checked."""
    body = None
    if args.request:
        body = read_json(args.request, "--request")
        if not isinstance(body, dict):
            raise CliError(f"--request {args.request}: the body must be a JSON object")
    tools = None
    if args.tools:
        tools = read_json(args.tools, "--tools")
        if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
            tools = tools["tools"]
        if not isinstance(tools, list):
            raise CliError(f"--tools {args.tools}: expected a JSON list of tools")
    return body, tools


def call_from_args(args: argparse.Namespace) -> LiveCall | WSLiveCall:
    from ..net.live import LiveCall

    spec = spec_from_args(args)
    if args.record:
        try:
            open(args.record, "wb").close()
        except OSError as exc:
            raise CliError(f"--record {args.record}: {exc.strerror or exc}") from None
    limits = Limits(max_line=args.max_line_bytes, max_decoded=args.max_decoded_bytes,
                    max_stream=args.max_stream_bytes)
    if spec.method == "GET":  # a WebSocket handshake (ws_request.py)
        from ..net.ws_live import WSLiveCall

        return WSLiveCall(spec, record=args.record, timeout=args.timeout,
                          prices=price_options(args), limits=limits)
    return LiveCall(
        spec,
        record=args.record,
        timeout=args.timeout,
        prices=price_options(args),
        limits=limits,
    )


def run(args: argparse.Namespace) -> int:
    from ..net.otlp import OtlpUnavailable, exporter_for

    try:
        exporter = exporter_for(args.otlp, "fraglens live")
    except OtlpUnavailable as exc:
        raise CliError(str(exc)) from None
    call = call_from_args(args)
    made = [call]  # the app may make the call again: the span is the last one's
    started = time.time()
    try:
        if not (args.headless or args.json):
            return run_app(args, call, made)
        return run_headless(args, call)
    finally:
        if exporter is not None:
            _export(args, exporter, made[-1], started)
            exporter.close()


def _export(
    args: argparse.Namespace, exporter: Any, call: LiveCall | WSLiveCall, started: float
) -> None:
    """The span of the call, once it has ended."""
    from ..fit.verdicts import fit_for_request
    from ..net.live import Phase
    from ..net.otlp import export_exchange
    from ..report.document import build_report

    status, stream = call.status, call.stream
    doc = None
    if stream.events:
        fit = fit_for_request(stream, {"body": call.spec.body}, budget=schema_budget(args))
        doc = build_report(stream, fit=fit, stall_ms=args.stall_ms)
    model = call.spec.body.get("model") if isinstance(call.spec.body, dict) else None
    error = None if status.phase is Phase.DONE else (status.message or status.phase.value)
    export_exchange(exporter, doc, stream, content=args.otlp_content,
                    model=model if isinstance(model, str) else None,
                    started=started, duration=status.elapsed, error=error)


def run_headless(args: argparse.Namespace, call: LiveCall | WSLiveCall) -> int:
    """Make the call, print the report of what arrived, and say how it went."""
    import asyncio

    from ..fit.verdicts import fit_for_request
    from ..report.document import build_report, exact_arguments

    try:
        status = asyncio.run(call.run())
    except KeyboardInterrupt:
        status = call.status
    stream = call.stream
    doc = None
    if stream.events:
        fit = fit_for_request(stream, {"body": call.spec.body}, budget=schema_budget(args))
        doc = build_report(stream, fit=fit, stall_ms=args.stall_ms)
    if doc is not None:
        if args.json:
            write_json(doc, exact_arguments(stream))  # exactly as check --json writes it
        else:
            from ..report.text import print_report

            print_report(doc, call.spec.for_record()["url"])
        sys.stdout.flush()
    print(f"fraglens: live: {status.line(message=False)}", file=sys.stderr)
    if args.record:
        print(f"fraglens: recorded to {args.record}", file=sys.stderr)
    return finish_code(status, doc)


def finish_code(status: LiveStatus, doc: dict[str, Any] | None) -> int:
    from ..net.live import Phase
    from ..report.document import exit_code

    if status.phase is Phase.DONE and doc is not None:
        return exit_code(doc)
    if status.phase is Phase.DONE:
        print("fraglens: error: the stream ended with no events", file=sys.stderr)
        return 2
    print(f"fraglens: error: {status.message or status.phase.value}", file=sys.stderr)
    return 130 if status.phase is Phase.CANCELLED else 2


def run_app(
    args: argparse.Namespace, call: LiveCall | WSLiveCall,
    made: list[LiveCall | WSLiveCall] | None = None,
) -> int:
    """The app over the call; ``made``: every call it makes is appended."""
    from ..app.live import AGAIN, make_live_app
    from ..net.live import Phase

    app = make_live_app(call, schema_budget(args))
    attempt = 1
    while app.run() == AGAIN:
        attempt += 1
        call = call.again(record=_numbered(args.record, attempt))
        if made is not None:
            made.append(call)
        app = make_live_app(call, schema_budget(args))
    status = call.status
    code = 0
    if status.phase is Phase.FAILED:
        print(f"fraglens: error: {status.message}", file=sys.stderr)
        code = 2
    # SIGTERM or SIGHUP quit the app as `q` does (the call cancelled, its recording
    # ended): the shell's status for the signal, 143 or 129, comes first
    return app.signal_status or code


def _numbered(record: str | None, attempt: int) -> str | None:
    """rec.fraglens, then rec-2.fraglens, rec-3.fraglens... (whatever the suffix, or none):
    a re-send never overwrites a recording."""
    if record is None:
        return None
    path = Path(record)
    return str(path.with_name(f"{path.stem}-{attempt}{path.suffix}"))
