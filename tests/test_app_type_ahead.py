"""Keys typed ahead of a prompt go into it: ``:10⏎`` or ``/Lisbon⏎`` in one read
(a paste, a slow link) does what it says, as typed one key at a time does."""

from __future__ import annotations

from textual import events

from fraglens.app.app import FraglensApp
from fraglens.app.screens.jump import JumpScreen
from fraglens.app.screens.search import SearchScreen
from fraglens.reading.capture import load_stream

from .conftest import SAMPLES
from .test_app import SIZE

DEMO = SAMPLES / "demo.sse"


def demo_app() -> FraglensApp:
    stream, _ = load_stream(str(DEMO))
    return FraglensApp(stream, source=str(DEMO))


def typed_at_once(app: FraglensApp, keys: list[tuple[str, str]]) -> None:
    """Every key queued before the app handles the first: one read from the terminal.
    (Pilot's press waits for the app between two keys, which hides the race.)"""
    for key, character in keys:
        app.post_message(events.Key(key, character))


async def settled(pilot) -> None:
    for _ in range(10):
        await pilot.pause()


async def test_a_jump_typed_in_one_read_jumps():
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.step != 10
        typed_at_once(app, [("colon", ":"), ("1", "1"), ("0", "0"), ("enter", "\r")])
        await settled(pilot)
        assert app.step == 10
        assert not isinstance(app.screen, JumpScreen)


async def test_a_search_typed_in_one_read_searches_and_what_follows_steps():
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        keys = [("slash", "/"), *((c, c) for c in "Lisbon"), ("enter", "\r"), ("n", "n")]
        typed_at_once(app, keys)
        await settled(pilot)
        assert not isinstance(app.screen, SearchScreen)
        assert app.found is not None and app.found.query == "Lisbon"
        # the n after the enter went back to the panes: one step past the first match
        assert app.step == app.found.events[0] + 1


async def test_a_pasted_jump_jumps_and_other_pastes_are_no_keys():
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        start = app.step
        app.post_message(events.Paste("q"))  # text, not a command: not taken for a key
        await settled(pilot)
        assert app.is_running and app.step == start
        app.post_message(events.Paste(":5\r"))
        await settled(pilot)
        assert app.step == 5 and not isinstance(app.screen, JumpScreen)
