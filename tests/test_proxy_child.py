"""Forwarding in a child process, flows in this one: what ``fraglens proxy`` runs.

The child is a real process on a socket this process bound; ``fraglens
serve`` is the upstream and the official ``openai`` client the app. The socket
accepts connections at once, and the child answers them once it has started: on
a busy machine that can take seconds, so every client here waits ``PATIENCE``
(httpx's own default is 5 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest

from fraglens.net.proxy.child import ChildProxy
from fraglens.net.proxy.flows import FlowState, FlowStore
from fraglens.net.proxy.server import bind
from fraglens.net.replay import Chaos
from fraglens.net.serve import ServerHandle
from fraglens.report.document import build_report

from .conftest import ROOT
from .test_proxy import (
    KEY,
    MESSAGES,
    PATIENCE,
    aclient,
    chunks_via,
    raw_via,
    refused_port,
    wait_flows,
)
from .test_proxy_serve import CHAT, events_in, sample, serve, source_calls
from .test_proxy_ui import HeldUpstream


def child(up, store: FlowStore, record_dir: Path | None = None) -> ChildProxy:
    return ChildProxy(up.url + "/v1", store, sock=bind("127.0.0.1", 0), record_dir=record_dir)


def test_the_client_gets_the_same_bytes_and_the_flow_the_same_calls(tmp_path):
    store = FlowStore()
    with serve(CHAT, chaos=Chaos(split_seed=4)) as up, child(up, store, tmp_path) as proxy:
        assert raw_via(proxy.url) == raw_via(up.url) == CHAT.read_bytes()
        assert chunks_via(proxy.url) == chunks_via(up.url)
        flows = wait_flows(store, 2)
    for flow in flows:
        assert flow.state is FlowState.DONE
        assert build_report(flow.stream)["calls"] == source_calls(CHAT)
        assert flow.request_headers["authorization"] == "[redacted]"
    recordings = sorted(tmp_path.iterdir())
    assert len(recordings) == 2
    assert all(KEY.encode() not in r.read_bytes() for r in recordings)
    assert source_calls(recordings[0]) == source_calls(CHAT)


async def test_concurrent_clients_through_the_child():
    store = FlowStore()
    with serve(CHAT, chaos=Chaos(split_bytes=50)) as up, child(up, store) as proxy:
        expected = await asyncio.to_thread(chunks_via, up.url)

        async def one() -> list[dict]:
            stream = await aclient(proxy.url).chat.completions.create(
                model="m", messages=MESSAGES, stream=True
            )
            return [c.model_dump() async for c in stream]

        results = await asyncio.gather(*(one() for _ in range(6)))
        flows = await asyncio.to_thread(wait_flows, store, 6)
    assert all(r == expected for r in results)
    assert all(build_report(f.stream)["calls"] == source_calls(CHAT) for f in flows)


def test_failures_through_the_child():
    store = FlowStore()
    chaos = Chaos(drop_after=events_in(CHAT) - 4)
    with serve(CHAT, chaos=chaos) as up, child(up, store) as proxy:
        with pytest.raises(openai.APIConnectionError):
            chunks_via(proxy.url)
        (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.FAILED and "broke off" in (flow.error or "")
    assert build_report(flow.stream)["calls"]


def test_an_unreachable_upstream_through_the_child_is_a_502():
    store = FlowStore()
    with (
        refused_port() as port,
        ChildProxy(f"http://127.0.0.1:{port}/v1", store, sock=bind("127.0.0.1", 0)) as proxy,
    ):
        response = httpx.post(
            proxy.url + "/v1/chat/completions", json={"stream": True}, timeout=PATIENCE
        )
        assert response.status_code == 502
        assert response.json()["error"]["code"] == "upstream_unreachable"
        (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.FAILED


def test_a_client_leaving_early_is_a_cancelled_flow():
    store = FlowStore()
    chaos = Chaos(stall_after=events_in(CHAT) // 2, stall_seconds=60)
    with serve(CHAT, chaos=chaos) as up, child(up, store) as proxy:
        with httpx.stream(
            "POST", proxy.url + "/v1/chat/completions", json={}, timeout=PATIENCE
        ) as r:
            next(r.iter_raw())
        (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.CANCELLED


def test_stopping_ends_the_child_and_whatever_it_had_in_flight():
    store = FlowStore()
    chaos = Chaos(stall_after=events_in(CHAT) // 2, stall_seconds=60)
    with serve(CHAT, chaos=chaos) as up:
        proxy = child(up, store).start()
        with httpx.stream(
            "POST", proxy.url + "/v1/chat/completions", json={}, timeout=PATIENCE
        ) as r:
            next(r.iter_raw())
            proc = proxy.proc
            proxy.stop()
    assert proc is not None and proc.returncode is not None
    (flow,) = store.flows
    assert flow.finished


def test_sigterm_to_the_child_stops_it_as_sigint_does():
    """systemd (and ``kill`` on every process) sends SIGTERM to the child too: it
    stops as on SIGINT, ends what it had in flight, and exits 0."""
    store = FlowStore()
    upstream = HeldUpstream(sample(CHAT), held=events_in(CHAT) // 2)
    with (
        ServerHandle(upstream, bind("127.0.0.1", 0)).start() as up,
        upstream.released_at_exit(),
    ):
        proxy = child(up, store).start()
        try:
            with httpx.stream(
                "POST", proxy.url + "/v1/chat/completions", json={}, timeout=PATIENCE
            ) as r:
                next(r.iter_raw())
                assert proxy.proc is not None
                proxy.proc.send_signal(signal.SIGTERM)
                code = proxy.proc.wait(PATIENCE)
        finally:
            proxy.stop()
    assert code == 0
    (flow,) = wait_flows(store, 1)
    assert flow.state is not FlowState.DONE


def test_no_key_ever_reaches_the_pipe():
    """The child redacts before it writes: the parent never holds a key."""
    with serve(CHAT) as up:
        sock = bind("127.0.0.1", 0)
        proc = subprocess.Popen(
            [sys.executable, "-m", "fraglens.net.proxy.child", "--fd", str(sock.fileno()),
             "--upstream", up.url + "/v1"],
            pass_fds=(sock.fileno(),), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")),
        )  # fmt: skip
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        url = f"{base}/v1/chat/completions?key={KEY}"
        headers = {"authorization": f"Bearer {KEY}", "x-api-key": KEY, "cookie": f"s={KEY}"}
        try:
            answer = httpx.post(
                url, json={"model": "m", "stream": True}, headers=headers, timeout=PATIENCE
            )
            answer.raise_for_status()
            out, err = proc.communicate(timeout=PATIENCE)  # closing stdin stops the child
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            sock.close()
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [next(k for k in ("open", "response", "b64", "end") if k in x) for x in lines][
        0
    ] == "open"
    assert lines[-1]["end"] == "eof"
    assert KEY.encode() not in out
