"""Live Bedrock benchmark: serve -> live, a signed ConverseStream call on loopback.

    .venv/bin/python bench/bedrock_live.py            # 20k and 200k fragments
    .venv/bin/python bench/bedrock_live.py --quick    # 2k and 20k, for a smoke run

One tool call whose arguments come in N ``contentBlockDelta`` messages (AWS
binary event stream) is served by ``fraglens serve`` in its own process with
no pauses; ``LiveCall`` reads it through the whole client path (socket, HTTP,
event-stream decoder, engine, recording) with a request signed by botocore
from made-up temporary credentials (serve checks no signature), so every read
is also scrubbed for the access key id, the signature, a 1,000-character
session token and the secret key. In the same run, the same arguments as a
Chat Completions SSE stream, sent with a 164-character key, give the
reference row; the ratios are printed:
Bedrock against SSE for the same arguments, and Bedrock at 10x the fragments
against 1x (costs must grow with the input). Medians of ``--rounds`` runs,
taken in turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from live import make_stream, serve  # noqa: E402  (bench/ is on sys.path: the script's folder)

from fraglens.framing.eventstream import encode_message  # noqa: E402
from fraglens.net.bedrock import Signer, build_bedrock_spec  # noqa: E402
from fraglens.net.live import LiveCall, Phase  # noqa: E402
from fraglens.net.request import RequestSpec, build_spec  # noqa: E402

#: made up; as long as a real session token, which is what the scrubber has to look for
SIGNER = Signer(
    "us-east-1", "AKIABENCHMARK0000001", "bench/Secret+Key/0123456789abcdefghijklm", "T" * 1000
)


#: the SSE row sends a key too (an OpenAI project key's length): both rows scrub every read
KEY = {"OPENAI_API_KEY": "sk-proj-" + "k" * 156}


def event(name: str, payload: dict) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload, separators=(",", ":")).encode())


def converse_stream(fragments: int) -> bytes:
    """The tool call of bench/live.py's stream, in Converse events."""

    def piece(text: str) -> bytes:
        return event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": text}}}
        )

    parts = [
        event("messageStart", {"role": "assistant"}),
        event(
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "write"}}},
        ),
        piece('{"text": "'),
        piece("lorem ipsum ") * fragments,
        piece('"}'),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "tool_use"}),
        event("metadata", {"usage": {"inputTokens": 10, "outputTokens": fragments}}),
    ]
    return b"".join(parts)


async def one_run(spec: RequestSpec, record: Path) -> float:
    call = LiveCall(spec, record=record)
    start = time.perf_counter()
    status = await call.run()
    elapsed = time.perf_counter() - start
    assert status.phase is Phase.DONE, status.message
    assert call.stream.reassembler.calls[0].result is not None
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    small = 2_000 if args.quick else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        captures = {
            "chat": ("openai-chat", make_stream(small)),
            "bedrock": ("bedrock-converse", converse_stream(small)),
            "bedrock10": ("bedrock-converse", converse_stream(small * 10)),
        }
        times: dict[str, list[float]] = {name: [] for name in captures}
        for name, (_, body) in captures.items():
            (where / f"{name}.capture").write_bytes(body)
        for _ in range(args.rounds):
            for name, (fmt, _) in captures.items():
                with serve(where / f"{name}.capture", []) as url:
                    if fmt == "openai-chat":
                        spec, _ = build_spec(url + "/v1", model="m", prompt="p", environ=KEY)
                    else:
                        spec, _ = build_bedrock_spec(
                            fmt, url=url, model="m", prompt="p", signer=SIGNER
                        )
                    times[name].append(asyncio.run(one_run(spec, where / "rec.fraglens")))
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{small:,} argument fragments, recording on, medians of {args.rounds} in turns")
    for name, (fmt, body) in captures.items():
        size = len(body) / 2**20
        print(
            f"{name:10} {fmt:17} {size:6.1f} MiB  {median[name]:6.2f}s  "
            f"{size / median[name]:5.1f} MiB/s"
        )
    print(f"bedrock vs chat, same arguments: {median['bedrock'] / median['chat']:.2f}x the time")
    print(f"bedrock at 10x the fragments: {median['bedrock10'] / median['bedrock']:.1f}x the time")


if __name__ == "__main__":
    main()
