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

from fraglens import redact
from fraglens.app import clipboard
from fraglens.app.app import FraglensApp
from fraglens.app.screens.raw_event import RawEventScreen
from fraglens.app.screens.value import ValueScreen
from fraglens.app.scrubbed import masked, window_start
from fraglens.app.search import search
from fraglens.app.steps import StepIndex
from fraglens.app.widgets.buffers import AssistantText, CallCard
from fraglens.app.widgets.cut import STRING_CHARS, cut_string
from fraglens.app.widgets.parse import RAW_CHARS, CallResult, clip, pretty
from fraglens.app.widgets.prerendered import Prerendered
from fraglens.app.widgets.stream_list import StreamList
from fraglens.cli import main
from fraglens.net.serve import ServerHandle, bind
from fraglens.reading.capture import load_stream, stream_from_bytes
from fraglens.redact import Fingerprints, Secrets, TextScrub

from .test_app import shown
from .test_key_leaks import KEY, SPELLINGS, EchoUpstream, _chunk, leaks

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
    path = tmp_path / "echo.fraglens"
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
    for screen in ("h", "C", "g"):  # the history, every call, what a naive client builds
        await pilot.press(screen)
        await pilot.pause()
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


# -- windows and cuts ---------------------------------------------------------------------
#
# A pane shows part of a long text; a key its edge cuts would show a half the
# scrub cannot recognize, and two halves (the head and the tail of a clipped
# text) would show it whole.


def _scrub() -> TextScrub:
    return TextScrub(Secrets([("the authorization header", KEY)]))


def test_a_card_window_that_cuts_a_key_begins_at_the_key():
    text = "x" * 500 + KEY + "y" * 100
    start = 500 + len(KEY) // 2  # the window's edge, in the middle of the key
    begins = window_start(text, start, len(text), _scrub())
    assert begins == 500
    assert window_start(text, 520 + len(KEY), len(text), _scrub()) == 520 + len(KEY)


def test_a_clipped_raw_text_never_shows_the_two_halves_of_a_key():
    middle = RAW_CHARS // 2 - len(KEY) // 2  # the head's cut falls inside the key
    text = "a" * middle + KEY + "b" * (3 * RAW_CHARS)
    clipped = clip(text, scrub=_scrub())
    assert KEY in clipped  # whole, for ``scrubbed`` to replace
    assert leaks(_scrub().text(clipped)) == []
    unscrubbed = clip(text)  # without the scrub the cut leaves a half no scrub finds
    assert KEY not in unscrubbed and KEY[:5] in unscrubbed


def test_a_long_string_value_cut_inside_a_key_keeps_it_whole():
    value = "c" * (STRING_CHARS - 5) + KEY + "d" * 1000
    shown, cut = cut_string(value, _scrub())
    assert cut and KEY in shown
    drawn = pretty({"v": value}, scrub=_scrub()).plain
    assert '"ccc' in drawn and '[redacted]… [+1,000 chars]"' in drawn
    assert leaks(drawn) == []


def test_the_fragment_view_keeps_each_row_where_it_was():
    text = "ab" + KEY + "cd"
    out = masked(text, _scrub())
    assert len(out) == len(text)
    assert out == "ab" + "[redacted]" + "*" * (len(KEY) - 10) + "cd"


def test_a_fingerprint_is_checked_with_scrypt_once_however_often_it_is_drawn(monkeypatch):
    prints = Secrets([("the authorization header", KEY)]).fingerprints()
    slow = []
    real = redact._slow

    def counted(salt: bytes, value: str) -> str:
        slow.append(value)
        return real(salt, value)

    monkeypatch.setattr(redact, "_slow", counted)
    scrub = TextScrub(prints)
    for step in range(50):  # the same key drawn at 50 steps, each a different window
        assert scrub.text(f"step {step}: {KEY} and on") == f"step {step}: [redacted] and on"
    assert slow == [KEY]
    # found once, it is scrubbed in the other spellings too (base64 up to the last
    # character, which the bytes after the key share)
    # (each spelling has a fingerprint of its own, checked once like the key's)
    for _ in range(10):
        encoded = scrub.text(f'{SPELLINGS["base64"]} {SPELLINGS["hex"]}')
        assert encoded.startswith("[redacted]") and encoded.endswith(" [redacted]")
        assert leaks(encoded) == []
    assert len(slow) == len(set(slow)) <= 3


def test_search_skips_a_match_that_touches_a_key_and_finds_the_rest():
    call = {"index": 0, "id": "call_1", "type": "function"}
    body = b"".join(
        _chunk({"tool_calls": [{**call, "function": {"name": "f", "arguments": piece}}]})
        for piece in ('{"note": "' + KEY[:10], KEY[10:] + '", "other": "sk-spl"}')
    )
    stream, _ = stream_from_bytes(body + _chunk({}, finish="tool_calls"), "split.sse")
    stream.secrets = Secrets([("the authorization header", KEY)])
    index = StepIndex(stream)
    assert search(index, KEY[:6]).in_calls == 1  # "sk-spl": only the one after "other"
    assert search(index, "sk-").in_calls == 1
    assert search(index, "other").in_calls == 1
    assert search(index, KEY[3:15]).events == []


async def test_a_proxy_flow_opened_in_the_panes_draws_no_key():
    from fraglens.app.screens.flows import ProxyFlowsApp
    from fraglens.net.proxy.flows import FlowStore

    from .test_key_leaks import split_key_stream
    from .test_proxy_ui import finished, opened, settle

    store = FlowStore()
    prints = Secrets([("the authorization header", KEY)]).fingerprints()
    finished(store, split_key_stream(KEY), secrets=prints)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await settle(pilot, lambda: opened(app), "the panes")
        await pilot.press("end")
        await pilot.pause()
        seen = drawn(app)
        assert leaks(seen) == []
        redacted_where_the_key_was(app)


def test_a_schema_error_quoting_the_key_is_drawn_without_it():
    from rich.style import Style

    from fraglens.app.widgets.fit_marks import fit_details
    from fraglens.fit.schema import CallFit, SchemaError

    # jsonschema quotes the failing value, and the value may be the joined key
    message = f"'{KEY}' is not of type 'integer'"
    fit = CallFit(checked=True, tool="save", errors=[SchemaError("/note", "type", "", message)])
    details = fit_details(fit, Style(), _scrub())
    assert details is not None
    assert details.plain == "• /note '[redacted]' is not of type 'integer' (type)"
