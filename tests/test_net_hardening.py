"""live and proxy against servers and clients that misbehave on purpose (issue 12).

A hostile upstream on loopback echoes the caller's credentials back (in an
error body, JSON-escaped, percent-encoded, in a response header, cut across
two writes), sends an SSE line that never ends, or a gzip bomb; a raw socket
sends the proxy requests no client should. ``live`` runs in process through
its command line; the proxy runs as ``fraglens proxy --json --record-dir``, a
real process with its forwarding child. Every file these tests write is under
one directory, and every output they capture is kept: the last test greps
them all for the key. The caps are set low (kilobytes) so that the payloads
stay small; nothing here measures time.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from fraglens.cli import main
from fraglens.framing.recording import parse_recording
from fraglens.net.proxy.child import PipeSink
from fraglens.net.proxy.flows import FlowStore
from fraglens.net.proxy.record import LiveRecording
from fraglens.net.serve import ServerHandle, bind

from .conftest import PATIENCE, ROOT

# the last test reads what the others wrote: one worker runs them all, in order
pytestmark = pytest.mark.xdist_group("test_net_hardening")

KEY = "sk-hardening-KEY-5e1f0a9c7d3b"
#: what the tests captured (stdout, stderr, logs), for the last test's grep
CAPTURED: list[str] = []

CHUNK = {
    "id": "c1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
}


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _data(delta: dict) -> bytes:
    doc = {**CHUNK, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def _key_of(scope) -> str:
    """The credential the request carried, wherever it was."""
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:]
    if auth.lower().startswith("basic "):
        import base64

        return base64.b64decode(auth[6:]).decode().partition(":")[2]
    if "x-api-key" in headers:
        return headers["x-api-key"]
    for param in scope.get("query_string", b"").decode().split("&"):
        name, _, value = param.partition("=")
        if name == "key":
            return value
    return ""


class HostileUpstream:
    """What it does is said by the request's path: /echo-error, /echo-stream,
    /endless-line, /gzip-bomb; anything else is answered 200 and remembered."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        path = scope["path"]
        self.paths.append(scope.get("raw_path", path.encode()).decode("latin-1"))
        key = _key_of(scope)
        if "/echo-stream" in path:
            await self._echo_stream(send, key)
        elif "/endless-line" in path:
            await self._endless(send)
        elif "/gzip-bomb" in path:
            await self._bomb(send)
        elif "/echo-error" in path or path.endswith("/chat/completions"):
            await self._echo_error(send, key)
        else:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

    async def _echo_error(self, send, key: str) -> None:
        # as OpenAI does for a wrong key, plus the escaped and encoded spellings
        text = (
            f'{{"error": {{"message": "Incorrect API key provided: {key}. '
            f'Escaped: {_escaped(key)}. Encoded: {quote(key, safe="")}."}}}}'
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"x-echo", key.encode())]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        cut = text.index(key.encode()) + len(key) // 2  # the key cut across two writes
        await send({"type": "http.response.body", "body": text[:cut], "more_body": True})
        await send({"type": "http.response.body", "body": text[cut:]})

    async def _echo_stream(self, send, key: str) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"x-echo", key.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        # a real JSON escape of every character (one backslash on the wire), which a
        # JSON reader decodes back into the key
        escaped = _data({"content": " and escaped @"}).replace(b"@", _escaped(key).encode())
        body = (
            _data({"role": "assistant", "content": f"your key is {key}"})
            + escaped
            + b"data: [DONE]\n\n"
        )
        cut = body.index(key.encode()) + 5
        await send({"type": "http.response.body", "body": body[:cut], "more_body": True})
        await send({"type": "http.response.body", "body": body[cut:]})

    async def _endless(self, send) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send(
            {"type": "http.response.body", "body": _data({"content": "hi"}), "more_body": True}
        )
        await send({"type": "http.response.body", "body": b"data: ", "more_body": True})
        # bounded: 4 MiB of one line, far past the tests' caps (a real one never ends)
        for _ in range(64):
            await send({"type": "http.response.body", "body": b"x" * 65536, "more_body": True})
        await send({"type": "http.response.body", "body": b"\n\n"})

    async def _bomb(self, send) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"content-encoding", b"gzip")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": BOMB})


#: ~30 KB that inflates to 10 MB: short SSE events, so that only the decoded cap applies
BOMB = gzip.compress((b"data: " + b"A" * 994 + b"\n\n") * 10_000)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Where every test here writes."""
    return tmp_path_factory.mktemp("hardening")


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[HostileUpstream, str]]:
    app = HostileUpstream()
    with ServerHandle(app, bind("127.0.0.1", 0)).start() as server:
        yield app, server.url


def _live(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(["live", "--model", "m", "--prompt", "hi", *argv])
    out = capsys.readouterr()
    CAPTURED.extend([out.out, out.err])
    assert "Traceback" not in out.err
    return code, out.out, out.err


def _no_key(*texts: str) -> None:
    for text in texts:
        assert KEY not in text
        assert KEY[8:] not in text  # nor a part of it
        assert _escaped(KEY)[:60] not in text


# -- live ----------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["--headless", "--json"])
def test_live_an_echoed_key_reaches_no_recording_and_no_output(
    upstream, work, capsys, monkeypatch, output
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    record = work / f"live-echo{output}.fraglens"
    code, out, err = _live(["--url", upstream[1] + "/v1", output, "--record", str(record)], capsys)
    assert code == 2
    assert "HTTP 401 Unauthorized: Incorrect API key provided: [redacted]" in err
    text = record.read_text()
    assert '"x-echo":"[redacted]"' in text  # the header kept, its value scrubbed
    _no_key(text, out, err)


def test_live_a_key_given_with_h_and_no_env_var_is_scrubbed(upstream, work, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record = work / "live-h.fraglens"
    url = upstream[1] + "/v1/echo-stream/chat/completions"
    code, out, err = _live(
        ["--url", url, "-H", f"Authorization: Bearer {KEY}", "--json", "--record", str(record)],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["text"] == {"0": "your key is [redacted] and escaped [redacted]"}
    _no_key(record.read_text(), out, err)


def test_live_a_url_password_is_a_credential_not_a_traceback(upstream, work, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record = work / "live-userinfo.fraglens"
    url = upstream[1].replace("http://", f"http://user:{KEY}@") + "/v1"
    code, out, err = _live(["--url", url, "--headless", "--record", str(record)], capsys)
    # the upstream got it (as Basic auth) and echoed it: a 401, said in one line
    assert code == 2
    assert "Incorrect API key provided: [redacted]" in err
    rec = parse_recording(record.read_bytes())
    assert rec.request["url"].startswith("http://%5Bredacted%5D@127.0.0.1:")
    _no_key(record.read_text(), out, err)


def test_live_a_credential_too_short_to_scrub_is_reported_not_ignored(
    upstream, work, capsys, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record = work / "live-short.fraglens"
    url = upstream[1] + "/v1"
    code, out, err = _live(
        ["--url", url, "-H", "x-api-key: short", "--headless", "--record", str(record)], capsys
    )
    assert (
        "the x-api-key header carried a value too short to scrub safely: it is redacted"
        " where its name is known, not where the server echoes it" in err
    )
    assert "short" not in record.read_text().split("\n")[0]  # redacted by name in the request


def test_live_an_endless_sse_line_ends_the_call_at_the_cap(upstream, work, capsys):
    record = work / "live-endless.fraglens"
    url = upstream[1] + "/v1/endless-line/chat/completions"
    code, out, err = _live(
        ["--url", url, "--headless", "--record", str(record), "--max-line-bytes", "64k"], capsys
    )
    assert code == 2
    assert "an SSE line ran past 64 KiB (--max-line-bytes)" in err
    rec = parse_recording(record.read_bytes())
    # what was read is kept, as it came: up to the cap and the read that crossed it
    assert 64 * 1024 < len(rec.body) < 64 * 1024 + 2 * 65536 + 1000
    assert rec.end["end"] == "error" and "--max-line-bytes" in rec.end["error"]


def test_live_a_gzip_bomb_is_inflated_up_to_the_cap_only(upstream, work, capsys):
    record = work / "live-bomb.fraglens"
    url = upstream[1] + "/v1/gzip-bomb/chat/completions"
    code, out, err = _live(
        ["--url", url, "--json", "--record", str(record), "--max-decoded-bytes", "256k"], capsys
    )
    assert code == 2
    assert "the body ran past 256 KiB decoded (--max-decoded-bytes)" in err
    assert len(parse_recording(record.read_bytes()).body) <= 256 * 1024


# -- the proxy, as the command runs it ---------------------------------------------------------


class ProxyProcess:
    """``fraglens proxy --json`` in a process of its own; its output kept line by line."""

    def __init__(self, upstream: str, record_dir: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fraglens", "proxy", "--upstream", upstream, "--port", "0",
             "--json", "--record-dir", str(record_dir), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")),
        )  # fmt: skip
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        line = self.wait_for(lambda: next((e for e in self.err if " -> " in e), None))
        self.url = line.split()[2]

    @staticmethod
    def _pump(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line.decode("utf-8", "replace"))

    def wait_for(self, found):
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            value = found()
            if value:
                return value
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"not seen; stderr: {''.join(self.err)}")

    def flows(self, n: int) -> list[dict]:
        """The first ``n`` flows printed (each once it ended)."""
        self.wait_for(lambda: len(self.out) >= n)
        return [json.loads(line) for line in self.out[:n]]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(PATIENCE)
        for thread in self._threads:
            thread.join(PATIENCE)
        CAPTURED.extend(self.out + self.err)


@contextmanager
def proxy_cli(upstream: str, record_dir: Path, *extra: str) -> Iterator[ProxyProcess]:
    proxy = ProxyProcess(upstream, record_dir, *extra)
    try:
        yield proxy
    finally:
        proxy.stop()
    assert proxy.proc.returncode == 0, "".join(proxy.err)


def test_proxy_echoes_of_the_key_reach_no_recording_and_no_output(upstream, work):
    record_dir = work / "proxy-echo"
    with proxy_cli(upstream[1] + "/v1", record_dir) as proxy:
        with httpx.Client(base_url=proxy.url, timeout=PATIENCE) as client:
            error = client.post(
                "/v1/chat/completions",
                json={"model": "m", "stream": True},
                headers={"authorization": f"Bearer {KEY}"},
            )
            # the client gets what the upstream sent, its own key included
            assert error.status_code == 401 and KEY in error.text
            assert error.headers["x-echo"] == KEY
            streamed = client.post(
                "/v1/echo-stream/chat/completions",
                json={"model": "m", "stream": True},
                headers={"x-api-key": KEY, "cookie": f"session={KEY}"},
            )
            assert KEY.encode() in streamed.content
            # Gemini's way: the key in the query string
            query = client.post(f"/v1/echo-error?key={KEY}&alt=sse", json={})
            assert query.status_code == 401
        flows = proxy.flows(3)
    assert sorted(f["status"] for f in flows) == [200, 401, 401]
    stream = next(f for f in flows if f["status"] == 200)
    assert stream["check"]["text"] == {"0": "your key is [redacted] and escaped [redacted]"}
    recordings = sorted(record_dir.iterdir())
    assert len(recordings) == 3
    texts = [p.read_text() for p in recordings]
    assert any("key=[redacted]&alt=sse" in t for t in texts)
    _no_key(*texts, *proxy.out, *proxy.err)


def _raw(url: str, request: bytes) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=PATIENCE) as sock:
        sock.sendall(request)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
            if b"\r\n\r\n" in out and b"}}" in out:
                break
    return out


def test_proxy_refuses_malformed_requests_with_400_and_one_log_line(upstream, work):
    app, url = upstream
    with proxy_cli(url + "/v1", work / "proxy-bad") as proxy:
        both = _raw(
            proxy.url,
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n",
        )
        climb = _raw(
            proxy.url, b"GET /v1/../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        encoded = _raw(
            proxy.url,
            b"GET /v1/%2e%2e/%2E%2E/etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        inside = httpx.get(proxy.url + "/v1/models/../models", timeout=PATIENCE)
        proxy.wait_for(lambda: sum("refused" in e for e in proxy.err) >= 3)
    assert both.startswith(b"HTTP/1.1 400 ") and b"Transfer-Encoding" in both
    assert climb.startswith(b"HTTP/1.1 400 ") and b"leaves" in climb or b"climbs" in climb
    assert encoded.startswith(b"HTTP/1.1 400 ")
    # resolved inside the prefix: forwarded, resolved
    assert inside.status_code == 200 and "/v1/models" in app.paths
    assert not any("passwd" in p for p in app.paths)
    refused = [e for e in proxy.err if "refused" in e]
    assert len(refused) == 3  # one line each, no traceback
    assert not any("Traceback" in e for e in proxy.err)


def test_proxy_a_body_over_the_cap_gets_413_declared_or_chunked(upstream, work):
    with proxy_cli(upstream[1] + "/v1", work / "proxy-413", "--max-body-bytes", "64k") as proxy:
        big = b"x" * (65 * 1024)
        declared = httpx.post(proxy.url + "/v1/chat/completions", content=big, timeout=PATIENCE)

        def chunks():
            for i in range(0, len(big), 4096):
                yield big[i : i + 4096]

        chunked = httpx.post(proxy.url + "/v1/chat/completions", content=chunks(), timeout=PATIENCE)
        fits = httpx.post(proxy.url + "/v1/other", content=b"x" * 1024, timeout=PATIENCE)
    assert declared.status_code == chunked.status_code == 413
    assert "over 64 KiB (--max-body-bytes)" in declared.json()["error"]["message"]
    assert fits.status_code == 200
    assert sum("HTTP 413" in e for e in proxy.err) == 2


def test_proxy_a_bomb_and_an_endless_line_reach_the_client_whole_and_the_flow_capped(
    upstream, work
):
    caps = ("--max-decoded-bytes", "256k", "--max-line-bytes", "64k")
    with proxy_cli(upstream[1] + "/v1", work / "proxy-caps", *caps) as proxy:
        with httpx.Client(base_url=proxy.url, timeout=PATIENCE) as client:
            bomb = client.post("/v1/gzip-bomb/chat/completions", json={})
            endless = client.post("/v1/endless-line/chat/completions", json={})
        flows = {f["path"]: f for f in proxy.flows(2)}
    # the client's bytes are the upstream's: the caps are the flows' business
    assert bomb.content == gzip.decompress(BOMB)
    assert len(endless.content) > 4 * 1024 * 1024
    assert any(
        "ran past 256 KiB decoded" in n for n in flows["/v1/gzip-bomb/chat/completions"]["notes"]
    )
    notes = flows["/v1/endless-line/chat/completions"]["notes"]
    assert any("an SSE line ran past 64 KiB" in n for n in notes)
    for path in (work / "proxy-caps").iterdir():
        rec = parse_recording(path.read_bytes())
        assert len(rec.body) <= 256 * 1024 + 65536
        assert rec.end["end"] == "error"


def test_proxy_a_credential_too_short_to_scrub_is_noted_on_its_flow(upstream, work):
    with proxy_cli(upstream[1] + "/v1", work / "proxy-short") as proxy:
        httpx.post(
            proxy.url + "/v1/other", headers={"x-api-key": "tiny"}, content=b"{}", timeout=PATIENCE
        )
        (flow,) = proxy.flows(1)
    assert flow["notes"] == [
        "the x-api-key header carried a value too short to scrub safely: redacted by name only"
    ]


def test_two_proxies_sharing_a_record_dir_never_overwrite_each_other(work):
    """Both number their flows from 1 and start them in the same second: the names
    collide, the files do not."""
    directory = work / "shared-records"
    recordings = []
    for proxy in range(2):
        store = FlowStore()
        for _ in range(3):
            flow = store.new_flow(
                method="POST", path="/v1/chat/completions", url="http://u/v1/chat/completions",
                request_headers={}, request_body=f"proxy {proxy}".encode(), format="openai-chat",
                started=1_767_000_000.0,
            )  # fmt: skip
            recordings.append((proxy, LiveRecording(flow, directory)))
    for _, rec in recordings:
        rec.finish()
    assert len({rec.path for _, rec in recordings}) == 6
    assert len(list(directory.iterdir())) == 6
    for proxy, rec in recordings:
        assert parse_recording(rec.path.read_bytes()).request["body"] == f"proxy {proxy}"


def test_a_taken_name_gets_a_number_then_a_random_part_and_keeps_its_suffix(tmp_path, monkeypatch):
    """Every name a proxy gives ends ``.fraglens`` (not JSON Lines: version 3), the
    suffix ``check --jsonl`` picks out of a folder."""
    from fraglens.batch.paths import captures
    from fraglens.net.proxy import record

    flow = FlowStore().new_flow(
        method="POST", path="/v1/chat/completions", url="http://u/v1/chat/completions",
        request_headers={}, request_body=b"{}", format="openai-chat", started=1_767_000_000.0,
    )  # fmt: skip
    made = []
    for attempts in (100, 100, 2):  # the third finds both numbered names taken
        monkeypatch.setattr(record, "_ATTEMPTS", attempts)
        path, fp = record.create_exclusive(tmp_path, flow)
        fp.close()
        made.append(path)
    first, second, third = (p.name for p in made)
    assert first.endswith("-0001-post-v1-chat-completions.fraglens")
    stem = first.removesuffix(".fraglens")
    assert second == f"{stem}-2.fraglens"
    assert re.fullmatch(re.escape(stem) + r"-[0-9a-f]{32}\.fraglens", third)
    assert captures([str(tmp_path)]) == sorted(map(str, made))


async def test_proxy_the_client_is_not_slowed_by_a_flow_it_cannot_decode(upstream, work):
    """Many streams at once through the real command: every one whole (no time measured)."""
    with proxy_cli(upstream[1] + "/v1", work / "proxy-many") as proxy:
        async with httpx.AsyncClient(base_url=proxy.url, timeout=PATIENCE) as client:
            answers = await asyncio.gather(
                *(
                    client.post(
                        "/v1/echo-stream/chat/completions",
                        json={"model": "m"},
                        headers={"authorization": f"Bearer {KEY}"},
                    )
                    for _ in range(20)
                )
            )
        flows = proxy.flows(20)
    assert all(a.status_code == 200 and a.content.endswith(b"data: [DONE]\n\n") for a in answers)
    assert all(f["check"]["text"]["0"].startswith("your key is [redacted]") for f in flows)


def test_a_lagging_flows_process_stops_getting_body_bytes_past_the_backlog_cap():
    """The child's pipe buffer is its memory: past the cap, each exchange still
    streaming says once that the flows fell behind, and sends no more body."""
    lines: list[bytes] = []
    backlog = [0]
    sink = PipeSink(lines.append, lambda: backlog[0], max_backlog=1000)
    sink.body(1, b"data: a\n\n", 9, 0.1)
    backlog[0] = 5000  # the parent stopped reading
    sink.body(1, b"data: b\n\n", 9, 0.2)
    sink.body(1, b"data: c\n\n", 9, 0.3)
    sink.ended(1, "eof", None, 0.4)
    facts = [json.loads(line) for line in lines]
    assert [next(k for k in ("b64", "stopped", "end") if k in f) for f in facts] == [
        "b64",
        "stopped",
        "end",
    ]
    assert facts[1]["stopped"] == (
        "the flows fell 1000 bytes behind the forwarding: not decoded further"
    )


# -- last: nothing anywhere ------------------------------------------------------------------


def test_the_key_is_in_no_file_these_tests_wrote_and_no_output_they_captured(work):
    files = [p for p in work.rglob("*") if p.is_file()]
    assert len(files) >= 10 and len(CAPTURED) >= 10  # the tests above ran and wrote
    spellings = [KEY, _escaped(KEY), quote(KEY, safe=""), KEY[8:]]
    for path in files:
        data = path.read_bytes()
        for spelling in spellings:
            assert spelling.encode() not in data, path
    for text in CAPTURED:
        for spelling in spellings:
            assert spelling not in text
