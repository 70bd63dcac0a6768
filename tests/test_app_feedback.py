"""Keys that cannot act say why; copies too large for the terminal say so."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import Input

from fraglens.app import clipboard
from fraglens.app.app import FraglensApp
from fraglens.app.screens.open import OpenScreen
from fraglens.app.widgets.buffers import CallCard
from fraglens.app.widgets.key_bar import KeyBar
from fraglens.app.widgets.status import StatusBar
from fraglens.app.widgets.stream_list import StreamList
from fraglens.reading.capture import load_stream

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SEED = SAMPLES / "seed_interleaved_two_calls.sse"
SIZE = (120, 36)
#: the real one, before the fixture below replaces it
REAL_SYSTEM_COPY = clipboard.system_copy


@pytest.fixture(autouse=True)
def no_system_clipboard(monkeypatch):
    monkeypatch.setattr(clipboard, "system_copy", lambda text: "not in tests")


def app_for(path: Path, **kwargs) -> FraglensApp:
    stream, _ = load_stream(str(path))
    return FraglensApp(stream, source=str(path), **kwargs)


def last_note(app: FraglensApp) -> str:
    notes = list(app._notifications)
    return notes[-1].message if notes else ""


async def test_n_at_the_last_event_says_so():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "n")
        assert last_note(app) == "This is the last event."
        await pilot.press("home", "p")
        assert last_note(app) == "This is the first event."


async def test_c_while_the_call_streams_says_why():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        call = app.index.calls[0]
        app.goto(call.frag_event[1])
        await pilot.press("c")
        note = last_note(app)
        assert "is still streaming at event" in note and "r copies the text so far" in note
        assert app.clipboard == ""  # nothing was copied


async def test_next_diagnostic_after_the_last_one_says_so():
    app = app_for(SAMPLES / "quirk_args_repaired.sse")
    async with app.run_test(size=SIZE) as pilot:
        last = app.index.diagnostic_events[-1]
        app.goto(last)
        await pilot.press("right_square_bracket")
        assert app.step == last
        assert last_note(app).startswith(f"No diagnostic after event {last}")


async def test_following_a_call_reaches_its_verdict_then_says_why_it_stops():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        call = app.index.calls[0]
        verdict_at = call.results[-1][0]
        assert verdict_at > call.frag_event[-1]  # the finish came after its last fragment
        app.goto(call.frag_event[0])
        app.pinned = call.seq
        await pilot.press("f")
        for _ in range(len(call.frag_event) + 2):
            await pilot.press("n")
        assert app.step == verdict_at
        assert "and no verdict after" in last_note(app)


async def test_space_at_the_end_plays_again_from_the_start():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "space")
        assert app.playing
        assert app.step < app.index.last - 2  # back at the start (it plays on from there)
        await pilot.press("space")  # paused before the app closes
        assert "again from the start" in " ".join(n.message for n in app._notifications)


async def test_jump_past_the_end_says_so_and_goes_to_the_last():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("colon", "9", "9", "9", "enter")
        await pilot.pause()
        last = app.index.last
        assert app.step == last
        assert last_note(app) == f"No event 999 in the stream: the last is {last}; went there."


async def test_a_copy_too_large_for_osc52_goes_to_a_file_without_a_system_clipboard(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(clipboard.tempfile, "gettempdir", lambda: str(tmp_path))
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        text = "界" * 40_000  # 120 KB of UTF-8: 160 KB of base64
        clipboard.copy(app, text, "raw arguments of #0 big")
        await pilot.pause()
        assert app.clipboard == ""  # not sent over OSC 52
        note = last_note(app)
        assert "too large for the terminal (OSC 52)" in note
        path = Path(note.rsplit("written to ", 1)[1])
        assert path.parent == tmp_path / "fraglens"
        assert path.read_text(encoding="utf-8") == text
        assert path.stat().st_mode & 0o077 == 0  # only this user reads it


async def test_a_large_copy_is_not_reported_as_reaching_the_terminal(monkeypatch):
    monkeypatch.setattr(clipboard, "system_copy", lambda text: None)
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        clipboard.copy(app, "x" * 200_000, "big")
        await pilot.pause()
        assert last_note(app) == (
            "200,000 chars → system clipboard (too large for the terminal's OSC 52)"
        )
        clipboard.copy(app, "x" * 1000, "small")
        await pilot.pause()
        assert last_note(app) == "1,000 chars → system clipboard and terminal (OSC 52)"
        assert app.clipboard == "x" * 1000


def test_the_system_clipboard_reason_is_cut_at_a_word(monkeypatch):
    message = (
        "Pyperclip could not find a copy/paste mechanism for your system. "
        "For more information, please visit https://pyperclip.readthedocs.io"
    )

    def refuse(text: str) -> None:
        raise RuntimeError(message)

    monkeypatch.setitem(sys.modules, "pyperclip", types.SimpleNamespace(copy=refuse))
    reason = REAL_SYSTEM_COPY("x")
    assert reason is not None and len(reason) <= 80
    assert reason.endswith(" …")
    kept = reason.removesuffix(" …")
    assert message.startswith(kept) and message[len(kept)] == " "  # cut between two words


async def test_at_80x24_the_key_bar_keeps_quit_and_the_palette():
    app = app_for(SEED)
    async with app.run_test(size=(80, 24)):
        line = str(app.query_one(KeyBar).render())
        assert line.rstrip().endswith("q Quit  ^p palette")
        assert line.startswith(" n Next")
        assert cell_len(line) <= 80


async def test_o_opens_another_capture_without_quitting(tmp_path):
    other = SAMPLES / "quirk_args_repaired.sse"
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, OpenScreen)
        box = app.screen.query_one("#open-path", Input)
        assert box.value == f"{SAMPLES}/"  # starts in the shown capture's folder
        box.value = str(other)
        await pilot.press("enter")
        while app.loading is not None or app.source != str(other):
            await pilot.pause()
        expected, _ = load_stream(str(other))
        assert len(app.stream.events) == len(expected.events)
        assert [c.name for c in app.index.calls] == [c.name for c in expected.reassembler.calls]
        assert "quirk_args_repaired.sse" in str(app.query_one(StatusBar).render())


async def test_a_path_that_cannot_be_opened_says_why_and_keeps_the_capture():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        before = app.stream
        await app.open_path("/no/such/file.sse")
        await pilot.pause()
        assert app.stream is before
        assert last_note(app) == "/no/such/file.sse: no such file"


async def test_m_and_h_say_they_give_the_final_message_before_the_last_event():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        app.goto(5)
        await pilot.press("m")
        await pilot.pause()
        titles = [n.title for n in app._notifications]
        assert "Copied the final assistant message (whole stream, not as of event 5)" in titles
        await pilot.press("h")
        await pilot.pause()
        about = str(app.screen.query_one("#history-about").render())
        assert about.startswith("From the whole stream (its final calls), not as of event 5.")
        await pilot.press("escape", "end", "h")
        await pilot.pause()
        assert "not as of" not in str(app.screen.query_one("#history-about").render())


# -- finding -------------------------------------------------------------------------


async def test_search_lands_where_a_value_split_across_fragments_became_complete():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        call = next(c for c in app.index.calls if "深圳" in c.text)
        # the first event after which the call's text (as it stood) holds the value
        complete = next(
            e for e in range(app.index.last + 1) if "深圳" in call.text[: call.length_at(e)]
        )
        # no event holds the whole value: its two characters came in two fragments
        first_chunk = next(e.number for e in app.stream.events if e.kind == "data")
        assert not any("深圳" in e.data for e in app.stream.events[first_chunk:])
        app.goto(first_chunk)  # past the header comment, which quotes the value
        await pilot.press("slash")
        await pilot.pause()
        app.screen.query_one(Input).value = "深圳"
        await pilot.press("enter")
        await pilot.pause()
        assert app.step == complete
        await pilot.press("full_stop")
        # the last match: from the first again, the header comment that quotes it
        assert app.found.events == [0, complete]
        assert app.step == 0
        assert last_note(app) == "Past the last match; from the first again (event 0)."


async def test_search_next_and_previous_visit_every_event_with_a_match():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await pilot.pause()
        app.screen.query_one(Input).value = "CITY"  # capitals: case matters
        await pilot.press("enter")
        await pilot.pause()
        assert app.found is not None and not app.found.events
        assert last_note(app) == "No match for 'CITY'."
        await pilot.press("slash")
        await pilot.pause()
        app.screen.query_one(Input).value = "ci.y"  # a pattern, any case
        await pilot.press("enter")
        await pilot.pause()
        in_events = {e.number for e in app.stream.events if re.search("ci.y", e.data, re.I)}
        completed = set()
        for c in app.index.calls:
            for m in re.finditer("ci.y", c.text, re.I):
                # the fragment holding the match's last character
                k = next(i for i, end in enumerate(c.frag_end) if end >= m.end())
                completed.add(c.frag_event[k])
        expected = sorted(in_events | completed)
        assert app.step == expected[0]  # the search opened before the first chunk
        visited = [app.step]
        for _ in expected[1:]:
            await pilot.press("full_stop")
            visited.append(app.step)
        assert visited == expected
        await pilot.press("comma")
        assert app.step == visited[-2]
        await pilot.press("full_stop")
        # past the last match: from the first again, as less and vim do, saying so
        await pilot.press("full_stop")
        assert app.step == expected[0]
        assert last_note(app) == f"Past the last match; from the first again (event {expected[0]})."
        await pilot.press("comma")  # and back over the top
        assert app.step == expected[-1]
        assert last_note(app).startswith("Past the first match; from the last again")


def _underlined(strips) -> str:
    """The text of the underlined segments: where matches are marked."""
    return "".join(
        seg.text for strip in strips for seg in strip if seg.style and seg.style.underline
    )


async def test_search_marks_its_matches_in_the_stream_rows_and_the_buffer():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        stream_list = app.query_one(StreamList)
        rows = [stream_list.render_line(y) for y in range(stream_list.size.height)]
        assert _underlined(rows) == ""  # nothing marked before a search
        await pilot.press("slash")
        await pilot.pause()
        # "ci": in two rows (each call's first fragment) and in each buffer
        app.screen.query_one(Input).value = "ci"
        await pilot.press("enter")
        await pilot.pause()
        rows = [stream_list.render_line(y) for y in range(stream_list.size.height)]
        assert _underlined(rows) == "cici"
        app.goto(app.index.last)
        await pilot.pause()
        card = app.query(CallCard)[0]
        assert _underlined(card._strips) == "ci"  # {"city":"深圳"}: one match
