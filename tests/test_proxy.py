"""Proxy mode end to end: a real upstream, the proxy in front, real clients.

Everything runs on loopback on free ports and is stopped after each test: the
upstream, the proxy (``ProxyServer`` on its own thread, flows in this process),
and the official ``openai`` client pointed at the proxy with a fake key.
``fraglens serve`` is the upstream in ``test_proxy_serve.py`` and
``test_proxy_child.py``; the small uvicorn app here does what serve does not:
it echoes back what it received (to check the forwarding), gzips, answers a
non-streamed completion, and streams until the client leaves. Nothing here
measures time: waits poll for a state with a generous deadline.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import uvicorn

from fraglens.framing.detect import read_stream
from fraglens.net.proxy.flows import Flow, FlowState, FlowStore
from fraglens.net.proxy.server import ProxyApp, ProxyServer, bind
from fraglens.reading.capture import load_stream, stream_from_framed
from fraglens.report.document import build_report

from .conftest import PATIENCE, SAMPLES, asgi_request

KEY = "sk-fraglens-test-7f3a9c1e5b"


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _tool(index: int, args: str, id: str | None = None, name: str | None = None) -> dict:
    entry: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if id:
        entry["id"] = id
        entry["type"] = "function"
        entry["function"]["name"] = name
    return {"tool_calls": [entry]}


#: two parallel calls, interleaved, with a UTF-8 city name: the usual shape
PARALLEL = sse(
    _chunk({"role": "assistant", "content": None}),
    _chunk(_tool(0, "", "call_a1", "get_weather")),
    _chunk(_tool(1, "", "call_b2", "get_time")),
    _chunk(_tool(0, '{"city": "Zür')),
    _chunk(_tool(1, '{"tz": "Europe/')),
    _chunk(_tool(0, 'ich"}')),
    _chunk(_tool(1, 'Zurich"}')),
    _chunk({}, "tool_calls"),
)

COMPLETION = {
    "id": "chatcmpl-2",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-test",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_x",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


# -- the upstream --------------------------------------------------------------


class Upstream:
    """An ASGI upstream that replays a capture; headers choose the chaos.

    ``x-capture``: which capture (a key of ``captures``); ``x-split``: bytes per
    write; ``x-die-after``: cut the connection after that many writes;
    ``x-status``: answer with that status and a JSON error; ``x-forever``:
    keep streaming until the client goes; ``x-gzip``: compress the body.
    """

    def __init__(self) -> None:
        self.captures: dict[str, bytes] = {"parallel": PARALLEL}
        self.requests: list[dict[str, Any]] = []
        self.disconnected = threading.Event()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        headers, body = await asgi_request(scope, receive)
        self.requests.append(
            {
                "method": scope["method"],
                "path": scope["path"],
                "query": scope["query_string"].decode(),
                "headers": headers,
                "raw_headers": list(scope["headers"]),
                "body": body,
            }
        )
        if scope["path"].endswith("/models"):
            await _send_json(send, 200, {"object": "list", "data": [{"id": "gpt-test"}]})
            return
        if "x-status" in headers:
            status = int(headers["x-status"])
            error = {"error": {"message": "slow down", "type": "rate_limit", "code": None}}
            await _send_json(send, status, error)
            return
        if "x-forever" in headers:
            await self._forever(receive, send)
            return
        try:
            streamed = json.loads(body or b"{}").get("stream", True)
        except ValueError:
            streamed = True
        if streamed is False:
            await _send_json(send, 200, COMPLETION)
            return
        data = self.captures[headers.get("x-capture", "parallel")]
        split = int(headers.get("x-split", "0"))
        die_after = int(headers.get("x-die-after", "-1"))
        response_headers = [(b"content-type", b"text/event-stream"), (b"x-upstream", b"yes")]
        if "x-gzip" in headers:
            # a fixed mtime: the gzip header stamps the second it was made, and the
            # test compares the bytes of two requests, which may straddle a second
            data = gzip.compress(data, mtime=0)
            response_headers.append((b"content-encoding", b"gzip"))
        parts = _parts(data, split)
        await send({"type": "http.response.start", "status": 200, "headers": response_headers})
        for i, part in enumerate(parts):
            if i == die_after:
                return  # unfinished: uvicorn closes the connection mid-body
            await send({"type": "http.response.body", "body": part, "more_body": True})
            await asyncio.sleep(0.001)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _forever(self, receive, send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        gone = asyncio.ensure_future(receive())
        n = 0
        while not gone.done():
            chunk = _chunk(_tool(0, "", f"call_{n}", "tick")) if n == 0 else _chunk(_tool(0, "x"))
            body = b"data: " + json.dumps(chunk).encode() + b"\n\n"
            await send({"type": "http.response.body", "body": body, "more_body": True})
            n += 1
            await asyncio.sleep(0.01)
        if gone.result()["type"] == "http.disconnect":
            self.disconnected.set()


def _parts(data: bytes, split: int) -> list[bytes]:
    if split <= 0:
        # one write per SSE event, as servers do
        events = data.split(b"\n\n")
        return [e + b"\n\n" for e in events[:-1]] + ([events[-1]] if events[-1] else [])
    return [data[i : i + split] for i in range(0, len(data), split)]


async def _send_json(send, status: int, doc: Any) -> None:
    body = json.dumps(doc).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ThreadServer:
    """uvicorn on a free loopback port, on a thread; stopped by ``stop``."""

    def __init__(self, app: Any) -> None:
        self.sock = bind("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_config=None, lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + PATIENCE
        while not self.server.started:
            assert time.monotonic() < deadline, "the upstream did not start"
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, ThreadServer]]:
    app = Upstream()
    server = ThreadServer(app).start()
    yield app, server
    server.stop()


@pytest.fixture
def store() -> FlowStore:
    return FlowStore()


@pytest.fixture
def proxy(upstream, store, tmp_path) -> Iterator[ProxyServer]:
    _, up = upstream
    server = ProxyServer(ProxyApp(up.url + "/v1", store, record_dir=tmp_path / "rec"), port=0)
    server.start()
    yield server
    server.stop()


def wait_for(predicate, what: str, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def ended(store: FlowStore, n: int) -> bool:
    """Are there ``n`` flows and have all ended? Asked under the store's lock, as views
    ask: the sink ends a flow under it (state, error, stream, recording), so a flow
    seen ended here is ended in every respect, not only in its state."""
    with store.lock:
        return len(store.flows) >= n and all(f.finished for f in store.flows)


def wait_flows(store: FlowStore, n: int) -> list[Flow]:
    wait_for(lambda: ended(store, n), "flows")
    with store.lock:
        return list(store.flows)


def client(base: str, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0, **kw)


def aclient(base: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)


MESSAGES = [{"role": "user", "content": "weather and time in Zürich?"}]


def chunks_via(base: str, **headers: str) -> list[dict[str, Any]]:
    stream = client(base).chat.completions.create(
        model="gpt-test", messages=MESSAGES, stream=True, extra_headers=headers
    )
    return [c.model_dump() for c in stream]


def raw_via(base: str, **headers: str) -> bytes:
    api = client(base).chat.completions.with_streaming_response
    with api.create(
        model="gpt-test", messages=MESSAGES, stream=True, extra_headers=headers
    ) as response:
        return b"".join(response.iter_bytes())


def report_calls(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["calls"]


# -- the client sees what the upstream sent ------------------------------------------


def test_openai_client_gets_the_same_chunks_through_the_proxy(upstream, proxy):
    _, up = upstream
    assert chunks_via(proxy.url) == chunks_via(up.url)


def test_client_gets_byte_identical_events(upstream, proxy):
    _, up = upstream
    direct = raw_via(up.url, **{"x-split": "7"})
    through = raw_via(proxy.url, **{"x-split": "7"})
    assert through == direct == PARALLEL


def test_response_headers_pass_through_unchanged(upstream, proxy):
    _, up = upstream
    body = {"model": "gpt-test", "messages": MESSAGES, "stream": True}
    direct = httpx.post(up.url + "/v1/chat/completions", json=body)
    through = httpx.post(proxy.url + "/v1/chat/completions", json=body)
    assert through.headers["x-upstream"] == "yes"
    assert through.headers["content-type"] == direct.headers["content-type"]
    # the upstream's Server and Date come through; the proxy adds none of its own
    assert through.headers.get_list("server") == direct.headers.get_list("server")
    assert len(through.headers.get_list("date")) == 1


def _raw_request(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(request)
        s.settimeout(PATIENCE)
        received = b""
        while b"\r\n\r\n" not in received:
            part = s.recv(4096)
            if not part:
                break
            received += part
        return received


def test_request_is_forwarded_unchanged(upstream, proxy):
    app, up = upstream
    body = b'{"model": "gpt-test", "stream": false, "messages": []}'
    request = (
        b"POST /v1/chat/completions?api-version=3&x=%2F HTTP/1.1\r\n"
        b"Host: 127.0.0.1\r\n"
        b"Authorization: Bearer " + KEY.encode() + b"\r\n"
        b"X-Custom: kept\r\n"
        b"X-Custom: twice\r\n"
        b"Connection: close, x-hop\r\n"
        b"X-Hop: dropped\r\n"
        b"Content-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    assert _raw_request(proxy.port, request).startswith(b"HTTP/1.1 200")
    seen = app.requests[-1]
    assert seen["method"] == "POST"
    assert seen["path"] == "/v1/chat/completions"
    assert seen["query"] == "api-version=3&x=%2F"
    assert seen["body"] == body
    names = [n.decode().lower() for n, _ in seen["raw_headers"]]
    assert seen["headers"]["authorization"] == f"Bearer {KEY}"
    assert [v for n, v in seen["raw_headers"] if n.lower() == b"x-custom"] == [b"kept", b"twice"]
    assert seen["headers"]["host"] == f"127.0.0.1:{up.port}"
    assert "x-hop" not in names and "connection" not in names
    # nothing is added on the way: no User-Agent or Accept-Encoding of httpx's own
    assert "user-agent" not in names and "accept-encoding" not in names


def test_a_base_url_without_the_upstream_prefix_gets_it(upstream, proxy):
    app, _ = upstream
    httpx.get(proxy.url + "/models")
    assert app.requests[-1]["path"] == "/v1/models"


# -- the flow shows what check finds --------------------------------------------------


def flow_report(flow: Flow) -> dict[str, Any]:
    assert flow.stream is not None
    return build_report(flow.stream)


def source_report(data: bytes, fmt: str) -> dict[str, Any]:
    return build_report(stream_from_framed(read_stream(data), format=fmt))


def test_flow_has_the_calls_check_finds_on_the_source(upstream, proxy, store):
    chunks_via(proxy.url, **{"x-split": "5"})
    (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.DONE
    assert flow.model == "gpt-test"
    assert flow.format == "openai-chat"
    doc = flow_report(flow)
    expected = source_report(PARALLEL, "openai-chat")
    assert report_calls(doc) == report_calls(expected)
    assert doc["diagnostics"] == expected["diagnostics"]
    assert [c["arguments"] for c in doc["calls"]] == [{"city": "Zürich"}, {"tz": "Europe/Zurich"}]
    row = flow.row()
    assert (row.calls, row.worst, row.diagnostics, row.status) == (2, "ok", 0, 200)


def _sample(name: str) -> bytes:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"{name} is not among the bundled samples")
    return path.read_bytes()


@pytest.mark.parametrize(
    ("sample", "endpoint", "fmt"),
    [
        ("backend_gpt4o_parallel.sse", "/v1/chat/completions", "openai-chat"),
        ("quirk_q03_index_changed.sse", "/v1/chat/completions", "openai-chat"),
        ("native_anthropic_two_tools.sse", "/v1/messages", "anthropic"),
        ("native_responses_function_calls.sse", "/v1/responses", "openai-responses"),
    ],
)
def test_every_decoded_endpoint_shows_the_source_calls(
    upstream, proxy, store, sample, endpoint, fmt
):
    app, _ = upstream
    data = _sample(sample)
    app.captures[sample] = data
    with httpx.stream(
        "POST",
        proxy.url + endpoint,
        json={"model": "m", "stream": True},
        headers={"x-capture": sample, "x-split": "64", "x-api-key": KEY},
    ) as response:
        assert b"".join(response.iter_raw()) == data
    (flow,) = wait_flows(store, 1)
    assert flow.format == fmt
    doc, expected = flow_report(flow), source_report(data, fmt)
    assert report_calls(doc) == report_calls(expected)
    assert [d["code"] for d in doc["diagnostics"]] == [d["code"] for d in expected["diagnostics"]]


def test_responses_api_through_the_sdk(upstream, proxy, store):
    app, up = upstream
    data = _sample("native_responses_function_calls.sse")
    app.captures["responses"] = data
    kwargs = {
        "model": "gpt-test",
        "input": "hi",
        "stream": True,
        "extra_headers": {"x-capture": "responses"},
    }
    through = [e.model_dump() for e in client(proxy.url).responses.create(**kwargs)]
    direct = [e.model_dump() for e in client(up.url).responses.create(**kwargs)]
    assert through == direct
    flow = wait_flows(store, 1)[0]
    assert len(flow_report(flow)["calls"]) == len(source_report(data, "openai-responses")["calls"])


def test_non_streamed_completion_is_decoded_whole(upstream, proxy, store):
    completion = client(proxy.url).chat.completions.create(
        model="gpt-test", messages=MESSAGES, stream=False
    )
    assert completion.choices[0].message.tool_calls[0].function.name == "lookup"
    (flow,) = wait_flows(store, 1)
    doc = flow_report(flow)
    assert doc["framing"] == "json-body"
    assert [(c["name"], c["arguments"]) for c in doc["calls"]] == [("lookup", {"q": "x"})]


def test_other_endpoints_are_forwarded_and_listed_not_decoded(upstream, proxy, store):
    models = client(proxy.url).models.list()
    assert [m.id for m in models.data] == ["gpt-test"]
    (flow,) = wait_flows(store, 1)
    assert flow.stream is None and flow.format is None
    row = flow.row()
    assert (row.method, row.path, row.status, row.calls) == ("GET", "/v1/models", 200, None)


def test_compressed_body_passes_compressed_and_is_decoded_for_the_flow(upstream, proxy, store):
    _, up = upstream
    body = {"model": "m", "stream": True}
    headers = {"x-gzip": "1", "accept-encoding": "gzip"}

    def raw(base: str) -> tuple[bytes, str]:
        with httpx.stream("POST", base + "/v1/chat/completions", json=body, headers=headers) as r:
            return b"".join(r.iter_raw()), r.headers["content-encoding"]

    through, direct = raw(proxy.url), raw(up.url)
    assert through == direct
    assert through[1] == "gzip" and gzip.decompress(through[0]) == PARALLEL
    (flow,) = wait_flows(store, 1)
    assert b"".join(data for _, data in flow.chunks) == PARALLEL
    assert len(flow_report(flow)["calls"]) == 2


# -- failures ------------------------------------------------------------------------------


def test_upstream_error_status_passes_through_and_is_listed(upstream, proxy, store):
    _, up = upstream
    with pytest.raises(openai.RateLimitError) as through:
        chunks_via(proxy.url, **{"x-status": "429"})
    with pytest.raises(openai.RateLimitError) as direct:
        chunks_via(up.url, **{"x-status": "429"})
    assert through.value.body == direct.value.body
    assert through.value.response.content == direct.value.response.content
    wait_for(lambda: ended(store, 1) and len(store.flows) == 1, "the flow")
    row = store.flows[0].row()
    assert row.status == 429
    assert row.state is FlowState.DONE


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections while the block runs: bound, never
    listening. A port merely closed again could be taken meanwhile by anything else
    on the machine (a parallel test run), or be picked as a connection's own port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def test_unreachable_upstream_gives_a_502_with_a_json_error(store):
    with (
        refused_port() as dead,
        ProxyServer(ProxyApp(f"http://127.0.0.1:{dead}/v1", store), port=0) as server,
    ):
        with pytest.raises(openai.APIStatusError) as caught:
            chunks_via(server.url)
        assert caught.value.status_code == 502
        error = caught.value.response.json()["error"]
        assert "could not reach the upstream" in error["message"]
        assert error["code"] == "upstream_unreachable"
        (flow,) = wait_flows(store, 1)
        assert flow.state is FlowState.FAILED and flow.row().status is None
        # the proxy is still there for the next request
        assert httpx.get(server.url + "/v1/models").status_code == 502


def test_upstream_dying_mid_stream_reaches_the_client_as_a_cut(upstream, proxy, store):
    body = {"model": "m", "stream": True}
    with pytest.raises(httpx.RemoteProtocolError):
        with httpx.stream(
            "POST", proxy.url + "/v1/chat/completions", json=body, headers={"x-die-after": "5"}
        ) as r:
            received = b""
            for part in r.iter_raw():
                received += part
    (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.FAILED
    assert "broke off" in (flow.error or "")
    doc = flow_report(flow)
    assert doc["end"] == "eof-without-finish"
    # what arrived is kept: both calls were opened, the first got its first fragment
    assert [c["name"] for c in doc["calls"]] == ["get_weather", "get_time"]
    assert {c["status"] for c in doc["calls"]} <= {"truncated", "aborted", "invalid", "empty"}


def test_upstream_dying_mid_stream_is_the_same_error_in_the_sdk(upstream, proxy):
    _, up = upstream
    with pytest.raises(openai.APIConnectionError):
        chunks_via(up.url, **{"x-die-after": "4"})
    with pytest.raises(openai.APIConnectionError):
        chunks_via(proxy.url, **{"x-die-after": "4"})


def test_client_that_disconnects_early_closes_the_upstream_stream(upstream, proxy, store):
    app, _ = upstream
    with httpx.stream(
        "POST",
        proxy.url + "/v1/chat/completions",
        json={"stream": True},
        headers={"x-forever": "1"},
    ) as r:
        first = next(r.iter_raw())
        assert first.startswith(b"data: ")
    # leaving the block closed the client's connection
    assert app.disconnected.wait(PATIENCE), "the upstream never saw the disconnect"
    (flow,) = wait_flows(store, 1)
    assert flow.state is FlowState.CANCELLED
    assert flow.row().calls == 1
    # and the proxy goes on serving
    assert chunks_via(proxy.url)[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_bad_requests_never_crash_the_proxy(proxy, store):
    host, port = "127.0.0.1", proxy.port
    for garbage in (
        b"NOT HTTP\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab",
    ):
        with socket.create_connection((host, port)) as s:
            s.sendall(garbage)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(PATIENCE)
            while s.recv(4096):
                pass
    response = httpx.post(
        proxy.url + "/v1/chat/completions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert response.status_code in (200, 400, 422)
    assert chunks_via(proxy.url)[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_several_concurrent_streaming_clients(upstream, proxy, store):
    _, up = upstream
    expected = chunks_via(up.url, **{"x-split": "9"})

    async def one(i: int) -> list[dict[str, Any]]:
        stream = await aclient(proxy.url).chat.completions.create(
            model=f"gpt-test-{i}",
            messages=MESSAGES,
            stream=True,
            extra_headers={"x-split": "9"},
        )
        return [c.model_dump() async for c in stream]

    results = await asyncio.gather(*(one(i) for i in range(8)))
    assert all(r == expected for r in results)
    flows = await asyncio.to_thread(wait_flows, store, 8)
    assert sorted(f.model or "" for f in flows) == sorted(f"gpt-test-{i}" for i in range(8))
    assert all(f.state is FlowState.DONE and f.row().calls == 2 for f in flows)


# -- recordings --------------------------------------------------------------------------


def test_record_dir_saves_every_flow_without_the_key(upstream, proxy, store, tmp_path):
    chunks_via(proxy.url)
    client(proxy.url).models.list()
    flows = wait_flows(store, 2)
    files = sorted((tmp_path / "rec").iterdir())
    assert len(files) == 2
    for path in files:
        assert KEY.encode() not in path.read_bytes()
    assert all(f.saved_to and Path(f.saved_to).exists() for f in flows)
    stream, framed = load_stream(str(flows[0].saved_to))
    assert framed.framing == "recording"
    assert framed.meta["request"]["headers"]["authorization"] == "[redacted]"
    assert framed.meta["end"]["end"] == "eof"
    assert build_report(stream)["calls"] == flow_report(flows[0])["calls"]


def test_nothing_the_flow_keeps_carries_the_key(upstream, proxy, store):
    chunks_via(proxy.url, **{"x-api-key": KEY, "cookie": f"session={KEY}"})
    (flow,) = wait_flows(store, 1)
    shown = json.dumps([flow.request_headers, flow.response_headers, flow.url, flow.path])
    assert KEY not in shown
