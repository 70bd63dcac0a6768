"""How the debugger opens and steps at real sizes: 100k and 1M events.

The capture is the one that makes people reach for a debugger: an agent
writing a file through one tool call, its arguments (a string of code lines)
arriving 10 characters a chunk, so 100k events carry a 1 MB value and 1M
events a 10 MB one. Each size is written to a temporary file and opened by a
fresh process, as ``fraglens FILE`` opens it (read, then loaded in the
background while shown), headless at 120x36. That process prints:

- first screen: from reading the file to the first frame that shows events;
- loaded: until every event is read and every call scanned;
- each key, from its action to the end of its frame (every message it posts
  handled, the layout, every changed line rendered: Textual's headless
  driver renders frames, it only does not write them): ``end``, ``home``,
  ``:N`` (a random event), ``n`` and a burst of 200 ``n`` in a row;
- peak memory (the process's maximum resident set), against the input's size.

    python bench/tui.py [--sizes 100000,1000000] [--recording] [--secrets]

With ``--recording`` each size is opened twice: as SSE, and as a fraglens
recording of the same body in realistic reads (``bench/shapes.py``: 1-3
events a read, some cut inside an event or a character). With ``--secrets``
the recording's header also carries the fingerprints of a key that the
arguments hold once, cut across fragments, so every pane scrubs what it draws
(found by its fingerprint as ``fraglens FILE`` finds it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from chunks import chat_chunk as chunk  # noqa: E402  (the script's folder is on sys.path)

SIZE = (120, 36)
PIECE = 10  # characters of arguments per fragment
TARGETS = {100_000: (1.0, None, 0.1), 1_000_000: (2.0, 8.0, 0.3)}


#: the key ``--secrets`` puts in the middle of the arguments
KEY = "sk-proj-bench-9f8e7d6c5b4a39281706"


def recording(events: int, key: str | None = None) -> bytes:
    """One ``write_file`` call whose ``content`` (code lines) comes ``PIECE``
    characters a chunk: ``events`` events in all; ``key``: a line a little
    before the middle holds it, in the cards' window for the ``n`` steps timed
    from the middle."""
    fragments = events - 3  # the call's opening chunk, the finish chunk, [DONE]
    lines, size, i = [], 0, 0
    while size < fragments * PIECE:
        line = f"    result_{i} = compute(values[{i}], scale=2)  # step {i}"
        lines.append(line)
        size += len(line) + 2
        i += 1
    if key is not None:
        lines[len(lines) * 51 // 100] = f'    api_key = "{key}"'
    args = '{"path":"src/generated.py","content":' + _json_str("\n".join(lines)) + "}"
    pieces = [args[k : k + PIECE] for k in range(0, len(args), PIECE)]
    pieces = pieces[: fragments - 1] + ["".join(pieces[fragments - 1 :])]
    tool = {"index": 0, "id": "call_0", "type": "function"}
    tool["function"] = {"name": "write_file", "arguments": ""}
    out = [chunk({"tool_calls": [tool]})]
    out.extend(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces)
    out.append(chunk({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _json_str(text: str) -> str:
    import json

    return json.dumps(text)


def rss_mb() -> float:
    """This process's peak resident set, in MB. ``VmHWM`` belongs to the
    process's own memory; ``ru_maxrss`` would carry over the parent's peak
    (building the capture) across fork and exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def frame_after(pilot, move) -> tuple[float, float]:
    """Seconds from ``move()`` until the screen has been laid out and rendered:
    wall clock, and this process's CPU time (steadier on a shared machine)."""
    app = pilot.app
    start, cpu = time.perf_counter(), time.process_time()
    move()
    await pilot._wait_for_screen()  # every message the move posted is handled
    app.screen._on_timer_update()  # what the screen's refresh timer does: layout + render
    return time.perf_counter() - start, time.process_time() - cpu


def ms(timings: list[tuple[float, float]]) -> str:
    def stats(seconds: tuple[float, ...]) -> str:
        values = sorted(s * 1000 for s in seconds)
        return f"median {statistics.median(values):6.1f}  worst {values[-1]:6.1f}"

    wall, cpu = zip(*timings, strict=True)
    return f"wall ms: {stats(wall)}   cpu ms: {stats(cpu)}   n={len(wall)}"


async def child(path: str) -> None:
    """One size, in its own process: what ``fraglens FILE`` does, timed."""
    from fraglens.app.app import FraglensApp
    from fraglens.reading.capture import read_bytes
    from fraglens.reading.progressive import Loading

    baseline = rss_mb()
    start, cpu_start = time.perf_counter(), time.process_time()
    data = read_bytes(path)
    loading = Loading(data, path)
    app = FraglensApp(loading=loading, source=path)
    async with app.run_test(size=SIZE) as pilot:
        while not app.stream.events:
            await pilot.pause(0.001)
        app.screen._on_timer_update()
        first = time.perf_counter() - start
        while app.loading is not None:
            await pilot.pause(0.01)
        loaded = time.perf_counter() - start
        n = len(app.stream.events)
        kind = "a recording" if app.stream.framing == "recording" else "SSE"
        print(f"events {n:,}  input {len(data) / 1e6:.1f} MB of {kind}")
        cpu = time.process_time() - cpu_start
        print(f"first screen            {first * 1000:7.0f} ms wall")
        print(f"loaded (and scanned)    {loaded * 1000:7.0f} ms wall, {cpu * 1000:.0f} ms cpu")
        rng = random.Random(7)
        moves: dict[str, list[tuple[float, float]]] = {"end": [], "home": [], ":N": [], "n": []}
        for _ in range(10):
            moves["end"].append(await frame_after(pilot, app.action_step_last))
            moves["home"].append(await frame_after(pilot, app.action_step_first))
        for _ in range(20):
            moves[":N"].append(await frame_after(pilot, partial(app.goto, rng.randrange(n))))
        app.goto(n // 2)
        for _ in range(100):
            moves["n"].append(await frame_after(pilot, app.action_step_next))
        for name, seconds in moves.items():
            print(f"{name:<23} {ms(seconds)}")
        app.goto(n // 3)
        await pilot._wait_for_screen()
        burst, cpu = time.perf_counter(), time.process_time()
        for _ in range(200):
            app.action_step_next()
        await pilot._wait_for_screen()
        app.screen._on_timer_update()
        wall, cpu = time.perf_counter() - burst, time.process_time() - cpu
        print(f"200 n in a row          {wall * 1000:7.0f} ms wall, {cpu * 1000:.0f} ms cpu")
    peak = rss_mb()
    size = len(data) / 2**20
    print(
        f"peak memory             {peak:7.0f} MB: {baseline:.0f} MB before reading the capture, "
        f"then {(peak - baseline) / size:.1f}x the input ({size:.0f} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="event counts, comma-separated")
    parser.add_argument("--recording", action="store_true",
                        help="also open each size's body as a fraglens recording")
    parser.add_argument("--secrets", action="store_true",
                        help="the recording knows a key its arguments hold (implies --recording)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(args.child))
        return
    from bytecode import compile_package

    compile_package()  # each size opens in a fresh process, as an installed fraglens does
    print(f"{os.cpu_count()} CPUs; wall clock; headless at {SIZE[0]}x{SIZE[1]}")
    for events in (int(x) for x in args.sizes.split(",")):
        first, loaded, key = TARGETS.get(events, (None, None, None))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "capture.sse"
            path.write_bytes(recording(events, KEY if args.secrets else None))
            print(f"\n== {events:,} events, one call ({path.stat().st_size / 1e6:.0f} MB) ==")
            if first is not None:
                goal = f"targets: first screen <= {first:g} s, any key <= {key * 1000:g} ms"
                print(goal + (f", loaded <= {loaded:g} s" if loaded else ""))
            subprocess.run([sys.executable, __file__, "--child", str(path)], check=True)
            if args.recording or args.secrets:
                from shapes import recording as as_recording

                from fraglens.redact import Secrets

                prints = Secrets([("bench", KEY)]).fingerprints() if args.secrets else None
                rec = Path(tmp) / "capture.fraglens"
                rec.write_bytes(as_recording(path.read_bytes(), secrets=prints))
                print(f"-- the same body as a recording ({rec.stat().st_size / 1e6:.0f} MB) --")
                subprocess.run([sys.executable, __file__, "--child", str(rec)], check=True)


if __name__ == "__main__":
    main()
