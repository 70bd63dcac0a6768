"""fraglens live against a real server on loopback: recordings, chaos, failures, secrets.

Every test starts ``fraglens serve`` in-process on a free port and stops it
after. Nothing here leaves the machine, needs a real key or looks at a clock.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from pathlib import Path

import httpx
import pytest

from fraglens.cli import main
from fraglens.framing.recording import parse_recording
from fraglens.net.live import LiveCall, Phase, describe_error
from fraglens.net.replay import NO_CHAOS, Chaos, Pace, load_source, plan
from fraglens.net.request import LIVE_FORMATS, build_spec
from fraglens.net.serve import ServerHandle, bind, start_server
from fraglens.report.cost import PriceOptions, UserPrices
from fraglens.report.document import build_report

from .conftest import PATIENCE
from .test_live_streams import (
    ANTHROPIC_SSE,
    FAKE_KEY,
    OPENAI_ARGS,
    OPENAI_ARGS_2,
    OPENAI_EVENTS,
    OPENAI_SSE,
    calls_of,
    report_of,
    write,
)

FAST = Pace("fixed", 0)
SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"


def spec_for(url: str, fmt: str = "openai-chat", **kw):
    spec, _ = build_spec(
        url + "/v1",
        format=fmt,
        model="m",
        prompt="hi",
        environ={"OPENAI_API_KEY": FAKE_KEY, "ANTHROPIC_API_KEY": FAKE_KEY},
        **kw,
    )
    return spec


async def live(
    capture: str,
    tmp_path: Path,
    chaos: Chaos = NO_CHAOS,
    fmt: str = "openai-chat",
    timeout: float = 10,
    **kw,
):
    """Serve ``capture``, make one live call into a recording; (call, recording path, logs)."""
    logs: list[str] = []
    record = tmp_path / "live.jsonl"
    with start_server([capture], pace=FAST, chaos=chaos, log=logs.append) as server:
        call = LiveCall(spec_for(server.url, fmt), record=record, timeout=timeout, **kw)
        await call.run()
    return call, str(record), logs


def body_sent(capture: str, chaos: Chaos) -> bytes:
    """Exactly what the server writes before it ends or drops the connection."""
    return b"".join(w.data for w in plan(load_source(capture), chaos, FAST).writes)


# -- a faithful replay -----------------------------------------------------------------


async def test_live_into_a_recording_gives_exactly_the_calls_of_the_source(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    call, record, _ = await live(source, tmp_path)
    assert call.status.phase is Phase.DONE
    assert calls_of(record) == calls_of(source)
    assert parse_recording(Path(record).read_bytes()).body == OPENAI_SSE


@pytest.mark.parametrize(
    "body",
    [OPENAI_SSE, OPENAI_SSE.replace(b"data: [DONE]\n\n", b""), ANTHROPIC_SSE],
    ids=["done", "no-done", "anthropic"],
)
async def test_the_live_report_equals_check_on_the_recording(tmp_path, body):
    fmt = "anthropic" if body is ANTHROPIC_SSE else "openai-chat"
    call, record, _ = await live(write(tmp_path, "s.sse", body), tmp_path, fmt=fmt)
    assert build_report(call.stream) == report_of(record)
    ended_without_done = b"[DONE]" not in body and b"message_stop" not in body
    codes = {d["code"] for d in report_of(record)["diagnostics"]}
    assert ("no-done" in codes) == ended_without_done


async def test_anthropic_live_call_sends_x_api_key_and_reads_message_delta_usage(tmp_path):
    source = write(tmp_path, "claude.sse", ANTHROPIC_SSE)
    prices = PriceOptions(user={"*": UserPrices(3, 15)})
    call, record, _ = await live(source, tmp_path, fmt="anthropic", prices=prices)
    assert calls_of(record) == calls_of(source)
    headers = parse_recording(Path(record).read_bytes()).request["headers"]
    assert headers["x-api-key"] == "[redacted]" and "authorization" not in headers
    assert (call.status.tokens.input, call.status.tokens.output) == (300, 25)
    assert call.status.cost == pytest.approx((300 * 3 + 25 * 15) / 1e6)


async def test_status_goes_connecting_waiting_streaming_done(tmp_path):
    seen: list[Phase] = []
    events: list[int] = []
    call, _, _ = await live(
        write(tmp_path, "chat.sse", OPENAI_SSE),
        tmp_path,
        on_status=lambda s: seen.append(s.phase),
        on_event=lambda ev: events.append(ev.number),
        prices=PriceOptions(user={"*": UserPrices(2.5, 10)}, markup=1.3),
    )
    phases = [p for i, p in enumerate(seen) if i == 0 or seen[i - 1] is not p]
    assert phases == [Phase.CONNECTING, Phase.WAITING, Phase.STREAMING, Phase.DONE]
    assert events == list(range(OPENAI_EVENTS))
    status = call.status
    assert status.http_status == 200 and status.events == OPENAI_EVENTS
    assert status.first_event is not None and status.first_byte is not None
    assert status.cost == pytest.approx((120 * 2.5 + 48 * 10) / 1e6 * 1.3)


def _live_samples() -> list[Path]:
    out = []
    for path in sorted(SAMPLES.glob("*.sse")):
        stream = report_of(str(path))
        if stream["format"] in LIVE_FORMATS and stream["calls"]:
            out.append(path)
    return out


@pytest.mark.parametrize("sample", _live_samples(), ids=lambda p: p.name)
async def test_every_sample_stream_comes_back_the_same_through_serve_and_live(sample, tmp_path):
    fmt = report_of(str(sample))["format"]
    call, record, _ = await live(str(sample), tmp_path, fmt=fmt)
    assert call.status.phase is Phase.DONE, call.status.message
    assert calls_of(record) == calls_of(str(sample))
    codes = [d["code"] for d in report_of(record)["diagnostics"]]
    assert codes == [d["code"] for d in report_of(str(sample))["diagnostics"]]


# -- chaos --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "chaos",
    [
        Chaos(split_bytes=1),
        Chaos(split_bytes=7),
        Chaos(split_seed=1),
        Chaos(split_seed=42),
        Chaos(stall_after=3, stall_seconds=0.05),
    ],
    ids=lambda c: c.describe(),
)
async def test_split_and_stalled_streams_give_the_same_report(tmp_path, chaos):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    call, record, _ = await live(source, tmp_path, chaos=chaos)
    assert call.status.phase is Phase.DONE
    assert calls_of(record) == calls_of(source)
    # the same report but for what only a recording has: its framing and its times
    same = {"framing": "-", "timing": None}
    assert {**report_of(record), **same} == {**report_of(source), **same}
    assert parse_recording(Path(record).read_bytes()).body == OPENAI_SSE


async def test_a_dropped_connection_fails_clearly_and_keeps_every_byte_that_came(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    chaos = Chaos(drop_after=4, split_bytes=50)
    call, record, logs = await live(source, tmp_path, chaos=chaos)
    status = call.status
    assert status.phase is Phase.FAILED and status.error_kind == "cut-off"
    assert "closed the connection mid-stream" in status.message
    rec = parse_recording(Path(record).read_bytes())
    assert rec.body == body_sent(source, chaos)
    assert rec.end["end"] == "error" and rec.end["error"] == status.message
    doc = without_recording_end(report_of(record), status.message)
    assert doc == build_report(call.stream)
    assert doc["calls"][0]["status"] != "ok"
    assert {"eof-without-finish"} <= {d["code"] for d in doc["diagnostics"]}
    assert any("dropped the connection after 4" in line for line in logs)


async def test_a_stall_past_the_timeout_is_a_read_timeout_with_what_came_kept(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    chaos = Chaos(stall_after=5, stall_seconds=60)
    # the timeout is the one wait here that must run out: long enough that a busy
    # machine never makes the five events before the stall look like silence
    call, record, _ = await live(source, tmp_path, chaos=chaos, timeout=3.0)
    status = call.status
    assert status.phase is Phase.FAILED and status.error_kind == "read-timeout"
    assert "went silent after 5 events" in status.message
    stalled = plan(load_source(source), chaos, FAST).writes
    upto = next(i for i, w in enumerate(stalled) if w.pause) + 1
    kept = parse_recording(Path(record).read_bytes()).body
    assert kept == b"".join(w.data for w in stalled[:upto])
    assert report_of(record)["events"] == 5


@pytest.mark.parametrize(
    ("fmt", "status", "said"),
    [
        ("openai-chat", 429, "Too Many Requests"),
        ("anthropic", 529, "simulated HTTP 529"),
        ("openai-responses", 500, "Internal Server Error"),
    ],
)
async def test_an_http_error_shows_the_status_and_the_providers_message(
    tmp_path, fmt, status, said
):
    source = write(
        tmp_path,
        "claude.sse" if fmt == "anthropic" else "chat.sse",
        ANTHROPIC_SSE if fmt == "anthropic" else OPENAI_SSE,
    )
    call, record, _ = await live(source, tmp_path, chaos=Chaos(http_error=status), fmt=fmt)
    assert call.status.phase is Phase.FAILED and call.status.error_kind == "http-status"
    assert call.status.message.startswith(f"HTTP {status}")
    assert said in call.status.message
    rec = parse_recording(Path(record).read_bytes())
    assert rec.response["status"] == status
    body = json.loads(rec.body)
    assert ("type" in body) == (fmt == "anthropic") and "error" in body
    assert "error-event" in {d["code"] for d in report_of(record)["diagnostics"]}


async def test_a_200_that_is_not_a_stream_is_read_as_one_json_body(tmp_path):
    answer = {
        "id": "c",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "call_x",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        }
                    ],
                },
            }
        ],
    }
    source = write(tmp_path, "body.json", json.dumps(answer).encode())
    call, record, _ = await live(source, tmp_path)
    assert call.status.phase is Phase.FAILED and call.status.error_kind == "not-a-stream"
    assert "application/json" in call.status.message
    assert "read as a single body" in call.status.message
    assert report_of(record)["framing"] == "recording"
    assert build_report(call.stream) == without_recording_end(report_of(record),
                                                              call.status.message)
    assert json.loads(parse_recording(Path(record).read_bytes()).body) == answer


async def test_connection_refused_is_one_clear_line_and_an_empty_recording(tmp_path):
    record = tmp_path / "r.jsonl"
    # bound and never listening: refused, and no one else can take the port meanwhile
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        call = LiveCall(spec_for(f"http://127.0.0.1:{port}"), record=record, timeout=PATIENCE)
        status = await call.run()
    assert status.phase is Phase.FAILED and status.error_kind == "connect"
    assert status.message == f"connection refused by 127.0.0.1:{port}: is the server running?"
    rec = parse_recording(record.read_bytes())
    assert rec.response is None and rec.chunks == [] and rec.end["end"] == "error"


async def test_tls_to_a_plain_http_server_is_a_tls_failure(tmp_path):
    with start_server([write(tmp_path, "chat.sse", OPENAI_SSE)]) as server:
        call = LiveCall(spec_for(server.url.replace("http://", "https://")), timeout=PATIENCE)
        status = await call.run()
    assert status.error_kind == "tls" and status.message.startswith("TLS handshake with 127.0.0.1")


def test_dns_and_connect_timeouts_are_named_for_what_they_are():
    lookup = httpx.ConnectError("[Errno -2] Name or service not known")
    lookup.__cause__ = socket.gaierror(-2, "Name or service not known")
    assert describe_error(lookup, "https://api.example.invalid/v1")[0] == "dns"
    assert describe_error(httpx.ConnectTimeout("t"), "https://h/v1") == (
        "connect-timeout",
        "timed out connecting to h:443",
    )
    cert = httpx.ConnectError("boom")
    cert.__cause__ = ssl.SSLCertVerificationError("certificate verify failed")
    assert describe_error(cert, "https://h:8443/v1")[0] == "tls"
    assert describe_error(httpx.ReadTimeout("t"), "http://h/v1")[1] == (
        "h:80 accepted the request but sent no answer: read timed out"
    )


async def test_cancel_keeps_what_arrived_and_says_so_in_the_recording(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    record = tmp_path / "r.jsonl"
    with start_server([source], pace=FAST, chaos=Chaos(stall_after=6, stall_seconds=60)) as server:
        call = LiveCall(spec_for(server.url), record=record)

        def on_event(ev) -> None:
            if ev.number == 5:
                call.cancel()

        call.on_event = on_event
        status = await call.run()
    assert status.phase is Phase.CANCELLED
    assert len(call.stream.events) == 6 and call.stream.closed
    assert parse_recording(record.read_bytes()).end["end"] == "cancelled"
    assert report_of(str(record))["events"] == 6


async def test_the_recording_on_disk_holds_every_read_while_the_call_is_still_running(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    record = tmp_path / "r.jsonl"
    on_disk: list[bytes] = []
    with start_server([source], pace=FAST, chaos=Chaos(stall_after=5, stall_seconds=60)) as server:
        call = LiveCall(spec_for(server.url), record=record)

        def on_event(ev) -> None:
            if ev.number == 4:  # the last event before the stall: as if killed here
                on_disk.append(record.read_bytes())
                call.cancel()

        call.on_event = on_event
        await call.run()
    rec = parse_recording(on_disk[0])
    # every read's bytes are on disk; the times of the last ones are written with the
    # next line, which a writer killed here never wrote: cut off, as a killed one's is
    assert rec.end is None and rec.truncated
    assert rec.body == OPENAI_SSE[: load_source(source).event_ends[4]]
    assert report_of(str(write(tmp_path, "killed.jsonl", on_disk[0])))["events"] == 5


async def test_cancelling_the_task_from_outside_still_closes_the_recording(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    record = tmp_path / "r.jsonl"
    with start_server([source], pace=FAST, chaos=Chaos(stall_after=2, stall_seconds=60)) as server:
        call = LiveCall(spec_for(server.url), record=record)
        task = asyncio.ensure_future(call.run())
        while call.status.events < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert call.status.phase is Phase.CANCELLED
    assert parse_recording(record.read_bytes()).end["end"] == "cancelled"


# -- the key never leaves ---------------------------------------------------------------------


class EchoKeyApp:
    """A hostile upstream that sends the caller's key back, cut across two writes."""

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        key = headers[b"authorization"].split(b" ", 1)[1]
        await receive()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        text = b'{"error": {"message": "Incorrect API key provided: ' + key + b'"}}'
        cut = text.index(key) + 10
        await send({"type": "http.response.body", "body": text[:cut], "more_body": True})
        await send({"type": "http.response.body", "body": text[cut:]})


def test_the_key_is_in_no_recording_output_or_error_even_when_the_server_echoes_it(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "echo.jsonl"
    with ServerHandle(EchoKeyApp(), bind("127.0.0.1", 0)).start() as server:
        code = main(
            [
                "live",
                "--url",
                server.url + f"/v1?api_key={FAKE_KEY}",
                "--model",
                "m",
                "--prompt",
                "hi",
                "--headless",
                "--record",
                str(record),
                "-H",
                f"X-Trace: {FAKE_KEY}",
            ]
        )
    out = capsys.readouterr()
    assert code == 2
    assert "HTTP 401 Unauthorized: Incorrect API key provided: [redacted]" in out.err
    for text in (record.read_text(), out.out, out.err):
        assert FAKE_KEY not in text
        assert FAKE_KEY[10:] not in text


def test_the_key_is_in_no_output_of_a_good_call_either(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    logs: list[str] = []
    record = tmp_path / "r.jsonl"
    with start_server(
        [write(tmp_path, "chat.sse", OPENAI_SSE)], pace=FAST, log=logs.append
    ) as server:
        assert (
            main(
                [
                    "live",
                    "--url",
                    server.url,
                    "--model",
                    "m",
                    "--prompt",
                    "hi",
                    "--json",
                    "--record",
                    str(record),
                ]
            )
            == 0
        )
        spec = spec_for(server.url)
    out = capsys.readouterr()
    for text in (record.read_text(), out.out, out.err, "\n".join(logs), repr(spec)):
        assert FAKE_KEY not in text


# -- the command line ---------------------------------------------------------------------------


def test_headless_json_equals_check_json_on_the_recording(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    record = tmp_path / "r.jsonl"
    with start_server([write(tmp_path, "chat.sse", OPENAI_SSE)], pace=FAST) as server:
        assert (
            main(
                [
                    "live",
                    "--url",
                    server.url + "/v1/chat/completions",
                    "--model",
                    "m",
                    "--prompt",
                    "hi",
                    "--json",
                    "--record",
                    str(record),
                ]
            )
            == 0
        )
    live_out = capsys.readouterr().out
    assert main(["check", "--json", str(record)]) == 0
    assert live_out == capsys.readouterr().out
    assert [c["arguments_raw"] for c in json.loads(live_out)["calls"]] == [
        "".join(OPENAI_ARGS),
        "".join(OPENAI_ARGS_2),
    ]


def test_headless_failure_prints_what_arrived_then_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with start_server(
        [write(tmp_path, "chat.sse", OPENAI_SSE)], pace=FAST, chaos=Chaos(drop_after=4)
    ) as server:
        code = main(["live", "--url", server.url, "--model", "m", "--prompt", "hi", "--json"])
    out = capsys.readouterr()
    assert code == 2
    assert json.loads(out.out)["events"] == 4
    errors = [line for line in out.err.splitlines() if line.startswith("fraglens: error:")]
    assert len(errors) == 1 and "mid-stream after 4 events" in errors[0]
    assert "Traceback" not in out.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--url", "ftp://x", "--model", "m", "--prompt", "p"], "not an http(s) URL"),
        (["--url", "http://127.0.0.1:9/v1", "--prompt", "p"], "no model"),
        (["--url", "http://127.0.0.1:9/v1", "--model", "m"], "say what to send"),
        (
            ["--url", "http://127.0.0.1:9/v1", "--model", "m", "--prompt", "p", "-H", "nocolon"],
            "a header is 'Name: value'",
        ),
        (
            [
                "--url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--prompt",
                "p",
                "--api-key-env",
                "FRAGLENS_TEST_UNSET_VAR",
            ],
            "$FRAGLENS_TEST_UNSET_VAR is not set",
        ),
        (["--url", "http://127.0.0.1:9/v1", "--request", "/nonexistent/req.json"], "no such file"),
    ],
)
def test_bad_live_arguments_are_one_line_and_exit_2(argv, message, capsys, monkeypatch):
    monkeypatch.delenv("FRAGLENS_TEST_UNSET_VAR", raising=False)
    assert main(["live", *argv, "--headless"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# -- building the request ---------------------------------------------------------------------


def test_a_base_url_gets_the_formats_endpoint_and_a_full_endpoint_names_the_format():
    env = {"OPENAI_API_KEY": FAKE_KEY}
    spec, _ = build_spec("https://api.example.com/v1", model="m", prompt="p", environ=env)
    assert (spec.url, spec.format) == ("https://api.example.com/v1/chat/completions", "openai-chat")
    spec, _ = build_spec(
        "https://gw.example.com/x/v1/messages",
        model="m",
        prompt="p",
        environ={"ANTHROPIC_API_KEY": FAKE_KEY},
    )
    assert spec.format == "anthropic" and spec.url.endswith("/x/v1/messages")
    spec, _ = build_spec(
        "https://api.anthropic.com", model="m", prompt="p", environ={"ANTHROPIC_API_KEY": FAKE_KEY}
    )
    assert spec.url == "https://api.anthropic.com/v1/messages"
    headers = dict(spec.headers)
    assert headers["x-api-key"] == FAKE_KEY and headers["anthropic-version"]
    assert spec.body["max_tokens"] > 0 and spec.body["stream"] is True


def test_streaming_and_usage_are_switched_on_for_the_user():
    spec, _ = build_spec(
        "http://127.0.0.1:1/v1",
        body={"model": "m", "messages": [], "stream": False, "stream_options": {"x": 1}},
        environ={},
    )
    assert spec.body["stream"] is True
    assert spec.body["stream_options"] == {"x": 1, "include_usage": True}
    spec, _ = build_spec("http://127.0.0.1:1/v1/responses", model="m", prompt="p", environ={})
    assert spec.body == {"model": "m", "input": "p", "stream": True}


def test_tools_are_reshaped_for_the_api_spoken():
    openai_tool = {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
    }
    spec, _ = build_spec(
        "http://127.0.0.1:1/v1/messages", model="m", prompt="p", tools=[openai_tool], environ={}
    )
    assert spec.body["tools"] == [
        {"name": "f", "input_schema": {"type": "object"}, "description": "d"}
    ]
    spec, _ = build_spec(
        "http://127.0.0.1:1/v1/responses",
        model="m",
        prompt="p",
        tools=spec.body["tools"],
        environ={},
    )
    assert spec.body["tools"] == [
        {"type": "function", "name": "f", "parameters": {"type": "object"}, "description": "d"}
    ]


def test_no_key_in_the_environment_sends_none_and_says_so():
    spec, note = build_spec("http://127.0.0.1:1/v1", model="m", prompt="p", environ={})
    assert "$OPENAI_API_KEY is not set" in note
    assert not any(name.lower() == "authorization" for name, _ in spec.headers)


def without_recording_end(doc: dict, error: str) -> dict:
    """The recording's report less what only the recording knows: how the call
    ended, which check reports as recording-error with the recorded message."""
    ended = [d for d in doc["diagnostics"] if d["code"] == "recording-error"]
    assert [d["message"] for d in ended] == [f"the recording ends with an error: {error}"]
    return dict(doc, diagnostics=[d for d in doc["diagnostics"] if d not in ended])
