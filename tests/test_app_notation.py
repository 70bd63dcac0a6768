"""The app's notation says what it means: a row that fed several calls, an id
fraglens made up, an index that counts content blocks, a best-effort value laid
out as the text it came from."""

from __future__ import annotations

from fraglens.app.app import FraglensApp
from fraglens.app.widgets.buffers import BuffersPane
from fraglens.app.widgets.parse import ParsePane, laid_out_as
from fraglens.app.widgets.stream_list import StreamList
from fraglens.reading.capture import load_stream

from .conftest import SAMPLES
from .test_app import SIZE, pane_text


def app_for(name: str) -> FraglensApp:
    stream, _ = load_stream(str(SAMPLES / name))
    return FraglensApp(stream, source=name)


def row_text(app: FraglensApp, row: int) -> str:
    stream_list = app.query_one(StreamList)
    return stream_list._render_row(row, 100, False).text


async def test_an_event_that_fed_several_calls_names_the_first_and_counts_the_rest():
    app = app_for("ollama_native_parallel.ndjson")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        calls = app.index.calls
        # Ollama sends calls whole: the first event opens two of the three
        assert [c.first_event for c in calls] == [0, 0, 1]
        row = row_text(app, 0)
        assert " #0+1 " in row and "#+" not in row
        assert " #2 " in row_text(app, 1)


async def test_a_card_shows_the_id_fraglens_made_up_once_the_diagnostic_says_so():
    app = app_for("native_gemini_two_calls_crlf.sse")
    async with app.run_test(size=(200, 50)) as pilot:
        made_up = next(d for d in app.index.diagnostics_at(None) if d.code == "id-missing")
        call = app.index.call(made_up.call)
        card = app.query_one(BuffersPane).cards[call.seq]
        app.goto(made_up.event - 1)
        await pilot.pause()
        assert "id (none yet)" in pane_text(card)
        app.goto(made_up.event)
        await pilot.pause()
        text = pane_text(card)
        assert f"made-up id {call.synthetic_id}\n" in text
        assert call.synthetic_id in made_up.message  # what the diagnostic says


async def test_an_anthropic_card_says_its_index_counts_content_blocks():
    app = app_for("native_anthropic_two_tools.sse")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        first = app.index.calls[0]
        assert first.index == 1  # the text block before it is block 0
        text = pane_text(app.query_one(BuffersPane).cards[first.seq])
        assert text.startswith("content block 1 · id ")


async def test_a_best_effort_value_is_laid_out_as_the_text_it_came_from():
    app = app_for("bedrock_converse_truncated.eventstream")
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        call = app.index.calls[0]
        assert call.result.status == "truncated"
        assert call.result.repairs == ('added "\\"}" at the end',)
        raw = call.text
        assert laid_out_as(raw, call.result) == raw + '"}'
        text = pane_text(app.query_one(ParsePane).results[call.seq])
        # beside the text as sent, the best effort is that text and what the
        # change list says was added, its spaces kept: not compact JSON
        assert 'reproduce: open"}' in text and '{"title":"Crash' not in text
