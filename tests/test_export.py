"""fraglens export --sse and fraglens import-har: captures in and out of recordings."""

from __future__ import annotations

import base64
import json

from fraglens.cli import main
from fraglens.framing.recording import parse_recording
from fraglens.net.live import LiveCall
from fraglens.net.request import build_spec
from fraglens.net.serve import start_server

from .test_live_streams import FAKE_KEY, OPENAI_SSE, calls_of, write


def _har(tmp_path, key_in_url: bool = False) -> str:
    url = "https://api.example.com/v1/chat/completions" + (f"?key={FAKE_KEY}" if key_in_url else "")
    entries = [
        {
            "startedDateTime": "2026-01-02T03:04:05.000Z",
            "request": {"method": "GET", "url": "https://app.example.com/", "headers": []},
            "response": {
                "status": 200,
                "headers": [],
                "content": {"mimeType": "text/html", "text": "<html></html>"},
            },
            "timings": {"wait": 5, "receive": 1},
        },
        {
            "startedDateTime": "2026-01-02T03:04:06.000Z",
            "request": {
                "method": "POST",
                "url": url,
                "headers": [{"name": "Authorization", "value": f"Bearer {FAKE_KEY}"}],
                "postData": {
                    "mimeType": "application/json",
                    "text": json.dumps({"model": "m", "stream": True}),
                },
            },
            "response": {
                "status": 200,
                "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                "content": {
                    "mimeType": "text/event-stream",
                    "encoding": "base64",
                    "text": base64.b64encode(OPENAI_SSE).decode(),
                },
            },
            "timings": {"dns": 1, "connect": 20, "send": 1, "wait": 300, "receive": 900},
        },
    ]
    return write(tmp_path, "capture.har", json.dumps({"log": {"entries": entries}}).encode())


async def test_export_sse_writes_back_exactly_the_bytes_that_came(tmp_path):
    record = tmp_path / "live.fraglens"
    with start_server([write(tmp_path, "chat.sse", OPENAI_SSE)]) as server:
        spec, _ = build_spec(server.url, model="m", prompt="p", environ={})
        await LiveCall(spec, record=record).run()
    out = tmp_path / "out.sse"
    assert main(["export", str(record), "--sse", "-o", str(out)]) == 0
    assert out.read_bytes() == OPENAI_SSE


def test_export_to_stdout_and_from_a_plain_capture(tmp_path, capsysbinary):
    assert main(["export", write(tmp_path, "chat.sse", OPENAI_SSE)]) == 0
    assert capsysbinary.readouterr().out == OPENAI_SSE


def test_export_of_a_json_body_says_it_is_not_sse(tmp_path, capsys):
    body = json.dumps({"error": {"message": "nope"}})
    assert main(["export", write(tmp_path, "e.json", body.encode()), "--sse"]) == 0
    captured = capsys.readouterr()
    assert captured.out == body and "not SSE" in captured.err


def test_export_of_nothing_readable_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["export", str(tmp_path / "missing.fraglens")]) == 2
    assert main(["export", write(tmp_path, "x.txt", b"plain words")]) == 2
    err = capsys.readouterr().err
    assert err.count("fraglens: error:") == 2 and "Traceback" not in err


def test_import_har_lists_the_entries_and_marks_the_stream(tmp_path, capsys):
    assert main(["import-har", _har(tmp_path, key_in_url=True), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(" ") and lines[1].startswith("*")
    assert "text/event-stream" in lines[1] and FAKE_KEY not in lines[1]


def test_import_har_turns_the_stream_into_a_recording_with_secrets_redacted(tmp_path, capsys):
    out = tmp_path / "from-har.fraglens"
    assert main(["import-har", _har(tmp_path, key_in_url=True), "-o", str(out)]) == 0
    assert "entry 1" in capsys.readouterr().err
    text = out.read_text()
    assert FAKE_KEY not in text
    rec = parse_recording(out.read_bytes())
    assert rec.body == OPENAI_SSE and rec.request["headers"]["Authorization"] == "[redacted]"
    assert calls_of(str(out)) == calls_of(write(tmp_path, "chat.sse", OPENAI_SSE))


def test_import_har_index_picks_an_entry_and_a_bad_index_is_exit_2(tmp_path, capsys):
    har = _har(tmp_path)
    assert main(["import-har", har, "--index", "0", "-o", str(tmp_path / "zero.fraglens")]) == 0
    assert parse_recording((tmp_path / "zero.fraglens").read_bytes()).body == b"<html></html>"
    assert main(["import-har", har, "--index", "7"]) == 2
    assert main(["import-har", write(tmp_path, "no.har", b"[1, 2]")]) == 2
    err = capsys.readouterr().err
    assert "has no entry 7" in err and "Traceback" not in err
