"""Tools files written by an attacker: nothing is fetched, nothing hangs, nothing crashes.

A tool's ``$ref`` points at a loopback listener this test starts, at a file
whose schema would change the verdict, at a named pipe whose opening would
block; references loop; a ``pattern`` backtracks for hours; a number is one
Python cannot divide. Every entry point that holds calls to their tools (the
library, ``check --tools``, ``fraglens PATH`` without a terminal, ``history
check``, ``live --tools`` against ``fraglens serve``, the proxy) ends with a
verdict on every call, and the listener and the files see nothing.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fraglens.cli import main
from fraglens.fit.budget import DEFAULT_BUDGET
from fraglens.fit.schema import Checker
from fraglens.fit.tools import Tool, read_tools
from fraglens.fit.verdicts import check_fit
from fraglens.net.proxy.flows import FlowStore
from fraglens.net.proxy.headless import HeadlessPrinter
from fraglens.net.proxy.server import ProxyApp, ProxyServer
from fraglens.net.replay import Pace
from fraglens.net.serve import start_server
from fraglens.reading.capture import stream_from_bytes
from fraglens.report.document import build_report
from fraglens.report.text import LINE_LIMIT, print_report

from .conftest import PATIENCE, ROOT
from .test_live_streams import FAKE_KEY, _chat, _tool

#: every call's arguments: an object ``a`` (for the references to act on) and a
#: near-match of ``^(a+)+$`` that Python's ``re`` takes hours to reject
ARGS = {"a": {"x": 1}, "code": "a" * 40 + "!"}


class Listener:
    """A loopback port that counts the connections made to it: a fetch of any
    ``$ref`` pointed here, by http or https, is one."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    watched = Listener()
    yield watched
    watched.close()


@pytest.fixture
def hostile(tmp_path: Path, listener: Listener) -> dict[str, tuple[dict, str, str]]:
    """tool name -> (its parameters, the code its call must get, a word of the reason)."""
    schema_file = tmp_path / "string.json"
    # fetched, this would make every call an args-schema error: the verdict shows a read
    schema_file.write_text('{"type": "string"}')
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # opened for reading, it blocks until a writer comes: none will
    url = listener.url
    return {
        "remote_http": ({"$ref": f"{url}/schema.json"}, "schema-ref-unresolved", "schema.json"),
        "remote_https": (
            {"$ref": f"https://127.0.0.1:{listener.port}/s.json"},
            "schema-ref-unresolved",
            "s.json",
        ),
        "remote_nested": (
            {"type": "object", "properties": {"a": {"$ref": f"{url}/a.json"}}},
            "schema-ref-unresolved",
            "a.json",
        ),
        "remote_base": (
            {"$id": f"{url}/root.json", "properties": {"a": {"$ref": "b.json"}}},
            "schema-ref-unresolved",
            "b.json",
        ),
        "local_file": ({"$ref": schema_file.as_uri()}, "schema-ref-unresolved", "string.json"),
        "local_fifo": ({"$ref": fifo.as_uri()}, "schema-ref-unresolved", "pipe.json"),
        "cycle": (
            {
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                "$ref": "#/$defs/a",
            },
            "schema-uncheckable",
            "too deeply",
        ),
        "backtracking": (
            {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}},
            "schema-too-slow",
            "'pattern'",
        ),
    }


def tools_of(hostile: dict[str, tuple[dict, str, str]]) -> list[dict]:
    return [
        {"type": "function", "function": {"name": name, "parameters": parameters}}
        for name, (parameters, _, _) in hostile.items()
    ]


def capture(names: list[str], arguments: str = json.dumps(ARGS)) -> str:
    """A Chat Completions stream with one call of each tool, all with ``arguments``."""
    body = _chat({"role": "assistant"})
    for n, name in enumerate(names):
        body += _chat(_tool(n, arguments, f"call_{n}", name))
    return body + _chat({}, finish="tool_calls") + "data: [DONE]\n\n"


def files(tmp_path: Path, hostile: dict) -> tuple[Path, Path]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(tools_of(hostile)))
    sse = tmp_path / "capture.sse"
    sse.write_text(capture(list(hostile)))
    return tools, sse


def assert_verdicts(calls: list[dict], hostile: dict) -> None:
    """Each call of the report not checked, for the reason its tool gives."""
    assert [c["name"] for c in calls] == list(hostile)
    for call in calls:
        _, _, word = hostile[call["name"]]
        assert call["status"] == "ok"
        assert not call["fit"]["checked"], call["name"]
        assert word in call["fit"]["reason"], (call["name"], call["fit"]["reason"])


def assert_codes(diagnostics: list[dict], hostile: dict) -> None:
    fit_codes = {
        d["call"]: d["code"] for d in diagnostics if d["code"].startswith(("schema-", "tool-"))
    }
    assert fit_codes == {n: code for n, (_, code, _) in enumerate(hostile.values())}


def assert_untouched(listener: Listener, tmp_path: Path) -> None:
    assert listener.connections == 0
    fifo = tmp_path / "pipe.json"
    with pytest.raises(OSError):  # ENXIO: no one holds the pipe open for reading
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


# -- the library ----------------------------------------------------------------------------


def test_each_hostile_tool_leaves_its_call_unchecked_for_its_reason(hostile, listener, tmp_path):
    stream, _ = stream_from_bytes(capture(list(hostile)).encode())
    fit = check_fit(stream, read_tools(tools_of(hostile)), budget=0.5)
    doc = build_report(stream, fit=fit)
    assert_verdicts(doc["calls"], hostile)
    assert_codes(doc["diagnostics"], hostile)
    assert_untouched(listener, tmp_path)
    # a recursive schema is no cycle: each $ref descends into a smaller value
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    checker = Checker([Tool("tree", tree)])
    assert checker.check("tree", {"kids": [{"kids": []}]}).fits
    (error,) = checker.check("tree", {"kids": [{"kids": [3]}]}).errors
    assert (error.pointer, error.rule) == ("/kids/0/kids/0", "type")


@pytest.mark.parametrize(
    ("schema", "written"),
    [
        ({"properties": {"a": {"$ref": "#/$defs/gone"}}}, "#/$defs/gone"),
        ({"$ref": "#nowhere"}, "#nowhere"),
        ({"$ref": "other.json#/x"}, "other.json#/x"),
    ],
)
def test_a_reference_that_does_not_resolve_is_named_as_the_schema_writes_it(schema, written):
    verdict = Checker([Tool("t", schema)]).check("t", {"a": 1})
    assert verdict.code == "schema-ref-unresolved"
    assert verdict.reason.startswith(f"reference {written} not resolved")


@pytest.mark.parametrize(
    ("value", "exception"),
    [
        (float("inf"), "OverflowError"),  # 1e999 as Python reads it
        (float("nan"), "ValueError"),
        (10**400, "OverflowError"),  # an integer no float holds
    ],
)
def test_a_number_the_validator_cannot_divide_is_a_verdict_not_a_traceback(value, exception):
    checker = Checker([Tool("pay", {"properties": {"n": {"multipleOf": 0.5}}})])
    verdict = checker.check("pay", {"n": value})
    assert not verdict.checked and verdict.code == "schema-uncheckable"
    assert "'multipleOf'" in verdict.reason and exception in verdict.reason
    assert checker.check("pay", {"n": 2.5}).fits  # the next call is checked as ever


def test_past_the_budget_the_keyword_at_work_is_named_and_the_next_call_is_checked():
    schema = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "string"}}}
    checker = Checker([Tool("t", schema)], budget=0.3)
    slow = checker.check("t", {"a" * 40 + "!": 1})
    assert not slow.checked and slow.code == "schema-too-slow"
    assert "'patternProperties'" in slow.reason and "0.3 s" in slow.reason
    (error,) = checker.check("t", {"aaa": 1}).errors  # a new worker took over
    assert error.rule == "type"


def test_once_a_tools_call_ran_out_of_budget_its_later_calls_are_not_tried():
    tools = [
        Tool("slow", {"properties": {"code": {"pattern": "^(a+)+$"}}}),
        Tool("fine", {"properties": {"n": {"type": "integer"}}}),
    ]
    near = {"code": "a" * 40 + "!"}
    calls = [("slow", near), ("fine", {"n": "1"}), ("slow", near), ("slow", {"code": "aa"})]
    first, fine, second, third = Checker(tools, budget=0.3).check_many(calls)
    assert first.code == "schema-too-slow" and "'pattern'" in first.reason
    assert [e.rule for e in fine.errors] == ["type"]
    for later in (second, third):  # each would have cost a budget, hours without one
        assert later.code == "schema-too-slow" and "earlier call" in later.reason


def test_a_worker_that_cannot_start_is_a_reason_once_per_tool(tmp_path, monkeypatch):
    from fraglens.fit import budget

    budget._WORKER.stop()  # the next check starts one
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    tools = [Tool("a", {"type": "object"}), Tool("b", {"type": "object"})]
    first, again, other = Checker(tools).check_many([("a", {}), ("a", {}), ("b", {})])
    assert first.code == other.code == "schema-uncheckable"
    assert "could not start" in first.reason and "could not start" in other.reason
    assert again.code == "schema-uncheckable" and "stopped the validator" in again.reason
    monkeypatch.undo()
    assert Checker(tools).check("a", {}).fits  # a python again: a worker again


@pytest.mark.parametrize(("batch", "size"), [(256, 8 << 20), (7, 8 << 20), (256, 1000)])
def test_answers_keep_their_calls_across_batches_and_reads(batch, size, monkeypatch):
    # hundreds of answers arrive in one read of the pipe; a batch ends at a count
    # or a size: every verdict must still be its own call's
    from fraglens.fit import budget

    monkeypatch.setattr(budget, "_BATCH", batch)
    monkeypatch.setattr(budget, "_BATCH_BYTES", size)
    tools = [Tool("n", {"properties": {"n": {"type": "integer"}}}),
             Tool("s", {"properties": {"s": {"maxLength": 3}}})]  # fmt: skip
    calls = [("n", {"n": k if k % 3 else str(k)}) if k % 2 else ("s", {"s": "x" * (k % 5)})
             for k in range(600)]  # fmt: skip
    verdicts = Checker(tools).check_many(calls)
    for (name, value), verdict in zip(calls, verdicts, strict=True):
        broken = isinstance(value.get("n"), str) or len(value.get("s", "")) > 3
        assert verdict.tool == name and verdict.checked
        assert [e.rule for e in verdict.errors] == (
            [("type" if name == "n" else "maxLength")] if broken else []
        ), (name, value)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_forked_child_gets_its_own_worker_and_leaves_the_parents_alone():
    from fraglens.fit import budget

    def worker_pid() -> int:
        assert budget._WORKER.proc is not None
        return budget._WORKER.proc.pid

    checker = Checker([Tool("n", {"properties": {"n": {"type": "integer"}}})])
    assert checker.check("n", {"n": 1}).fits  # the parent's worker is running
    parents = worker_pid()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check --jsonl's local processes are forked
        try:
            verdict = checker.check("n", {"n": "1"})
            answer = {"rules": [e.rule for e in verdict.errors], "worker": worker_pid()}
            os.write(write, json.dumps(answer).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert child["rules"] == ["type"] and child["worker"] != parents
    assert [e.rule for e in checker.check("n", {"n": "2"}).errors] == ["type"]
    assert worker_pid() == parents


def _in_child(work) -> dict:
    """``work()`` in a forked child, its JSON answer back."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(answer)


def _checked_by(kind: str) -> dict:
    """A tool ``n`` whose ``n`` is of ``kind``: each value's broken rules (None:
    not checked), and the worker's pid."""
    from fraglens.fit import budget

    checker = Checker([Tool("n", {"properties": {"n": {"type": kind}}})])
    verdicts = [checker.check("n", {"n": v}) for v in (1, "1", 2, "2")]
    assert budget._WORKER.proc is not None
    return {"rules": [[e.rule for e in v.errors] if v.checked else None for v in verdicts],
            "worker": budget._WORKER.proc.pid}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_batchs_processes_take_turns_on_one_worker_each_with_its_own_tools():
    from fraglens.fit import budget

    with budget.shared():
        assert budget._WORKER.proc is not None
        shared = budget._WORKER.proc.pid
        # each child's checker draws the same key from the counter they were forked with
        ints, strings = _in_child(lambda: _checked_by("integer")), _in_child(
            lambda: _checked_by("string"))
    assert ints == {"rules": [[], ["type"], [], ["type"]], "worker": shared}
    assert strings == {"rules": [["type"], [], ["type"], []], "worker": shared}
    assert budget._WORKER.proc is None  # ended with the block


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_shared_worker_out_of_budget_is_ended_for_all_and_each_starts_its_own():
    from fraglens.fit import budget

    schema = {"properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}

    def slow() -> dict:
        verdict = Checker([Tool("t", schema)], budget=0.2).check("t", {"code": "a" * 40 + "!"})
        return {"code": verdict.code, "reason": verdict.reason}

    with budget.shared():
        assert budget._WORKER.proc is not None
        shared = budget._WORKER.proc
        first = _in_child(slow)
        assert shared.wait(PATIENCE) != 0  # the watchdog ended it
        later = _in_child(lambda: _checked_by("integer"))
    assert first["code"] == "schema-too-slow" and "'pattern'" in first["reason"]
    assert later["rules"] == [[], ["type"], [], ["type"]] and later["worker"] != shared.pid


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_call_a_shared_worker_stopped_on_is_checked_again_on_the_processs_own():
    from fraglens.fit import budget

    with budget.shared():
        assert budget._WORKER.proc is not None
        shared = budget._WORKER.proc
        shared.kill()  # as the kernel's out-of-memory killer would, between two turns
        shared.wait(PATIENCE)
        later = _in_child(lambda: _checked_by("integer"))
    # not "the validator stopped": the call did not stop it, and its own worker checks it
    assert later["rules"] == [[], ["type"], [], ["type"]] and later["worker"] != shared.pid


def test_no_budget_waits_for_a_slow_check_and_a_tiny_one_stops_it():
    # 2**20 backtracking steps: a fraction of a second, not hours
    schema = {"properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}
    near = {"code": "a" * 20 + "!"}
    stopped = Checker([Tool("t", schema)], budget=0.001).check("t", near)
    assert stopped.code == "schema-too-slow"
    (error,) = Checker([Tool("t", schema)], budget=None).check("t", near).errors
    assert error.rule == "pattern"


def test_the_default_budget_is_at_most_a_second():
    assert 0 < DEFAULT_BUDGET <= 1
    assert Checker([]).budget == DEFAULT_BUDGET


# -- the command line -----------------------------------------------------------------------


def test_check_tools_ends_with_a_verdict_and_fetches_nothing(
    hostile, listener, tmp_path, capsys
):
    tools, sse = files(tmp_path, hostile)
    assert main(["check", "--json", "--tools", str(tools), str(sse)]) == 0  # warnings only
    doc = json.loads(capsys.readouterr().out)
    assert_verdicts(doc["calls"], hostile)
    assert_codes(doc["diagnostics"], hostile)
    assert_untouched(listener, tmp_path)


def test_a_batch_on_two_processes_gives_every_capture_its_verdicts(hostile, listener, tmp_path):
    tools, sse = files(tmp_path, hostile)
    second = tmp_path / "again.sse"
    second.write_bytes(sse.read_bytes())
    run = subprocess.run(
        [sys.executable, "-m", "fraglens", "check", "--jsonl", "--jobs", "2", "--tools",
         str(tools), "--schema-timeout", "0.5", str(sse), str(second)],
        capture_output=True, text=True, timeout=PATIENCE * 3,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tui")},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    docs = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(docs) == 2
    for doc in docs:
        assert_verdicts(doc["calls"], hostile)
    assert_untouched(listener, tmp_path)


def test_the_worker_imports_nothing_from_the_folder_check_runs_in(tmp_path):
    # a cloned repository may hold a jsonschema.py: the validator must not be it
    trap = tmp_path / "jsonschema.py"
    trap.write_text("import pathlib; pathlib.Path(__file__).with_name('ran').write_text('')\n")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "pay", "input_schema": {
        "type": "object", "properties": {"amount": {"type": "integer"}}}}]))
    (tmp_path / "c.sse").write_text(capture(["pay"], '{"amount": "12"}'))
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from fraglens.cli import main; sys.exit(main())",
         "check", "--json", "--tools", "tools.json", "c.sse"],
        cwd=tmp_path, capture_output=True, text=True, timeout=PATIENCE,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tui")},
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    (call,) = json.loads(run.stdout)["calls"]
    assert [e["rule"] for e in call["fit"]["errors"]] == ["type"]
    assert not (tmp_path / "ran").exists()


def test_a_recordings_own_tools_are_held_the_same_way(hostile, listener, tmp_path, capsys):
    from fraglens.framing.recording import RecordingWriter

    path = tmp_path / "hostile.fraglens"
    with path.open("wb") as out:
        writer = RecordingWriter(out)
        body = {"model": "m", "messages": [], "tools": tools_of(hostile)}
        writer.start({"method": "POST", "url": "http://127.0.0.1:1/v1/chat/completions",
                      "body": body})  # fmt: skip
        writer.response(200, {"content-type": "text/event-stream"}, t=0.1)
        writer.chunk(0.2, capture(list(hostile)).encode())
        writer.end("done", t=0.3)
    assert main(["check", "--json", "--schema-timeout", "0.5", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert_verdicts(doc["calls"], hostile)
    assert_codes(doc["diagnostics"], hostile)
    assert_untouched(listener, tmp_path)


def test_check_tools_with_multipleof_and_1e999_is_a_warning_not_a_traceback(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "pay", "input_schema": {
        "type": "object", "properties": {"amount": {"multipleOf": 0.5}}}}]))
    sse = tmp_path / "c.sse"
    sse.write_text(capture(["pay"], '{"amount": 1e999}'))
    assert main(["check", "--tools", str(tools), str(sse)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "schema-uncheckable" in out and "multipleOf" in out


@pytest.mark.parametrize("seconds", ["0", "1e300"])
def test_a_schema_timeout_of_0_or_beyond_any_clock_is_no_limit(seconds, tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "pay", "input_schema": {
        "type": "object", "properties": {"amount": {"type": "integer"}}}}]))
    sse = tmp_path / "c.sse"
    sse.write_text(capture(["pay"], '{"amount": "12"}'))
    assert main(["check", "--json", "--schema-timeout", seconds, str(sse),
                 "--tools", str(tools)]) == 1
    (call,) = json.loads(capsys.readouterr().out)["calls"]
    assert [e["rule"] for e in call["fit"]["errors"]] == ["type"]


def test_fraglens_path_without_a_terminal_gives_the_same_verdicts(
    hostile, listener, tmp_path, capsys
):
    tools, sse = files(tmp_path, hostile)
    assert main([str(sse), "--tools", str(tools), "--schema-timeout", "0.5"]) == 0
    out = capsys.readouterr().out
    for name, (_, code, _) in hostile.items():
        assert f"{code} " in out, name
    assert "not checked: reference" in out
    assert_untouched(listener, tmp_path)


def test_history_check_reports_each_unchecked_call_and_fetches_nothing(
    hostile, listener, tmp_path, capsys
):
    calls = [
        {"id": f"call_{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(ARGS)}}
        for n, name in enumerate(hostile)
    ]  # fmt: skip
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    body = {
        "model": "m",
        "tools": tools_of(hostile),
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *results,
        ],
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    assert main(["history", "check", "--json", "--schema-timeout", "0.5", str(path)]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [p["code"] for p in problems] == ["arguments-unchecked"] * len(hostile)
    for problem, (name, (_, _, word)) in zip(problems, hostile.items(), strict=True):
        assert f"({name}):" in problem["message"] and word in problem["message"]
    assert_untouched(listener, tmp_path)


def test_live_tools_against_serve_ends_with_a_verdict(
    hostile, listener, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    tools, sse = files(tmp_path, hostile)
    with start_server([str(sse)], pace=Pace("fixed", 0)) as server:
        code = main([
            "live", "--url", server.url + "/v1/chat/completions", "--model", "m",
            "--prompt", "go", "--tools", str(tools), "--json", "--schema-timeout", "0.5",
        ])  # fmt: skip
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert_verdicts(doc["calls"], hostile)
    assert_untouched(listener, tmp_path)


def test_the_proxy_holds_a_clients_hostile_tools_and_fetches_nothing(
    hostile, listener, tmp_path
):
    _, sse = files(tmp_path, hostile)
    store = FlowStore()
    out = io.StringIO()
    HeadlessPrinter(store, out=out, as_json=True, schema_budget=0.5)
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}],
            "tools": tools_of(hostile)}  # fmt: skip
    with (
        start_server([str(sse)], pace=Pace("fixed", 0)) as up,
        ProxyServer(ProxyApp(up.url + "/v1", store), port=0) as proxy,
    ):
        response = httpx.post(proxy.url + "/v1/chat/completions", json=body, timeout=PATIENCE)
        assert response.status_code == 200
        deadline = time.monotonic() + PATIENCE
        while not out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    (line,) = out.getvalue().splitlines()
    doc = json.loads(line)["check"]
    assert_verdicts(doc["calls"], hostile)
    assert_untouched(listener, tmp_path)


async def test_the_app_gets_its_verdicts_once_the_capture_is_read(hostile, listener, tmp_path):
    from fraglens.app.app import FraglensApp
    from fraglens.fit.verdicts import fit_for_request
    from fraglens.reading.progressive import Loading

    tools = read_tools(tools_of(hostile))
    loading = Loading(capture(list(hostile)).encode(), "hostile.sse")
    app = FraglensApp(
        loading=loading,
        source="hostile.sse",
        fit_when_loaded=lambda stream: fit_for_request(stream, None, tools, budget=0.5),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + PATIENCE
        while app.loading is not None and time.monotonic() < deadline:
            await pilot.pause()
        fit = app.index.fit
    assert fit is not None
    verdicts = [fit.calls[call.seq] for call in app.stream.reassembler.calls]
    assert [v.code for v in verdicts] == [code for _, code, _ in hostile.values()]
    assert_untouched(listener, tmp_path)


# -- Ctrl-C ---------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc for the worker")
def test_ctrl_c_ends_a_check_stuck_in_a_backtracking_pattern(tmp_path):
    hostile = {"backtracking": ({"properties": {"code": {"pattern": "^(a+)+$"}}}, "", "")}
    tools, sse = files(tmp_path, hostile)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tui")}
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from fraglens.cli import main; sys.exit(main())",
         "check", "--tools", str(tools), "--schema-timeout", "0", str(sse)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + PATIENCE
        while not children(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (worker,) = children(proc.pid)
        # the worker is validating once it has used some CPU: until then it starts up
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=PATIENCE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert b"Traceback" not in err
    assert not Path(f"/proc/{worker}").exists()  # ended and reaped with its parent


# -- the text report ------------------------------------------------------------------------


def test_a_huge_diagnostic_is_cut_in_the_text_report_and_kept_whole_in_json():
    enum = [f"v{i}" for i in range(20_000)]
    stream, _ = stream_from_bytes(capture(["pick"], '{"x": "nope"}').encode())
    tool = Tool("pick", {"properties": {"x": {"enum": enum}}})
    doc = build_report(stream, fit=check_fit(stream, [tool]))
    (message,) = [d["message"] for d in doc["diagnostics"] if d["code"] == "args-schema"]
    assert f"'v{len(enum) - 1}'" in message  # the document keeps every entry
    out = io.StringIO()
    from rich.console import Console

    print_report(doc, "c.sse", console=Console(file=out, width=100))
    text = out.getvalue()
    assert f"'v{len(enum) - 1}'" not in text
    assert f"{len(message) - LINE_LIMIT:,} more characters: --json has them all" in text.replace(
        "\n", " "
    )
