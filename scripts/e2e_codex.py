"""End-to-end, outside CI: the Codex CLI through ``fraglens proxy`` over WebSocket.

    make e2e-codex                      # or: .venv/bin/python scripts/e2e_codex.py
    CODEX_VERSION=0.169.0 make e2e-codex

Codex asks for the Responses API's WebSocket mode first when its provider says
``supports_websockets = true``, and falls back to HTTPS with a warning
("Falling back from WebSockets to HTTPS transport") when the upgrade fails: a
gateway without WebSocket support silently changes its transport. This check
puts ``fraglens proxy --json`` in front of ``fraglens serve`` replaying a
WebSocket recording written for it (response 1: a call to ``get_weather``, a
tool Codex does not have, so it answers with an error output and asks again;
response 2: a short text answer, which ends the turn: nothing is run on this
machine; Codex's prewarm, a ``response.create`` with ``"generate": false``,
is answered by serve with no output, as the API does), points a Codex custom
provider at the proxy, runs ``codex exec`` once, and checks that:

- Codex printed no fallback warning and never POSTed to ``/v1/responses``;
- the proxy showed its responses as WebSocket flows, one with the
  ``get_weather`` call;
- Codex read that call: its next request sends the call's output back;
- the recording the proxy wrote holds no key.

It installs ``@openai/codex`` from npm into ``.e2e/codex`` the first time
(about 400 MB: the CLI ships its binary in a platform package). Everything
runs on loopback with a made-up key; nothing reaches OpenAI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODEX_VERSION = os.environ.get("CODEX_VERSION", "0.169.0")
CODEX_DIR = ROOT / ".e2e" / "codex"
KEY = "sk-e2e-codex-0123456789abcdef"
FALLBACK = "Falling back from WebSockets to HTTPS transport"


def _line(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"))


def recording() -> bytes:
    """The conversation serve replays: a call Codex cannot run, then an answer."""
    usage = {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 132}
    call = {"id": "fc_e2e_1", "type": "function_call", "status": "completed",
            "call_id": "call_e2e_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}
    message = {"id": "msg_e2e_2", "type": "message", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
    lines = [
        {"fraglens": "recording", "version": 2, "transport": "websocket",
         "request": {"method": "GET", "url": "ws://e2e/v1/responses", "headers": {}},
         "format": "openai-responses"},
        {"response": {"status": 101, "headers": {}}, "t": 0.0},
    ]
    t = 0.0

    def server(event: dict) -> None:
        nonlocal t
        t += 0.01
        lines.append({"t": round(t, 3), "from": "server", "text": _line(event)})

    def client() -> None:
        lines.append({"t": round(t, 3), "from": "client",
                      "text": _line({"type": "response.create"})})

    client()
    server({"type": "response.created", "sequence_number": 0, "response": {
        "id": "resp_e2e_1", "object": "response", "status": "in_progress", "output": []}})
    server({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": dict(call, status="in_progress", arguments="")})
    for n, piece in enumerate(['{"city":', '"Paris"}']):
        server({"type": "response.function_call_arguments.delta", "sequence_number": 2 + n,
                "item_id": "fc_e2e_1", "output_index": 0, "delta": piece})
    server({"type": "response.function_call_arguments.done", "sequence_number": 4,
            "item_id": "fc_e2e_1", "output_index": 0, "arguments": call["arguments"]})
    server({"type": "response.output_item.done", "sequence_number": 5, "output_index": 0,
            "item": call})
    server({"type": "response.completed", "sequence_number": 6, "response": {
        "id": "resp_e2e_1", "object": "response", "status": "completed", "output": [call],
        "usage": usage}})
    client()
    server({"type": "response.created", "sequence_number": 0, "response": {
        "id": "resp_e2e_2", "object": "response", "status": "in_progress", "output": []}})
    server({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": dict(message, status="in_progress", content=[])})
    server({"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_e2e_2",
            "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}})
    server({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_e2e_2",
            "output_index": 0, "content_index": 0, "delta": "Done."})
    server({"type": "response.output_text.done", "sequence_number": 4, "item_id": "msg_e2e_2",
            "output_index": 0, "content_index": 0, "text": "Done."})
    server({"type": "response.content_part.done", "sequence_number": 5, "item_id": "msg_e2e_2",
            "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": "Done.", "annotations": []}})
    server({"type": "response.output_item.done", "sequence_number": 6, "output_index": 0,
            "item": message})
    server({"type": "response.completed", "sequence_number": 7, "response": {
        "id": "resp_e2e_2", "object": "response", "status": "completed", "output": [message],
        "usage": usage}})
    return ("\n".join(_line(x) for x in lines) + "\n").encode()


def codex() -> Path:
    binary = CODEX_DIR / "node_modules" / ".bin" / "codex"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("e2e-codex: npm is needed to install @openai/codex")
        print(f"e2e-codex: installing @openai/codex@{CODEX_VERSION} into {CODEX_DIR}")
        CODEX_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(CODEX_DIR),
                        f"@openai/codex@{CODEX_VERSION}"], check=True)
    return binary


def start(args: list[str], marker: str) -> tuple[subprocess.Popen[str], str]:
    """A fraglens command, and the URL it says it listens on."""
    proc = subprocess.Popen([sys.executable, "-m", "fraglens", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT / "tui")))
    stream = proc.stdout if marker == "stdout" else proc.stderr
    assert stream is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = stream.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        if found and ("listening" in line or " -> " in line):
            return proc, found.group(0)
    proc.kill()
    raise SystemExit(f"e2e-codex: fraglens {args[0]} did not start")


def main() -> int:
    binary = codex()
    work = Path(tempfile.mkdtemp(prefix="fraglens-e2e-codex-"))
    rec = work / "codex-ws.fraglens"
    rec.write_bytes(recording())
    record_dir = work / "recordings"
    serve, up = start(["serve", str(rec), "--port", "0", "--pace", "fixed", "--rate", "200"],
                      "stdout")
    proxy, via = start(["proxy", "--upstream", up + "/v1", "--port", "0", "--json",
                        "--record-dir", str(record_dir)], "stderr")
    home = work / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(
        'model = "gpt-5.1"\nmodel_provider = "fraglens"\n\n'
        "[model_providers.fraglens]\n"
        'name = "fraglens proxy"\n'
        f'base_url = "{via}/v1"\n'
        'env_key = "FRAGLENS_E2E_KEY"\n'
        'wire_api = "responses"\n'
        "supports_websockets = true\n"
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
    env = dict(os.environ, CODEX_HOME=str(home), FRAGLENS_E2E_KEY=KEY)
    try:
        run = subprocess.run(
            [str(binary), "exec", "--skip-git-repo-check", "--sandbox", "read-only",
             "What is the weather in Paris?"],
            cwd=work, env=env, capture_output=True, text=True, timeout=180)
    finally:
        time.sleep(1.0)  # the last flow is printed as it ends
        for proc in (proxy, serve):
            proc.terminate()
        proxy_out, proxy_err = proxy.communicate(timeout=30)
        serve.communicate(timeout=30)
    said = run.stdout + run.stderr
    flows = [json.loads(line) for line in proxy_out.splitlines() if line.startswith("{")]
    print(f"e2e-codex: codex exec exited {run.returncode}")
    for flow in flows:
        calls = [c["name"] for c in (flow.get("check") or {}).get("calls", [])]
        print(f"  flow #{flow['flow']} {flow['method']} {flow['path']} {flow['status']} "
              f"{flow['state']} calls={calls}")
    problems = []
    if FALLBACK in said:
        problems.append(f"codex printed {FALLBACK!r}")
    if any(f["method"] == "POST" and f["path"].startswith("/v1/responses") for f in flows):
        problems.append("codex POSTed to /v1/responses (the HTTPS transport)")
    ws_flows = [f for f in flows if f["method"] == "WS"]
    called = [[c["name"] for c in (f.get("check") or {}).get("calls", [])] for f in ws_flows]
    if ["get_weather"] not in called:
        problems.append(f"no WebSocket flow holds the get_weather call (calls: {called})")
    recordings = list(record_dir.glob("*.fraglens")) if record_dir.exists() else []
    sent = [json.loads(line) for p in recordings for line in p.read_text().splitlines()]
    answered = any(line.get("from") == "client" and "function_call_output" in line["text"]
                   and "call_e2e_1" in line["text"] for line in sent)
    if not answered:
        problems.append("codex never sent the get_weather call's output back")
    if any(KEY in p.read_text() for p in recordings) or KEY in proxy_out + proxy_err:
        problems.append("the key reached a recording or the proxy's output")
    if problems:
        print("e2e-codex: FAILED\n  " + "\n  ".join(problems))
        print("--- codex said:\n" + said[-4000:])
        print("--- proxy said:\n" + proxy_err[-2000:])
        print(f"(kept in {work})")
        return 1
    print(f"e2e-codex: ok: {len(ws_flows)} WebSocket flow(s), no fallback, the call read and "
          f"answered; recordings in {record_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
