"""The proxy in front of ``fraglens serve``: the upstream the issue names.

``serve`` replays bundled samples with its chaos options (random splits that
cut UTF-8 characters, a dropped connection, an HTTP error, a stall), the proxy
sits in front, and the official ``openai`` client (fake key) is the app. The
last test runs ``fraglens proxy --headless`` as a real process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tui.load import load_stream
from tui.net.proxy import ProxyApp, ProxyServer
from tui.net.proxy_flows import FlowState, FlowStore
from tui.net.replay import NO_CHAOS, Chaos, Pace
from tui.net.serve import ServerHandle, start_server
from tui.report import build_report

from .conftest import ROOT, SAMPLES
from .test_proxy import KEY, MESSAGES, PATIENCE, chunks_via, raw_via, wait_flows, wait_for

CHAT = SAMPLES / "backend_gpt4o_parallel.sse"
FAST = Pace("fixed", 0)


def sample(path: Path) -> str:
    if not path.exists():
        pytest.skip(f"{path.name} is not among the bundled samples")
    return str(path)


def serve(*captures: Path, chaos: Chaos = NO_CHAOS, pace: Pace = FAST, log=None) -> ServerHandle:
    return start_server([sample(c) for c in captures], chaos=chaos, pace=pace, log=log)


def events_in(path: Path) -> int:
    stream, _ = load_stream(sample(path))
    return len(stream.events)


def source_calls(path: Path) -> list[dict]:
    stream, _ = load_stream(str(path))
    return build_report(stream)["calls"]


@pytest.fixture
def store() -> FlowStore:
    return FlowStore()


def in_front(upstream: ServerHandle, store: FlowStore, record_dir: Path | None = None):
    return ProxyServer(ProxyApp(upstream.url + "/v1", store, record_dir=record_dir), port=0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_openai_client_through_the_proxy_gets_what_serve_sent(store, seed):
    chaos = Chaos(split_seed=seed)
    with serve(CHAT, chaos=chaos) as up, in_front(up, store) as proxy:
        assert chunks_via(proxy.url) == chunks_via(up.url)
        assert raw_via(proxy.url) == raw_via(up.url) == CHAT.read_bytes()
        flows = wait_flows(store, 2)
    for flow in flows:
        assert flow.state is FlowState.DONE
        assert build_report(flow.stream)["calls"] == source_calls(CHAT)


@pytest.mark.parametrize(
    "name", ["native_anthropic_two_tools.sse", "native_responses_function_calls.sse"]
)
def test_other_wire_formats_through_serve(store, name):
    path = SAMPLES / name
    with serve(path, chaos=Chaos(split_bytes=3)) as up, in_front(up, store) as proxy:
        fmt_path = "/v1/messages" if "anthropic" in name else "/v1/responses"
        headers = {"x-api-key": KEY, "authorization": f"Bearer {KEY}"}
        body = {"model": "m", "stream": True}
        direct = httpx.post(up.url + fmt_path, json=body, headers=headers).content
        through = httpx.post(proxy.url + fmt_path, json=body, headers=headers).content
        assert through == direct
        (flow,) = wait_flows(store, 1)
    assert build_report(flow.stream)["calls"] == source_calls(path)


def test_serve_dropping_the_connection_reaches_the_client_as_the_same_error(store):
    # cut a few events before the end: calls are open, no finish came
    chaos = Chaos(drop_after=events_in(CHAT) - 4)
    with serve(CHAT, chaos=chaos) as up, in_front(up, store) as proxy:
        with pytest.raises(openai.APIConnectionError):
            chunks_via(up.url)
        with pytest.raises(openai.APIConnectionError):
            chunks_via(proxy.url)
        (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.FAILED
    doc = build_report(flow.stream)
    assert doc["end"] == "eof-without-finish"
    assert doc["calls"], "what arrived before the cut is kept"


def test_serve_http_error_passes_through_unchanged(store):
    with serve(CHAT, chaos=Chaos(http_error=503)) as up, in_front(up, store) as proxy:
        with pytest.raises(openai.InternalServerError) as direct:
            chunks_via(up.url)
        with pytest.raises(openai.InternalServerError) as through:
            chunks_via(proxy.url)
        assert through.value.response.content == direct.value.response.content
        assert through.value.status_code == 503
        (flow,) = wait_flows(store, 1)
    assert flow.row().status == 503
    assert any(d["code"] == "error-event" for d in build_report(flow.stream)["diagnostics"])


def test_a_client_leaving_a_stalled_stream_closes_it_at_serve(store):
    lines: list[str] = []
    left = threading.Event()

    def log(line: str) -> None:
        lines.append(line)
        if "the client left" in line:
            left.set()

    chaos = Chaos(stall_after=events_in(CHAT) // 2, stall_seconds=60)
    with serve(CHAT, chaos=chaos, log=log) as up, in_front(up, store) as proxy:
        stream = openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY, max_retries=0)
        chunks = stream.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        first = next(iter(chunks))
        assert first.id
        chunks.close()
        assert left.wait(PATIENCE), f"serve never saw the client leave: {lines}"
        (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.CANCELLED


def test_recordings_of_flows_replay_through_serve(store, tmp_path):
    with serve(CHAT, chaos=Chaos(split_seed=7)) as up, in_front(up, store, tmp_path) as proxy:
        chunks_via(proxy.url)
        wait_flows(store, 1)
    (recording,) = tmp_path.iterdir()
    assert KEY.encode() not in recording.read_bytes()
    assert source_calls(recording) == source_calls(CHAT)
    # and the recording is an upstream of its own
    with serve(recording) as up:
        assert raw_via(up.url) == CHAT.read_bytes()


# -- the command, as a real process ------------------------------------------------------


# ``python -m tui``, with Ctrl-C as a terminal delivers it. A process started
# from a background job (``make test &`` in a script, a parallel run) inherits
# SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler: the
# SIGINT below would be dropped and the proxy would serve on forever. The test
# is about what the proxy does on Ctrl-C, so it runs as a terminal's foreground
# process would, whatever the disposition the test run itself inherited.
AS_FROM_A_TERMINAL = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from tui.cli import main; raise SystemExit(main())"
)


def run_proxy(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_TERMINAL, "proxy", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="120"),
    )


def url_from(proc: subprocess.Popen) -> str:
    assert proc.stderr is not None
    for line in proc.stderr:
        if "point your client's base URL at" in line:
            return line.rsplit(" ", 1)[1].strip()
    raise AssertionError("the proxy never said where it listens")


@pytest.fixture
def headless(tmp_path) -> Iterator[tuple[subprocess.Popen, str, Path]]:
    with serve(CHAT) as up:
        proc = run_proxy(
            "--upstream", up.url + "/v1", "--port", "0", "--headless",
            "--record-dir", str(tmp_path),
        )  # fmt: skip
        try:
            yield proc, url_from(proc), tmp_path
        finally:
            stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Never leave the proxy (and its forwarding child) running after a test."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            # killed, the proxy closes its child's stdin, and the child stops too
            proc.kill()
            proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def test_headless_prints_one_line_per_flow_and_its_check_summary(headless):
    proc, base, record_dir = headless
    client = openai.OpenAI(base_url=base, api_key=KEY, max_retries=0)
    list(client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True))
    client.models.list()
    wait_for(lambda: len(list(record_dir.iterdir())) == 2, "two recordings")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=PATIENCE)
    lines = out.splitlines()
    flow_lines = [line for line in lines if line.startswith("#")]
    assert len(flow_lines) == 2, out
    assert "POST /v1/chat/completions gpt-4o 200" in flow_lines[0]
    assert "2 calls (worst ok)" in flow_lines[0]
    assert "GET /v1/models" in flow_lines[1] and "(not decoded)" in flow_lines[1]
    assert "get_weather" in out  # the check summary's table of calls
    assert KEY not in out + err
    assert "Traceback" not in err


def test_an_upstream_that_is_no_url_is_one_line_and_exit_2():
    proc = run_proxy("--upstream", "ftp://example.com", "--headless")
    out, err = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 2
    assert err.strip().count("\n") == 0 and "http:// or https://" in err


def test_a_port_in_use_is_one_line_and_exit_2():
    with serve(CHAT) as up:
        proc = run_proxy("--upstream", up.url, "--port", str(up.port), "--headless")
        out, err = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 2
    assert "cannot listen on" in err and "Traceback" not in err
