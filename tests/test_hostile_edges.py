"""Users' own files and typed arguments that used to end in a traceback.

Each case is one line of reason and exit 2 (or an ordinary reading) now: a
recording whose times no float holds, a HAR whose URL holds a lone surrogate,
and ``live`` given a URL, a port, a header or a key that HTTP cannot carry. A
key is never quoted in the reason. The recording is served by a real
``fraglens serve`` on a free loopback port, and opened in the app.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fraglens.app import clipboard
from fraglens.app.app import FraglensApp
from fraglens.cli import main
from fraglens.framing.recording import RecordingWriter, parse_recording
from fraglens.net.serve import ServerHandle, bind
from fraglens.reading.progressive import Loading
from fraglens.redact import Secrets

from .conftest import PATIENCE, ROOT
from .test_key_leaks import split_key_stream

HUGE = int("9" * 400)
DELTA = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]}


def _recording_with_times(t: str) -> bytes:
    """A recording whose every ``t`` is the JSON number ``t`` (written by hand:
    no writer makes one)."""
    head = {
        "fraglens": "recording",
        "version": 1,
        "request": {"method": "POST", "url": "http://h/v1/chat/completions", "body": {}},
    }
    event = json.dumps("data: " + json.dumps(DELTA) + "\n\ndata: [DONE]\n\n")
    lines = [
        json.dumps(head),
        f'{{"response":{{"status":200,"headers":{{}}}},"t":{t}}}',
        f'{{"t":{t},"b":{event}}}',
        f'{{"end":"eof","t":{t}}}',
    ]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(params=[str(HUGE), "1e999", "-1e999"], ids=["400-digits", "inf", "-inf"])
def unclocked(request, tmp_path) -> Path:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(_recording_with_times(request.param))
    return path


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_a_recording_time_no_float_holds_is_read_as_no_time(unclocked):
    rec = parse_recording(unclocked.read_bytes())
    assert rec.response == {"status": 200, "headers": {}}  # no "t"
    assert [t for t, _ in rec.chunks] == [None]
    assert rec.end == {"end": "eof"}
    assert rec.end_time is None


@pytest.mark.parametrize("command", [["check", "--json"], ["export"], ["history", "build"]])
def test_check_export_and_history_read_a_recording_whose_times_overflow(
    unclocked, capsys, command
):
    code, out, _ = _run([*command, str(unclocked)], capsys)
    assert code == 0
    if command[0] == "check":
        doc = json.loads(out)
        assert doc["text"] == {"0": "hi"} and "timing" not in doc
    elif command[0] == "export":
        assert out.startswith("data: ")
    else:
        assert json.loads(out)[0]["content"] == "hi"


async def test_the_app_opens_a_recording_whose_times_overflow(unclocked):
    app = FraglensApp(loading=Loading(unclocked.read_bytes(), "rec"), source=str(unclocked))
    async with app.run_test(size=(120, 36)) as pilot:
        while app.loading is not None:
            await pilot.pause()
        assert app.stream.reassembler.choices[0].text[0][1] == "hi"


@pytest.fixture
def served(unclocked) -> Iterator[str]:
    """``fraglens serve`` of the recording, as a process of its own: its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fraglens", "serve", str(unclocked), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "listening on" in line:
                yield line.split("base URL ")[1].split(")")[0]
                break
        else:
            raise AssertionError(proc.stderr.read() if proc.stderr else "serve ended")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=PATIENCE)
    assert "Traceback" not in err


def test_serve_replays_a_recording_whose_times_overflow(served):
    body = {"model": "m", "stream": True, "messages": []}
    answer = httpx.post(served + "/chat/completions", json=body, timeout=PATIENCE)
    assert answer.status_code == 200
    assert b'"content": "hi"' in answer.content and answer.content.endswith(b"[DONE]\n\n")


# -- HAR ---------------------------------------------------------------------------------


def _har_with_a_lone_surrogate(path: Path) -> Path:
    body = "data: " + json.dumps(DELTA) + "\n\ndata: [DONE]\n\n"
    har = {"log": {"entries": [{
        "request": {"method": "POST", "url": "http://h/v1/chat/completions?q=\ud800",
                    "headers": [], "postData": {"text": '{"messages": []}'}},
        "response": {"status": 200, "headers": [],
                     "content": {"mimeType": "text/event-stream", "text": body}},
        "timings": {"wait": HUGE, "send": 1e308, "connect": 1e308, "receive": 5},
    }]}}  # fmt: skip
    # json.dumps escapes the surrogate as \ud800, which is how a HAR holds one
    path.write_text(json.dumps(har))
    return path


def test_a_har_whose_url_holds_a_lone_surrogate_imports_lists_and_checks(tmp_path, capsys):
    har = _har_with_a_lone_surrogate(tmp_path / "s.har")
    code, out, _ = _run(["import-har", "--list", str(har)], capsys)
    assert code == 0 and "?q=\\ud800" in out  # shown as its escape
    record = tmp_path / "s.fraglens"
    code, _, err = _run(["import-har", str(har), "-o", str(record)], capsys)
    assert code == 0 and "?q=\\ud800" in err
    rec = parse_recording(record.read_bytes())
    assert rec.request["url"] == "http://h/v1/chat/completions?q=\ud800"  # escaped, kept
    assert [t for t, _ in rec.chunks] == [0.0]  # timings whose sum no float holds: none
    for path in (har, record):
        code, out, _ = _run(["check", "--json", str(path)], capsys)
        assert code == 0 and json.loads(out)["text"] == {"0": "hi"}


def test_a_recording_line_with_a_lone_surrogate_is_written_escaped():
    out = io.BytesIO()
    writer = RecordingWriter(out)
    writer.start({"method": "POST", "url": "http://h/\ud800", "body": {"x": "\udc00"}})
    line = out.getvalue()
    assert b"\\ud800" in line and b"\\udc00" in line
    line.decode("utf-8")  # valid UTF-8 throughout
    assert parse_recording(line).request["body"] == {"x": "\udc00"}


# -- live: what HTTP cannot carry ---------------------------------------------------------

SECRET = "sk-never-shown-0123456789"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    async def app(scope, receive, send):  # answers anything: nothing here should reach it
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})

    with ServerHandle(app, bind("127.0.0.1", 0)).start() as server:
        yield server.url


def _live(argv: list[str], capsys, tmp_path: Path) -> str:
    """``live``'s one line of reason: exit 2, no recording started, no secret shown."""
    record = tmp_path / "rec.fraglens"
    code, out, err = _run(
        ["live", "--model", "m", "--prompt", "hi", "--json", "--record", str(record), *argv],
        capsys,
    )
    assert code == 2
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert SECRET not in err and not record.exists()
    return err


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("Content-Length: 5", "-H Content-Length: fraglens sets it"),
        ("Transfer-Encoding: chunked", "-H Transfer-Encoding: fraglens sets it"),
        (f"X-Note: a\r\nX-Key: {SECRET}", "the X-Note header (-H) holds a line break"),
        (f"X-Note: a\nb {SECRET}", "the X-Note header (-H) holds a line break"),
        (f"X-Key: {SECRET}é", "the X-Key header (-H) holds a character that is not ASCII"),
    ],
)
def test_live_a_header_http_cannot_carry_is_a_usage_error(
    upstream, capsys, tmp_path, monkeypatch, header, said
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    err = _live(["--url", upstream + "/v1", "-H", header], capsys, tmp_path)
    assert said in err


def test_live_a_key_that_is_not_ascii_is_a_usage_error(upstream, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET + "é")
    err = _live(["--url", upstream + "/v1"], capsys, tmp_path)
    assert "$OPENAI_API_KEY holds a character that is not ASCII (at 25)" in err


def test_live_a_websocket_key_a_handshake_cannot_carry_is_a_usage_error(
    capsys, tmp_path, monkeypatch
):
    """The handshake's key is checked as an HTTP request's is: refused before
    any connection (port 1 would refuse one), not sent as Latin-1."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET + "é")
    err = _live(["--url", "ws://127.0.0.1:1/v1"], capsys, tmp_path)
    assert "$OPENAI_API_KEY holds a character that is not ASCII (at 25)" in err


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"http://u:{SECRET}@[127.0.0.1/v1", "not a valid URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999/v1", "not a valid URL (Port out of range 0-65535)"),
        ("http://127.0.0.1:0/v1", "port 0 is no port to connect to"),
    ],
)
def test_live_a_url_that_cannot_be_reached_as_written_is_a_usage_error(
    capsys, tmp_path, monkeypatch, url, said
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    err = _live(["--url", url], capsys, tmp_path)
    assert said in err


async def test_the_app_copies_arguments_with_a_key_joined_from_pieces_scrubbed(monkeypatch):
    """The arguments ``c`` copies come from the joined text: the recording's
    fingerprints scrub a key streamed in two pieces out of them."""
    monkeypatch.setattr(clipboard, "system_copy", lambda text: "not in tests")
    out = io.BytesIO()
    writer = RecordingWriter(out)
    prints = Secrets([("the test", SECRET)]).fingerprints()
    writer.start({"method": "POST", "url": "http://h/v1/chat/completions"}, secrets=prints)
    writer.chunk(0.1, split_key_stream(SECRET))
    app = FraglensApp(loading=Loading(out.getvalue(), "rec"), source="rec")
    async with app.run_test(size=(120, 36)) as pilot:
        while app.loading is not None:
            await pilot.pause()
        await pilot.press("end", "c")
        assert json.loads(app.clipboard) == {"note": "[redacted]"}


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"http://u:{SECRET}@[127.0.0.1/v1", "the upstream is not a valid URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999/v1", "the upstream is not a valid URL (Port out of range"),
        ("http://127.0.0.1:0/v1", "the upstream's port 0 is no port to connect to"),
    ],
)
def test_proxy_an_upstream_no_request_could_reach_is_a_usage_error(capsys, url, said):
    code, out, err = _run(["proxy", "--upstream", url, "--port", "0", "--headless"], capsys)
    assert code == 2 and said in err and SECRET not in err
    assert len(err.strip().splitlines()) == 1
