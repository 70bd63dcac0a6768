"""The debugger driven by keys (Textual's Pilot): what the panes show after each step."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from rich.console import Console
from textual.binding import Binding

from fraglens.app import clipboard
from fraglens.app.app import SPEEDS, FraglensApp, StreamGrew
from fraglens.app.commands import FraglensCommands
from fraglens.app.keys import BINDINGS, palette_title
from fraglens.app.screens.help import HelpScreen
from fraglens.app.screens.jump import JumpScreen
from fraglens.app.screens.raw_event import RawEventScreen
from fraglens.app.widgets.buffers import AssistantText, BuffersPane, CallCard
from fraglens.app.widgets.chunk_line import ChunkLine, compact, mark, window
from fraglens.app.widgets.key_bar import KeyBar
from fraglens.app.widgets.parse import CallResult, DiagnosticsView, ParsePane
from fraglens.app.widgets.stream_list import StreamList
from fraglens.cli.debugger import run as run_app
from fraglens.framing.events import RawEvent
from fraglens.reading.capture import load_stream
from fraglens.reading.stream import Stream

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SEED = SAMPLES / "seed_interleaved_two_calls.sse"
#: the seed opens with comment lines that describe it; its chunks follow
SEED_FIRST_CHUNK = next(e.number for e in load_stream(str(SEED))[0].events if e.kind != "comment")
SIZE = (120, 36)


@pytest.fixture(autouse=True)
def no_system_clipboard(monkeypatch):
    """Tests never touch the machine's clipboard; OSC 52 (app.clipboard) is checked."""
    monkeypatch.setattr(clipboard, "system_copy", lambda text: "not in tests")


def app_for(path: Path | str, **kwargs) -> FraglensApp:
    stream, _ = load_stream(str(path))
    return FraglensApp(stream, source=str(path), **kwargs)


def shown(renderable, width: int = 60) -> str:
    """A renderable as the plain text a user would read."""
    console = Console(width=width, color_system=None, record=True, file=None)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def flat(text: str) -> str:
    """Wrapped lines joined again."""
    return " ".join(text.split())


def pane_text(widget) -> str:
    """What a pane's widget shows at its width."""
    width = widget.content_size.width
    return shown(widget.content(width), width)


def card_text(app: FraglensApp, position: int) -> str:
    card = app.query(CallCard)[position]
    assert card.display, f"call #{position} is not shown yet"
    return pane_text(card)


def result_text(app: FraglensApp, position: int) -> str:
    widget = app.query(CallResult)[position]
    return pane_text(widget)


def row(app: FraglensApp, event: int) -> str:
    stream_list = app.query_one(StreamList)
    return stream_list.render_line(event - int(stream_list.scroll_y)).text


# -- stepping the seed's nine fragments -------------------------------------------

#: after each of the seed's chunk events: (call #0's text, call #1's text or None)
SEED_STEPS = [
    ("", None),
    ("", ""),
    ('{"ci', ""),
    ('{"ci', '{"ci'),
    ('{"city":"深', '{"ci'),
    ('{"city":"深', '{"city":"上'),
    ('{"city":"深圳"}', '{"city":"上'),
    ('{"city":"深圳"}', '{"city":"上海","unit":"\\"'),
    ('{"city":"深圳"}', '{"city":"上海","unit":"\\"u\\""}'),
]


async def test_the_app_opens_just_before_the_first_chunk():
    app = app_for(SEED)
    async with app.run_test(size=SIZE):
        assert app.step == SEED_FIRST_CHUNK - 1
        assert "No tool call yet" in shown(app.query_one("#buffers-empty").content)


async def test_after_three_steps_the_first_buffer_holds_ci():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "n", "n")
        assert app.step == SEED_FIRST_CHUNK + 2
        assert '{"ci' in card_text(app, 0)
        assert "(no argument text yet)" in card_text(app, 1)


async def test_each_step_shows_each_buffer_exactly():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        for first, second in SEED_STEPS:
            await pilot.press("n")
            text = card_text(app, 0).split("\n")[1]
            assert text == (first or "(no argument text yet)")
            if second is None:
                assert not app.query(CallCard)[1].display
            else:
                text = card_text(app, 1).split("\n")[1]
                assert text == (second or "(no argument text yet)")


async def test_the_card_counts_fragments_and_says_what_this_event_added():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 4)  # call #0 gets 'ty":"深'
    async with app.run_test(size=SIZE):
        text = flat(card_text(app, 0))
        assert "+6 now · 3/4 frags · 10/13 chars" in text
        assert "valid · in string · depth 1" in text


async def test_the_scanner_says_complete_once_the_value_closed():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 6)
    async with app.run_test(size=SIZE):
        assert "✔ complete JSON value" in flat(card_text(app, 0))
        assert "valid · in string" in flat(card_text(app, 1))


async def test_parse_says_streaming_until_the_finish_then_ok():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 8)
    async with app.run_test(size=SIZE) as pilot:
        assert "… streaming" in result_text(app, 0)
        await pilot.press("n")  # the finish chunk
        first, second = result_text(app, 0), result_text(app, 1)
        assert "✔ ok" in first and '"city": "深圳"' in first
        assert "✔ ok" in second and '"unit": "\\"u\\""' in second


async def test_stepping_back_shows_the_earlier_state_again():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 9)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("p", "p", "p", "p", "p", "p")
        assert app.step == SEED_FIRST_CHUNK + 3
        assert card_text(app, 0).split("\n")[1] == '{"ci'
        assert "… streaming" in result_text(app, 0)


async def test_arrow_keys_step_like_n_and_p():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        start = app.step
        await pilot.press("right", "right", "left")
        assert app.step == start + 1


async def test_home_and_end_go_to_the_first_and_last_event_from_any_pane():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        assert app.step == len(app.stream.events) - 1
        await pilot.press("tab")  # Buffers: a scrolling pane binds home/end to scrolling
        assert isinstance(app.focused, BuffersPane)
        await pilot.press("home")
        assert app.step == 0


# -- what can't be done is greyed out ---------------------------------------------


async def test_next_is_greyed_out_at_the_last_event_and_previous_at_the_first():
    app = app_for(SEED, step=0)
    async with app.run_test(size=SIZE) as pilot:
        assert app.check_action("step_prev", ()) is None
        assert app.check_action("step_next", ()) is True
        await pilot.press("end")
        assert app.check_action("step_next", ()) is None
        assert app.check_action("step_prev", ()) is True


async def test_copy_arguments_is_greyed_out_while_the_call_streams():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 3)
    async with app.run_test(size=SIZE) as pilot:
        assert app.check_action("copy_arguments", ()) is None
        await pilot.press("end")
        assert app.check_action("copy_arguments", ()) is True


# -- the stream pane --------------------------------------------------------------


async def test_the_current_event_is_marked_and_its_fragment_and_call_shown():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 2)
    async with app.run_test(size=SIZE):
        current = row(app, SEED_FIRST_CHUNK + 2)
        assert current.startswith("▶")
        assert "#0" in current and '{\\"ci' in current
        assert not row(app, SEED_FIRST_CHUNK + 3).startswith("▶")
        assert "#1" in row(app, SEED_FIRST_CHUNK + 3)


async def test_comments_and_done_appear_in_the_stream():
    app = app_for(SEED, step=0)
    async with app.run_test(size=(100, 30)):
        assert "comment" in row(app, 0) and ": fraglens sample" in row(app, 0)
        # the comment block spans lines; a row stays one line
        stream_list = app.query_one(StreamList)
        assert not any("\n" in segment.text for segment in stream_list.render_line(0))
        assert "●" in row(app, 0)  # the sse-comment diagnostic's mark
    last = len(app.stream.events) - 1
    app = app_for(SEED, step=last)
    async with app.run_test(size=SIZE):
        assert "[DONE]" in row(app, last)


async def test_a_click_on_an_event_goes_to_it():
    app = app_for(SEED, step=0)
    async with app.run_test(size=SIZE) as pilot:
        stream_list = app.query_one(StreamList)
        # the pane's border takes the first line: content row 5 is at y 6
        await pilot.click(StreamList, offset=(10, 6 - int(stream_list.scroll_y)))
        assert app.step == 5


async def test_enter_shows_the_raw_json_of_the_current_event():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        assert isinstance(app.screen, RawEventScreen)
        about = shown(app.screen.query_one("#raw-about").content, 100)
        body = shown(app.screen.query_one("#raw-body").content, 100)
        assert "added to #0 get_weather: '{\"ci'" in about
        assert '"arguments": "{\\"ci"' in body
        await pilot.press("escape")
        assert not isinstance(app.screen, RawEventScreen)


# -- finding ---------------------------------------------------------------------


async def test_brackets_go_from_diagnostic_to_diagnostic():
    app = app_for(":demo:")
    async with app.run_test(size=SIZE) as pilot:
        events = app.index.diagnostic_events
        assert len(events) >= 2
        later = [e for e in events if e > app.step]
        for expected in later:
            await pilot.press("right_square_bracket")
            assert app.step == expected
        assert app.check_action("next_diagnostic", ()) is None
        await pilot.press("left_square_bracket")
        assert app.step == later[-2]


async def test_the_repaired_call_shows_its_repair_and_diagnostic():
    app = app_for(":demo:")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        results = [result_text(app, i) for i in range(len(app.query(CallResult)))]
        repaired = next(r for r in results if "✚ repaired" in r)
        assert "raw, as sent" in repaired and "repaired" in repaired
        assert "•" in repaired  # the repair log
        diagnostics = pane_text(app.query_one(DiagnosticsView))
        assert "args-repaired" in diagnostics


async def test_a_diagnostic_event_link_goes_to_its_event():
    app = app_for(":demo:")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        target = app.index.diagnostic_events[1]
        await app.run_action(f"goto({target})")
        await pilot.pause()
        assert app.step == target


async def test_jump_goes_to_the_typed_event_and_minus_one_is_the_last():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("colon")
        assert isinstance(app.screen, JumpScreen)
        await pilot.press("7", "enter")
        assert app.step == 7
        await pilot.press("colon", "minus", "1", "enter")
        assert app.step == len(app.stream.events) - 1
        await pilot.press("colon", "escape")
        assert app.step == len(app.stream.events) - 1


async def test_follow_steps_through_one_calls_fragments_only():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 2)  # call #0 was just written
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        assert app.follow == app.index.calls[0].seq
        visited = []
        while app.check_action("step_next", ()):
            await pilot.press("n")
            visited.append(app.step)
        # its fragments, then the event that gave its verdict (the finish)
        verdict = app.index.calls[0].results[-1][0]
        assert verdict > SEED_FIRST_CHUNK + 6
        assert visited == [SEED_FIRST_CHUNK + 4, SEED_FIRST_CHUNK + 6, verdict]
        await pilot.press("F")
        assert app.follow is None
        await pilot.press("p")
        assert app.step == verdict - 1


async def test_buffers_keys_select_a_call_and_escape_goes_back_to_automatic():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 8)
    async with app.run_test(size=SIZE) as pilot:
        assert app.selected == app.index.calls[1].seq  # the call written last
        await pilot.press("tab", "up")
        assert app.selected == app.index.calls[0].seq
        assert "▶" in app.query(CallCard)[0].border_title
        await pilot.press("escape")
        assert app.selected == app.index.calls[1].seq


async def test_tab_moves_between_the_three_panes():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.focused, StreamList)
        await pilot.press("tab")
        assert isinstance(app.focused, BuffersPane)
        await pilot.press("tab")
        assert isinstance(app.focused, ParsePane)


async def test_boundaries_mark_each_fragment_on_demand():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 6)
    async with app.run_test(size=SIZE) as pilot:
        card = app.query(CallCard)[0]
        plain = sum(len(line.spans) for line in card._argument_lines(30))
        await pilot.press("b")
        assert app.boundaries
        assert sum(len(line.spans) for line in card._argument_lines(30)) > plain


# -- playing -----------------------------------------------------------------------


async def test_space_plays_to_the_end_and_stops():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        assert app.playing
        for _ in range(6):
            await pilot.press("plus")
        assert app.speed == SPEEDS[-1]
        assert app.check_action("faster", ()) is None
        for _ in range(200):
            if not app.playing:
                break
            await pilot.pause(0.02)
        assert not app.playing
        assert app.step == len(app.stream.events) - 1


async def test_space_again_pauses():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "space")
        assert not app.playing
        await pilot.press("minus")
        assert app.speed == 0.5


# -- copying ---------------------------------------------------------------------


async def test_c_copies_the_selected_calls_parsed_arguments():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "c")
        assert json.loads(app.clipboard) == {"city": "上海", "unit": '"u"'}
        assert app.clipboard.startswith("{\n  ")  # pretty
        await pilot.press("tab", "up", "c")
        assert json.loads(app.clipboard) == {"city": "深圳"}


async def test_r_copies_the_raw_text_as_it_stands_at_the_step():
    app = app_for(SEED, step=SEED_FIRST_CHUNK + 4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        assert app.clipboard == '{"city":"深'


async def test_m_copies_the_assistant_message_with_its_tool_calls():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        message = json.loads(app.clipboard)
        assert message["role"] == "assistant"
        calls = message["tool_calls"]
        assert [c["id"] for c in calls] == ["call_a1", "call_b2"]
        assert json.loads(calls[0]["function"]["arguments"]) == {"city": "深圳"}


async def test_m_gives_anthropic_tool_use_blocks_for_an_anthropic_stream():
    app = app_for(SAMPLES / "native_anthropic_two_tools.sse")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        message = json.loads(app.clipboard)
        assert message["role"] == "assistant"
        assert any(block["type"] == "tool_use" for block in message["content"])


async def test_the_copy_notification_says_where_the_text_went():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "c")
        note = list(app._notifications)[-1]
        assert "terminal (OSC 52) only" in note.message
        assert "not in tests" in note.message


async def test_when_the_system_clipboard_works_the_notification_says_both(monkeypatch):
    monkeypatch.setattr(clipboard, "system_copy", lambda text: None)
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "r")
        note = list(app._notifications)[-1]
        assert "system clipboard and terminal (OSC 52)" in note.message


# -- help and the palette -----------------------------------------------------------


async def test_question_mark_shows_every_key():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = shown(app.screen.query_one("#help-keys").content, 120)
        for binding in BINDINGS:
            assert binding.tooltip in text
        assert "(unbound)" not in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


def test_every_binding_has_an_id_a_description_and_a_tooltip():
    ids = [b.id for b in BINDINGS]
    assert all(ids) and len(set(ids)) == len(ids)
    assert all(b.description and b.tooltip for b in BINDINGS)
    titles = {palette_title(b) for b in BINDINGS}
    assert {"step: next diagnostic", "copy: final assistant message", "step: next event"} <= titles


async def test_the_palette_offers_actions_calls_and_diagnostics_by_name():
    app = app_for(":demo:")
    async with app.run_test(size=SIZE):
        titles = [title for title, _, _ in FraglensCommands(app.screen)._commands()]
        assert "step: next diagnostic" in titles
        assert "copy: final assistant message" in titles
        assert any(t.startswith("call: select #1 read_file") for t in titles)
        assert any(t.startswith("find: args-repaired at event") for t in titles)
        # what cannot be done at the first event is left out, as the key line greys it
        assert "step: previous event" not in titles
        assert "copy: arguments (parsed, pretty JSON)" not in titles


async def test_a_palette_command_runs_its_action():
    app = app_for(":demo:")
    async with app.run_test(size=SIZE) as pilot:
        start = app.step
        await pilot.press("ctrl+p")
        await pilot.press(*"step: next diagnostic")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.step == app.index.next_diagnostic(start)


# -- a stream that grows while shown -------------------------------------------------


def _seed_events() -> list[RawEvent]:
    _, framed = load_stream(str(SEED))
    return framed.events


async def test_a_growing_stream_is_followed_at_the_last_event():
    events = _seed_events()
    stream = Stream()
    for ev in events[: SEED_FIRST_CHUNK + 3]:
        stream.feed(ev)
    app = FraglensApp(stream, source="live", step=SEED_FIRST_CHUNK + 2)
    async with app.run_test(size=SIZE) as pilot:
        for ev in events[SEED_FIRST_CHUNK + 3 : SEED_FIRST_CHUNK + 5]:
            stream.feed(ev)
        app.post_message(StreamGrew())
        await pilot.pause()
        assert app.step == SEED_FIRST_CHUNK + 4
        assert card_text(app, 0).split("\n")[1] == '{"city":"深'
        app.live_status = "● recording"
        await pilot.pause()
        assert "● recording" in shown(app.query_one("#status").render(), 120)


async def test_away_from_the_end_new_events_are_counted_not_jumped_to():
    events = _seed_events()
    stream = Stream()
    for ev in events[: SEED_FIRST_CHUNK + 3]:
        stream.feed(ev)
    app = FraglensApp(stream, source="live", step=SEED_FIRST_CHUNK)
    async with app.run_test(size=SIZE) as pilot:
        for ev in events[SEED_FIRST_CHUNK + 3 :]:
            stream.feed(ev)
        stream.close()
        app.refresh_stream()
        await pilot.pause()
        assert app.step == SEED_FIRST_CHUNK
        assert app.new_events == len(events) - SEED_FIRST_CHUNK - 3
        assert "new (end to catch up)" in shown(app.query_one("#status").render(), 120)
        await pilot.press("end")
        assert app.new_events == 0


# -- statuses in their own words -------------------------------------------------------


@pytest.mark.parametrize(
    "sample, status",
    [
        ("quirk_q22_finish_length_truncated.sse", "✂ truncated"),
        ("quirk_args_invalid.sse", "✖ invalid"),
        ("quirk_args_repaired.sse", "✚ repaired"),
        ("quirk_q17_args_empty.sse", "○ empty"),
        ("quirk_q27_error_object.sse", "■ aborted"),
    ],
)
async def test_each_status_reads_without_colour(sample, status):
    app = app_for(SAMPLES / sample)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        results = [result_text(app, i) for i in range(len(app.query(CallResult)))]
        assert any(status in r for r in results), results


# -- input errors ------------------------------------------------------------------------


def _args(path: str | None) -> argparse.Namespace:
    return argparse.Namespace(path=path, format=None, max_arg_bytes=1 << 20, tools=None)


def test_a_missing_file_is_one_clear_line_and_exit_2(capsys):
    assert run_app(_args("/no/such/capture.sse")) == 2
    err = capsys.readouterr().err
    assert err == "fraglens: error: /no/such/capture.sse: no such file\n"


def test_bytes_that_are_no_stream_are_one_clear_line_and_exit_2(tmp_path, capsys):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 this is not a stream \xff")
    assert run_app(_args(str(junk))) == 2
    err = capsys.readouterr().err
    assert err.startswith("fraglens: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_an_empty_file_is_one_clear_line_and_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.sse"
    empty.write_text("")
    assert run_app(_args(str(empty))) == 2
    err = capsys.readouterr().err
    assert err.startswith("fraglens: error: ") and err.count("\n") == 1


# -- the assistant's text ----------------------------------------------------------


async def test_the_assistant_text_shows_what_each_event_added():
    app = app_for(":demo:")
    async with app.run_test(size=SIZE) as pilot:
        said = app.query_one(AssistantText)
        assert not said.display  # nothing said yet
        texts = app.stream.reassembler.choices[0].text
        first_event, first_piece = texts[0]
        await app.run_action(f"goto({first_event})")
        await pilot.pause()
        assert said.display
        assert f"+{len(first_piece)} now" in pane_text(said)
        marked = row(app, first_event)
        assert first_piece.strip() in marked


# -- one chunk on one line -----------------------------------------------------------


def test_repeated_plain_values_are_elided_but_containers_kept():
    previous = {"id": "x", "model": "m", "choices": [{"delta": {"content": "a"}}]}
    value = {"id": "x", "model": "m", "choices": [{"delta": {"content": "a"}}]}
    assert compact(value, previous) == '{…,"choices":[{"delta":{"content":"a"}}]}'
    assert compact(value) == '{"id":"x","model":"m","choices":[{"delta":{"content":"a"}}]}'


def test_a_piece_is_found_as_a_whole_string_value_before_anywhere_else():
    text = '{…,"choices":[{"index":0,"delta":{"content":","}}]}'
    [(start, end, kind)] = mark(text, [], [], [","])
    assert (text[start - 1 : end + 1], kind) == ('","', "text")


def test_the_window_keeps_the_first_mark_in_view():
    line = ChunkLine("x" * 100 + "HERE" + "y" * 100, ((100, 104, "args"),))
    cut = window(line, 40)
    start, end, _ = cut.marks[0]
    assert cut.text.startswith("…") and cut.text[start:end] == "HERE"
    assert start < 40


# -- a recording with times -----------------------------------------------------------


async def test_a_recording_with_times_plays_at_its_pace():
    events = _seed_events()
    stream = Stream()
    for i, ev in enumerate(events):
        stream.feed(RawEvent(ev.number, ev.kind, ev.data, ev.event, ev.id, i * 0.2, ev.span))
    stream.close()
    app = FraglensApp(stream, source="timed")
    async with app.run_test(size=SIZE) as pilot:
        assert "0.000s" in row(app, 0)  # the time column
        await pilot.press("space")
        assert "recorded pace" in shown(app.query_one("#status").render(), 120)
        await pilot.press(*["plus"] * 6)
        for _ in range(200):
            if not app.playing:
                break
            await pilot.pause(0.02)
        assert app.step == len(events) - 1


def test_the_bundled_demo_is_the_sample_it_was_copied_from():
    bundled = Path(__file__).resolve().parent.parent / "tui" / "fraglens" / "demo" / "demo.sse"
    assert bundled.read_bytes() == (SAMPLES / "demo.sse").read_bytes()


async def test_another_stream_can_be_shown_in_the_same_app():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "f")
        demo, _ = load_stream(":demo:")
        await app.show_stream(demo, "demo")
        await pilot.pause()
        assert app.stream is demo and app.follow is None and app.pinned is None
        assert app.step == 0
        assert len(app.query(CallCard)) == len(demo.reassembler.calls)
        await pilot.press("end")
        assert "✚ repaired" in result_text(app, 1)


async def test_a_subclass_adds_its_own_keys_to_the_key_line():
    class WithFlows(FraglensApp):
        BINDINGS = [*FraglensApp.BINDINGS, Binding("l", "bell", "Flows", id="proxy.flows")]
        KEY_BAR = (*FraglensApp.KEY_BAR, "proxy.flows")

    stream, _ = load_stream(str(SEED))
    app = WithFlows(stream)
    async with app.run_test(size=SIZE):
        bar = app.query_one(KeyBar)
        assert [b.id for b in bar.bindings][-1] == "proxy.flows"
        assert "l Flows" in shown(bar.render(), 200)


async def test_h_shows_the_whole_history_and_that_it_passes_the_check():
    app = app_for(SEED)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await pilot.pause()
        screen = app.screen
        assert type(screen).__name__ == "HistoryScreen"
        about = shown(screen.query_one("#history-about").render())
        assert "passes fraglens history check" in about
        body = flat(shown(screen.query_one("#history-body").render(), width=100))
        assert '"tool_call_id": "call_a1"' in body and '"tool_call_id": "call_b2"' in body
        await pilot.press("c")
        copied = json.loads(app.clipboard)
        assert [m["role"] for m in copied] == ["assistant", "tool", "tool"]
        await pilot.press("s")  # the next shape: Anthropic
        await pilot.press("c")
        copied = json.loads(app.clipboard)
        assert copied[1]["content"][0]["type"] == "tool_result"
        await pilot.press("escape")
        assert type(app.screen).__name__ != "HistoryScreen"


async def test_the_history_of_a_truncated_call_leaves_it_out_unless_asked():
    app = app_for(SAMPLES / "quirk_q22_finish_length_truncated.sse")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await pilot.pause()
        await pilot.press("c")
        assert json.loads(app.clipboard) == []  # nothing whole to send back
        await pilot.press("b")
        await pilot.pause()
        about = shown(app.screen.query_one("#history-about").render(), width=100)
        assert "arguments-invalid-json" in about  # as a provider would reject it



async def test_the_parse_pane_shows_the_calls_a_parallel_wrapper_holds():
    app = app_for(SAMPLES / "verdict_parallel_wrapper.sse")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        text = flat(result_text(app, 0))
        assert "the 2 calls this wrapper holds:" in text
        assert "get_weather" in text and "get_local_time" in text and "Europe/Paris" in text


async def test_a_guess_is_labelled_a_guess_not_a_repair():
    app = app_for(SAMPLES / "verdict_repair_is_a_guess.sse")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        text = flat(result_text(app, 0))
        assert "json-repair's guess, not used" in text
