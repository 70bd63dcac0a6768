"""Fit and timing end to end: recordings made through a real loopback upstream
(``fraglens serve`` replaying the fit samples, pausing mid-stream), then read by
``check`` with the tools the recorded request declared, and ``live --headless``
printing them as the stream ends."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import httpx
import pytest

from fraglens.cli import main
from fraglens.framing.recording import RecordingWriter
from fraglens.net.replay import Chaos, Pace
from fraglens.net.serve import start_server

from .conftest import PATIENCE, SAMPLES
from .test_recording import har, har_entry

FAST = Pace("fixed", 0)
#: the server pauses this long after STALL_AFTER events; the threshold is well below
#: it, so a busy machine cannot make the pause look shorter than a stall
STALL_SECONDS = 1.5
STALL_MS = 600.0
#: events written before the pause: the header comment block and the first events
STALL_AFTER = 3
QUESTION = "Weather in Oslo, Lima and Porto; book Noma for 4."

#: sample -> (endpoint path, the request body that declares the sample's tools)
SHAPES = {
    "fit_openai_chat": "/v1/chat/completions",
    "fit_responses": "/v1/responses",
    "fit_anthropic": "/v1/messages",
    "fit_gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
}


def request_body(name: str) -> dict:
    """The sample's tools file as the request that declared them, in its API's shape."""
    tools = json.loads((SAMPLES / f"{name}.tools.json").read_text(encoding="utf-8"))
    if isinstance(tools, dict):
        return tools  # already a whole request body (Chat, Gemini)
    if name == "fit_responses":
        return {"model": "gpt-4.1", "input": QUESTION, "tools": tools, "stream": True}
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": tools,
        "stream": True,
    }


def record_through(server_url: str, path: str, body: dict, out: Path) -> None:
    """POST ``body`` to the loopback server and record each read with its time."""
    url = server_url + path
    with out.open("wb") as fp, httpx.Client(trust_env=False, timeout=PATIENCE) as client:
        writer = RecordingWriter(fp)
        t0 = time.monotonic()
        writer.start({"method": "POST", "url": url, "headers": {}, "body": body})
        with client.stream("POST", url, json=body) as response:
            writer.response(response.status_code, response.headers.items(), t=time.monotonic() - t0)
            for chunk in response.iter_raw():
                writer.chunk(time.monotonic() - t0, chunk)
        writer.end("eof", t=time.monotonic() - t0)


def check_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["check", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def golden_fit(name: str) -> list[dict]:
    golden = json.loads((SAMPLES / f"{name}.expected.json").read_text(encoding="utf-8"))
    return [c["fit"] for c in golden["calls"]]


@pytest.mark.parametrize("name", SHAPES)
def test_a_stalled_recording_is_checked_against_its_own_request_and_shows_the_stall(
    name, tmp_path, capsys
):
    sample = SAMPLES / f"{name}.sse"
    record = tmp_path / "rec.fraglens"
    chaos = Chaos(stall_after=STALL_AFTER, stall_seconds=STALL_SECONDS)
    with start_server([str(sample)], pace=FAST, chaos=chaos) as server:
        record_through(server.url, SHAPES[name], request_body(name), record)

    code, doc = check_json(capsys, "--stall-ms", str(STALL_MS), str(record))
    assert code == 1  # the schema errors
    # no --tools: the recording's request declared them, and they give the sample's verdicts
    assert doc["tools"] == ["get_weather", "book_table"]
    assert [c["fit"] for c in doc["calls"]] == golden_fit(name)
    timing = doc["timing"]
    # the pause comes after the first STALL_AFTER events: the next one ends it
    (stall,) = [s for s in timing["stalls"] if s["event"] == STALL_AFTER]
    assert stall["gap_ms"] > STALL_MS
    assert timing["first_event_ms"] <= timing["duration_ms"]
    assert len(timing["calls"]) == 6


@pytest.mark.parametrize("name", SHAPES)
def test_a_recording_whose_request_declares_no_tools_checks_nothing_and_raises_nothing(
    name, tmp_path, capsys
):
    sample = SAMPLES / f"{name}.sse"
    body = {k: v for k, v in request_body(name).items() if k not in ("tools", "toolConfig")}
    record = tmp_path / "rec.fraglens"
    with start_server([str(sample)], pace=FAST) as server:
        record_through(server.url, SHAPES[name], body, record)
    code, doc = check_json(capsys, str(record))
    assert "tools" not in doc
    assert all("fit" not in c for c in doc["calls"])
    codes = {d["code"] for d in doc["diagnostics"]}
    assert not codes & {"args-schema", "strict-broken", "tool-undeclared"}
    assert code == 0


def test_tools_given_on_the_command_line_replace_the_recorded_ones(tmp_path, capsys):
    record = tmp_path / "rec.fraglens"
    with start_server([str(SAMPLES / "fit_openai_chat.sse")], pace=FAST) as server:
        record_through(
            server.url, SHAPES["fit_openai_chat"], request_body("fit_openai_chat"), record
        )
    # everything the calls name, and nothing required
    loose = [
        {"name": name, "input_schema": {"type": "object"}}
        for name in ("get_weather", "get_forecast", "book_table")
    ]
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(loose), encoding="utf-8")
    code, doc = check_json(capsys, "--tools", str(tools), str(record))
    assert code == 0
    assert doc["tools"] == ["get_weather", "get_forecast", "book_table"]
    assert all(c["fit"]["checked"] and not c["fit"]["errors"] for c in doc["calls"])


def test_a_har_entry_request_body_declares_the_tools(tmp_path, capsys):
    sample = (SAMPLES / "fit_anthropic.sse").read_text(encoding="utf-8")
    entry = har_entry(
        "https://api.anthropic.com/v1/messages",
        "text/event-stream",
        sample,
        post=request_body("fit_anthropic"),
    )
    path = tmp_path / "capture.har"
    path.write_text(json.dumps(har(entry)), encoding="utf-8")
    code, doc = check_json(capsys, str(path))
    assert code == 1
    assert [c["fit"] for c in doc["calls"]] == golden_fit("fit_anthropic")
    # a HAR keeps the body whole: its duration only
    assert doc["timing"]["stalls"] is None and doc["timing"]["duration_ms"] == 1000.0


@pytest.mark.parametrize(
    "content, reason",
    [
        (None, "no such file"),
        ("{not json", "not JSON"),
        ('{"model": "m"}', 'no "tools" list'),
        ('[{"type": "web_search"}]', "the one tool entry declares no function"),
    ],
)
def test_an_unreadable_tools_file_is_a_one_line_error_and_exit_2(tmp_path, capsys, content, reason):
    tools = tmp_path / "tools.json"
    if content is not None:
        tools.write_text(content, encoding="utf-8")
    code = main(["check", "--tools", str(tools), str(SAMPLES / "fit_anthropic.sse")])
    err = capsys.readouterr().err
    assert code == 2
    assert reason in err and len(err.strip().splitlines()) == 1


def test_live_headless_prints_the_fit_and_the_timing_as_the_stream_ends(tmp_path, capsys):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(request_body("fit_openai_chat")), encoding="utf-8")
    record = tmp_path / "rec.fraglens"
    chaos = Chaos(stall_after=STALL_AFTER, stall_seconds=STALL_SECONDS)
    with start_server([str(SAMPLES / "fit_openai_chat.sse")], pace=FAST, chaos=chaos) as server:
        code = main(
            [
                "live",
                "--url",
                server.url + "/v1",
                "--request",
                str(request),
                "--headless",
                "--stall-ms",
                str(STALL_MS),
                "--record",
                str(record),
            ]
        )
    out = capsys.readouterr().out
    assert code == 1
    assert "call 3 get_forecast: not checked: no declared tool has this name" in out
    assert "call 4 book_table: 1 schema error (declared strict" in out
    assert f"before event {STALL_AFTER}" in out  # the stall line
    assert "call 5 get_weather: " in out and " ms -> " in out  # one line per call
    # the recording says the same when checked later, with no flag
    code, doc = check_json(capsys, "--stall-ms", str(STALL_MS), str(record))
    assert [c["fit"] for c in doc["calls"]] == golden_fit("fit_openai_chat")


def test_the_text_report_has_one_line_per_call_and_per_stall(tmp_path, capsys):
    record = tmp_path / "rec.fraglens"
    chaos = Chaos(stall_after=STALL_AFTER, stall_seconds=STALL_SECONDS)
    with start_server([str(SAMPLES / "fit_responses.sse")], pace=FAST, chaos=chaos) as server:
        record_through(server.url, SHAPES["fit_responses"], request_body("fit_responses"), record)
    main(["check", "--stall-ms", str(STALL_MS), str(record)])
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert sum(line.startswith("  call ") and " ms -> " in line for line in lines) == 6
    assert sum(line.startswith("  stall: ") for line in lines) >= 1
    assert any(line.startswith("timing: duration ") for line in lines)


def test_the_proxy_headless_output_holds_each_flow_to_its_request_tools_and_times_it():
    from fraglens.net.proxy.flows import FlowState, FlowStore, decoded_format
    from fraglens.net.proxy.headless import HeadlessPrinter
    from fraglens.net.proxy.tee import BodyTee

    store = FlowStore()
    out = io.StringIO()
    HeadlessPrinter(store, out=out, as_json=True, stall_ms=STALL_MS)
    path = SHAPES["fit_anthropic"]
    flow = store.new_flow(
        method="POST",
        path=path,
        url="https://api.example.com" + path,
        request_headers={},
        request_body=json.dumps(request_body("fit_anthropic")).encode(),
        format=decoded_format(path),
        model="claude-sonnet-4-5",
    )
    tee = BodyTee(flow)
    events = (SAMPLES / "fit_anthropic.sse").read_bytes().split(b"\n\n")
    for n, event in enumerate(events):
        # a read per event, 10 ms apart, and a 2 s silence before event 5
        tee.feed(event + b"\n\n", t=n / 100 + (2.0 if n >= 5 else 0.0))
    tee.close(t=3.0)
    flow.status, flow.state, flow.ended = 200, FlowState.DONE, flow.t0 + 3.0
    store.changed(flow, "end")
    (line,) = out.getvalue().splitlines()
    doc = json.loads(line)["check"]
    assert [c["fit"] for c in doc["calls"]] == golden_fit("fit_anthropic")
    assert doc["timing"]["stalls"] == [{"gap_ms": 2010.0, "event": 5}]
