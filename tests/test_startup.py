"""What ``fraglens check`` loads: a headless verdict in scripts and CI should
not pay for the app, the network stack or the libraries only some inputs need.

On a 100k-event capture Python's start-up and the imports were a quarter of
``check``'s whole time, jsonschema alone as much as the rest of the imports;
these tests keep such imports behind the inputs that need them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fraglens.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"

#: run the CLI in a fresh interpreter, then say which modules it had loaded
PROBE = """
import json, sys
from fraglens.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

#: never needed for a verdict on a capture
NEVER = ("textual", "rich", "httpx", "httpx_sse", "uvicorn", "pyperclip", "fraglens.app",
         "fraglens.net", "fraglens.history", "fraglens.engine.explanations")


def loaded(*argv: str) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )
    last = proc.stderr.strip().splitlines()[-1]
    out = json.loads(last)
    return out["code"], set(out["modules"])


def test_check_loads_nothing_it_does_not_use() -> None:
    code, modules = loaded("check", "--json", str(SAMPLES / "backend_gpt4o_parallel.sse"))
    assert code == 0
    for name in NEVER:
        assert name not in modules, f"check imported {name}"
    # only a tool schema needs jsonschema; only a repair needs json_repair
    assert "jsonschema" not in modules
    assert "json_repair" not in modules
    assert "importlib.resources" not in modules
    # an SSE capture is no recording: their reader and the redaction stay out
    assert "fraglens.framing.recording" not in modules
    assert "fraglens.redact" not in modules


def test_the_optional_imports_still_come_when_needed(tmp_path: Path, capsys) -> None:
    # a repair loads json_repair
    _, modules = loaded("check", "--json", str(SAMPLES / "quirk_args_repaired.sse"))
    assert "json_repair" in modules
    # a declared tool's schema is validated in the validation worker, which
    # loads jsonschema: check itself never does
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }}]))
    _, modules = loaded("check", "--json", "--tools", str(tools),
                        str(SAMPLES / "backend_gpt4o_parallel.sse"))
    assert "jsonschema" not in modules
    assert main(["check", "--json", "--tools", str(tools),
                 str(SAMPLES / "backend_gpt4o_parallel.sse")]) == 1  # get_local_time is undeclared
    fits = [c["fit"] for c in json.loads(capsys.readouterr().out)["calls"]]
    assert fits[0] == {"checked": True, "tool": "get_weather", "errors": []}


def test_version_loads_nothing_but_the_entry_point() -> None:
    code, modules = loaded("--version")
    assert code == 0
    ours = {m for m in modules if m.startswith("fraglens")}
    assert ours == {"fraglens", "fraglens.cli", "fraglens.cli.exits"}
    assert "argparse" not in modules
    # typing brings re, enum and contextlib: the entry point imports it only for mypy
    assert "typing" not in modules


def test_check_of_an_sse_capture_loads_no_other_reader_and_no_schema_check() -> None:
    code, modules = loaded("check", "--json", str(SAMPLES / "backend_gpt4o_parallel.sse"))
    assert code == 0
    for name in ("fraglens.reading.eventstream_runs", "fraglens.reading.ndjson_runs",
                 "fraglens.fit.verdicts", "fraglens.fit.schema", "fraglens.fit.tools",
                 "fraglens.fit.budget"):
        assert name not in modules, f"check imported {name}"
    # argparse measures the terminal with shutil (and loads bz2, lzma) unless told
    assert "shutil" not in modules
    # no usage: no price table; no text: no scan for leaked markup
    assert "fraglens.report.cost" not in modules
    assert "fraglens.engine.leaks" not in modules


def test_the_readers_a_capture_needs_still_load(tmp_path: Path) -> None:
    _, modules = loaded("check", "--json", str(SAMPLES / "bedrock_converse_padded.eventstream"))
    assert "fraglens.reading.eventstream_runs" in modules
    _, modules = loaded("check", "--json", str(SAMPLES / "ollama_native_tool_call.ndjson"))
    assert "fraglens.reading.ndjson_runs" in modules
