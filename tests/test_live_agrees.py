"""``live --json`` is ``check --json`` of the recording it wrote, read split anywhere,
and ``live`` caps only what its options say.

A loopback server sends each piece of its body as one HTTP chunk, so each
arrives as one network read: an event's closing line can be made to arrive in
a later read than the event, as a slow server or a proxy makes it. Nothing
here measures time; the pauses only keep the reads apart.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fraglens.cli import main
from fraglens.framing.recording import parse_recording
from fraglens.net.decoded import DecodedCopy
from fraglens.net.serve import ServerHandle, bind


def _chunk(delta: dict, finish: str | None = None) -> bytes:
    doc = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(doc).encode()


HEAD = _chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                    "function": {"name": "f", "arguments": ""}}]})
ARGS = _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]})
FINISH = _chunk({}, "tool_calls")


def _reads(eol: bytes) -> list[bytes]:
    """A body whose events each end in a later read than their last line: a
    comment whose closing blank line comes next, a comment ended by the next
    field, data events whose blank line comes next."""
    n = eol
    return [b": keep-alive" + n, n + HEAD + n, n + b": one" + n + b": two" + n,
            ARGS + n, n + FINISH + n, n + b"data: [DONE]" + n, n]


#: each piece of the body an uncompressed stream longer than the tests' caps sends
LONG = [_chunk({"content": "x" * 1000}) + b"\n\n" for _ in range(400)]


class SplittingServer:
    """``/split/lf|crlf|cr``: the body of ``_reads``, one HTTP chunk per read;
    ``/long``: 400 KB of SSE, uncompressed."""

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        path = scope["path"]
        parts = LONG if "/long" in path else _reads(_EOLS[path.split("/")[2]])
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for part in parts:
            await send({"type": "http.response.body", "body": part, "more_body": True})
            await asyncio.sleep(0.01 if "/long" not in path else 0)
        await send({"type": "http.response.body", "body": b""})


_EOLS = {"lf": b"\n", "crlf": b"\r\n", "cr": b"\r"}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with ServerHandle(SplittingServer(), bind("127.0.0.1", 0)).start() as handle:
        yield handle.url


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def _live(url: str, record: Path, capsys, *extra: str) -> tuple[int, str, str]:
    return _run(["live", "--model", "m", "--prompt", "hi", "--url", url, "--json",
                 "--record", str(record), *extra], capsys)


@pytest.mark.parametrize("eol", list(_EOLS))
def test_live_json_is_check_json_of_its_recording_when_lines_end_in_later_reads(
    server, tmp_path, capsys, monkeypatch, eol
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record = tmp_path / "split.fraglens"
    code, live, _ = _live(f"{server}/split/{eol}/v1", record, capsys)
    # the reads arrived as sent: each event's closing line in a later read
    assert [chunk for _, chunk in parse_recording(record.read_bytes()).chunks] == _reads(
        _EOLS[eol])
    checked, report, _ = _run(["check", "--json", str(record)], capsys)
    assert json.loads(live) == json.loads(report)
    assert code == checked


def test_live_max_decoded_bytes_never_cuts_an_uncompressed_stream(
    server, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record = tmp_path / "long.fraglens"
    code, out, err = _live(f"{server}/long/v1", record, capsys, "--max-decoded-bytes", "64k")
    assert code in (0, 1) and "--max-decoded-bytes" not in err
    assert parse_recording(record.read_bytes()).body == b"".join(LONG)
    assert json.loads(out)["text"]["0"] == "x" * 1000 * len(LONG)


def test_live_max_stream_bytes_ends_the_call_at_its_cap(server, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    record = tmp_path / "capped.fraglens"
    code, _, err = _live(f"{server}/long/v1", record, capsys, "--max-stream-bytes", "64k")
    assert code == 2
    assert "the body ran past 64 KiB (--max-stream-bytes): the call was ended there" in err
    rec = parse_recording(record.read_bytes())
    assert rec.body == b"".join(LONG)[: 64 * 1024]  # what was read, up to the cap
    assert "--max-stream-bytes" in rec.end["error"]


def test_the_decoded_cap_is_on_decompression_unless_a_plain_cap_is_asked():
    plain = b"data: " + b"x" * 5000 + b"\n\n"
    free = DecodedCopy(None, max_decoded=1024)
    assert free.feed(plain) + free.close() == plain and free.stopped is None
    capped = DecodedCopy(None, max_decoded=1024, max_plain=1024)  # the proxy's flows
    assert len(capped.feed(plain)) == 1024
    assert "ran past 1 KiB" in (capped.stopped or "")
