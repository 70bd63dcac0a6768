"""How the chunking profile's cost grows: a stream ten times longer should take
about ten times as long to profile, not a hundred.

Builds two Chat Completions streams in memory, four interleaved calls whose
argument text comes in 3-character fragments (about a third of them cut inside
an escape), N and 10 N fragments; reads each with ``check``'s pipeline, then
times ``chunking_profile`` alone (CPU time, best of five; the scanner runs over
every call inside it, as it does for a capture ``check`` never had to scan).
Prints the two times and their ratio, measured in the same run.

    .venv/bin/python bench/chunking.py [N]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chunks import chat_chunk  # noqa: E402

from fraglens.reading.capture import stream_from_bytes  # noqa: E402
from fraglens.report.chunking import chunking_profile  # noqa: E402

CALLS = 4
PIECE = 'ab\\"'  # 4 characters: a 3-character cut lands inside the escape now and then


def args_chunk(index: int, text: str) -> str:
    return chat_chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]})


def build(fragments: int) -> bytes:
    per_call = fragments // CALLS
    events = []
    for i in range(CALLS):
        head = {"index": i, "id": f"call_{i}", "type": "function"}
        head["function"] = {"name": "write_file", "arguments": '{"text": "'}
        events.append(chat_chunk({"tool_calls": [head]}))
    text = PIECE * per_call
    for k in range(per_call):
        for i in range(CALLS):
            piece = text[3 * k : 3 * k + 3]
            events.append(args_chunk(i, piece))
    for i in range(CALLS):
        events.append(args_chunk(i, '"}'))
    events.append(chat_chunk({}, "tool_calls"))
    events.append("data: [DONE]\n\n")
    return "".join(events).encode()


def profile_seconds(fragments: int) -> tuple[float, int]:
    best = float("inf")
    counted = 0
    for _ in range(5):
        stream, _ = stream_from_bytes(build(fragments))
        start = time.process_time()
        counted = chunking_profile(stream)["fragments"]
        best = min(best, time.process_time() - start)
    return best, counted


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    small, small_count = profile_seconds(n)
    large, large_count = profile_seconds(10 * n)
    print(f"chunking_profile, CPU time, best of 5 (in-process, {CALLS} interleaved calls):")
    print(f"  {small_count:>9,} fragments: {small * 1000:8.1f} ms")
    print(f"  {large_count:>9,} fragments: {large * 1000:8.1f} ms")
    print(f"  10x the fragments took {large / small:.1f}x the time")


if __name__ == "__main__":
    main()
