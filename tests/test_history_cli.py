"""`fraglens history build|check` on the command line, and built histories
from every bundled sample pass the checker."""

from __future__ import annotations

import json

import pytest

from fraglens.cli import main
from fraglens.history import check_conversation

from .conftest import SAMPLES
from .test_cli import GOOD, write


def test_build_prints_the_openai_messages(tmp_path, capsys):
    assert main(["history", "build", write(tmp_path, GOOD)]) == 0
    messages = json.loads(capsys.readouterr().out)
    assert messages[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a":1}'}
    assert messages[1] == {"role": "tool", "tool_call_id": "call_1", "content": ""}


def test_check_exit_codes(tmp_path, capsys):
    clean = tmp_path / "ok.json"
    main(["history", "build", write(tmp_path, GOOD), "--shape", "anthropic"])
    clean.write_text(capsys.readouterr().out)
    assert main(["history", "check", str(clean)]) == 0
    assert capsys.readouterr().out.strip() == "no problems"
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role":"tool","tool_call_id":"x","content":""}]')
    assert main(["history", "check", "--json", str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["problems"][0]["code"] == "orphan-tool-result"
    junk = tmp_path / "junk.json"
    junk.write_text("not json")
    assert main(["history", "check", str(junk)]) == 2


@pytest.mark.parametrize(
    "path", sorted(SAMPLES.glob("*.sse")), ids=lambda p: p.name
)
def test_history_built_from_every_sample_passes_the_check(path, capsys):
    for shape in ("openai-chat", "anthropic", "openai-responses"):
        assert main(["history", "build", "--json", "--shape", shape, str(path)]) == 0
        built = json.loads(capsys.readouterr().out)
        assert check_conversation(built["messages"]) == [], (shape, built)
