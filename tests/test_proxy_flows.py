"""The proxy's sans-I/O parts: routing, header rules, the tee, the flow store,
recordings of flows, and the headless line. No sockets here."""

from __future__ import annotations

import gzip
import io
import json
import zlib

import httpx
import pytest

from fraglens.framing.detect import read_stream
from fraglens.net.decoded import DecodedCopy
from fraglens.net.limits import DEFAULT_LIMITS, Limits
from fraglens.net.proxy.flows import Flow, FlowState, FlowStore, decoded_format, worst_status
from fraglens.net.proxy.headless import HeadlessPrinter, flow_line
from fraglens.net.proxy.record import recording_name, save_flow
from fraglens.net.proxy.server import (
    forwarded_request_headers,
    forwarded_response_headers,
    is_loopback,
    join_upstream,
)
from fraglens.net.proxy.tee import BodyTee
from fraglens.reading.capture import load_stream, stream_from_framed
from fraglens.redact import Secrets
from fraglens.report.document import build_report

from .test_proxy import COMPLETION, KEY, PARALLEL


def new_flow(store: FlowStore | None = None, path: str = "/v1/chat/completions", **kw) -> Flow:
    store = store or FlowStore()
    fields = {
        "method": "POST",
        "path": path,
        "url": "https://api.example.com" + path,
        "request_headers": {"authorization": "[redacted]"},
        "request_body": b'{"model": "m"}',
        "format": decoded_format(path),
        "model": "m",
    }
    fields.update(kw)
    return store.new_flow(**fields)


def tee_through(
    data: bytes,
    split: int,
    encoding: str | None = None,
    secrets: Secrets | None = None,
    limits: Limits = DEFAULT_LIMITS,
    **kw,
) -> Flow:
    """``data`` read by read as the proxy reports it: the forwarding side's copy
    (decoded, capped, scrubbed) into the tee, and the copy's reason when it stops."""
    flow = new_flow(**kw)
    copy = DecodedCopy(encoding, secrets, limits.max_decoded)
    tee = BodyTee(flow, limits)

    def report(kept: bytes, received: int, t: float, was: str | None) -> None:
        tee.feed(kept, t, received)
        if copy.stopped is not None and was is None:
            tee.stop(copy.stopped, t)

    if copy.stopped is not None:
        tee.stop(copy.stopped, 0.0)
    for i in range(0, len(data), split):
        was, chunk = copy.stopped, data[i : i + split]
        report(copy.feed(chunk), len(chunk), i / 1000, was)
    was = copy.stopped
    report(copy.close(), 0, 1.0, was)
    tee.close(t=1.0)
    return flow


def calls(flow: Flow) -> list[dict]:
    assert flow.stream is not None and flow.stream.closed
    return build_report(flow.stream)["calls"]


def source_calls(data: bytes, fmt: str = "openai-chat") -> list[dict]:
    return build_report(stream_from_framed(read_stream(data), format=fmt))["calls"]


# -- which endpoints are decoded ------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("/v1/chat/completions", "openai-chat"),
        ("/openai/deployments/gpt/chat/completions?api-version=2024", "openai-chat"),
        ("/api/v1/chat/completions/", "openai-chat"),
        ("/v1/messages", "anthropic"),
        ("/v1/responses", "openai-responses"),
        ("/v1/threads/t_1/messages", None),
        ("/v1/models", None),
        ("/v1/embeddings", None),
        ("/v1/completions", None),
    ],
)
def test_only_tool_call_endpoints_are_decoded(path, fmt):
    assert decoded_format(path) == fmt


# -- where a request goes -----------------------------------------------------------


@pytest.mark.parametrize(
    ("upstream", "path", "query", "expected"),
    [
        ("https://api.x.com/v1", b"/v1/chat/completions", b"", "https://api.x.com/v1/chat/completions"),
        ("https://api.x.com/v1", b"/chat/completions", b"", "https://api.x.com/v1/chat/completions"),
        ("https://api.x.com/v1/", b"/v1/models", b"a=1", "https://api.x.com/v1/models?a=1"),
        ("https://api.x.com", b"/v1/messages", b"", "https://api.x.com/v1/messages"),
        ("https://gw.x.com/api/v1", b"/chat/completions", b"", "https://gw.x.com/api/v1/chat/completions"),
        ("https://a.x.com/v1?api-version=2", b"/v1/chat/completions", b"", "https://a.x.com/v1/chat/completions?api-version=2"),
        ("http://127.0.0.1:9/v1", b"/v1x/y%2Fz", b"", "http://127.0.0.1:9/v1/v1x/y%2Fz"),
    ],
)  # fmt: skip
def test_the_upstream_path_is_a_prefix_added_once(upstream, path, query, expected):
    assert str(join_upstream(httpx.URL(upstream), path, query)) == expected


def test_hop_by_hop_headers_and_host_are_not_forwarded():
    headers = [
        (b"Host", b"127.0.0.1:8788"),
        (b"Authorization", b"Bearer k"),
        (b"Connection", b"keep-alive, X-Private"),
        (b"X-Private", b"1"),
        (b"Keep-Alive", b"timeout=5"),
        (b"Transfer-Encoding", b"chunked"),
        (b"TE", b"trailers"),
        (b"Proxy-Authorization", b"Basic x"),
        (b"Content-Length", b"3"),
        (b"Accept", b"*/*"),
    ]
    assert forwarded_request_headers(headers) == [
        (b"Authorization", b"Bearer k"),
        (b"Content-Length", b"3"),
        (b"Accept", b"*/*"),
    ]
    response = [(b"transfer-encoding", b"chunked"), (b"content-encoding", b"gzip"), (b"date", b"d")]
    assert forwarded_response_headers(response) == response[1:]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("::1", True), ("localhost", True), ("127.0.0.2", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.4", False), ("example.com", False)],
)  # fmt: skip
def test_only_loopback_hosts_pass_without_a_warning(host, loopback):
    from fraglens.cli.proxy import exposure_warning

    assert is_loopback(host) is loopback
    assert (exposure_warning(host) is None) is loopback


# -- the tee ---------------------------------------------------------------------------


@pytest.mark.parametrize("split", [1, 2, 3, 7, 64, 100_000])
def test_sse_gives_the_same_calls_for_any_split(split):
    flow = tee_through(PARALLEL, split)
    assert calls(flow) == source_calls(PARALLEL)
    assert b"".join(data for _, data in flow.chunks) == PARALLEL
    assert flow.received == len(PARALLEL)


def test_events_arrive_as_their_bytes_do_not_at_the_end():
    flow = new_flow()
    tee = BodyTee(flow)
    first, rest = PARALLEL.split(b"\n\n", 1)
    tee.feed(first + b"\n", t=0.1)
    assert flow.events == []
    tee.feed(b"\n", t=0.2)
    assert len(flow.events) == 1 and flow.events[0].time == 0.2
    tee.feed(rest, t=0.3)
    assert not flow.stream.closed and len(flow.stream.reassembler.calls) == 2
    tee.close(t=0.4)
    assert flow.stream.closed


def test_crlf_sse_and_a_bom_are_read():
    data = b"\xef\xbb\xbf" + PARALLEL.replace(b"\n", b"\r\n")
    assert calls(tee_through(data, 5)) == source_calls(PARALLEL)


@pytest.mark.parametrize("split", [1, 9, 100_000])
def test_a_json_body_is_read_whole(split):
    data = b"\n  " + json.dumps(COMPLETION).encode()
    flow = tee_through(data, split)
    doc = build_report(flow.stream)
    assert doc["framing"] == "json-body"
    assert [(c["name"], c["arguments"]) for c in doc["calls"]] == [("lookup", {"q": "x"})]


def test_an_html_error_page_is_kept_as_text():
    flow = tee_through(b"<html><body>502 Bad Gateway</body></html>", 10)
    assert flow.stream.closed
    assert "502 Bad Gateway" in flow.events[0].data


@pytest.mark.parametrize("split", [1, 13, 100_000])
def test_gzip_is_undone_for_the_flow(split):
    flow = tee_through(gzip.compress(PARALLEL), split, "gzip")
    assert b"".join(d for _, d in flow.chunks) == PARALLEL
    assert calls(flow) == source_calls(PARALLEL)
    assert flow.received == len(gzip.compress(PARALLEL))


@pytest.mark.parametrize("wrap", [zlib.MAX_WBITS, -zlib.MAX_WBITS])
def test_deflate_zlib_wrapped_or_raw_is_undone(wrap):
    z = zlib.compressobj(wbits=wrap)
    data = z.compress(PARALLEL) + z.flush()
    assert calls(tee_through(data, 17, "deflate")) == source_calls(PARALLEL)


def test_an_encoding_it_cannot_undo_is_noted_not_guessed():
    flow = tee_through(b"\x00\x01binary", 3, "x-custom-codec")
    assert flow.events == [] and flow.chunks == []
    assert any("x-custom-codec" in note for note in flow.notes)


def test_a_corrupt_compressed_body_is_noted():
    flow = tee_through(b"not gzip at all", 4, "gzip")
    assert any("content-encoding" in note for note in flow.notes)
    assert flow.stream.closed


def test_an_empty_body_closes_an_empty_stream():
    flow = tee_through(b"", 1)
    assert flow.stream.closed and flow.events == []


def test_a_listed_endpoint_keeps_bytes_but_decodes_nothing():
    flow = tee_through(b'{"data": []}', 4, path="/v1/models")
    assert flow.stream is None
    assert flow.chunks and flow.events == []


# -- the store and its rows -------------------------------------------------------------


def test_worst_status_orders_statuses_by_badness():
    assert worst_status([]) is None
    assert worst_status(["ok", "empty"]) == "empty"
    assert worst_status(["ok", "open"]) == "open"
    assert worst_status(["repaired", "truncated", "ok"]) == "truncated"
    assert worst_status(["aborted", "invalid"]) == "aborted"


def test_rows_count_calls_worst_status_and_diagnostics():
    cut = PARALLEL[: PARALLEL.index(b"ich")]
    flow = tee_through(cut, 50)
    row = flow.row()
    assert (row.calls, row.worst) == (2, "truncated")
    assert row.diagnostics and row.severity == "error"
    assert "truncated" in row.text() and "/v1/chat/completions" in row.text()


def test_the_store_keeps_the_newest_flows_and_never_drops_a_live_one():
    store = FlowStore(max_flows=3)
    live = new_flow(store)
    for _ in range(4):
        flow = new_flow(store)
        flow.state = FlowState.DONE
    assert live in store.flows and len(store.flows) == 3
    assert [f.number for f in store.flows] == [1, 4, 5]


def test_listeners_hear_every_change_and_a_broken_one_is_dropped():
    store = FlowStore()
    heard: list[tuple[int, str]] = []
    store.subscribe(lambda flow, change: heard.append((flow.number, change)))

    def broken(flow, change):
        raise RuntimeError("a view bug")

    store.subscribe(broken)
    flow = new_flow(store)
    before = store.version
    store.changed(flow, "end")
    assert heard == [(1, "new"), (1, "end")]
    assert store.version == before + 1
    assert broken not in store._listeners


# -- recordings of flows ------------------------------------------------------------------


def test_a_saved_flow_is_a_recording_with_the_same_calls(tmp_path):
    flow = tee_through(PARALLEL, 11)
    flow.status, flow.response_t = 200, 0.01
    flow.response_headers = {"content-type": "text/event-stream", "set-cookie": "[redacted]"}
    flow.state, flow.ended = FlowState.DONE, flow.t0 + 1
    path = save_flow(flow, tmp_path / recording_name(flow))
    assert path.name.endswith("-0001-post-v1-chat-completions.fraglens")
    stream, framed = load_stream(str(path))
    assert framed.framing == "recording"
    assert framed.meta["format"] == "openai-chat"
    assert framed.meta["response"]["status"] == 200
    assert framed.meta["end"]["end"] == "eof"
    assert build_report(stream)["calls"] == calls(flow)
    assert flow.saved_to == str(path)


def test_a_saved_flow_redacts_what_the_store_did_not(tmp_path):
    flow = tee_through(
        PARALLEL,
        100,
        request_headers={"x-api-key": KEY, "cookie": KEY},
        url=f"https://h/v1/chat/completions?key={KEY}",
    )
    path = save_flow(flow, tmp_path / "f.fraglens")
    assert KEY.encode() not in path.read_bytes()


# -- the headless line ----------------------------------------------------------------------


def test_the_headless_line_says_what_the_flow_list_shows():
    flow = tee_through(PARALLEL, 100)
    flow.status, flow.state = 200, FlowState.DONE
    flow.ended = flow.t0 + 1.5
    line = flow_line(flow.row())
    assert line.startswith("#1 ")
    assert "POST /v1/chat/completions m 200 1.50s 2 calls (worst ok), 0 diagnostics" in line


def test_the_headless_line_of_a_failed_flow_says_why():
    flow = new_flow(path="/v1/models", method="GET", model=None)
    flow.state, flow.error = FlowState.FAILED, "could not reach the upstream"
    flow.ended = flow.t0
    line = flow_line(flow.row())
    assert "GET /v1/models --- 0.00s (not decoded) [failed] - could not reach" in line


def test_the_headless_printer_prints_each_flow_once_when_it_ends():
    store = FlowStore()
    out = io.StringIO()
    HeadlessPrinter(store, out=out)
    flow = new_flow(store)
    tee = BodyTee(flow)
    tee.feed(PARALLEL, 0.1)
    store.changed(flow, "body")
    assert out.getvalue() == ""
    tee.close(0.2)
    flow.status, flow.state, flow.ended = 200, FlowState.DONE, flow.t0 + 0.2
    store.changed(flow, "end")
    text = out.getvalue()
    assert text.count("#1 ") == 1
    assert "get_weather" in text and "get_time" in text


def test_the_headless_json_is_one_object_per_flow():
    store = FlowStore()
    out = io.StringIO()
    HeadlessPrinter(store, out=out, as_json=True)
    flow = tee_through(PARALLEL, 100)
    store.flows.append(flow)
    flow.state = FlowState.DONE
    store.changed(flow, "end")
    (line,) = out.getvalue().splitlines()
    doc = json.loads(line)
    assert doc["state"] == "done" and doc["calls"] == 2
    assert [c["name"] for c in doc["check"]["calls"]] == ["get_weather", "get_time"]


# -- the copy's caps and scrubbing --------------------------------------------------------

ECHOED_KEY = "sk-proxy-flows-echo-3b9f1e"


@pytest.mark.parametrize("split", [1, 4, 100_000])
def test_an_echoed_key_is_scrubbed_from_the_flow_even_json_escaped_and_compressed(split):
    escaped = "".join(f"\\u{ord(c):04x}" for c in ECHOED_KEY)
    body = f'{{"error": {{"message": "bad key {ECHOED_KEY} / {escaped}"}}}}'.encode()
    secrets = Secrets.of_request({"authorization": f"Bearer {ECHOED_KEY}"})
    flow = tee_through(gzip.compress(body), split, "gzip", secrets=secrets)
    kept = b"".join(d for _, d in flow.chunks)
    assert kept == b'{"error": {"message": "bad key [redacted] / [redacted]"}}'
    assert ECHOED_KEY not in json.dumps(build_report(flow.stream))


def test_a_gzip_bomb_is_decoded_up_to_the_cap_only():
    bomb = gzip.compress(b"data: " + b"A" * 5_000_000)  # ~5 KB that inflates to 5 MB
    limits = Limits(max_decoded=64 * 1024)
    flow = tee_through(bomb, 1024, "gzip", limits=limits)
    kept = sum(len(d) for _, d in flow.chunks)
    assert kept == 64 * 1024
    assert flow.received == len(bomb)  # every byte was forwarded all the same
    assert any("ran past 64 KiB decoded (--max-decoded-bytes)" in n for n in flow.notes)
    assert flow.stream.closed


def test_an_endless_sse_line_stops_the_reading_at_the_cap():
    limits = Limits(max_line=1000)
    data = PARALLEL + b"data: " + b"x" * 5000
    flow = tee_through(data, 100, limits=limits)
    # every event before the long line was read; the long line was not decoded
    assert calls(flow) == source_calls(PARALLEL)
    kept = sum(len(d) for _, d in flow.chunks)
    assert len(PARALLEL) + 1000 < kept <= len(PARALLEL) + 1000 + 100
    assert any("an SSE line ran past 1000 bytes (--max-line-bytes)" in n for n in flow.notes)


def test_a_long_event_of_short_lines_is_capped_too():
    limits = Limits(max_line=1000)
    data = b"data: " + b"x\ndata: " * 400 + b"\n\n"
    flow = tee_through(data, 50, limits=limits)
    assert flow.events == []
    assert any("an SSE event ran past 1000 bytes" in n for n in flow.notes)
