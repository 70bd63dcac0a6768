"""``&``: the Stream pane's filter, and stepping over the rows it hides."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import SelectionList

from fraglens.app import app as app_module
from fraglens.app.app import FraglensApp
from fraglens.app.rows import RowFilter, Rows
from fraglens.app.screens.filter import FilterScreen
from fraglens.app.steps import StepIndex
from fraglens.app.widgets.buffers import CallCard
from fraglens.app.widgets.stream_list import StreamList
from fraglens.reading import progressive as loading_module
from fraglens.reading.capture import load_stream
from fraglens.reading.progressive import Loading

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SIZE = (120, 36)


def _index(name: str) -> StepIndex:
    stream, _ = load_stream(str(SAMPLES / name) if name != ":demo:" else name)
    return StepIndex(stream)


def _tick(app: FraglensApp, *values: str) -> None:
    """Tick the filter screen's choices with these values (as space does)."""
    screen = app.screen
    assert isinstance(screen, FilterScreen)
    for value in values:
        screen.query_one(SelectionList).select(value)


def _one_call(events: int) -> bytes:
    """One call whose arguments (a string) come 10 characters a chunk:
    the call's opening chunk, ``events - 3`` fragments, the finish, [DONE]."""
    def chunk(delta: dict, finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [choice]})

    opening = {"index": 0, "id": "call_0", "type": "function",
               "function": {"name": "write_file", "arguments": '{"content": "'}}
    out = [chunk({"tool_calls": [opening]})]
    piece = chunk({"tool_calls": [{"index": 0, "function": {"arguments": "x" * 10}}]})
    out += [piece] * (events - 4)
    out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    out.append(chunk({}, "tool_calls"))
    out.append("data: [DONE]")
    return ("\n\n".join(out) + "\n\n").encode()


# -- which rows a filter lets through -------------------------------------------
def test_a_call_filter_keeps_the_events_that_opened_or_fed_that_call():
    index = _index(":demo:")
    call = index.calls[1]
    rows = Rows(index, RowFilter(calls=frozenset({call.seq})))
    assert list(rows.events) == sorted({call.first_event, *call.frag_event})
    # each one opened the call or added text to it
    assert all(e == call.first_event or index.added(call, e) for e in rows.events)


def test_groups_combine_with_and_choices_within_a_group_with_or():
    index = _index(":demo:")
    a, b = index.calls[0], index.calls[2]
    both = Rows(index, RowFilter(calls=frozenset({a.seq, b.seq})))
    assert set(both.events) == {a.first_event, *a.frag_event, b.first_event, *b.frag_event}
    marked = set(index.diagnostic_events)
    with_diagnostic = Rows(index, RowFilter(calls=frozenset({a.seq, b.seq}), any_diagnostic=True))
    assert set(with_diagnostic.events) == set(both.events) & marked


def test_hiding_keep_alives_and_usage_only_chunks():
    index = _index("quirk_q25_comments_keepalive.sse")
    comments = [e for e, label in enumerate(index.stream.labels) if label == "comment"]
    assert comments
    rows = Rows(index, RowFilter(hide_keep_alives=True))
    assert list(rows.events) == [e for e in range(index.last + 1) if e not in comments]

    index = _index("quirk_q23_usage_only_chunks.sse")
    # every chunk carries usage here; only the last chunk (choices: []) carries
    # nothing else, and the role chunk (content "", no call yet): the finish
    # chunk keeps its row
    rows = Rows(index, RowFilter(hide_usage=True))
    hidden = set(range(index.last + 1)) - set(rows.events)
    usage_only = index.stream.events[index.last - 1]
    assert json.loads(usage_only.data)["choices"] == []
    assert index.last - 1 in hidden
    finish = index.stream.reassembler.choices[0].finishes[-1][0]
    assert finish not in hidden
    assert all(not index.added_at(e) for e in hidden)


def test_the_rows_grow_with_the_stream_judging_each_event_once(monkeypatch):
    monkeypatch.setattr(loading_module, "SLICE_BYTES", 200)
    job = Loading((SAMPLES / "demo.sse").read_bytes(), "demo")
    index = StepIndex(job.stream)
    flt = RowFilter(types=frozenset({"chat.completion.chunk"}), hide_keep_alives=True)
    rows = Rows(index, flt)
    judged: list[tuple[int, int]] = []
    judge = Rows._judge

    def counting(self, lo, hi):
        judged.append((lo, hi))
        return judge(self, lo, hi)

    monkeypatch.setattr(Rows, "_judge", counting)
    while not job.done:
        job.advance()
        index.refresh()
        rows.update()
    whole = Rows(StepIndex(job.stream), flt)
    assert list(rows.events) == list(whole.events)
    # each event was judged once: the ranges follow each other, never overlap
    judged.pop()  # the whole rebuild just above
    assert len(judged) > 3
    assert all(a[1] == b[0] for a, b in zip(judged, judged[1:], strict=False))


def test_a_diagnostic_filter_is_rebuilt_when_a_diagnostic_comes_for_an_old_event():
    index = _index(":demo:")
    rows = Rows(index, RowFilter(any_diagnostic=True))
    assert list(rows.events) == index.diagnostic_events
    old = next(e for e in range(index.last) if e not in index.diagnostic_events)
    # a diagnostic on an event judged already, as the stream's end may add one
    index.diagnostic_events = sorted([*index.diagnostic_events, old])
    rows.update()
    assert list(rows.events) == index.diagnostic_events


# -- the app ---------------------------------------------------------------------
async def test_ampersand_filters_the_rows_and_n_p_step_over_the_hidden_ones():
    stream, _ = load_stream(":demo:")
    app = FraglensApp(stream, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        weather = app.index.calls[2]
        await pilot.press("ampersand")
        _tick(app, f"call:{weather.seq}")
        await pilot.press("enter")
        await pilot.pause()
        stream_list = app.query_one(StreamList)
        shown = sorted({weather.first_event, *weather.frag_event})
        assert stream_list.rows is not None and list(stream_list.rows.events) == shown
        assert stream_list.border_title == "Stream · #2"
        # the opening step (event 0) is hidden: shown in its place, and said
        total = app.index.last + 1
        assert app.step == 0
        assert stream_list.border_subtitle == f"{len(shown)} of {total} events · e0 hidden"
        assert [stream_list.event_at(y) for y in (0, 1, 2)] == [0, *shown[:2]]
        await pilot.press("n")
        assert app.step == shown[0]
        assert stream_list.border_subtitle == f"{len(shown)} of {total} events"
        assert [stream_list.event_at(y) for y in (0, 1)] == shown[:2]
        await pilot.press("n", "n")
        assert app.step == shown[2]
        # the state is the real stream's: the other calls' cards show what the
        # hidden events before this step gave them
        for card in app.query(CallCard):
            call = card.call
            if call.first_event <= app.step:
                assert card.step == app.step
                assert f"{call.length_at(app.step):,}/" in str(card._compose_lines(60)[-2])
        await pilot.press("p")
        assert app.step == shown[1]
        await pilot.press("home")
        assert app.step == shown[0]
        await pilot.press("p")  # nothing shown before: it says why
        await pilot.pause()
        assert app.step == shown[0]
        notes = [n.message for n in app._notifications]
        assert any("first event shown by the filter" in m for m in notes)
        await pilot.press("end")
        assert app.step == shown[-1]


async def test_a_step_to_a_hidden_event_shows_it_in_its_place():
    stream, _ = load_stream(":demo:")
    app = FraglensApp(stream, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ampersand")
        _tick(app, "diagnostic:any")
        await pilot.press("enter")
        await pilot.pause()
        marked = app.index.diagnostic_events
        hidden = next(e for e in range(marked[0] + 1, app.index.last) if e not in marked)
        app.goto(hidden)
        await pilot.pause()
        stream_list = app.query_one(StreamList)
        y = stream_list.row_of(hidden)
        assert stream_list.event_at(y) == hidden
        assert stream_list.event_at(y - 1) == max(e for e in marked if e < hidden)
        assert stream_list.virtual_size.height == len(marked) + 1
        assert f"e{hidden} hidden" in str(stream_list.border_subtitle)
        await pilot.press("n")
        assert app.step == min(e for e in marked if e > hidden)
        assert stream_list.virtual_size.height == len(marked)


async def test_backspace_clears_the_filter_and_escape_keeps_it():
    stream, _ = load_stream(":demo:")
    app = FraglensApp(stream, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ampersand")
        _tick(app, "hide:keep-alives")
        await pilot.press("enter")
        await pilot.pause()
        assert app.row_filter == RowFilter(hide_keep_alives=True)
        await pilot.press("ampersand", "escape")
        assert app.row_filter == RowFilter(hide_keep_alives=True)
        await pilot.press("ampersand", "backspace")
        await pilot.pause()
        assert app.row_filter == RowFilter()
        assert app.query_one(StreamList).rows is None
        assert app.query_one(StreamList).border_title == "Stream"


async def test_a_filtered_view_renders_the_rows_on_screen_only_and_steps_without_refiltering(
    monkeypatch,
):
    """200k events: setting the filter judges each event once; then a step
    judges nothing and renders at most the screen's rows."""
    job = Loading(_one_call(200_000), "big")
    while not job.done:
        job.advance()
    app = FraglensApp(job.stream, source="big")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ampersand")
        _tick(app, "type:chat.completion.chunk")
        await pilot.press("enter")
        await pilot.pause()
        stream_list = app.query_one(StreamList)
        assert stream_list.rows is not None and len(stream_list.rows) == 200_000 - 1
        judged: list[tuple[int, int]] = []
        rendered: list[int] = []
        judge, render = Rows._judge, StreamList._render_row
        monkeypatch.setattr(Rows, "_judge", lambda s, lo, hi: judged.append((lo, hi)) or
                            judge(s, lo, hi))
        monkeypatch.setattr(StreamList, "_render_row", lambda s, row, width, current:
                            rendered.append(row) or render(s, row, width, current))
        for key in ("end", "home", "n", "n", "p"):
            await pilot.press(key)
            await pilot.pause()
        assert judged == []
        assert len(rendered) <= 5 * SIZE[1]
        assert app.step == 1  # home: the first chunk; n n p: the second



async def test_a_filter_set_while_the_capture_loads_grows_with_it(monkeypatch):
    monkeypatch.setattr(loading_module, "SLICE_BYTES", 200)
    monkeypatch.setattr(app_module, "LOAD_SLICE", 0.0)
    monkeypatch.setattr(app_module, "LOAD_REDRAW", 0.0)
    job = Loading((SAMPLES / "demo.sse").read_bytes(), "demo")
    held = True
    advance = job.advance

    def gated() -> int:
        """The read stops after a few events until the filter is set."""
        return 0 if held and len(job.stream.events) >= 5 else advance()

    monkeypatch.setattr(job, "advance", gated)
    app = FraglensApp(loading=job, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        while len(app.stream.events) < 5:
            await pilot.pause()
        await pilot.press("ampersand")
        _tick(app, "hide:keep-alives")
        await pilot.press("enter")
        await pilot.pause()
        rows = app.query_one(StreamList).rows
        assert rows is not None and len(rows) < 5
        held = False
        while app.loading is not None:
            await pilot.pause()
        assert app.query_one(StreamList).rows is rows  # the same list, grown
        whole = Rows(StepIndex(app.stream), RowFilter(hide_keep_alives=True))
        assert list(rows.events) == list(whole.events)
        assert len(rows) == len(app.stream.events) - app.stream.labels.count("comment")


async def test_diagnostic_keys_and_following_a_call_go_where_they_say_through_a_filter():
    stream, _ = load_stream(":demo:")
    app = FraglensApp(stream, source="demo")
    async with app.run_test(size=SIZE) as pilot:
        search, weather = app.index.calls[0], app.index.calls[2]
        await pilot.press("ampersand")
        _tick(app, f"call:{weather.seq}")
        await pilot.press("enter")
        await pilot.pause()
        # ] goes to the next diagnostic's event, hidden or not
        marked = [e for e in app.index.diagnostic_events if e > app.step]
        await pilot.press("right_square_bracket")
        assert app.step == marked[0]
        assert app.rows is not None and not app.rows.shown(app.step)
        # f follows search_files' fragments, all hidden by the filter
        app.goto(search.frag_event[0])
        app.pinned = search.seq
        await pilot.press("f", "n")
        assert app.step == search.frag_event[1]
        await pilot.press("F", "n")  # every event again: the next shown one
        assert app.step == min(e for e in app.rows.events if e > search.frag_event[1])
        assert app.step == weather.first_event
