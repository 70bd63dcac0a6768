"""``o`` lists the captures opened before, first; they are kept in the state dir."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from fraglens.app import recent
from fraglens.app.app import FraglensApp
from fraglens.app.screens.open import OpenScreen
from fraglens.reading.progressive import Loading

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SIZE = (120, 36)


def test_the_list_lives_under_xdg_state_home_most_recent_first(state_home, tmp_path):
    a, b = tmp_path / "a.sse", tmp_path / "b.sse"
    a.write_text("data: {}\n\n")
    b.write_text("data: {}\n\n")
    recent.remember(str(a))
    recent.remember(str(b))
    recent.remember(str(a))  # again: moves to the front, once
    assert recent.state_file() == state_home / "fraglens" / "recent"
    assert recent.recent_files() == [str(a), str(b)]
    b.unlink()  # a file that has gone is left out
    assert recent.recent_files() == [str(a)]


def test_a_relative_xdg_state_home_is_ignored_as_the_spec_says(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert recent.state_file() == tmp_path / ".local" / "state" / "fraglens" / "recent"


def test_at_most_kept_and_never_an_error(state_home, tmp_path, monkeypatch):
    paths = []
    for i in range(recent.KEPT + 5):
        path = tmp_path / f"{i}.sse"
        path.write_text("data: {}\n\n")
        paths.append(str(path))
        recent.remember(str(path))
    assert recent.recent_files() == paths[::-1][: recent.KEPT]
    # a state dir that cannot be written: opening goes on, nothing is raised
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "0.sse"))  # a file, not a folder
    recent.remember(paths[0])
    assert recent.recent_files() == []


async def test_o_lists_the_captures_opened_before_first_and_enter_opens_one(state_home):
    first = SAMPLES / "quirk_args_repaired.sse"
    shown = SAMPLES / "seed_interleaved_two_calls.sse"
    recent.remember(str(first))
    app = FraglensApp(loading=Loading(shown.read_bytes(), str(shown)), source=str(shown))
    async with app.run_test(size=SIZE) as pilot:
        while app.loading is not None:
            await pilot.pause()
        # opening a file remembers it
        assert recent.recent_files() == [str(shown), str(first)]
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, OpenScreen)
        listed = app.screen.query_one("#open-recent", OptionList)
        # the one shown is not offered again
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == [
            str(first)]
        await pilot.press("tab")
        assert app.screen.focused is listed
        await pilot.press("enter")
        while app.loading is not None or app.source != str(first):
            await pilot.pause()
        assert [c.name for c in app.index.calls]
        assert recent.recent_files() == [str(first), str(shown)]


async def test_without_history_o_shows_no_recent_list():
    shown = SAMPLES / "seed_interleaved_two_calls.sse"
    app = FraglensApp(loading=Loading(shown.read_bytes(), "demo"), source="demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert not app.screen.query("#open-recent")
        assert recent.recent_files() == []  # "demo" is no file: not remembered
