"""How fast the debugger opens and steps on a 100k-event recording.

Builds the SSE text of a few interleaved calls in memory (~100k events), loads
it, opens the app headless at 120x36 and times, for each kind of move, the
whole path a key press takes after dispatch: the app's action, the message
processing it triggers, the layout and the rendering of every changed line of
the screen (Textual's headless driver renders frames, it only does not write
them). Prints the median and the 95th percentile. Target: under 50 ms median.

    python bench/tui.py [--events N] [--calls K]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunks import chat_chunk as chunk  # noqa: E402  (the script's folder is on sys.path)

from fraglens.app.app import FraglensApp  # noqa: E402
from fraglens.app.widgets.stream_list import StreamList  # noqa: E402
from fraglens.load import frame, stream_from_framed  # noqa: E402

SIZE = (120, 36)
PIECE = 10  # characters of arguments per fragment


def recording(events: int, calls: int) -> bytes:
    """``calls`` calls opened up front, then their argument fragments round robin."""
    fragments = events - calls - 2  # the headers, the finish chunk, [DONE]
    per_call = fragments // calls
    texts = []
    for c in range(calls):
        items = ",".join(f'"item-{c}-{i:06d}"' for i in range(per_call * PIECE // 16 + 2))
        text = '{"items":[' + items + "]}"
        pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
        # the last piece carries the rest so that every call's text stays whole
        texts.append(pieces[: per_call - 1] + ["".join(pieces[per_call - 1 :])])
    out = []
    for c in range(calls):
        tool = {"index": c, "id": f"call_{c}", "type": "function"}
        tool["function"] = {"name": f"tool_{c}", "arguments": ""}
        out.append(chunk({"tool_calls": [tool]}))
    for i in range(per_call):
        for c in range(calls):
            fragment = {"index": c, "function": {"arguments": texts[c][i]}}
            out.append(chunk({"tool_calls": [fragment]}))
    out.append(chunk({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


async def frame_after(pilot, move) -> tuple[float, float]:
    """Seconds from ``move()`` until the screen has been laid out and rendered:
    wall clock, and this process's CPU time (steadier on a shared machine)."""
    app = pilot.app
    start, cpu = time.perf_counter(), time.process_time()
    move()
    await pilot._wait_for_screen()  # every message the move posted is handled
    app.screen._on_timer_update()  # what the screen's refresh timer does: layout + render
    return time.perf_counter() - start, time.process_time() - cpu


def summary(name: str, timings: list[tuple[float, float]]) -> str:
    def stats(seconds: list[float]) -> str:
        ms = sorted(s * 1000 for s in seconds)
        p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
        return f"median {statistics.median(ms):6.1f}  p95 {p95:6.1f}"

    wall, cpu = zip(*timings, strict=True)
    return f"{name:<18} wall ms: {stats(list(wall))}   cpu ms: {stats(list(cpu))}   n={len(wall)}"


async def run(events: int, calls: int) -> None:
    data = recording(events, calls)
    t = time.perf_counter()
    stream = stream_from_framed(frame(data))
    load = time.perf_counter() - t
    n = len(stream.events)
    print(f"recording: {n:,} events, {calls} interleaved calls, {len(data) / 1e6:.1f} MB of SSE")
    print(f"{'load (engine)':<22} {load * 1000:7.0f} ms")

    gc.freeze()  # as run_app does: the loaded stream is never garbage
    start = time.perf_counter()
    app = FraglensApp(stream, source="bench", step=n // 2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot._wait_for_screen()
        app.screen._on_timer_update()
        print(f"{'open (first frame)':<22} {(time.perf_counter() - start) * 1000:7.0f} ms")
        rng = random.Random(7)

        results = {"step (n)": [], "step back (p)": [], "jump (:N)": [], "end": [], "home": []}
        for _ in range(300):
            results["step (n)"].append(await frame_after(pilot, app.action_step_next))
        for _ in range(300):
            results["step back (p)"].append(await frame_after(pilot, app.action_step_prev))
        for _ in range(200):
            jump = partial(app.goto, rng.randrange(n))
            results["jump (:N)"].append(await frame_after(pilot, jump))
        for _ in range(50):  # end and home pressed from anywhere in the stream
            await frame_after(pilot, partial(app.goto, rng.randrange(n)))
            results["end"].append(await frame_after(pilot, app.action_step_last))
            await frame_after(pilot, partial(app.goto, rng.randrange(n)))
            results["home"].append(await frame_after(pilot, app.action_step_first))
        stream_list = app.query_one(StreamList)
        scroll = []
        for _ in range(100):
            move = partial(stream_list.scroll_to, y=rng.randrange(n), animate=False)
            scroll.append(await frame_after(pilot, move))
        results["scroll the stream"] = scroll
        for name, seconds in results.items():
            print(summary(name, seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    asyncio.run(run(args.events, args.calls))


if __name__ == "__main__":
    main()
