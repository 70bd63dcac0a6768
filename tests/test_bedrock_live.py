"""Live Bedrock calls end to end, against a loopback upstream that checks the signature.

:class:`SigningUpstream` does what AWS does with a request before answering it:
it recomputes the SigV4 signature with botocore, from the fake credentials
below and the request exactly as it arrived (method, raw path, signed
headers, body), and answers 403 in AWS's error shape when it does not hold.
Then it streams a Bedrock capture from sample_streams in 7-byte writes, so
that messages are cut across reads, or fails the way the model id in the path
says. No test reaches past loopback and no key is real: the credentials come
from environment variables the tests set, with the shared config files
pointed at nothing and the instance metadata service switched off.
"""

from __future__ import annotations

import hmac
import json
import re
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from fraglens.cli import main
from fraglens.framing.eventstream import encode_message
from fraglens.framing.recording import parse_recording
from fraglens.net.bedrock import (
    ANTHROPIC_BEDROCK_VERSION,
    Signer,
    build_bedrock_spec,
)
from fraglens.net.live import LiveCall, Phase
from fraglens.net.serve import ServerHandle, bind
from fraglens.reading.capture import load_stream
from fraglens.redact import REDACTED

from .conftest import PATIENCE, SAMPLES, asgi_request

# the last test reads what the others wrote: one worker runs them all, in order
pytestmark = pytest.mark.xdist_group("test_bedrock_live")

ACCESS_KEY = "AKIAFRAGLENSTEST7Q2Z"
# made up, with the characters that encode differently in JSON and in URLs
SECRET_KEY = "fraglens/Test+Secret=Key/0123456789abcdefGH"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEFRAGLENS/session+token==" + "Zm9vYmFy" * 12
REGION = "us-west-2"
#: a made-up Bedrock API key (AWS_BEARER_TOKEN_BEDROCK): sent instead of a signature
API_KEY = "ABSKQmVkcm9ja0FQSUtleS1mcmFnbGVucy10ZXN0+/k3y="
#: a Claude model id: its ':' is percent-encoded in the path, and signed that way
CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0"
#: what the upstream streams for a model id
STREAMS = {
    "parallel": "bedrock_converse_parallel",
    "exception": "bedrock_converse_exception",
    CLAUDE: "bedrock_invoke_claude_parallel",
    "throttled-mid-stream": "bedrock_invoke_throttled",
    "damaged": "bedrock_converse_crc_damaged",
}
#: what the tests captured (stdout, stderr), for the last test's grep
CAPTURED: list[str] = []


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def spellings(value: str) -> list[str]:
    """A credential as sent, JSON-escaped and percent-encoded: none may be written."""
    return [value, _escaped(value), quote(value, safe="")]


# -- the upstream -----------------------------------------------------------------------

_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
    r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})"
)


def check_signature(
    method: str, target: str, headers: dict[str, str], body: bytes
) -> tuple[str, str] | None:
    """None when the request is signed by ACCESS_KEY/SECRET_KEY for bedrock in
    REGION; else (AWS's error type, its message)."""
    bearer = headers.get("authorization", "")
    if bearer.startswith("Bearer "):
        if hmac.compare_digest(bearer[7:], API_KEY):
            return None
        return "UnrecognizedClientException", "Invalid API Key format."
    found = _AUTH.fullmatch(headers.get("authorization", ""))
    if found is None:
        return "IncompleteSignatureException", "Authorization header is not a SigV4 signature"
    key, day, region, service, signed, signature = found.groups()
    names = signed.split(";")
    if key != ACCESS_KEY or headers.get("x-amz-security-token") != SESSION_TOKEN:
        return "UnrecognizedClientException", "The security token included is invalid."
    if (region, service) != (REGION, "bedrock"):
        return "InvalidSignatureException", f"Credential should be scoped to {REGION}/bedrock"
    stamp = headers.get("x-amz-date", "")
    if not stamp.startswith(day) or not {"host", "x-amz-date"} <= set(names):
        return "InvalidSignatureException", "host and x-amz-date must be signed"
    request = AWSRequest(
        method=method,
        url=f"http://{headers['host']}{target}",
        data=body,
        headers={name: headers[name] for name in names if name in headers},
    )
    request.context["timestamp"] = stamp
    auth = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), service, region)
    to_sign = auth.string_to_sign(request, auth.canonical_request(request))
    expected = auth.signature(to_sign, request)
    if not hmac.compare_digest(expected, signature):
        return "InvalidSignatureException", "The request signature we calculated does not match."
    return None


def _exception(name: str, payload: dict) -> bytes:
    headers = {":exception-type": name, ":content-type": "application/json",
               ":message-type": "exception"}
    return encode_message(headers, json.dumps(payload).encode())


def _event(name: str, payload: dict) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload).encode())


class SigningUpstream:
    """Bedrock Runtime on loopback: verifies, then answers by the model id in the path."""

    def __init__(self) -> None:
        #: (raw target, headers, body, verdict) of every request
        self.seen: list[tuple[str, dict[str, str], bytes, tuple[str, str] | None]] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        headers, body = await asgi_request(scope, receive)
        target = scope["raw_path"].decode()
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode()
        verdict = check_signature(scope["method"], target, headers, body)
        self.seen.append((target, headers, body, verdict))
        if verdict is not None:
            await self._error(send, 403, *verdict)
            return
        model = unquote(target.split("/")[2])
        # every credential this request was made with (a signed one's secret key included)
        authorization = headers["authorization"]
        echo = {"authorization": authorization}
        if not authorization.startswith("Bearer "):
            echo.update(secret=SECRET_KEY, token=SESSION_TOKEN, key=ACCESS_KEY,
                        signature=authorization.rpartition("Signature=")[2])
        if model == "throttle":
            await self._error(send, 429, "ThrottlingException", "Too many requests, slow down.")
        elif model == "invalid":
            await self._error(send, 400, "ValidationException", "The model id is not valid.")
        elif model == "echo-error":
            # an error body that repeats every credential, plainly and JSON-escaped
            text = json.dumps(echo) + json.dumps(echo, ensure_ascii=False).replace(
                SECRET_KEY, _escaped(SECRET_KEY)
            )
            await self._error(send, 403, "AccessDeniedException", text)
        elif model == "endless":
            # a valid prelude announcing a 16 MiB message, whose bytes keep coming
            head = _event("messageStart", {"role": "assistant"})
            total = 16 * 1024 * 1024
            prelude = total.to_bytes(4, "big") + (0).to_bytes(4, "big")
            prelude += zlib.crc32(prelude).to_bytes(4, "big")
            await self._stream(send, head + prelude + b"x" * 300_000, step=65536)
        elif model == "echo-stream":
            stream = (
                _event("messageStart", {"role": "assistant"})
                + _event("contentBlockDelta", {"contentBlockIndex": 0,
                                               "delta": {"text": f"key {ACCESS_KEY}"}})
                + _exception("validationException", {"message": json.dumps(echo)})
            )
            await self._stream(send, stream)
        else:
            await self._stream(send, (SAMPLES / f"{STREAMS[model]}.eventstream").read_bytes())

    async def _error(self, send, status: int, kind: str, message: str) -> None:
        headers = [(b"content-type", b"application/json"),
                   (b"x-amzn-errortype", f"{kind}:http://internal.amazon.com/coral/".encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        body = json.dumps({"message": message}).encode()
        await send({"type": "http.response.body", "body": body})

    async def _stream(self, send, body: bytes, step: int = 7) -> None:
        headers = [(b"content-type", b"application/vnd.amazon.eventstream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for at in range(0, len(body), step):
            await send({"type": "http.response.body", "body": body[at : at + step],
                        "more_body": True})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[SigningUpstream, str]]:
    app = SigningUpstream()
    with ServerHandle(app, bind("127.0.0.1", 0)).start() as server:
        yield app, server.url


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Where every test here writes."""
    return tmp_path_factory.mktemp("bedrock")


@pytest.fixture
def aws(monkeypatch, work) -> None:
    """The fake credentials in the environment, and nothing else AWS could read."""
    import os

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(work / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(work / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    CAPTURED.extend([out.out, out.err])
    assert "Traceback" not in out.err
    return code, out.out, out.err


def check_json(path: Path, capsys) -> dict:
    code, out, _ = cli(["check", "--json", str(path)], capsys)
    return json.loads(out)


SIGNER = Signer(REGION, ACCESS_KEY, SECRET_KEY, SESSION_TOKEN)


# -- the request ---------------------------------------------------------------------------


def test_a_converse_request_is_built_for_the_region_and_signed():
    tools = [{"type": "function", "function": {"name": "get_stock_price", "description": "d",
                                               "parameters": {"type": "object"}}}]
    spec, note = build_bedrock_spec("bedrock-converse", model=CLAUDE, prompt="hi", tools=tools,
                                    signer=SIGNER)
    assert note is None
    # the ':' of the model id percent-encoded, as botocore sends it
    assert spec.url == (
        f"https://bedrock-runtime.{REGION}.amazonaws.com/model/"
        "anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
    )
    assert spec.body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert spec.body["toolConfig"] == {"tools": [{"toolSpec": {
        "name": "get_stock_price", "description": "d", "inputSchema": {"json": {"type": "object"}},
    }}]}
    assert "model" not in spec.body and "stream" not in spec.body
    headers = dict(spec.headers)
    assert headers["Authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/"
    ) and f"/{REGION}/bedrock/aws4_request" in headers["Authorization"]
    assert headers["X-Amz-Security-Token"] == SESSION_TOKEN
    # what a recording keeps: no credential, by name or by value
    shown = json.dumps(spec.for_record())
    assert REDACTED in shown
    for value in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN):
        assert value not in shown


def test_an_invoke_request_is_claude_s_own_body():
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    spec, _ = build_bedrock_spec("bedrock-invoke", model=CLAUDE, prompt="hi", tools=tools,
                                 signer=SIGNER, url="https://vpce-1.example.com")
    assert spec.url == (
        "https://vpce-1.example.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0"
        "/invoke-with-response-stream"
    )
    assert spec.body == {
        "anthropic_version": ANTHROPIC_BEDROCK_VERSION,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
    }
    assert dict(spec.headers)["x-amzn-bedrock-accept"] == "application/json"


def test_every_credential_is_scrubbed_by_value_in_every_spelling():
    spec, _ = build_bedrock_spec("bedrock-converse", model="m", prompt="hi", signer=SIGNER)
    signature = dict(spec.headers)["Authorization"].rpartition("Signature=")[2]
    for value in (SECRET_KEY, SESSION_TOKEN, ACCESS_KEY, signature):
        for spelling in spellings(value):
            assert spec.safe(f"said: {spelling}.") == f"said: {REDACTED}."


# -- live calls ----------------------------------------------------------------------------


def test_live_converse_is_signed_read_as_it_streams_and_recorded(upstream, work, aws, capsys):
    app, url = upstream
    record = work / "converse.jsonl"
    code, out, err = cli(["live", "--format", "bedrock-converse", "--url", url, "--region",
                          REGION, "--model", "parallel", "--prompt", "stocks?", "--json",
                          "--record", str(record)], capsys)
    target, headers, body, verdict = app.seen[-1]
    assert verdict is None and target == "/model/parallel/converse-stream"
    assert json.loads(body)["messages"][0]["content"] == [{"text": "stocks?"}]
    assert code == 0, err
    live = json.loads(out)
    assert [(c["name"], c["status"], c["arguments_raw"]) for c in live["calls"]] == [
        ("get_stock_price", "ok", '{"ticker": "AMZN"}'),
        ("get_stock_price", "ok", '{"ticker": "MSFT"}'),
    ]
    # the recording holds the bytes that came, and check reads it to the same report
    rec = parse_recording(record.read_bytes())
    assert rec.body == (SAMPLES / "bedrock_converse_parallel.eventstream").read_bytes()
    assert check_json(record, capsys) == live
    assert rec.request["headers"]["Authorization"] == REDACTED
    assert rec.request["headers"]["X-Amz-Security-Token"] == REDACTED


def test_the_declared_tool_specs_check_the_calls_live_and_in_the_recording(
    upstream, work, aws, capsys
):
    """Converse declares tools as toolSpec entries under toolConfig: the calls are
    validated against them, in the live report and in check of the recording."""
    tools = work / "stock-tools.json"
    schema = {"type": "object", "properties": {"ticker": {"type": "string", "maxLength": 3}},
              "required": ["ticker"]}
    tools.write_text(json.dumps([{"toolSpec": {"name": "get_stock_price",
                                               "inputSchema": {"json": schema}}}]))
    record = work / "converse-tools.jsonl"
    code, out, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                          "--region", REGION, "--model", "parallel", "--prompt", "stocks?",
                          "--tools", str(tools), "--json", "--record", str(record)], capsys)
    sent = json.loads(upstream[0].seen[-1][2])
    assert sent["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"] == schema
    live = json.loads(out)
    # "AMZN" and "MSFT" are four letters: both calls break maxLength
    assert [d["code"] for d in live["diagnostics"]] == ["args-schema", "args-schema"]
    assert code == 1
    assert check_json(record, capsys) == live


async def test_messages_are_handed_out_as_their_reads_complete_them(upstream, aws):
    _, url = upstream
    spec, _ = build_bedrock_spec("bedrock-invoke", url=url, model=CLAUDE, prompt="weather?",
                                 signer=SIGNER)
    seen_at_read: list[int] = []
    events: list[int] = []
    call = LiveCall(spec, timeout=PATIENCE, on_event=lambda ev: events.append(ev.number),
                    on_chunk=lambda t, data: seen_at_read.append(len(events)))
    status = await call.run()
    assert status.phase is Phase.DONE, status.message
    assert events == list(range(13))
    # events came out while the body was still arriving (some read ended with part of
    # them handed out), not all at its end
    assert any(0 < handed < 13 for handed in seen_at_read)
    calls = call.stream.reassembler.calls
    assert [c.text for c in calls] == ['{"city": "Madrid"}', '{"city": "Valencia"}']
    assert call.body.framing == "eventstream"


async def test_a_damaged_message_is_read_live_as_check_reads_the_recording(upstream, work, aws):
    """A CRC mismatch is found when the next valid prelude comes: the event is still
    stamped with the read that held the damage's last byte, as the recording's reader
    stamps it, so that the two give the same events at the same times."""
    spec, _ = build_bedrock_spec("bedrock-converse", url=upstream[1], model="damaged",
                                 prompt="hi", signer=SIGNER)
    record = work / "damaged.jsonl"
    call = LiveCall(spec, timeout=PATIENCE, record=record)
    status = await call.run()
    assert status.phase is Phase.DONE, status.message
    live = [(ev.kind, ev.event, ev.data, ev.time) for ev in call.stream.events]
    loaded = load_stream(str(record))[0]
    recorded = [(ev.kind, ev.event, ev.data, ev.time) for ev in loaded.events]
    assert live == recorded
    assert "frame-damaged" in [d.code for d in call.stream.reassembler.diagnostics()]


async def test_the_app_fills_its_panes_from_a_live_bedrock_stream(upstream, aws):
    from fraglens.app.live import make_live_app

    spec, _ = build_bedrock_spec("bedrock-invoke", url=upstream[1], model=CLAUDE,
                                 prompt="hi", signer=SIGNER)
    call = LiveCall(spec, timeout=PATIENCE)
    app = make_live_app(call)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(12000):  # pauses, not a clock: a hang guard
            if call.status.phase.finished and app.index.last == len(app.stream.events) - 1:
                break
            await pilot.pause(0.005)
        assert call.status.phase is Phase.DONE, call.status.message
        assert len(app.stream.events) == 13 and app.step == app.index.last
        assert [c.text for c in app.stream.reassembler.calls] == [
            '{"city": "Madrid"}', '{"city": "Valencia"}'
        ]
        assert "done" in app.live_status and "13 events" in app.live_status
        CAPTURED.append(app.live_status)


async def test_serve_answers_a_bedrock_path_with_a_bedrock_capture(aws):
    """Among captures of several formats, a Converse path gets the Converse one, every
    time (not round-robin over all): live Bedrock can be tried against serve."""
    from fraglens.net.replay import Pace
    from fraglens.net.serve import start_server

    captures = [str(SAMPLES / "backend_gpt4o_parallel.sse"),
                str(SAMPLES / "bedrock_converse_parallel.eventstream")]
    with start_server(captures, pace=Pace("fixed", 0)) as server:
        spec, _ = build_bedrock_spec("bedrock-converse", url=server.url, model="m",
                                     prompt="hi", signer=SIGNER)
        for _ in range(2):
            call = LiveCall(spec, timeout=PATIENCE)
            assert (await call.run()).phase is Phase.DONE, call.status.message
            assert call.body.framing == "eventstream"
            assert len(call.stream.reassembler.calls) == 2


def test_serve_says_errors_on_a_bedrock_path_in_aws_shape():
    from fraglens.net.replay import Chaos
    from fraglens.net.serve import start_server

    capture = str(SAMPLES / "bedrock_converse_parallel.eventstream")
    with start_server([capture], chaos=Chaos(http_error=429)) as server:
        r = httpx.post(server.url + "/model/m%3A0/converse-stream", json={}, timeout=PATIENCE)
    assert r.status_code == 429
    assert r.json() == {"message": "fraglens serve: simulated HTTP 429 (Too Many Requests)"}


async def test_send_again_signs_the_request_anew(upstream, aws):
    spec, _ = build_bedrock_spec("bedrock-converse", url=upstream[1], model="parallel",
                                 prompt="hi", signer=SIGNER)
    first = LiveCall(spec, timeout=PATIENCE)
    again = first.again()
    assert (await again.run()).phase is Phase.DONE
    assert again.spec is not spec and again.spec.body == spec.body
    assert upstream[0].seen[-1][3] is None


async def test_a_call_is_signed_when_it_starts_not_when_it_was_built(upstream, aws, monkeypatch):
    # compare builds every model's request first and runs a few at a time: a
    # signature made then would be minutes old (AWS refuses those) when its turn came
    import datetime

    import botocore.auth

    real = botocore.auth.get_current_datetime
    stale = real() - datetime.timedelta(minutes=20)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: stale)
    spec, _ = build_bedrock_spec("bedrock-converse", url=upstream[1], model="parallel",
                                 prompt="hi", signer=SIGNER)
    built = dict((k.lower(), v) for k, v in spec.headers)["x-amz-date"]
    assert built == stale.strftime("%Y%m%dT%H%M%SZ")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", real)
    assert (await LiveCall(spec, timeout=PATIENCE).run()).phase is Phase.DONE
    _, headers, _, verdict = upstream[0].seen[-1]
    assert verdict is None
    sent = datetime.datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    assert abs(sent - real()) < datetime.timedelta(minutes=2)


@pytest.mark.parametrize(("model", "fmt", "said"), [
    ("exception", "bedrock-converse", "modelStreamErrorException: The model stream was"),
    ("throttled-mid-stream", "bedrock-invoke", "throttlingException: Too many requests"),
])
def test_an_exception_streamed_as_a_message_is_an_error(
    upstream, work, aws, capsys, model, fmt, said
):
    record = work / f"{model}.jsonl"
    code, out, err = cli(["live", "--format", fmt, "--url", upstream[1], "--region", REGION,
                          "--model", model, "--request", str(_request(work, fmt)), "--json",
                          "--record", str(record)], capsys)
    assert code == 1
    doc = json.loads(out)
    assert doc["end"] == "error" and said in doc["errors"][0]["message"]
    assert check_json(record, capsys) == doc


def _request(work: Path, fmt: str) -> Path:
    path = work / f"request-{fmt}.json"
    body = (
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
        if fmt == "bedrock-converse"
        else {"anthropic_version": ANTHROPIC_BEDROCK_VERSION, "max_tokens": 64,
              "messages": [{"role": "user", "content": "hi"}]}
    )
    path.write_text(json.dumps(body))
    return path


@pytest.mark.parametrize(("model", "line"), [
    ("throttle", "HTTP 429 Too Many Requests: ThrottlingException: Too many requests, slow down."),
    ("invalid", "HTTP 400 Bad Request: ValidationException: The model id is not valid."),
])
def test_an_http_error_is_one_line_with_what_aws_said(upstream, work, aws, capsys, model, line):
    record = work / f"http-{model}.jsonl"
    code, _, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                        "--region", REGION, "--model", model, "--prompt", "hi", "--headless",
                        "--record", str(record)], capsys)
    assert code == 2
    assert f"fraglens: error: {line}" in err.splitlines()
    assert parse_recording(record.read_bytes()).response["status"] == int(line[5:8])


def test_a_message_that_never_ends_stops_at_the_cap(upstream, work, aws, capsys):
    record = work / "endless.jsonl"
    code, _, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                        "--region", REGION, "--model", "endless", "--prompt", "hi",
                        "--max-line-bytes", "64k", "--headless", "--record", str(record)],
                       capsys)
    assert code == 2
    assert ("fraglens: error: an event-stream message ran past 64 KiB (--max-line-bytes):"
            " the call was ended there") in err
    rec = parse_recording(record.read_bytes())
    # what was read is kept; the read stopped well before the 300 KB sent
    assert 64 * 1024 < len(rec.body) < 300_000


def test_a_wrong_secret_key_is_refused_by_the_signature_check(upstream, work, aws, capsys,
                                                              monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY[::-1])
    code, _, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                        "--region", REGION, "--model", "parallel", "--prompt", "hi",
                        "--headless"], capsys)
    assert code == 2
    assert upstream[0].seen[-1][3] == ("InvalidSignatureException",
                                       "The request signature we calculated does not match.")
    assert ("fraglens: error: HTTP 403 Forbidden: InvalidSignatureException: The request"
            " signature we calculated does not match.") in err.splitlines()
    assert SECRET_KEY[::-1] not in err


def test_a_body_changed_after_signing_is_refused(upstream, aws):
    """The check is real: the same signed request with one byte of its body changed fails."""
    spec, _ = build_bedrock_spec("bedrock-converse", url=upstream[1], model="parallel",
                                 prompt="hi", signer=SIGNER)
    headers = dict(spec.headers)
    good = httpx.post(spec.url, headers=headers, content=spec.content, timeout=PATIENCE)
    bad = httpx.post(spec.url, headers=headers, content=spec.content.replace(b"hi", b"ho"),
                     timeout=PATIENCE)
    assert good.status_code == 200 and bad.status_code == 403
    assert bad.headers["x-amzn-errortype"].startswith("InvalidSignatureException")


@pytest.mark.parametrize("model", ["echo-error", "echo-stream"])
@pytest.mark.parametrize("output", ["--json", "--headless"])
def test_echoed_credentials_reach_no_recording_and_no_output(
    upstream, work, aws, capsys, model, output
):
    record = work / f"{model}{output}.jsonl"
    code, out, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                          "--region", REGION, "--model", model, "--prompt", "hi", output,
                          "--record", str(record)], capsys)
    assert code == (2 if model == "echo-error" else 1)
    signature = upstream[0].seen[-1][1]["authorization"].rpartition("Signature=")[2]
    rec = parse_recording(record.read_bytes())
    # the body as recorded (raw or base64 in the file) decoded, and the file's own bytes
    texts = [rec.body.decode("utf-8", "replace"),
             record.read_bytes().decode("utf-8", "replace"), out, err]
    for value in (SECRET_KEY, SESSION_TOKEN, ACCESS_KEY, signature):
        for text in texts:
            for spelling in spellings(value):
                assert spelling not in text
    assert REDACTED in rec.body.decode("utf-8", "replace")
    if model == "echo-error":
        assert "HTTP 403 Forbidden: AccessDeniedException:" in err


def test_compare_signs_one_request_per_model(upstream, work, aws, capsys):
    before = len(upstream[0].seen)
    code, out, err = cli(["compare", "--format", "bedrock-converse", "--url", upstream[1],
                          "--region", REGION, "--models", "parallel,damaged", "--prompt", "hi",
                          "--json", "--record-dir", str(work / "compare")], capsys)
    seen = upstream[0].seen[before:]
    assert sorted(target for target, *_ in seen) == [
        "/model/damaged/converse-stream", "/model/parallel/converse-stream"
    ]
    assert all(verdict is None for *_, verdict in seen)
    rows = {row["model"]: row for row in json.loads(out)["backends"]}
    assert rows["parallel"]["worst"] == "ok" and len(rows["parallel"]["calls"]) == 2
    recorded = sorted(p.name for p in (work / "compare").iterdir())
    assert recorded == ["damaged.jsonl", "parallel.jsonl"]
    assert code == 1  # the damaged stream is a problem compare reports


# -- credentials -----------------------------------------------------------------------------


def test_a_profile_from_the_shared_files_signs_and_gives_the_region(upstream, work, aws, capsys,
                                                                    monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    credentials, config = work / "credentials", work / "config"
    credentials.write_text(f"[fraglens-test]\naws_access_key_id = {ACCESS_KEY}\n"
                           f"aws_secret_access_key = {SECRET_KEY}\n"
                           f"aws_session_token = {SESSION_TOKEN}\n")
    config.write_text(f"[profile fraglens-test]\nregion = {REGION}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    code, out, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                          "--profile", "fraglens-test", "--model", "parallel", "--prompt", "hi",
                          "--json"], capsys)
    assert code == 0, err
    assert upstream[0].seen[-1][3] is None
    assert len(json.loads(out)["calls"]) == 2


@pytest.mark.parametrize(("change", "said"), [
    ("none", "fraglens: error: no AWS credentials found: set AWS_ACCESS_KEY_ID"),
    ("profile", "fraglens: error: AWS credentials: The config profile (nobody) could not be found"),
    ("region", "fraglens: error: no AWS region: pass --region"),
    ("bad-region", "fraglens: error: not an AWS region: 'evil.example.com/x'"),
])
def test_missing_credentials_are_one_line(upstream, aws, capsys, monkeypatch, change, said):
    argv = ["live", "--format", "bedrock-converse", "--model", "m", "--prompt", "hi"]
    if change == "none":
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            monkeypatch.delenv(name)
        argv += ["--region", REGION]
    elif change == "profile":
        argv += ["--profile", "nobody", "--region", REGION]
    elif change == "bad-region":
        argv += ["--region", "evil.example.com/x"]
    code, _, err = cli([*argv, "--headless"], capsys)
    assert code == 2
    assert err.strip().startswith(said) and len(err.strip().splitlines()) == 1


def test_aws_options_without_a_bedrock_format_are_a_usage_error(capsys):
    code, _, err = cli(["live", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--prompt",
                        "hi", "--region", REGION, "--headless"], capsys)
    assert code == 2
    assert err.strip() == (
        "fraglens: error: --region and --profile are for the Bedrock formats (--format bedrock-…)"
    )


def test_a_bedrock_api_key_is_sent_instead_of_a_signature_without_botocore(
    upstream, work, aws, capsys, monkeypatch
):
    """AWS_BEARER_TOKEN_BEDROCK, as botocore prefers it for Bedrock: no signing, so no
    botocore needed; the key is a secret like any other, echoed back or not."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", API_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    for name in [m for m in sys.modules if m == "botocore" or m.startswith("botocore.")]:
        monkeypatch.setitem(sys.modules, name, None)
    record = work / "api-key.jsonl"
    code, out, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                          "--model", "parallel", "--prompt", "hi", "--json",
                          "--record", str(record)], capsys)
    assert code == 0, err
    assert upstream[0].seen[-1][1]["authorization"] == f"Bearer {API_KEY}"
    assert "x-amz-date" not in upstream[0].seen[-1][1]
    assert len(json.loads(out)["calls"]) == 2
    echoed = work / "api-key-echo.jsonl"
    code, out, err = cli(["live", "--format", "bedrock-converse", "--url", upstream[1],
                          "--model", "echo-error", "--prompt", "hi", "--headless",
                          "--record", str(echoed)], capsys)
    assert code == 2 and "AccessDeniedException" in err
    for path in (record, echoed):
        data = path.read_bytes()
        for text in (data, parse_recording(data).body, err.encode()):
            for spelling in spellings(API_KEY):
                assert spelling.encode() not in text
    assert f"{REDACTED}" in parse_recording(echoed.read_bytes()).body.decode()


def test_without_botocore_the_call_says_how_to_install_it(aws, capsys, monkeypatch):
    for name in [m for m in sys.modules if m == "botocore" or m.startswith("botocore.")]:
        monkeypatch.setitem(sys.modules, name, None)  # import botocore... raises ImportError
    code, _, err = cli(["live", "--format", "bedrock-invoke", "--region", REGION, "--model",
                        CLAUDE, "--prompt", "hi", "--headless"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "fraglens: error: Bedrock calls are signed with botocore, which is not installed:"
        " pip install 'fraglens[bedrock]'"
    ]


# -- last: nothing anywhere ------------------------------------------------------------------


def test_no_credential_is_in_any_file_these_tests_wrote_or_any_output(upstream, work):
    signatures = [h["authorization"].rpartition("Signature=")[2] for _, h, _, _ in upstream[0].seen
                  if "authorization" in h]
    assert len(signatures) >= 5 and len(CAPTURED) >= 10  # the tests above ran
    values = [SESSION_TOKEN, ACCESS_KEY, API_KEY, *signatures]
    files = [p for p in work.rglob("*.jsonl")]
    assert len(files) >= 5
    for path in files:
        data = path.read_bytes()
        texts = [data, parse_recording(data).body]
        for value in [*values, SECRET_KEY]:
            for spelling in spellings(value):
                assert all(spelling.encode() not in text for text in texts), path
    for text in CAPTURED:
        for value in values + [SECRET_KEY]:
            for spelling in spellings(value):
                assert spelling not in text
