"""A key the server streams back in pieces, or encoded, reaches no file and no output.

A loopback upstream echoes the caller's key in a tool call's arguments and in
the assistant's text, each cut across two SSE events (so no single read holds
it and only the joined text does), and once more in base64, hex and
percent-encoding. ``live --json``, ``compare --json`` and ``proxy --json``
(a real process with its forwarding child) run against it with recordings;
``check``, ``export`` and ``history build`` then read those recordings, and
``import-har`` a HAR holding the same answer. Every file is written under one
directory and every output is kept: the last test greps them all for the key
in every spelling.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from fraglens.cli import main
from fraglens.framing.recording import to_json_lines
from fraglens.net.serve import ServerHandle, bind

from .conftest import PATIENCE, ROOT
from .test_net_hardening import proxy_cli

# the tests share a folder and the last reads what the others wrote: one worker runs them in order
pytestmark = pytest.mark.xdist_group("key-leaks")

KEY = "sk-split-KEY-4f2a9b7c1e8d6053"
#: what the tests captured (stdout, stderr), for the last test's grep
CAPTURED: list[str] = []


def _json_escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


#: the key as a reader of each kind of text would find it
SPELLINGS = {
    "raw": KEY,
    "JSON-escaped": _json_escaped(KEY),
    "percent-encoded": quote(KEY, safe="").replace("-", "%2D"),
    "base64": base64.b64encode(KEY.encode()).decode().rstrip("="),
    "base64 of user:key": base64.b64encode(f"u:{KEY}".encode()).decode().rstrip("="),
    "hex": KEY.encode().hex(),
    "HEX": KEY.encode().hex().upper(),
}


def leaks(text: str) -> list[str]:
    """The spellings of the key ``text`` holds."""
    return [name for name, spelled in SPELLINGS.items() if spelled in text]


def _chunk(delta: dict, finish: str | None = None) -> bytes:
    doc = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def split_key_stream(key: str) -> bytes:
    """An answer that holds ``key`` in two pieces twice (text, arguments), then encoded."""
    call = {"index": 0, "id": "call_1", "type": "function"}
    return (
        _chunk({"role": "assistant", "content": f"your key is {key[:9]}"})
        + _chunk({"content": f"{key[9:]}; b64 {base64.b64encode(key.encode()).decode()}"})
        + _chunk({"content": f", hex {key.encode().hex()}, url {quote(key, safe='')}"})
        + _chunk({"tool_calls": [{**call, "function": {"name": "save",
                                                        "arguments": '{"note": "' + key[:12]}}]})
        + _chunk({"tool_calls": [{"index": 0, "function": {"arguments": key[12:] + '"}'}}]})
        + _chunk({}, finish="tool_calls")
        + b"data: [DONE]\n\n"
    )  # fmt: skip


class EchoUpstream:
    """Answers every request with :func:`split_key_stream` of the key it carried."""

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        key = headers.get("authorization", "").removeprefix("Bearer ")
        body = split_key_stream(key)
        start = [(b"content-type", b"text/event-stream"), (b"x-echo", key.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": start})
        for line in body.split(b"\n\n")[:-1]:  # one write per event
            await send({"type": "http.response.body", "body": line + b"\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Where every test here writes."""
    return tmp_path_factory.mktemp("key-leaks")


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with ServerHandle(EchoUpstream(), bind("127.0.0.1", 0)).start() as server:
        yield server.url


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    CAPTURED.extend([out.out, out.err])
    assert "Traceback" not in out.err
    return code, out.out, out.err


def scrubbed_answer(doc: dict, more: str = "") -> None:
    """The report of the answer, with the joined key scrubbed where it was whole;
    ``more``: what the text goes on with."""
    assert doc["text"]["0"].startswith("your key is [redacted]; b64 [redacted]"), doc["text"]
    assert doc["text"]["0"].endswith(", hex [redacted], url [redacted]" + more)
    (call,) = doc["calls"]
    assert call["arguments"] == {"note": "[redacted]"}
    assert call["arguments_raw"] == '{"note": "[redacted]"}'


def reads_of(recording: Path) -> str:
    """The recording's text, and proof that it keeps the key's pieces (each in its
    own read, as the server sent them), which is why the reports must scrub."""
    # version 3 keeps the reads as they came, not as JSON text: read as bytes
    text = recording.read_bytes().decode("utf-8", "replace")
    assert KEY[:12] in text and KEY[12:] in text
    assert '"secrets":{"salt":' in text.split("\n")[0]  # the fingerprints, in the header
    return text


def reread(recording: Path, capsys, more: str = "") -> None:
    """check (JSON and text), export and history build of a recording: all scrubbed."""
    code, out, _ = run(["check", "--json", str(recording)], capsys)
    assert code == 0
    scrubbed_answer(json.loads(out), more)
    code, out, _ = run(["check", str(recording)], capsys)
    assert "[redacted]" in out
    exported = recording.with_suffix(".sse")
    assert run(["export", str(recording), "-o", str(exported)], capsys)[0] == 0
    assert KEY[:12].encode() in exported.read_bytes()  # a piece, as the server sent it
    code, out, _ = run(["history", "build", str(recording)], capsys)
    assert code == 0 and '"arguments": "{\\"note\\":\\"[redacted]\\"}"' in out


def test_live_json_scrubs_a_key_joined_from_two_events(upstream, work, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    record = work / "live.jsonl"
    argv = ["live", "--url", upstream + "/v1", "--model", "m", "--prompt", "hi", "--json",
            "--record", str(record)]  # fmt: skip
    code, out, _ = run(argv, capsys)
    assert code == 0
    scrubbed_answer(json.loads(out))
    assert leaks(reads_of(record)) == []
    reread(record, capsys)


def test_compare_json_scrubs_a_key_joined_from_two_events(upstream, work, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = work / "compare"
    argv = ["compare", "--url", upstream + "/v1", "--models", "a,b", "--prompt", "hi",
            "--json", "--record-dir", str(folder)]  # fmt: skip
    code, out, _ = run(argv, capsys)
    doc = json.loads(out)
    assert len(doc["backends"]) == 2
    for row in doc["backends"]:
        assert row["calls"][0]["arguments"] == {"note": "[redacted]"}, row
    for recording in sorted(folder.iterdir()):
        reads_of(recording)
        reread(recording, capsys)


def test_proxy_json_scrubs_a_key_joined_from_two_events(upstream, work, capsys):
    folder = work / "proxy"
    with proxy_cli(upstream + "/v1", folder) as proxy:
        with httpx.Client(base_url=proxy.url, timeout=PATIENCE) as client:
            answer = client.post(
                "/v1/chat/completions",
                json={"model": "m", "stream": True},
                headers={"authorization": f"Bearer {KEY}"},
            )
            assert KEY[:12].encode() in answer.content  # the client gets every byte
        (flow,) = proxy.flows(1)
    CAPTURED.extend(proxy.out + proxy.err)
    scrubbed_answer(flow["check"])
    (recording,) = sorted(folder.iterdir())
    reads_of(recording)
    reread(recording, capsys)


def _har(key: str) -> dict:
    """One entry: the split-key answer, the key echoed in a response header, a
    custom request header, the request body, and (raw, JSON-escaped,
    percent-encoded) in a text event of the body."""
    echoed = _chunk({"content": f" {key} {{{{E}}}} {quote(key, safe='')}"}).replace(
        b"{{E}}", _json_escaped(key).encode()
    )
    body = split_key_stream(key).replace(b"data: [DONE]", echoed + b"data: [DONE]")
    return {"log": {"entries": [{
        "startedDateTime": "2026-01-02T03:04:05.000Z",
        "request": {
            "method": "POST",
            "url": "https://api.example.com/v1/chat/completions",
            "headers": [{"name": "Authorization", "value": f"Bearer {key}"},
                        {"name": "X-Debug-Echo", "value": key}],
            "postData": {"mimeType": "application/json",
                         "text": json.dumps({"model": "m", "messages": [], "note": key})},
        },
        "response": {
            "status": 200,
            "headers": [{"name": "content-type", "value": "text/event-stream"},
                        {"name": "x-request-note", "value": f"key={key}"}],
            "content": {"mimeType": "text/event-stream", "text": body.decode()},
        },
        "timings": {"wait": 100, "receive": 50},
    }]}}  # fmt: skip


def test_import_har_scrubs_the_key_by_value_everywhere(work, capsys):
    har = work / "session.har"
    har.write_text(json.dumps(_har(KEY)))
    record = work / "from-har.jsonl"
    code, _, _ = run(["import-har", str(har), "-o", str(record)], capsys)
    assert code == 0
    text = reads_of(record)
    assert leaks(text) == []
    lines = to_json_lines(record.read_bytes()).splitlines()
    head = json.loads(lines[0])
    assert head["request"]["headers"]["X-Debug-Echo"] == "[redacted]"  # by value, not name
    assert head["request"]["body"]["note"] == "[redacted]"
    response = json.loads(lines[1])["response"]
    assert response["headers"]["x-request-note"] == "key=[redacted]"
    reread(record, capsys, more=" [redacted] [redacted] [redacted]")
    # the HAR itself, read directly: its own credentials scrub the report
    code, out, _ = run(["check", "--json", str(har)], capsys)
    scrubbed_answer(json.loads(out), more=" [redacted] [redacted] [redacted]")
    for argv in (["export", str(har)], ["import-har", "--list", str(har)]):
        assert run(argv, capsys)[0] == 0


def test_a_recording_without_fingerprints_is_read_as_before(work, capsys, monkeypatch):
    """Fingerprints are optional: an older recording's report is what it was."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    lines = (work / "live.jsonl").read_text().split("\n")
    head = json.loads(lines[0])
    del head["secrets"]
    older = work / "older.txt"  # not .jsonl: the last test's grep must not find it
    older.write_text("\n".join([json.dumps(head), *lines[1:]]))
    main(["check", "--json", str(older)])
    assert json.loads(capsys.readouterr().out)["calls"][0]["arguments"] == {"note": KEY}
    older.unlink()


def test_the_key_is_in_no_file_these_tests_wrote_and_no_output_they_captured(work):
    files = [p for p in work.rglob("*") if p.is_file() and p.suffix != ".har"]
    assert len(files) >= 10 and len(CAPTURED) >= 20  # the tests above ran and wrote
    for path in files:
        assert leaks(path.read_text(errors="replace")) == [], path
    for text in CAPTURED:
        assert leaks(text) == [], text[:300]


def test_the_proxy_prints_no_credential_of_its_upstream_at_start_up(upstream, work):
    """``--upstream http://user:PW@host/v1?key=K``: neither PW nor K on stderr, nor on
    the forwarding child's command line."""
    url = upstream.replace("http://", f"http://user:{KEY}@") + f"/v1?key={KEY}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fraglens", "proxy", "--upstream", url, "--port", "0",
         "--headless"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        said = proc.stderr.readline() + proc.stderr.readline()
        assert "point your client's base URL at" in said
        children = subprocess.run(
            ["ps", "-o", "args=", "--ppid", str(proc.pid)], capture_output=True, text=True
        ).stdout
        assert "fraglens.net.proxy.child" in children
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=PATIENCE)
    assert "key=[redacted]" in said and "%5Bredacted%5D@127.0.0.1" in said
    for text in (said, children, out, err):
        assert leaks(text) == [], text
