"""The proxy in front of ``fraglens serve``: the upstream the issue names.

``serve`` replays bundled samples with its chaos options (random splits that
cut UTF-8 characters, a dropped connection, an HTTP error, a stall), the proxy
sits in front, and the official ``openai`` client (fake key) is the app. The
last tests run ``fraglens proxy --headless`` as a real process, stopped by Ctrl-C
or by SIGTERM.
"""

from __future__ import annotations

import json
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

from fraglens.cli.proxy import StopOnSigterm, Terminated
from fraglens.net.proxy.flows import FlowState, FlowStore
from fraglens.net.proxy.server import ProxyApp, ProxyServer
from fraglens.net.replay import NO_CHAOS, Chaos, Pace
from fraglens.net.serve import ServerHandle, bind, start_server
from fraglens.reading.capture import load_stream
from fraglens.report.document import build_report

from .conftest import ROOT, SAMPLES
from .test_proxy import KEY, MESSAGES, PATIENCE, chunks_via, raw_via, wait_flows, wait_for
from .test_proxy_ui import HeldUpstream

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


# ``python -m fraglens``, with Ctrl-C as a terminal delivers it. A process started
# from a background job (``make test &`` in a script, a parallel run) inherits
# SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler: the
# SIGINT below would be dropped and the proxy would serve on forever. The test
# is about what the proxy does on Ctrl-C, so it runs as a terminal's foreground
# process would, whatever the disposition the test run itself inherited.
AS_FROM_A_TERMINAL = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from fraglens.cli import main; raise SystemExit(main())"
)
# ... and as from that background job, whatever the test run inherited: SIGINT
# ignored, no Ctrl-C handler. SIGTERM must stop the proxy all the same.
AS_A_BACKGROUND_JOB = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from fraglens.cli import main; raise SystemExit(main())"
)


def run_proxy(*args: str, script: str = AS_FROM_A_TERMINAL) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, "proxy", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "tui"), NO_COLOR="1", COLUMNS="120"),
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
        # SIGTERM stops it whatever SIGINT's disposition (AS_A_BACKGROUND_JOB)
        proc.send_signal(signal.SIGTERM)
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


# -- SIGTERM: what kill, systemd, docker stop and CI runners send -------------------------


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def running(pid: int, born: str) -> bool:
    """Is the process ``pid`` that started at ``born`` (clock ticks) still running? A
    zombie is not running; a new process that reused the number is not it."""
    fields = _stat(pid)
    return fields is not None and fields[19] == born and fields[0] not in ("Z", "X")


needs_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="finding the forwarding child needs /proc"
)


def the_child(proc: subprocess.Popen) -> tuple[int, str]:
    """The forwarding child of a proxy that has said where it listens (it is started by then)."""
    (pid,) = children(proc.pid)
    fields = _stat(pid)
    assert fields is not None
    return pid, fields[19]


@needs_proc
@pytest.mark.parametrize(
    "mode, script",
    [("--headless", AS_A_BACKGROUND_JOB), ("--json", AS_FROM_A_TERMINAL)],
    ids=["headless-sigint-ignored", "json-from-a-terminal"],
)
def test_sigterm_stops_the_proxy_as_ctrl_c_does_and_reports_the_flow_in_flight(
    tmp_path, mode, script
):
    # the upstream sends half the events, then holds the rest until the test is
    # over: the flow is surely in flight when SIGTERM comes, however slow the machine
    upstream = HeldUpstream(sample(CHAT), held=events_in(CHAT) // 2)
    with (
        ServerHandle(upstream, bind("127.0.0.1", 0)).start() as up,
        upstream.released_at_exit(),
    ):
        proc = run_proxy(
            "--upstream", up.url + "/v1", "--port", "0", mode, "--record-dir", str(tmp_path),
            script=script,
        )  # fmt: skip
        try:
            base = url_from(proc)
            child, born = the_child(proc)
            headers = {"authorization": f"Bearer {KEY}"}
            body = {"model": "gpt-4o", "messages": MESSAGES, "stream": True}
            with httpx.stream(
                "POST", base + "/chat/completions", json=body, headers=headers, timeout=PATIENCE
            ) as response:
                # the stop comes once the client has the call's first chunk (in the
                # first half): the proxy passed it on, so its flow must report the call
                seen = b""
                for raw in response.iter_raw():
                    seen += raw
                    if b'"get_weather"' in seen:
                        break
                assert b'"get_weather"' in seen
                proc.send_signal(signal.SIGTERM)
                out, err = proc.communicate(timeout=PATIENCE)
            still_running = running(child, born)  # the moment the proxy has exited
        finally:
            stop(proc)
    assert proc.returncode == 0, err
    assert not still_running, "the forwarding child outlived the proxy"
    assert "Traceback" not in err, err
    assert KEY not in out + err
    (recording,) = tmp_path.iterdir()
    *_, last = recording.read_text().splitlines()
    assert "end" in json.loads(last), "the recording was closed with its end"
    if mode == "--json":
        (doc,) = [json.loads(line) for line in out.splitlines()]
        assert (doc["flow"], doc["method"], doc["path"]) == (1, "POST", "/v1/chat/completions")
        assert doc["status"] == 200 and doc["state"] != "done"
        assert doc["recording"] == str(recording)
        assert [c["name"] for c in doc["check"]["calls"]][:1] == ["get_weather"]
    else:
        (line,) = [line for line in out.splitlines() if line.startswith("#")]
        assert line.startswith("#1 ") and "POST /v1/chat/completions gpt-4o 200" in line
        assert " [" in line, "a flow cut in flight is not reported as done"
        assert "get_weather" in out  # its check summary: the call that had begun
        assert f"recorded: {recording}" in out


@needs_proc
def test_sigterm_with_no_flow_exits_cleanly(tmp_path):
    with serve(CHAT) as up:
        proc = run_proxy(
            "--upstream", up.url + "/v1", "--port", "0", "--headless",
            "--record-dir", str(tmp_path), script=AS_A_BACKGROUND_JOB,
        )  # fmt: skip
        try:
            url_from(proc)
            child, born = the_child(proc)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=PATIENCE)
            still_running = running(child, born)
        finally:
            stop(proc)
    assert proc.returncode == 0, err
    assert not still_running, "the forwarding child outlived the proxy"
    assert out == ""
    assert "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


def test_sigterm_raises_once_in_the_block_and_the_handler_is_restored_after():
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSigterm() as sigterm:
        with pytest.raises(Terminated):
            signal.raise_signal(signal.SIGTERM)
        assert sigterm.stopping
        signal.raise_signal(signal.SIGTERM)  # a repeat during the stop: ignored
    assert signal.getsignal(signal.SIGTERM) is before
    assert issubclass(Terminated, KeyboardInterrupt)  # handled wherever Ctrl-C is
