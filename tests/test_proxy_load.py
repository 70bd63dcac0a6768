"""The proxy under load: the client's bytes never wait on the flows.

The relay sends each read to the client first; the copy for the flows
(decoding, scrubbing, the fact on the pipe) is put off to the loop's next turn
(``later.py``), and the flows themselves run in another process behind a
bounded backlog (``child.py``). Here: a flows side that is stuck, a flows side
that breaks, and the bound, each seen from the client and from the flow. No
time is measured (speed is ``bench/proxy.py``'s).
"""

from __future__ import annotations

import asyncio
import json

import httpx

from fraglens.framing.recording import to_json_lines
from fraglens.net.limits import Limits
from fraglens.net.proxy.child import ChildProxy, PipeSink
from fraglens.net.proxy.flows import FlowState, FlowStore
from fraglens.net.proxy.later import Later
from fraglens.net.proxy.server import ProxyApp, ProxyServer, bind
from fraglens.net.proxy.sink import StoreSink
from fraglens.net.serve import ServerHandle

from .conftest import PATIENCE
from .test_proxy import KEY, wait_flows


def _event(i: int) -> bytes:
    piece = json.dumps(f"line {i}: " + "x" * 1000)[1:-1]
    doc = {"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": piece}}]}}]}  # fmt: skip
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


#: 1.5 MB of events, far more than a pipe and the backlog below hold
EVENTS = [_event(i) for i in range(1000)]
BODY = b"".join(EVENTS) + b"data: [DONE]\n\n"


async def _upstream(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send(
        {"type": "http.response.start", "status": 200,
         "headers": [(b"content-type", b"text/event-stream")]}
    )  # fmt: skip
    for event in EVENTS:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})


def _fetch(base: str) -> bytes:
    headers = {"authorization": f"Bearer {KEY}"}
    with httpx.Client(timeout=PATIENCE) as client:
        response = client.post(base + "/v1/chat/completions", json={"model": "m"}, headers=headers)
        return response.content


def test_a_stuck_flows_side_costs_the_client_nothing_and_the_flow_says_it_fell_behind(tmp_path):
    """The flows cannot take one fact (the store's lock is held) while the client
    reads 1.5 MB: it gets every byte all the same, and the flow, once it can read
    again, says it fell behind and stopped decoding, and its recording ends there."""
    store = FlowStore()
    limits = Limits(max_backlog=64 * 1024)
    with (
        ServerHandle(_upstream, bind("127.0.0.1", 0)).start() as up,
        ChildProxy(up.url + "/v1", store, sock=bind("127.0.0.1", 0), record_dir=tmp_path,
                   limits=limits) as proxy,
    ):  # fmt: skip
        with store.lock:
            got = _fetch(proxy.url)
            # the flows side has not made a flow yet: the bytes did not wait for it
            assert store.flows == []
        assert got == BODY
        (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.DONE
    assert "the flows fell 64 KiB behind the forwarding: not decoded further" in flow.notes
    assert flow.received < len(BODY)  # what was copied before the backlog's end
    (recording,) = tmp_path.iterdir()
    last = json.loads(to_json_lines(recording.read_bytes()).splitlines()[-1])
    assert "fell 64 KiB behind" in json.dumps(last)


class _BrokenBody(StoreSink):
    """A flows side with a bug in its reading of bodies."""

    def body(self, id: int, data: bytes, received: int, at: float) -> None:
        raise RuntimeError("a bug in the flows")


def test_a_flows_side_that_breaks_on_a_read_costs_the_client_nothing():
    """Before the copy was put off, the bug ended the exchange and cut the client's body."""
    store = FlowStore()
    with (
        ServerHandle(_upstream, bind("127.0.0.1", 0)).start() as up,
        ProxyServer(ProxyApp(up.url + "/v1", sink=_BrokenBody(store)), port=0) as proxy,
    ):
        assert _fetch(proxy.url) == BODY
        (flow,) = wait_flows(store, 1)
    # the facts after the broken ones still came, in order: the flow ended as the body did
    assert flow.state is FlowState.DONE


async def test_put_off_calls_run_on_the_next_turn_in_the_order_they_were_put():
    later = Later()
    seen: list[int] = []
    for i in range(3):
        later.call(seen.append, i)
    assert seen == []  # nothing runs inside the relay's turn
    await asyncio.sleep(0)
    assert seen == [0, 1, 2]
    later.call(seen.append, 3)
    later.run()  # at shutdown: at once
    assert seen == [0, 1, 2, 3]


def test_the_lines_of_one_turn_go_to_the_pipe_in_one_write_and_count_toward_the_backlog():
    writes: list[bytes] = []
    turns: list = []
    sink = PipeSink(writes.append, lambda: 0, max_backlog=100, schedule=turns.append)
    sink.body(1, b"data: a\n\n", 9, 0.1)
    sink.body(2, b"data: b\n\n", 9, 0.2)
    assert writes == [] and len(turns) == 1  # one flush for the turn
    # the lines held for the turn are part of the backlog: 2 lines of ~50 bytes each
    sink.body(1, b"data: c\n\n", 9, 0.3)
    sink.body(1, b"data: d\n\n", 9, 0.4)
    turns.pop()()
    (written,) = writes
    facts = [json.loads(line) for line in written.splitlines()]
    assert [f["x"] for f in facts] == [1, 2, 1, 1]
    assert "b64" in facts[2]
    assert facts[3]["stopped"] == (
        "the flows fell 100 bytes behind the forwarding: not decoded further"
    )


class _Log:
    """A sink that notes each fact in one list with the client's sends."""

    def __init__(self, log: list[tuple[str, bytes]]) -> None:
        self.log = log

    def opened(self, x) -> None: ...

    def response(self, id, status, headers, at) -> None: ...

    def body(self, id: int, data: bytes, received: int, at: float) -> None:
        self.log.append(("copy", data))

    def stopped(self, id, reason, at) -> None: ...

    def ended(self, id, how, error, at) -> None:
        self.log.append(("ended", b""))


async def test_every_read_ready_in_a_turn_goes_to_the_client_before_any_copy_is_made():
    """Three reads the upstream hands over at once: the relay sends all three, and
    only then are the flows' copies made, in order, and the end said after them."""
    reads = [b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"]

    async def body():
        for read in reads:
            yield read

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    log: list[tuple[str, bytes]] = []
    app = ProxyApp("http://upstream.test/v1", transport=httpx.MockTransport(handler),
                   sink=_Log(log))  # fmt: skip
    gone = asyncio.get_running_loop().create_future()
    messages = iter([{"type": "http.request", "body": b"{}", "more_body": False}])

    async def receive():
        return next(messages, None) or await gone

    async def send(message) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            log.append(("send", message["body"]))

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions",
             "raw_path": b"/v1/chat/completions", "query_string": b"", "headers": []}  # fmt: skip
    await app(scope, receive, send)
    await asyncio.sleep(0)
    await app.aclose()
    assert log == [
        *(("send", r) for r in reads),
        *(("copy", r) for r in reads),
        ("ended", b""),
    ]
