"""``g``: the real calls beside what a naive client would have built."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from fraglens.app import naive as naive_module
from fraglens.app.app import FraglensApp
from fraglens.app.naive import NaiveReplay
from fraglens.app.screens.naive import NaiveScreen
from fraglens.reading.capture import load_stream
from fraglens.report.document import naive

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SIZE = (120, 36)


async def _opened(app: FraglensApp, pilot) -> NaiveScreen:
    await pilot.press("g")
    screen = app.screen
    assert isinstance(screen, NaiveScreen)
    while screen.found is None:
        await pilot.pause()
    await pilot.pause()
    return screen


def _text(screen: NaiveScreen, id_: str) -> str:
    return str(screen.query_one(f"#{id_}", Static).render())


async def test_g_shows_what_check_compare_reports_beside_the_real_calls():
    path = str(SAMPLES / "seed_interleaved_two_calls.sse")
    stream, _ = load_stream(path)
    logged, _ = load_stream(path, keep_naive=True)
    expected = naive(logged)  # what check --compare prints
    app = FraglensApp(stream, source="seed")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(app, pilot)
        assert screen.found is not None
        for how in ("by_id", "by_arrival"):
            got = [(k.id, k.name, k.arguments) for k in screen.found[how]]
            assert got == [(k["id"], k["name"], k["arguments"]) for k in expected[how]]
        # the two real calls, and the naive texts: the fragments of both calls
        # interleaved into one key, which is no call and no JSON
        real = _text(screen, "naive-real-text")
        assert '{"city":"深圳"}' in real and '{"city":"上海","unit":"\\"u\\""}' in real
        by_id = _text(screen, "naive-by_id-text")
        mixed = expected["by_id"][-1]["arguments"]
        assert "深" in mixed and "上" in mixed
        assert mixed in by_id and "≠ no real call · ✖ not JSON" in by_id
        about = _text(screen, "naive-about")
        assert "fraglens built 2 calls." in about
        assert "groups the fragments by id gets 3 calls, 0 of them right" in about
        await pilot.press("escape")
        assert not isinstance(app.screen, NaiveScreen)


async def test_a_naive_key_that_is_exactly_a_real_call_says_so():
    """One call, its id on the first fragment only: grouping by arrival gets it right."""
    stream, _ = load_stream(str(SAMPLES / "quirk_q23_usage_only_chunks.sse"))
    app = FraglensApp(stream, source="q23")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(app, pilot)
        assert screen.found is not None
        arrival = screen.found["by_arrival"]
        assert [(k.same_as, k.json) for k in arrival] == [(0, True)]
        assert "= #0 get_exchange_rate · JSON" in _text(screen, "naive-by_arrival-text")


def test_the_replay_goes_a_slice_at_a_time(monkeypatch):
    monkeypatch.setattr(naive_module, "SLICE_EVENTS", 10)
    stream, _ = load_stream(":demo:")
    replay = NaiveReplay(stream)
    steps = 1
    while not replay.advance():
        steps += 1
        assert 0 < replay.fraction < 1
    assert steps == -(-len(stream.events) // 10)
    logged, _ = load_stream(":demo:", keep_naive=True)
    found = replay.groupings([c.text for c in logged.reassembler.calls])
    assert [k.arguments for k in found["by_id"]] == [
        k["arguments"] for k in naive(logged)["by_id"]]


async def test_g_without_a_call_says_why():
    # a call written as markup in the text: no tool call at all
    stream, _ = load_stream(str(SAMPLES / "quirk_q31b_markup_in_content.sse"))
    app = FraglensApp(stream, source="q31b")
    async with app.run_test(size=SIZE) as pilot:
        assert not app.index.calls
        await pilot.press("g")
        await pilot.pause()
        assert not isinstance(app.screen, NaiveScreen)
        assert any("nothing to group" in n.message for n in app._notifications)
