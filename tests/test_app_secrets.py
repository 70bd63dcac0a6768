"""The app's panes never draw a key the server streamed back in pieces.

A loopback upstream echoes the caller's key cut across two SSE events, in the
assistant's text and in a tool call's arguments (``test_key_leaks``): no event
holds it, the text the engine joins does. Each test opens the answer in the app
(a recording, which knows the key by its fingerprints; a live call, which
knows it), steps through every event, opens every screen that shows joined
text, searches for the key and copies what can be copied, and greps all of it
for the key in each spelling the scrub knows, and for the ``[redacted]`` mark
where the key was.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console

from fraglens.app import clipboard
from fraglens.app.app import FraglensApp
from fraglens.app.screens.raw_event import RawEventScreen
from fraglens.app.screens.value import ValueScreen
from fraglens.app.search import search
from fraglens.app.widgets.buffers import AssistantText, CallCard
from fraglens.app.widgets.parse import CallResult
from fraglens.app.widgets.prerendered import Prerendered
from fraglens.app.widgets.stream_list import StreamList
from fraglens.cli import main
from fraglens.net.serve import ServerHandle, bind
from fraglens.reading.capture import load_stream
from fraglens.redact import Fingerprints, Secrets

from .test_app import shown
from .test_key_leaks import KEY, EchoUpstream, leaks

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def no_system_clipboard(monkeypatch):
    monkeypatch.setattr(clipboard, "system_copy", lambda text: "not in tests")


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with ServerHandle(EchoUpstream(), bind("127.0.0.1", 0)).start() as server:
        yield server.url


@pytest.fixture
def recording(upstream, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = tmp_path / "echo.jsonl"
    argv = ["live", "--url", upstream + "/v1", "--model", "m", "--prompt", "hi", "--json",
            "--record", str(path)]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    text = path.read_text()
    # the pieces are in the file, each whole in its own event: only joining makes the key
    assert KEY[:12] in text and KEY[12:] in text and leaks(text) == []
    return path


def screen_text(app: FraglensApp) -> str:
    """Every character the terminal shows now, as ``export_screenshot`` renders it."""
    console = Console(width=app.size.width, file=io.StringIO(), record=True, color_system=None)
    strips = app.screen._compositor.render_update(full=True, screen_stack=[])
    console.print(strips)
    return console.export_text()


def drawn(app: FraglensApp) -> str:
    """The screen, and what each pane holds beyond its visible part: every row of
    the event list and each prerendered widget's whole content."""
    parts = [screen_text(app)]
    for widget in app.screen.query(Prerendered):
        if widget.display and widget.content_size.width:
            parts.append(shown(widget.content(widget.content_size.width), 200))
    for rows in app.screen.query(StreamList):
        width = rows.content_size.width
        for row in range(len(app.stream.events)):
            parts.append(rows._render_row(row, width, False).text)
    return "\n".join(parts)


async def walk_every_pane(app: FraglensApp, pilot) -> str:
    """Step through the stream and open each screen that draws joined text; all
    of it, and every copy, as one text."""
    seen: list[str] = []
    for step in range(len(app.stream.events)):
        app.goto(step)
        await pilot.pause()
        seen.append(drawn(app))
        await pilot.press("enter")  # the raw event, and what the engine took from it
        await pilot.pause()
        assert isinstance(app.screen, RawEventScreen)
        seen.append(screen_text(app))
        await pilot.press("escape")
        await pilot.pause()
    await pilot.press("v")
    await pilot.pause()
    assert isinstance(app.screen, ValueScreen)
    seen.append(screen_text(app))
    seen.append(app.screen.text)
    await pilot.press("b")  # the same text, its fragment boundaries marked
    await pilot.pause()
    seen.append(screen_text(app))
    await pilot.press("escape")
    await pilot.press("h")  # the history the stream's calls make
    await pilot.pause()
    seen.append(screen_text(app))
    await pilot.press("escape")
    await pilot.pause()
    for key in ("c", "r", "m"):
        await pilot.press(key)
        await pilot.pause()
        seen.append(app.clipboard)
    return "\n".join(seen)


def redacted_where_the_key_was(app: FraglensApp) -> None:
    (card,) = app.query(CallCard)
    assert '{"note": "[redacted]"}' in shown(card.content(100), 100)
    said = shown(app.query_one(AssistantText).content(200), 200)
    assert "your key is [redacted]; b64 [redacted]" in said
    (result,) = app.query(CallResult)
    assert '"note": "[redacted]"' in shown(result.content(100), 100)


def search_does_not_find_the_key(app: FraglensApp) -> None:
    for query in (KEY, KEY[:12] + KEY[12:16], KEY[8:20]):
        found = search(app.index, query)
        assert found.events == [], query
    # what is around the key is found as before
    assert search(app.index, "your key is").events


async def test_a_recording_draws_no_key_joined_from_two_events(recording):
    stream, _ = load_stream(str(recording))
    assert isinstance(stream.secrets, Fingerprints)
    app = FraglensApp(stream, source=str(recording))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        everything = await walk_every_pane(app, pilot)
        assert leaks(everything) == []
        assert "[redacted]" in everything
        redacted_where_the_key_was(app)
        search_does_not_find_the_key(app)


async def test_a_live_call_draws_no_key_joined_from_two_events(upstream):
    from fraglens.app.live import make_live_app
    from fraglens.net.live import LiveCall
    from fraglens.net.request import build_spec

    from .test_live_app import wait_until

    spec, _ = build_spec(upstream + "/v1", model="m", prompt="hi", environ={"OPENAI_API_KEY": KEY})
    call = LiveCall(spec)
    app = make_live_app(call)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: call.status.phase.finished)
        await wait_until(pilot, lambda: app.index.last == len(app.stream.events) - 1)
        assert isinstance(app.stream.secrets, Secrets)
        everything = await walk_every_pane(app, pilot)
        assert leaks(everything) == []
        redacted_where_the_key_was(app)
        search_does_not_find_the_key(app)
