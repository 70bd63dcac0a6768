"""The Flows screen, driven by Pilot: the list, follow mode, the filter, saving,
and a flow opened in the three panes while it streams. The last test puts the
app in front of a real proxy in front of an upstream that streams a bundled
sample, holding its second half back until the test lets it go."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import openai
import pytest

from fraglens.app.screens.flows import FlowsScreen, ProxyFlowsApp
from fraglens.net.proxy.flows import Flow, FlowState, FlowStore
from fraglens.net.proxy.server import ProxyApp, ProxyServer
from fraglens.net.proxy.tee import BodyTee
from fraglens.net.replay import load_source
from fraglens.net.serve import ServerHandle, bind
from fraglens.reading.capture import load_stream
from fraglens.report.document import build_report

from .conftest import SAMPLES
from .test_proxy import KEY, MESSAGES, PARALLEL, PATIENCE
from .test_proxy_flows import new_flow

SIZE = (140, 36)


def finished(store: FlowStore, data: bytes = PARALLEL, **kw) -> Flow:
    flow = new_flow(store, **kw)
    tee = BodyTee(flow)
    tee.feed(data, 0.1)
    tee.close(0.2)
    flow.status, flow.state, flow.ended = 200, FlowState.DONE, flow.t0 + 0.2
    store.changed(flow, "end")
    return flow


def names(app: ProxyFlowsApp) -> list[str | None]:
    return [c.name for c in app.index.calls]


def opened(app: ProxyFlowsApp) -> bool:
    """The panes are up and the flow's status line says so (the last thing opening does)."""
    return not app.on_flows and app.live_status.startswith("flow #")


async def settle(pilot, until, what: str, tries: int = int(PATIENCE / 0.05)) -> None:
    for _ in range(tries):
        if until():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never happened: {what}")


async def test_the_list_shows_every_flow_newest_at_the_bottom():
    store = FlowStore()
    finished(store)
    finished(store, b'{"data": []}', path="/v1/models", method="GET", model=None)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, FlowsScreen)
        table = app.flows.table
        assert table.row_count == 2
        assert table.cursor_row == 1
        first = [str(c) for c in table.get_row_at(0)]
        assert first[2:6] == ["POST", "/v1/chat/completions", "m", "200"]
        assert first[8:] == ["2", "ok", "0"]
        assert [str(c) for c in table.get_row_at(1)][8:10] == ["·", "not decoded"]


async def test_following_stops_when_the_user_moves_and_counts_what_is_new():
    store = FlowStore()
    for _ in range(3):
        finished(store)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("up")
        assert not app.flows.following
        finished(store)
        finished(store)
        await settle(pilot, lambda: app.flows.table.row_count == 5, "two new rows")
        assert app.flows.table.cursor_row == 1
        assert app.flows.new == 2
        await pilot.press("end")
        assert app.flows.following and app.flows.table.cursor_row == 4
        finished(store)
        await settle(pilot, lambda: app.flows.table.cursor_row == 5, "the cursor follows")


async def test_the_filter_keeps_the_flows_whose_line_matches():
    store = FlowStore()
    finished(store)
    finished(store, b'{"data": []}', path="/v1/models", method="GET", model=None)
    finished(store, model="claude-x")
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"claude")
        await pilot.pause()
        assert app.flows.table.row_count == 1
        await pilot.press("escape")
        await pilot.pause()
        assert app.flows.table.row_count == 3


async def test_enter_opens_the_flow_in_the_three_panes_and_l_goes_back():
    store = FlowStore()
    finished(store)
    finished(store, b'{"data": []}', path="/v1/models", method="GET", model=None)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "enter")
        await settle(pilot, lambda: opened(app), "the panes")
        assert names(app) == ["get_weather", "get_time"]
        assert app.stream.closed
        await pilot.press("end")
        assert build_report(app.stream)["calls"] == build_report(store.flows[0].stream)["calls"]
        await pilot.press("l")
        assert app.on_flows
        # a listed flow does not open: there is nothing decoded to show
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.on_flows


async def test_an_open_flow_fills_in_live_and_steps_once_done():
    store = FlowStore()
    flow = new_flow(store)
    tee = BodyTee(flow)
    cut = PARALLEL.index(b"data: ", 900)
    with store.lock:
        tee.feed(PARALLEL[:cut], 0.1)
        flow.status, flow.state = 200, FlowState.STREAMING
    store.changed(flow, "body")
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await settle(pilot, lambda: opened(app), "the panes")
        before = app.index.last
        assert not app.stream.closed
        assert "streaming" in app.live_status
        with store.lock:
            tee.feed(PARALLEL[cut:], 0.3)
            tee.close(0.4)
            flow.state, flow.ended = FlowState.DONE, flow.t0 + 0.4
        store.changed(flow, "end")
        await settle(pilot, lambda: app.stream.closed, "the flow's end")
        assert app.index.last > before
        assert app.step == app.index.last  # it followed the tail
        await pilot.press("home", "n")
        assert app.step == 1
        assert [c.result.status for c in app.index.calls] == ["ok", "ok"]


async def test_s_saves_the_selected_flow_without_the_key(tmp_path):
    store = FlowStore()
    finished(store, request_headers={"authorization": "[redacted]"},
             url=f"https://h/v1/chat/completions?key={KEY}")  # fmt: skip
    app = ProxyFlowsApp(store, save_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await pilot.pause()
    (saved,) = tmp_path.iterdir()
    assert KEY.encode() not in saved.read_bytes()
    assert store.flows[0].saved_to == str(saved)


async def test_the_debuggers_keys_do_nothing_on_the_flow_list():
    store = FlowStore()
    finished(store)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "p", "c", "m", "space", "colon", "f", "b", "l")
        await pilot.pause()
        assert app.on_flows and app.step == 0


class HeldUpstream:
    """Streams a capture one event per write, as ``fraglens serve`` does, but sends
    the events after the first ``held`` only once ``release`` is set: the flow is
    surely still streaming while the test opens it, however slow the machine (a
    stall of so many seconds would be a race against the app)."""

    def __init__(self, path: str, held: int) -> None:
        source = load_source(path)
        starts = [0, *source.event_ends[:-1]]
        self.events = [source.body[a:b] for a, b in zip(starts, source.event_ends, strict=True)]
        self.held = held
        self.release = threading.Event()

    @contextmanager
    def released_at_exit(self) -> Iterator[None]:
        """Whatever happens in the block, the stream is let go before the servers stop."""
        try:
            yield
        finally:
            self.release.set()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, event in enumerate(self.events):
            if i == self.held:
                await asyncio.to_thread(self.release.wait, PATIENCE)
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


async def test_the_app_in_front_of_a_real_proxy_shows_the_call_as_it_arrives():
    sample = SAMPLES / "backend_gpt4o_parallel.sse"
    if not sample.exists():
        pytest.skip("the bundled samples are not here")
    store = FlowStore()
    # the second half waits for the test, so that the flow is opened while it streams
    stream, _ = load_stream(str(sample))
    upstream = HeldUpstream(str(sample), held=len(stream.events) // 2)
    with (
        ServerHandle(upstream, bind("127.0.0.1", 0)).start() as up,
        ProxyServer(ProxyApp(up.url + "/v1", store), port=0) as proxy,
        upstream.released_at_exit(),
    ):
        app = ProxyFlowsApp(store)
        async with app.run_test(size=SIZE) as pilot:
            done = threading.Event()

            def use_it() -> None:
                client = openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY)
                stream = client.chat.completions.create(
                    model="gpt-4o", messages=MESSAGES, stream=True
                )
                list(stream)
                done.set()

            worker = threading.Thread(target=use_it, daemon=True)
            worker.start()
            await settle(pilot, lambda: app.flows.table.row_count == 1, "the flow's row")
            await pilot.press("enter")
            await settle(pilot, lambda: opened(app), "the panes")
            assert not app.stream.closed
            await settle(pilot, lambda: app.index.calls, "the first call, live")
            assert not app.stream.closed and app.step == app.index.last
            upstream.release.set()
            await settle(pilot, lambda: app.stream.closed, "the end of the stream")
            assert names(app) == ["get_weather", "get_local_time"]
            await asyncio.to_thread(done.wait, PATIENCE)
            worker.join(PATIENCE)


async def test_opening_another_flow_from_the_panes_while_one_streams():
    store = FlowStore()
    finished(store)
    live = new_flow(store)
    tee = BodyTee(live)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "enter")
        await settle(pilot, lambda: opened(app) and app.shown is store.flows[0], "flow #1")
        # a new flow streams while flow #1 is on screen; opening it swaps the panes
        # under the timer that feeds them, and keys pressed meanwhile are harmless
        with store.lock:
            tee.feed(PARALLEL[:600], 0.1)
            live.status, live.state = 200, FlowState.STREAMING
        store.changed(live, "body")
        app.open_flow(live.number)
        await pilot.press("n", "p", "end")
        await settle(pilot, lambda: app.shown is live and opened(app), "flow #2")
        with store.lock:
            tee.feed(PARALLEL[600:], 0.2)
            tee.close(0.3)
            live.state = FlowState.DONE
        store.changed(live, "end")
        await settle(pilot, lambda: app.stream.closed, "flow #2's end")
        assert names(app) == ["get_weather", "get_time"]


async def test_the_status_line_says_why_the_selected_flow_failed():
    store = FlowStore()
    flow = new_flow(store)
    flow.state, flow.ended = FlowState.FAILED, flow.t0
    flow.error = "fraglens proxy: could not reach the upstream https://h/v1"
    store.changed(flow, "end")
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        status = str(app.flows.query_one("#flows-status").render())
        assert "#1: fraglens proxy: could not reach the upstream" in status
        assert "✖ failed" in [str(c) for c in app.flows.table.get_row_at(0)]
