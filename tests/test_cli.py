"""`fraglens check`: the contract, the exit codes, the one-line errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fraglens.cli import main

ROOT = Path(__file__).resolve().parent.parent

SEED = ROOT / "sample_streams" / "seed_interleaved_two_calls.sse"

GOOD = (
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
    '"type":"function","function":{"name":"f","arguments":"{\\"a\\":"}}]}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    '"function":{"arguments":"1}"}}]}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    "data: [DONE]\n\n"
)
TRUNCATED = GOOD.replace('"1}"', '"1"').replace('"tool_calls"}]}', '"length"}]}')


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fraglens", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def write(tmp_path: Path, text: str, name: str = "s.sse") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_json_report_has_the_contract_fields(tmp_path, capsys):
    code = main(["check", "--json", write(tmp_path, GOOD)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["format"] == "openai-chat" and doc["framing"] == "sse" and doc["end"] == "done"
    assert doc["finish_reasons"] == {"0": "tool_calls"}
    (call,) = doc["calls"]
    assert call["id"] == "call_1" and call["name"] == "f" and call["index"] == 0
    assert call["arguments_raw"] == '{"a":1}' and call["arguments"] == {"a": 1}
    assert call["status"] == "ok" and call["fragments"] == 2
    assert call["scan"]["complete"] is True
    assert doc["diagnostics"] == []


def test_truncated_call_exits_1_and_says_so(tmp_path, capsys):
    code = main(["check", "--json", write(tmp_path, TRUNCATED)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["calls"][0]["status"] == "truncated"
    assert {d["code"] for d in doc["diagnostics"]} >= {"args-truncated", "finish-length"}


def test_json_is_one_line_in_a_pipe_and_indented_on_a_terminal(tmp_path):
    path = write(tmp_path, GOOD)
    piped = run_cli("check", "--json", path)
    assert piped.stdout.count("\n") == 1 and json.loads(piped.stdout)["calls"]
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "fraglens", "check", "--json", path],
                              stdout=follower, cwd=ROOT, timeout=120, check=False)
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0
    text = out.decode().replace("\r\n", "\n")
    assert text.startswith('{\n  "fraglens"') and json.loads(text) == json.loads(piped.stdout)


def test_stdin_is_read_with_a_dash():
    proc = run_cli("check", "--json", "-", stdin=GOOD)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["calls"][0]["arguments"] == {"a": 1}


def test_missing_file_is_one_line_and_exit_2():
    proc = run_cli("check", "/nonexistent/capture.sse")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "fraglens: error: /nonexistent/capture.sse: no such file"
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02garbage\xff", b"hello, world\n"])
def test_unrecognizable_input_is_exit_2_without_traceback(tmp_path, content):
    p = tmp_path / "bad.sse"
    p.write_bytes(content)
    proc = run_cli("check", str(p))
    assert proc.returncode == 2
    assert proc.stderr.startswith("fraglens: error:") and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


_DEEP = "[" * 5000 + "]" * 5000  # past the nesting Python's json module can build


def _tool_chunk(arguments: str) -> str:
    entry = {"index": 0, "id": "c", "function": {"name": "f", "arguments": arguments}}
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}
    return f"data: {json.dumps(chunk)}\n\n"


_FINISH = (
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
)


@pytest.mark.parametrize(
    ("content", "framing", "statuses", "code"),
    [
        # a chunk, a body or an array item too deep to read is kept raw, as non-JSON
        (f"data: {_DEEP}\n\n", "sse", [], "non-json-data"),
        ('{"a":' + _DEEP + "}", "json-body", [], "non-json-data"),
        ("[" + _DEEP + "]", "json-array", [], "non-json-data"),
        # arguments that are well-formed but too deep to build a value from
        (_tool_chunk('{"x":' + _DEEP + "}") + _FINISH, "sse", ["invalid"], "args-invalid"),
        # ... and cut off inside that depth: still truncated, never repaired
        (_tool_chunk('{"x":' + _DEEP[:7000]) + _FINISH, "sse", ["truncated"], "args-truncated"),
    ],
    ids=["sse-chunk", "json-body", "json-array-item", "args-whole", "args-cut-off"],
)
def test_nesting_too_deep_is_a_finding_not_a_traceback(tmp_path, content, framing, statuses, code):
    proc = run_cli("check", "--json", write(tmp_path, content))
    assert "Traceback" not in proc.stderr and proc.stderr == ""
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["framing"] == framing
    assert [c["status"] for c in doc["calls"]] == statuses
    assert code in [d["code"] for d in doc["diagnostics"]]


@pytest.mark.parametrize("command", [["history", "check"], ["import-har"]])
def test_other_commands_refuse_too_deep_input_in_one_line(tmp_path, command):
    proc = run_cli(*command, write(tmp_path, '{"a":' + _DEEP + "}", "deep.json"))
    assert proc.returncode == 2
    assert proc.stderr == "fraglens: error: the input is nested too deeply to read\n"


def test_bad_flag_is_exit_2(tmp_path):
    proc = run_cli("check", "--format", "nope", write(tmp_path, GOOD))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_human_report_shows_calls_and_diagnostics(tmp_path):
    proc = run_cli("check", write(tmp_path, TRUNCATED))
    assert proc.returncode == 1
    assert "truncated" in proc.stdout and "args-truncated" in proc.stdout


def test_compare_shows_the_naive_by_id_bug():
    if not SEED.exists():
        pytest.skip("seed sample not written yet")
    proc = run_cli("check", "--json", "--compare", str(SEED))
    doc = json.loads(proc.stdout)
    by_id = doc["naive"]["by_id"]
    assert [k["chars"] for k in by_id] == [0, 0, 41]
    assert [c["arguments"] for c in doc["calls"]] == [
        {"city": "深圳"},
        {"city": "上海", "unit": '"u"'},
    ]


def test_max_arg_bytes_limits_a_call(tmp_path, capsys):
    code = main(["check", "--json", "--max-arg-bytes", "4", write(tmp_path, GOOD)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["calls"][0]["arguments_raw"] == '{"a"'
    assert "args-over-limit" in {d["code"] for d in doc["diagnostics"]}


def test_python_dash_m_tui_is_the_same_command(tmp_path):
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("fraglens ")


# -- hostile input: one line and exit 2, or a report; never a traceback ---------

LONE = _tool_chunk('{"note":"\\ud800 half a pair"}') + _FINISH


@pytest.mark.parametrize(
    "command",
    [["check"], ["check", "--json"], ["history", "build"], ["history", "build", "--json"]],
)
def test_a_lone_surrogate_in_arguments_is_printed_as_its_escape(tmp_path, command):
    proc = run_cli(*command, write(tmp_path, LONE))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "\\ud800" in proc.stdout  # spelled as the escape it came as: nothing lost


def test_history_check_prints_a_lone_surrogate_in_a_problem(tmp_path):
    messages = '[{"role": "tool", "tool_call_id": "\\ud800", "content": ""}]'
    for extra in ([], ["--json"]):
        proc = run_cli("history", "check", *extra, write(tmp_path, messages, "m.json"))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert "ud800" in proc.stdout


@pytest.mark.parametrize("value", ["inf", "nan", "1e400", "-inf"])
def test_max_arg_bytes_refuses_what_is_not_a_size(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--max-arg-bytes", value, write(tmp_path, GOOD)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--max-arg-bytes" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "framing"), [('{"a": 1}', "json-body"), ("[1, 2, 3]", "json-array")]
)
def test_json_that_is_no_model_response_is_exit_2(tmp_path, capsys, content, framing):
    assert main(["check", write(tmp_path, content, "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fraglens: error:") and "no model response found" in err
    assert framing in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "name"),
    [('{"a": 1}', "x.json"), (": only a comment\n\n", "c.sse"), ("hello\n", "t.txt"),
     (GOOD, "s.sse"), (TRUNCATED, "s.sse")],
)
def test_fraglens_path_without_a_terminal_exits_as_check_does(tmp_path, content, name):
    path = write(tmp_path, content, name)
    shown, checked = run_cli(path, stdin=""), run_cli("check", path)
    assert shown.returncode == checked.returncode
    assert shown.stdout == checked.stdout
    if checked.returncode == 2:  # the same one line, and no note about a report
        assert shown.stderr == checked.stderr


def test_check_dev_zero_stops_at_the_input_cap(monkeypatch, capsys):
    monkeypatch.setattr("fraglens.reading.capture.MAX_INPUT_BYTES", 4 << 20)
    assert main(["check", "/dev/zero"]) == 2
    err = capsys.readouterr().err
    assert err == f"fraglens: error: /dev/zero: more than {4 << 20} bytes, the most one " \
        "capture may hold; not read\n"


class _Endless:
    """A pipe that never ends: SSE keep-alive comments, forever."""

    def __init__(self) -> None:
        self.given = 0

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")  # as a BytesIO says it

    def read(self, n: int = -1) -> bytes:
        assert n > 0, "an endless pipe must never be read whole"
        self.given += n
        return (b": keep-alive\n" * (n // 13 + 1))[:n]


def test_endless_stdin_stops_at_the_input_cap(monkeypatch, capsys):
    monkeypatch.setattr("fraglens.reading.capture.MAX_INPUT_BYTES", 4 << 20)
    pipe = _Endless()
    monkeypatch.setattr("sys.stdin", type("Stdin", (), {"buffer": pipe})())
    assert main(["check", "-"]) == 2
    assert "stdin: more than" in capsys.readouterr().err
    assert pipe.given == (4 << 20) + 1  # read one byte past the cap, then stopped


def test_bytes_that_are_not_utf8_are_reported_where_they_came(tmp_path, capsys):
    good = _tool_chunk('{"city":"Zürich"}').replace("\\u00fc", "ü").encode()
    bad = good.replace("ü".encode(), b"\xfc")  # Latin-1, as a re-encoding relay sends it
    for data, expected in ((good, []), (bad, ["bytes-replaced"])):
        path = tmp_path / "s.sse"
        path.write_bytes(data + _FINISH.encode())
        main(["check", "--json", str(path)])
        doc = json.loads(capsys.readouterr().out)
        found = [d for d in doc["diagnostics"] if d["code"] == "bytes-replaced"]
        assert [d["code"] for d in found] == expected
    assert found[0]["event"] == 0 and "(fc at byte" in found[0]["message"]
    assert doc["calls"][0]["arguments"] == {"city": "Z\ufffdrich"}  # the text as read


def test_batch_commands_collect_garbage_in_large_steps() -> None:
    # a batch command builds one graph and exits: the collector must not
    # traverse the whole input every few hundred allocations (bench/verdicts.py)
    import gc

    from fraglens.cli import main

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        assert main(["explain", "args-truncated"]) == 0
        assert gc.get_threshold()[0] >= 100_000
    finally:
        gc.set_threshold(*before)
