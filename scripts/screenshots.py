"""Regenerate the README screenshots from the real app: ``make screenshots``.

    python scripts/screenshots.py screenshots

Each shot opens a bundled recording headless at a fixed terminal size, drives
the app with the keys a user would press, and saves an SVG. The same keys give
the same picture, so the committed files change only when what users see does.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from fraglens.app.app import FraglensApp
from fraglens.reading.capture import load_stream

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SIZE = (120, 36)
NARROW = (80, 24)


@dataclass(frozen=True)
class Shot:
    name: str
    #: what the README says under it
    caption: str
    source: str
    keys: tuple[str, ...] = ()
    size: tuple[int, int] = SIZE
    #: the call to select first, by display position (c, r and f act on it)
    select: int | None = None


SHOTS = [
    Shot(
        "demo",
        "The demo mid-stream: three calls interleaved, the bytes of event 40 highlighted "
        "in the stream and in search_files' buffer",
        ":demo:",
        keys=("colon", "4", "0", "enter"),
    ),
    Shot(
        "demo-end",
        "The demo at its last event: every verdict, read_file repaired (raw and repaired "
        "side by side), the diagnostics",
        ":demo:",
        keys=("end",),
        # eight rows more than the others: the Parse pane holds the three verdicts
        # and the diagnostics under them
        size=(120, 44),
        select=1,
    ),
    Shot(
        "repaired",
        "A small model's malformed arguments: each change the repair made, raw and repaired "
        "side by side",
        "quirk_args_repaired.sse",
        keys=("end",),
        # tall enough for both calls' verdict lines, each change and both texts
        size=(120, 44),
        select=1,
    ),
    Shot(
        "truncated",
        "A call cut off by the token limit: truncated, never repaired; the best-effort value "
        "is labelled as such",
        "quirk_q22_finish_length_truncated.sse",
        keys=("end",),
    ),
    Shot(
        "help",
        "? on the three panes: their keys, and what each pane shows",
        ":demo:",
        keys=("question_mark",),
    ),
    Shot(
        "value",
        "v: the repaired read_file call's arguments whole, in a scrolling view",
        ":demo:",
        keys=("end", "v"),
        select=1,
    ),
    Shot(
        "naive",
        "g: the demo's three calls beside what grouping the fragments by id or by arrival "
        "would have built: no naive call is right",
        ":demo:",
        keys=("end", "g"),
    ),
    Shot(
        "filtered",
        "&: the Stream pane shows get_weather's events only; each step still shows every "
        "call as it stood",
        ":demo:",
        keys=("ampersand", "down", "down", "down", "down", "space", "enter", "n", "n", "n"),
    ),
    Shot(
        "narrow",
        "80×24: the panes stacked, the focused one taller",
        ":demo:",
        keys=("colon", "4", "0", "enter"),
        size=NARROW,
    ),
]


async def take(shot: Shot, out: Path) -> Path:
    path = shot.source if shot.source == ":demo:" else str(SAMPLES / shot.source)
    stream, _ = load_stream(path)
    source = "demo" if shot.source == ":demo:" else shot.source
    app = FraglensApp(stream, source=source)
    async with app.run_test(size=shot.size) as pilot:
        await pilot.pause()
        if shot.select is not None:
            app.pinned = app.index.calls[shot.select].seq
        await pilot.press(*shot.keys)
        await pilot.pause()
        while getattr(app.screen, "found", ()) is None:  # g's replay, still running
            await pilot.pause()
        target = out / f"{shot.name}.svg"
        target.write_text(app.export_screenshot(title=f"fraglens — {shot.name}"), "utf-8")
    return target


#: the comparison screen: the captures of tests/data/compare, one per model,
#: served on loopback by fraglens serve, compared with fraglens compare --app
COMPARE_CAPTURES = Path(__file__).resolve().parent.parent / "tests" / "data" / "compare"
COMPARE_MODELS = ("claude-sonnet-4-5", "glm-4.6", "deepseek-chat", "qwen3-coder", "kimi-k2")
COMPARE_CAPTION = (
    "fraglens compare --app: five backends behind one endpoint, listed as they finished; "
    "the highlighted one's chunking profile, and where they disagree"
)


@contextmanager
def serving(captures: list[str]) -> Iterator[str]:
    """``fraglens serve`` in a process of its own, as an endpoint would be (in this
    process it would share the interpreter with the app drawing the screen, and
    the backends' times with it); yields its base URL."""
    command = [sys.executable, "-m", "fraglens", "serve", "--port", "0"]
    # a fixed pace: the list fills in the same order every time
    command += ["--pace", "fixed", "--rate", "20", *captures]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            found = re.search(r"base URL (\S+)\)", line)
            if found:
                # a real endpoint is warm: the first answers of a fresh server
                # process pay for its start-up, which is no backend's doing
                for _ in range(3):
                    httpx.post(f"{found.group(1)}/chat/completions", json={"model": "glm-4.6"})
                yield found.group(1)
                return
        raise RuntimeError("fraglens serve did not start")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def take_compare(out: Path) -> Path:
    """The comparison screen once every backend is in, the tiny-fragments one highlighted."""
    from fraglens.app.screens.compare import CompareApp
    from fraglens.net.compare import make_backends
    from fraglens.net.request import build_spec
    from fraglens.report.cost import PriceOptions, UserPrices

    captures = sorted(str(p) for p in COMPARE_CAPTURES.glob("*.*") if p.suffix != ".md")
    with serving(captures) as url:
        spec, _ = build_spec(url, prompt="Weather in São Paulo?", model="m", environ={})
        backends = make_backends(
            lambda model: dataclasses.replace(spec, body={**spec.body, "model": model}),
            COMPARE_MODELS,
            record_dir=None,
            timeout=30,
            prices=PriceOptions(user={"*": UserPrices(1.0, 4.0)}, markup=1.3),
        )
        # the port changes from run to run: the intro names the server instead
        intro = "One request to 5 models behind fraglens serve on loopback, 4 at a time."
        app = CompareApp(backends, concurrency=4, intro=intro)
        async with app.run_test(size=SIZE) as pilot:
            while app.doc is None:
                await pilot.pause(0.05)
            table = app.list.query_one("#compare-table")
            rows = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
            table.move_cursor(row=rows.index("claude-sonnet-4-5"))
            await pilot.pause()
            target = out / "compare.svg"
            target.write_text(app.export_screenshot(title="fraglens — compare"), "utf-8")
    return target


async def take_all(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for shot in SHOTS:
        if not names or shot.name in names:
            print(await take(shot, out))
    if not names or "compare" in names:
        print(await take_compare(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots.py", description=__doc__)
    parser.add_argument("out", type=Path, help="directory for the SVG files")
    every = ", ".join([*(s.name for s in SHOTS), "compare"])
    parser.add_argument("names", nargs="*", help=f"only these: {every}")
    args = parser.parse_args(argv)
    if not SAMPLES.is_dir():
        parser.error(f"{SAMPLES} is missing: run this from a checkout of the repository")
    asyncio.run(take_all(args.out, args.names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
