"""The comparison screen, driven by Pilot against a real ``fraglens serve`` on loopback,
and the chunking profile the palette opens for any capture."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from fraglens.app.app import FraglensApp
from fraglens.app.commands import FraglensCommands
from fraglens.app.screens.chunking import ChunkingScreen
from fraglens.app.screens.compare import CompareApp, CompareScreen
from fraglens.net.compare import make_backends
from fraglens.net.live import Phase
from fraglens.net.replay import Chaos, Pace
from fraglens.net.request import build_spec
from fraglens.net.serve import start_server
from fraglens.reading.capture import load_stream

from .conftest import PATIENCE
from .test_compare import CAPTURES, DATA, MODELS

SIZE = (140, 36)


async def settle(pilot, until, what: str) -> None:
    for _ in range(int(PATIENCE / 0.05)):
        if until():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never happened: {what}")


def backends(url: str, tmp_path):
    spec, _ = build_spec(f"{url}/v1", model="m", prompt="Weather?", environ={})
    return make_backends(
        lambda model: dataclasses.replace(spec, body={**spec.body, "model": model}),
        MODELS,
        record_dir=tmp_path,
        timeout=PATIENCE,
    )


def plain(widget: Static) -> str:
    """A Static's text: a Text, or a Group of them."""
    content = widget.content
    parts = content.renderables if isinstance(content, Group) else [content]
    return "\n".join(p.plain if isinstance(p, Text) else str(p) for p in parts)


def row_models(app: CompareApp) -> list[str]:
    table = app.list.query_one("#compare-table")
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


@pytest.fixture(scope="module")
def slow_server():
    # 10 events a second: the 27-event tiny_fragments capture takes 2.7 s, every
    # other one a second or less, so it is the last backend to finish
    with start_server([str(p) for p in CAPTURES], pace=Pace("fixed", 10)) as handle:
        yield handle


async def test_backends_are_listed_as_they_finish_and_enter_opens_one(slow_server, tmp_path):
    app = CompareApp(backends(slow_server.url, tmp_path), concurrency=5, intro="test")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        await settle(pilot, lambda: app.list.query_one("#compare-table").row_count >= 1, "a row")
        assert app.doc is None  # listed before every backend is in
        await settle(pilot, lambda: app.doc is not None, "every backend finished")
        rows = row_models(app)
        assert sorted(rows) == sorted(MODELS)
        assert rows[-1] == "claude-sonnet-4-5"  # asked first, finished last
        status = plain(app.list.query_one("#compare-status", Static))
        assert "5 of 5 backends finished" in status and "they disagree" in status

        # open glm-4.6: its stream in the three panes
        table = app.list.query_one("#compare-table")
        table.move_cursor(row=rows.index("glm-4.6"))
        await pilot.pause()
        detail = plain(app.list.query_one("#compare-detail", Static))
        assert (
            "glm-4.6: 1 fragment over 1 call" in detail and "whole in one chunk 1" in detail
        )
        assert "call 0: arguments differ (keys: query)" in detail
        await pilot.press("enter")
        await settle(pilot, lambda: not app.on_list and app.source.startswith("glm-4.6"), "open")
        assert [c.name for c in app.index.calls] == ["get_weather"]
        assert app.stream is app.backends[MODELS.index("glm-4.6")].call.stream
        assert str(tmp_path / "glm-4.6.fraglens") in app.source
        before = app.step
        await pilot.press("n")  # the debugger's keys work on the panes
        assert app.step == before + 1
        await pilot.press("l")
        await pilot.pause()
        assert app.on_list
        await pilot.press("n")  # and not while the list is up
        assert app.step == before + 1


async def test_quitting_before_every_backend_is_in_cancels_the_calls_and_keeps_what_came(
    tmp_path,
):
    # every stream stalls for a minute after its first event: quit while they wait
    stalled = Chaos(stall_after=1, stall_seconds=60)
    with start_server([str(p) for p in CAPTURES[:2]], pace=Pace("fixed", 0), chaos=stalled) as s:
        app = CompareApp(backends(s.url, tmp_path)[:2], concurrency=2, intro="test")
        async with app.run_test(size=SIZE) as pilot:
            calls = [b.call for b in app.backends]
            await settle(pilot, lambda: all(c.stream.events for c in calls), "first events")
            assert app.doc is None
        # the app has quit: the calls were cancelled from its unmount, not left running
        assert not app._thread.is_alive()
        assert [c.status.phase for c in calls] == [Phase.CANCELLED, Phase.CANCELLED]
        last = (tmp_path / "claude-sonnet-4-5.fraglens").read_text().splitlines()[-1]
        assert json.loads(last)["end"] == "cancelled"  # the recording was ended, not cut


async def test_the_palette_opens_the_chunking_profile_of_any_capture():
    stream, _ = load_stream(str(DATA / "tiny_fragments.sse"))
    app = FraglensApp(stream, source="tiny")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        offered = [title for title, *_ in FraglensCommands(app.screen)._commands()]
        assert "view: chunking profile" in offered
        app.show_chunking()
        await pilot.pause()
        assert isinstance(app.screen, ChunkingScreen)
        table = app.screen.query_one("#chunking-box Static", Static).content
        values = [str(cell) for cell in table.columns[0].cells]
        # fragments, sizes, mid-string, mid-escape, mid-character (tests/test_compare.py)
        assert values[:5] == ["23", "0 / 3 / 5", "18", "6", "1"]
        await pilot.press("escape")
        assert not isinstance(app.screen, ChunkingScreen)


def test_the_list_reaches_every_backend_with_no_key_pressed(slow_server, tmp_path):
    # the real app in a pseudo-terminal: in-process, the test's own waits wake the
    # app's loop and hide a message that never woke it (the list stood at "2 of 5"
    # until a key was pressed)
    from .test_app_signals import fraglens

    args = ["compare", "--app", "--url", f"{slow_server.url}/v1", "--prompt", "Weather?"]
    args += ["--models", ",".join(MODELS), "--concurrency", "5", "--record-dir", str(tmp_path)]
    with fraglens(*args) as app:
        # every backend in, then the comparison: drawn with no key pressed
        app.drawn("5 of 5 backends finished · they disagree".encode())
        app.press(b"q")
        assert app.finish() == 1  # compare's status: the backends disagree


async def test_question_mark_on_the_list_shows_the_lists_keys(slow_server, tmp_path):
    from .test_app_help import DEBUGGER_ONLY, open_help

    app = CompareApp(backends(slow_server.url, tmp_path), concurrency=5, intro="test")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        expected, text = await open_help(app, pilot)
    assert [what for what in expected if what not in text] == []
    assert "⏎ Open the backend's stream in the three panes" in text
    assert "l back to this list from the three panes" in text
    assert not [tip for tip in DEBUGGER_ONLY if tip in text]
    assert "(unbound)" not in text
