"""Reading long values: the panes cut them to the screen, ``v`` shows them whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList, Sparkline, TextArea

from fraglens.app import clipboard
from fraglens.app.app import FraglensApp
from fraglens.app.screens.calls import CallsScreen
from fraglens.app.screens.value import ValueScreen, readable
from fraglens.app.widgets.buffers import CallCard
from fraglens.app.widgets.cut import STRING_CHARS
from fraglens.app.widgets.parse import CallResult, pretty
from fraglens.app.widgets.stream_list import StreamList, short_label
from fraglens.framing.events import RawEvent
from fraglens.reading.capture import load_stream, stream_from_bytes
from fraglens.reading.stream import Stream
from fraglens.report.diff import MARK_LIMIT, marked_pair

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SIZE = (120, 36)


@pytest.fixture(autouse=True)
def no_system_clipboard(monkeypatch):
    monkeypatch.setattr(clipboard, "system_copy", lambda text: "not in tests")


def _write_file_capture(content: str, piece: int = 1000) -> bytes:
    """One write_file call whose arguments come ``piece`` characters a chunk."""
    args = json.dumps({"path": "big.py", "content": content}, ensure_ascii=False)
    return _args_capture(args, piece)


def _args_capture(args: str, piece: int = 1000) -> bytes:
    """One write_file call with the argument text ``args``, ``piece`` characters a chunk."""
    events = [
        {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "write_file", "arguments": ""},
        }
    ]
    events += [
        {"index": 0, "function": {"arguments": args[i : i + piece]}}
        for i in range(0, len(args), piece)
    ]
    out = []
    for tool in events:
        chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [tool]}}]}
        out.append(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n")
    out.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n')
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def test_pretty_cuts_a_long_string_and_says_so():
    text = pretty({"path": "a.py", "content": "x" * 1_000_000}).plain
    assert len(text) < STRING_CHARS + 200
    assert f"… [+{1_000_000 - STRING_CHARS:,} chars]" in text
    assert text.endswith("… (v shows it whole, c copies it)")


def test_pretty_walks_no_further_than_the_lines_shown():
    class Counting(list):
        """A list that counts how many of its items were read."""

        read = 0

        def __iter__(self):
            for item in super().__iter__():
                Counting.read += 1
                yield item

    value = {"items": Counting(range(100_000))}
    text = pretty(value, lines=10).plain
    assert text.count("\n") == 10  # ten lines and the cut note
    assert Counting.read <= 12


def test_pretty_leaves_a_short_value_whole():
    value = {"a": [1, 2], "b": "short"}
    assert pretty(value).plain == json.dumps(value, indent=2)


def test_readable_writes_multiline_strings_unescaped():
    lines = readable({"path": "a.py", "content": "def f():\n    return 1", "n": [1, "x"]})
    assert lines == [
        "{",
        '  "path": "a.py",',
        '  "content": │ (21 chars, 2 lines),',
        "    │ def f():",
        "    │     return 1",
        '  "n": [',
        "    1,",
        '    "x"',
        "  ]",
        "}",
    ]


async def test_a_megabyte_string_is_cut_in_the_parse_pane_and_whole_behind_v():
    content = "\n".join(f"line {i} = compute({i})" for i in range(50_000))  # ~1 MB
    stream, _ = stream_from_bytes(_write_file_capture(content))
    app = FraglensApp(stream, source="big")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        result = app.query_one(CallResult)
        assert result.result is not None and result.result.status == "ok"
        # the verdict renders within the screen, whatever the value's size
        assert len(result._strips) < SIZE[1] * 2
        await pilot.press("v")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ValueScreen)
        area = screen.query_one(TextArea)
        assert area.read_only
        assert area.document.line_count == 50_000 + 4  # {, path, content's head, }
        assert area.document.get_line(3) == "    │ line 0 = compute(0)"
        await pilot.press("escape")
        assert not isinstance(app.screen, ValueScreen)


async def test_v_shows_the_text_as_received_while_there_is_no_verdict():
    stream, _ = load_stream(str(SAMPLES / "seed_interleaved_two_calls.sse"))
    app = FraglensApp(stream, source="seed")
    async with app.run_test(size=SIZE) as pilot:
        call = app.index.calls[0]
        app.goto(call.frag_event[1])
        await pilot.press("v")
        await pilot.pause()
        area = app.screen.query_one(TextArea)
        assert area.text == call.text[: call.length_at(app.step)]


async def test_emoji_with_modifiers_flags_and_joiners_keep_the_borders():
    """👍🏽, 🇨🇳 and 👨‍👩‍👧 are drawn one glyph wide in some terminals and
    several in others: the panes show stand-ins no terminal disputes."""
    disputed = {"\u200d", *map(chr, range(0x1F3FB, 0x1F400)), *map(chr, range(0x1F1E6, 0x1F200))}
    content = "ok 👍🏽 from 🇨🇳, with 👨\u200d👩\u200d👧"
    stream, _ = stream_from_bytes(_write_file_capture(content, piece=7))
    app = FraglensApp(stream, source="emoji")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        card = "\n".join(strip.text for strip in app.query_one(CallCard)._strips)
        assert "👍４" in card and "ＣＮ" in card  # the buffer as sent
        lines = [card]
        lines += [strip.text for strip in app.query_one(CallResult)._strips]
        stream_list = app.query_one(StreamList)
        lines += [stream_list.render_line(y).text for y in range(stream_list.size.height)]
        shown = "\n".join(lines)
        assert "👍４" in shown and "ＣＮ" in shown and "👨+👩+👧" in shown
        assert not disputed & set(shown)
        # what is copied is the text itself
        await pilot.press("c")
        assert content in json.loads(app.clipboard)["content"]
        flag_event = next(e.number for e in stream.events if "🇨" in e.data)
        app.goto(flag_event)
        await pilot.pause()
        row = stream_list.render_line(flag_event - int(stream_list.scroll_y)).text
        assert "Ｃ" in row and not disputed & set(row)


# -- the call list -------------------------------------------------------------------


async def test_capital_c_lists_every_call_on_one_line_and_goes_to_the_one_chosen():
    stream, _ = load_stream(":demo:")
    app = FraglensApp(stream, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, CallsScreen)
        options = app.screen.query_one(OptionList)
        assert options.option_count == len(app.index.calls) == 3
        lines = [str(options.get_option_at_index(i).prompt) for i in range(3)]
        read_file = app.index.calls[1]
        assert "read_file" in lines[1] and "✚ repaired" in lines[1]
        assert f"{read_file.length:,} chars" in lines[1]
        assert f"e{read_file.first_event}–e{read_file.last_event}" in lines[1]
        assert "no receive times" in str(app.screen.query_one("#calls-about").render())
        await pilot.press("down", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, CallsScreen)
        assert app.selected == read_file.seq
        assert app.step == read_file.first_event


async def test_the_call_list_shows_timing_and_a_sparkline_of_gaps_in_a_timed_capture():
    # the seed's events, received 10 ms apart except one 1.5 s stall
    plain, _ = load_stream(str(SAMPLES / "seed_interleaved_two_calls.sse"))
    stream = Stream()
    t = 0.0
    for ev in plain.events:
        t += 1.5 if ev.number == 8 else 0.01
        stream.feed(RawEvent(ev.number, ev.kind, ev.data, ev.event, ev.id, t, ev.span))
    stream.close()
    app = FraglensApp(stream, source="timed")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("C")
        await pilot.pause()
        about = str(app.screen.query_one("#calls-about").render())
        assert "first tool byte" in about and "1 stall over 1 s" in about
        gaps = app.screen.query_one(Sparkline).data
        assert len(gaps) == len(stream.events) - 1
        assert max(gaps) == pytest.approx(1500, abs=1)


# -- what a Stream row says ----------------------------------------------------------


async def test_stream_rows_say_what_each_event_fed_and_x_shows_the_raw_chunk():
    stream, _ = load_stream(str(SAMPLES / "seed_interleaved_two_calls.sse"))
    app = FraglensApp(stream, source="seed")
    async with app.run_test(size=SIZE) as pilot:
        stream_list = app.query_one(StreamList)
        first, second = app.index.calls
        # the call column leaves room for "#0+1" (an event that fed two calls)
        opened = " ".join(stream_list.render_line(first.first_event).text.split())
        assert f"#0 new {first.name} {first.id}" in opened
        # the fragment that completed 上 (call #1): "ty\":\"上" as a JSON string
        event = next(e for e in second.frag_event if "上" in second.text[: second.length_at(e)])
        added = app.index.added(second, event)
        assert added is not None
        fed = stream_list.render_line(event).text
        expected = f"#1 +{json.dumps(added.text, ensure_ascii=False)}"
        assert " ".join(expected.split()) in " ".join(fed.split())
        assert '"choices"' not in fed
        await pilot.press("x")
        raw = stream_list.render_line(event).text
        assert '"choices"' in raw or "…" in raw
        assert f"+{json.dumps(added.text, ensure_ascii=False)}" not in raw
        await pilot.press("x")
        assert stream_list.render_line(event).text == fed


def test_block_types_keep_apart_in_the_type_column():
    labels = ["content_block_start", "content_block_delta", "content_block_stop"]
    shown = [short_label(x) for x in labels]
    assert shown == ["block_start", "block_delta", "block_stop"]
    assert short_label("response.function_call_arguments.delta") == (
        "function_call_arguments.delta"
    )


async def test_raw_and_repaired_mark_what_the_repair_changed():
    """The demo's read_file ends `120,}`; the repair drops the comma."""
    stream, _ = load_stream(":demo:")
    app = FraglensApp(stream, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        widget = app.query(CallResult)[1]
        assert widget.result is not None and widget.result.status == "repaired"
        raw, repaired = marked_pair(
            '{"a":1,}', '{"a":1}', widget._style("removed"), widget._style("added")
        )
        marked = [(s.start, s.end) for s in raw.spans]
        assert marked == [(6, 7)] and raw.plain[6] == ","
        assert repaired.spans == []  # nothing put in
        underlined = "".join(
            seg.text
            for strip in widget._strips
            for seg in strip
            if seg.style and seg.style.underline
        )
        assert underlined == ","  # in the pane too: the one change, on the raw side


async def test_raw_and_repaired_are_marked_however_long_the_text():
    """The pane shows both texts cut to their ends, so a repair at the end of a
    long text (past what ``fraglens diff`` marks) is still marked."""
    whole = json.dumps({"path": "big.py", "content": "x" * (4 * MARK_LIMIT)})
    stream, _ = stream_from_bytes(_args_capture(whole[:-1] + ",}"))
    app = FraglensApp(stream, source="long")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        widget = app.query(CallResult)[0]
        assert widget.result is not None and widget.result.status == "repaired"
        removed = widget._style("removed").bgcolor
        marked = [
            seg.text
            for strip in widget._strips
            for seg in strip
            if seg.style and seg.style.underline and seg.style.bgcolor == removed
        ]
        # before it, the count in each side's cut (one character apart) differs
        assert marked[-1] == ","


async def test_b_in_v_marks_where_each_fragment_began_reading_only_the_rows_on_screen():
    from fraglens.app.widgets.fragment_view import FragmentView

    content = "\n".join(f"line {i} = compute({i})" for i in range(50_000))  # ~1 MB
    stream, _ = stream_from_bytes(_write_file_capture(content, piece=37))
    app = FraglensApp(stream, source="big")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end", "v", "b")
        await pilot.pause()
        view = app.screen.query_one(FragmentView)
        assert view.display and not app.screen.query_one(TextArea).display
        assert 0 < len(view._cache) <= SIZE[1]  # the rows on screen were rendered, no more
        call = app.index.calls[0]
        assert view.length == call.length
        per_row = view.row_start(1)
        # row 0: the text's first characters, with the fragments' ends where the
        # engine has them (every 37 characters here)
        ends = [e for e in call.frag_end if 0 < e < per_row]
        assert ends == list(range(37, per_row, 37))
        strip = view.render_line(0)
        body = strip.text[strip.text.index("{") :]
        assert body.startswith(call.text[:per_row].replace("\n", "↵")[: len(body.rstrip())])
        styled = [(s.text, s.style) for s in strip if s.text.strip()]
        a, b = view._style("a"), view._style("b")
        texts = [t for t, style in styled if style is not None and style.underline]
        assert texts and all(len(t) <= 37 for t in texts)  # every second fragment
        assert a != b
        # a row far down: its gutter gives the fragment and event it starts in
        y = view.virtual_size.height // 2
        assert y > 1000
        start = view.row_start(y)
        k = view.fragment_at(start)
        assert call.frag_end[k - 1] <= start < call.frag_end[k]
        assert view._render_row(y, 100).text.split()[:2] == [f"f{k:,}",
                                                           f"e{call.frag_event[k]:,}"]
        await pilot.press("b")
        assert not view.display and app.screen.query_one(TextArea).display
