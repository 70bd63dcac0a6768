"""``check --jsonl``: many captures, one JSON line each (the ``check --json``
report and its file), in a stable order, on local processes or a Dask
cluster, the same lines either way; and the DuckDB example of docs/check.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fraglens.batch.paths import BatchPathError, captures
from fraglens.batch.runners import _in_order
from fraglens.report.checked import CheckOptions, checked

from .conftest import PATIENCE, ROOT, SAMPLES


def fraglens(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fraglens", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=PATIENCE * 3,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")),
    )


def lines(run: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in run.stdout.splitlines()]


@pytest.fixture(scope="module")
def folder_run() -> subprocess.CompletedProcess:
    """The whole sample folder on two processes: shared by the tests below."""
    return fraglens("check", "--jsonl", "--jobs", "2", "sample_streams")


def test_a_folder_gives_one_line_per_capture_in_path_order(folder_run):
    got = lines(folder_run)
    expected = sorted(
        f"sample_streams/{p.name}" for p in SAMPLES.iterdir()
        if p.suffix in (".sse", ".jsonl", ".ndjson", ".eventstream")
    )
    assert [line["file"] for line in got] == expected
    assert list(got[0])[0] == "file"  # the file comes first on each line


def test_each_line_is_the_check_json_report_of_its_file(folder_run):
    for line in lines(folder_run):
        path = line.pop("file")
        if "error" in line:
            with pytest.raises(Exception) as refused:
                checked(path, CheckOptions())
            assert line == {"error": str(refused.value)}
            continue
        doc, _ = checked(str(ROOT / path), CheckOptions())
        assert line == json.loads(json.dumps(doc)), path


def test_exit_status_and_summary(folder_run):
    got = lines(folder_run)
    unreadable = [line for line in got if "error" in line]
    assert unreadable  # the sample that is no model response
    assert folder_run.returncode == 2
    summary = folder_run.stderr.strip().splitlines()[-1]
    assert summary.startswith(f"fraglens: {len(got)} captures: ")
    assert summary.endswith(f"{len(unreadable)} unreadable")


def test_exit_1_when_only_a_verdict_is_wrong_and_0_when_all_ok():
    wrong = fraglens("check", "--jsonl", "sample_streams/quirk_args_repaired.sse",
                     "sample_streams/backend_glm_whole_call.sse")
    assert wrong.returncode == 1
    assert "2 captures: 1 ok, 1 not ok, 0 unreadable" in wrong.stderr
    ok = fraglens("check", "--jsonl", "sample_streams/backend_glm_whole_call.sse")
    assert ok.returncode == 0 and "1 capture: 1 ok" in ok.stderr


def test_jobs_do_not_change_a_byte():
    one = fraglens("check", "--jsonl", "--jobs", "1", "sample_streams")
    two = fraglens("check", "--jsonl", "--jobs", "3", "sample_streams")
    assert one.stdout == two.stdout and one.returncode == two.returncode


def test_files_keep_the_order_given_and_globs_are_sorted_once_each():
    run = fraglens("check", "--jsonl", "sample_streams/quirk_args_repaired.sse",
                   "sample_streams/backend_*.sse", "sample_streams/quirk_args_repaired.sse")
    files = [line["file"] for line in lines(run)]
    backends = sorted(f"sample_streams/{p.name}" for p in SAMPLES.glob("backend_*.sse"))
    assert files == ["sample_streams/quirk_args_repaired.sse", *backends]


def test_an_unreadable_capture_still_gets_its_line(tmp_path):
    (tmp_path / "a.sse").write_bytes((SAMPLES / "backend_glm_whole_call.sse").read_bytes())
    (tmp_path / "b.json").write_text('{"a": 1}')
    run = fraglens("check", "--jsonl", str(tmp_path))
    got = lines(run)
    assert [Path(line["file"]).name for line in got] == ["a.sse", "b.json"]
    assert "no model response found" in got[1]["error"]
    assert run.returncode == 2


def test_a_path_that_names_nothing_is_one_line_and_exit_2():
    run = fraglens("check", "--jsonl", "no/such/folder")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == "fraglens: error: no/such/folder: no such file or folder"
    several = fraglens("check", "a.sse", "b.sse")
    assert several.returncode == 2 and "use --jsonl" in several.stderr
    assert "Traceback" not in run.stderr + several.stderr


def test_companions_and_hidden_files_in_a_folder_are_not_captures(tmp_path):
    for name in ("x.sse", "x.expected.json", "x.tools.json", ".hidden.sse", "notes.md"):
        (tmp_path / name).write_text("data: {}\n\n")
    assert [Path(p).name for p in captures([str(tmp_path)])] == ["x.sse"]
    with pytest.raises(BatchPathError):
        captures([str(tmp_path / "*.nothing")])


def test_a_folder_of_recordings_fraglens_wrote_is_checked_each_by_what_it_holds(tmp_path):
    """``.fraglens`` is what the proxy, ``compare`` and the docs name a recording
    (version 3, not JSON Lines); a file named outright is read whatever its name."""
    from fraglens.framing.recording import RecordingWriter

    body = (SAMPLES / "backend_glm_whole_call.sse").read_bytes()
    with (tmp_path / "flow.fraglens").open("wb") as fp:
        writer = RecordingWriter(fp)
        writer.start({"method": "POST", "url": "https://h/v1/chat/completions"})
        writer.response(200, [("content-type", "text/event-stream")], 0.01)
        for k in range(0, len(body), 300):
            writer.chunk(0.02 + k / 1e5, body[k : k + 300])
        writer.end("eof", t=0.5)
    assert (tmp_path / "flow.fraglens").read_bytes().startswith(b'{"fraglens":"recording"')
    shutil.copy(tmp_path / "flow.fraglens", tmp_path / "flow.saved")  # no capture's suffix
    assert [Path(p).name for p in captures([str(tmp_path)])] == ["flow.fraglens"]
    run = fraglens("check", "--jsonl", str(tmp_path), str(tmp_path / "flow.saved"))
    (from_folder, named) = lines(run)
    assert from_folder.pop("file").endswith("flow.fraglens")
    assert named.pop("file").endswith("flow.saved")
    assert from_folder == named and from_folder["framing"] == "recording"
    assert [c["status"] for c in from_folder["calls"]] == ["ok"]
    assert run.returncode == 0


def test_fsspec_urls_are_listed_and_read(tmp_path):
    pytest.importorskip("fsspec")
    for name in ("backend_glm_whole_call.sse", "quirk_args_repaired.sse"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    run = fraglens("check", "--jsonl", f"file://{tmp_path}/")
    got = lines(run)
    assert [line["file"] for line in got] == [
        f"file://{tmp_path}/backend_glm_whole_call.sse", f"file://{tmp_path}/quirk_args_repaired.sse"]
    assert got[0]["calls"][0]["status"] == "ok" and got[1]["calls"][0]["status"] == "repaired"


def test_the_runner_holds_a_window_of_captures_not_the_folder():
    """Memory is bounded by a few reports: never more than ``window`` captures
    are in flight, whatever the number of paths."""

    class Done:
        def __init__(self, value):
            self.value = value

        def result(self):
            return self.value

    in_flight = {"now": 0, "most": 0}

    def submit(path):
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
        return Done(path)

    out = []
    for line in _in_order(submit, [str(i) for i in range(1000)], 8):
        in_flight["now"] -= 1
        out.append(line)
    assert out == [str(i) for i in range(1000)]
    assert in_flight["most"] <= 9  # the window, and the one submitted as one is taken


def test_dask_gives_the_same_lines_as_the_local_run():
    distributed = pytest.importorskip("distributed")
    local = fraglens("check", "--jsonl", "--jobs", "1", "sample_streams")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        remote = fraglens("check", "--jsonl", "--dask", cluster.scheduler_address,
                          "sample_streams")
    assert remote.stdout == local.stdout
    assert remote.returncode == local.returncode
    assert remote.stderr.splitlines()[-1] == local.stderr.splitlines()[-1]


def test_dask_with_no_scheduler_is_one_line_and_exit_2():
    pytest.importorskip("distributed")
    run = fraglens("check", "--jsonl", "--dask", "tcp://127.0.0.1:9", "sample_streams")
    assert run.returncode == 2
    assert run.stderr.strip().startswith("fraglens: error: --dask tcp://127.0.0.1:9: no scheduler")


def test_the_duckdb_example_of_the_docs(folder_run, tmp_path):
    """docs/check.md's queries, run on a batch's output, agree with the lines."""
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "out.jsonl"
    out.write_text(folder_run.stdout)
    doc = (ROOT / "docs" / "check.md").read_text()
    queries = [block.split("```", 1)[0] for block in doc.split("```sql\n")[1:]]
    assert len(queries) == 2, "docs/check.md shows two DuckDB queries"
    con = duckdb.connect()
    by_status = con.execute(queries[0].replace("out.jsonl", str(out))).fetchall()
    top_codes = con.execute(queries[1].replace("out.jsonl", str(out))).fetchall()
    got = [line for line in lines(folder_run) if "error" not in line]
    expected: dict[tuple, int] = {}
    for line in got:
        for call in line["calls"]:
            key = (line["model"], call["status"])
            expected[key] = expected.get(key, 0) + 1
    assert {(f, s): n for f, s, n in by_status} == expected
    codes: dict[str, int] = {}
    for line in got:
        for d in line["diagnostics"]:
            codes[d["code"]] = codes.get(d["code"], 0) + 1
    most = max(codes.values())
    assert top_codes[0][1] == most and codes[top_codes[0][0]] == most
