"""First contact: `fraglens help`, every subcommand's --help, and `fraglens explain`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fraglens.cli import COMMANDS, main
from fraglens.engine.diagnostics import CODES
from fraglens.engine.explanations import explain

ROOT = Path(__file__).resolve().parent.parent


def help_of(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_fraglens_help_is_the_help_not_a_file_name(tmp_path):
    # run where no file called "help" exists: it must not be opened as a capture
    proc = subprocess.run(
        [sys.executable, "-m", "fraglens", "help"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: fraglens")
    assert "exit codes" in proc.stdout
    assert proc.stderr == ""


def test_fraglens_help_command_is_that_commands_help(capsys):
    out = help_of(["help", "check"], capsys)
    assert out.startswith("usage: fraglens check")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_help_exits_0_with_exit_codes_and_examples(command, capsys):
    out = help_of([command, "--help"], capsys)
    assert out.startswith(f"usage: fraglens {command}")
    assert "exit codes" in out
    assert f"  fraglens {command} " in out  # an example of this very command


def test_explain_prints_the_entry(capsys):
    assert main(["explain", "args-truncated"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("args-truncated (error): arguments end inside an open value\n")
    assert "What fraglens did:" in out and "What to do:" in out
    # the wire example is printed whole, never wrapped
    assert '"finish_reason":"length"}]}' in out


def test_explain_an_unknown_code_exits_2_with_one_line_listing_the_codes(capsys):
    assert main(["explain", "args-truncatd"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("fraglens: error: unknown diagnostic code 'args-truncatd'")
    assert "did you mean args-truncated?" in line
    assert all(code in line for code in CODES)


def test_explain_list_gives_every_code_once_with_its_severity(capsys):
    assert main(["explain", "--list"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in rows] == list(CODES)
    assert [row[1] for row in rows] == [severity for severity, _ in CODES.values()]


def test_diagnostics_doc_is_the_generated_text():
    """docs/diagnostics.md is written by scripts/diagnostics_doc.py: run
    `make diagnostics-doc` after changing a code or an explanation."""
    proc = subprocess.run(
        [sys.executable, "scripts/diagnostics_doc.py"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8") == proc.stdout


def test_the_doc_holds_every_entry_as_explain_says_it():
    doc = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code in CODES:
        assert f"\n## {code}\n" in doc
        wire = explain(code).split("On the wire (one event per line):\n")[1].split("\n\n")[0]
        assert "\n".join(line[2:] for line in wire.splitlines()) in doc


def test_check_points_at_explain_when_it_found_something_and_only_then(tmp_path, capsys):
    clean = tmp_path / "clean.sse"
    clean.write_text(
        'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
        '"function":{"name":"f","arguments":"{}"}}]}}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
        "data: [DONE]\n\n",
        encoding="utf-8",
    )
    cut = ROOT / "sample_streams" / "quirk_q22_finish_length_truncated.sse"
    hint = "fraglens explain CODE: what a code means and what to do"
    assert main(["check", str(cut)]) == 1
    assert hint in capsys.readouterr().out
    assert main(["check", str(clean)]) == 0
    assert hint not in capsys.readouterr().out


def test_the_live_example_against_serve_runs(capsys):
    """The second example of `fraglens live --help`, against a real `fraglens serve`."""
    from fraglens.cli.live import EXAMPLES
    from fraglens.net.serve import start_server

    line = next(x for x in EXAMPLES.splitlines() if "127.0.0.1:8765" in x)
    argv = shlex.split(line.split("#")[0])[1:]
    with start_server([str(ROOT / "sample_streams" / "demo.sse")]) as server:
        argv[argv.index("--url") + 1] = f"{server.url}/v1"
        code = main(argv)
    doc = json.loads(capsys.readouterr().out)
    assert doc["events"] > 0 and doc["end"] == "done"
    assert code in (0, 1)  # read whole; 1 because the demo has a repaired call


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["chek", "capture.sse"], "unknown command 'chek'; did you mean `fraglens check`?"),
        (["expalin", "args-truncated"], "did you mean `fraglens explain`?"),
        (["help", "chek"], "unknown command 'chek'; did you mean `fraglens check`?"),
        (["timing"], "unknown command 'timing', and no file by that name; the commands: check,"),
        (["help", "nosuch"], "unknown command 'nosuch'; the commands: check, explain,"),
    ],
)
def test_a_mistyped_command_says_so_suggests_the_nearest_and_exits_2(
    argv, said, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # no file by any of these names
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""  # not the usage, not the help
    assert err.startswith("fraglens: error: ")
    assert said in err and err.count("\n") == 1


def test_a_word_that_names_a_file_opens_it_and_a_path_is_never_a_command(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chek").write_bytes((ROOT / "sample_streams" / "demo.sse").read_bytes())
    # no terminal here: the app prints check's report instead of opening
    assert main(["chek"]) == 1
    assert "chek: sse framing" in capsys.readouterr().out
    assert main(["missing.sse"]) == 2
    assert capsys.readouterr().err == "fraglens: error: missing.sse: no such file\n"
