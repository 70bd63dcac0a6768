"""What ``fraglens check`` loads: a headless verdict in scripts and CI should
not pay for the app, the network stack or the libraries only some inputs need.

On a 100k-event capture Python's start-up and the imports were a quarter of
``check``'s whole time, jsonschema alone as much as the rest of the imports;
these tests keep such imports behind the inputs that need them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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

#: what checking the common captures needs none of, each of which was once on
#: the way: the network and concurrency stacks, the standard library's mail and
#: URL code (importlib.metadata brought email, zipfile and a socket to name the
#: price table's version), introspection (dataclasses brings inspect, ast and
#: dis), the price table itself once a model's prices are cached, the schema
#: checks without tools
HEAVY = ("asyncio", "ssl", "socket", "selectors", "http", "email", "urllib", "concurrent",
         "threading", "subprocess", "multiprocessing", "logging", "zipfile", "shutil",
         "tempfile", "pathlib", "datetime", "dataclasses", "inspect", "ast", "importlib.metadata",
         "importlib.resources", "genai_prices", "jsonschema", "json_repair", "websockets")


def loaded(*argv: str, env: dict[str, str] | None = None) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True, text=True, timeout=120, check=False,
        env=None if env is None else {**os.environ, **env},
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


@pytest.mark.parametrize(("capture", "adapters"), [
    # the start-up benchmark's: no usage, no text
    ("backend_gpt4o_parallel.sse", {"openai_chat"}),
    # usage priced, text scanned for leaked markup
    ("cost_anthropic_cache_read_write.sse", {"anthropic"}),
    # NDJSON, which opens with "{" as a recording does
    ("ollama_native_tool_call.ndjson", {"ollama"}),
    # a binary event stream, whose adapter reads Anthropic's and OpenAI's chunks too
    ("bedrock_converse_parallel.eventstream", {"bedrock", "anthropic", "openai_chat"}),
])
def test_check_of_a_common_capture_imports_nothing_heavy(
    capture: str, adapters: set[str], tmp_path: Path
) -> None:
    cache = {"XDG_CACHE_HOME": str(tmp_path)}
    code, _ = loaded("check", "--json", str(SAMPLES / capture), env=cache)  # prices cached
    assert code in (0, 1)
    code, modules = loaded("check", "--json", str(SAMPLES / capture), env=cache)
    assert code in (0, 1)
    heavy = sorted(name for name in (*HEAVY, *NEVER) if name in modules)
    assert heavy == [], f"check --json {capture} imported {heavy}"
    # the adapter of the capture's format (and what it builds on), not all fourteen
    shared = {"base", "event_types", "envelope"}
    ours = {m.rsplit(".", 1)[1] for m in modules if m.startswith("fraglens.adapters.")}
    assert ours - shared == adapters


def _recorded(path: Path, body: dict[str, object], url: str) -> Path:
    from fraglens.framing.recording import RecordingWriter

    with path.open("wb") as fp:
        writer = RecordingWriter(fp)
        writer.start({"method": "POST", "url": url, "body": body,
                      "headers": {"authorization": "Bearer sk-startup-0123456789"}})
        writer.response(200, {"content-type": "text/event-stream"}, t=0.1)
        writer.chunk(0.2, (SAMPLES / "backend_gpt4o_parallel.sse").read_bytes())
        writer.end("eof", t=0.3)
    return path


def test_check_of_a_recording_loads_its_reader_and_nothing_heavy(tmp_path: Path) -> None:
    rec = _recorded(tmp_path / "plain.rec", {"model": "gpt-4o", "stream": True},
                    "https://api.openai.com/v1/chat/completions?api-version=1")
    code, modules = loaded("check", "--json", str(rec), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert code == 0
    assert {"fraglens.framing.recording", "fraglens.redact"} <= modules
    heavy = sorted(name for name in (*HEAVY, *NEVER) if name in modules)
    assert heavy == [], f"check --json of a recording imported {heavy}"
    # a reader redacts the request again (a plain URL needs no urllib.parse) but
    # makes no fingerprint, and a request that declares no tools is checked
    # against none: the schema checks stay out
    for name in ("hashlib", "secrets", "urllib.parse", "fraglens.fit.verdicts",
                 "fraglens.fit.tools", "fraglens.fit.schema"):
        assert name not in modules, f"check imported {name}"


def test_a_recorded_request_with_tools_or_an_odd_url_still_loads_what_it_needs(
    tmp_path: Path,
) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    rec = _recorded(tmp_path / "tools.rec", {"model": "gpt-4o", "tools": tools},
                    "https://u:p@h.test/v1?key=%41bc")
    code, modules = loaded("check", "--json", str(rec))
    assert code == 1  # get_local_time is not among the declared tools
    assert {"fraglens.fit.verdicts", "urllib.parse"} <= modules


def test_the_heavy_list_is_one_the_probe_sees() -> None:
    # every name is a module this interpreter can import: a misspelt one would
    # make the test above pass whatever check loads
    import importlib.util

    missing = [name for name in HEAVY if importlib.util.find_spec(name) is None]
    assert missing == []
