"""What fits where: the Parse pane's room for a comparison, and narrow layouts
that leave things out on purpose rather than cutting them."""

from __future__ import annotations

import pytest

from fraglens.app.app import FraglensApp
from fraglens.app.widgets.parse import ParsePane
from fraglens.app.widgets.stream_list import StreamList
from fraglens.reading.capture import load_stream

from .conftest import SAMPLES
from .test_app import pane_text

REPAIRED = SAMPLES / "quirk_args_repaired.sse"


def app_for(path) -> FraglensApp:
    stream, _ = load_stream(str(path))
    return FraglensApp(stream, source=str(path))


async def test_parse_gets_the_room_when_it_shows_raw_and_repaired_side_by_side():
    app = app_for(REPAIRED)
    async with app.run_test(size=(200, 50)) as pilot:
        stream, parse = app.query_one(StreamList), app.query_one(ParsePane)
        await pilot.press("home")
        await pilot.pause()
        assert app.selected is None  # no call yet: the Stream pane is the widest
        assert stream.size.width > parse.size.width
        await pilot.press("end")
        await pilot.pause()
        assert app.index.call(app.selected).result.status == "repaired"
        assert parse.size.width > stream.size.width + 20
        # the raw text of the selected call is on one line, beside its repair
        raw = "{'query': 'load_config', 'regex': True}"
        lines = pane_text(parse.results[app.selected]).splitlines()
        assert any(line.startswith(raw) for line in lines)


# -- the proxy's flow list -------------------------------------------------------------


def test_the_flow_columns_fit_and_a_narrow_list_leaves_out_time_method_model_first():
    from fraglens.app.screens.flows import COLUMNS, shown_columns

    every = [key for _, key in COLUMNS]
    keys, widths = shown_columns(200)
    assert keys == every
    keys, widths = shown_columns(80)
    # what was cut at 80 columns (duration, calls, worst, diagnostics) stays; the
    # time, the method and the model go, on purpose
    assert keys == [k for k in every if k not in ("time", "method", "model")]
    assert sum(widths.values()) + 2 * len(keys) + 1 <= 80
    # a verdict column as wide as its longest word from the start: never "repai"
    assert widths["worst"] >= len("not decoded") and widths["state"] >= len("■ cancelled")


async def test_at_80_columns_every_flow_value_is_whole():
    from fraglens.app.screens.flows import ProxyFlowsApp
    from fraglens.net.proxy.flows import FlowStore

    from .test_proxy_ui import finished

    store = FlowStore()
    finished(store)
    finished(store, b'{"data": []}', path="/v1/models", method="GET", model=None)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.flows.table
        shown = [c.key.value for c in table.columns.values()]
        assert shown[-5:] == ["state", "duration", "calls", "worst", "diagnostics"]
        text = app.export_screenshot()
        for value in ("✓ done", "0.20s", "not decoded", "diag"):
            assert value.replace(" ", "&#160;") in text


# -- every call, one line each ----------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
async def test_each_call_is_one_line_and_the_columns_line_up(size):
    from textual.widgets import OptionList

    app = app_for(SAMPLES / "demo.sse")
    async with app.run_test(size=size) as pilot:
        await pilot.press("end", "C")
        await pilot.pause()
        listing = app.screen.query_one(OptionList)
        width = listing.scrollable_content_region.width - 2
        rows = [listing.get_option_at_index(i).prompt.plain for i in range(listing.option_count)]
    assert len(rows) == 3 and all(len(row) <= width for row in rows)
    assert "repaired" in rows[1] and "chars" in rows[1]
    # the verdicts start in the same column on every row
    starts = {row.index(glyph) for row, glyph in zip(rows, ["✔", "✚", "✔"], strict=True)}
    assert len(starts) == 1
    ids_shown = "call_" in rows[0]
    assert ids_shown == (size[0] >= 120)  # at 80 columns the id goes, not the verdict


# -- the status line ----------------------------------------------------------------------


async def test_the_status_line_leaves_out_whole_parts_when_it_is_short():
    from fraglens.app.widgets.status import Status, StatusBar

    app = app_for(SAMPLES / "demo.sse")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        bar = app.query_one(StatusBar)
        line = bar.render().plain
        assert len(line) <= 80 and not line.endswith("…")
        assert line.startswith(" event 58/58")
        assert "3 calls: 2 ok · 1 repaired · 1 warning" in line  # kept: the verdicts
        assert "openai-chat" not in line  # left out first: the format and framing
        assert "demo.sse" in line
    # a live call's line, as long as it gets: what the call is doing stays whole
    app = app_for(SAMPLES / "demo.sse")
    async with app.run_test(size=(160, 40)) as pilot:
        bar = app.query_one(StatusBar)
        live = "streaming · HTTP 200 · 1.52s · 431 events, 58.2 KB · 283 events/s"
        url = "http://127.0.0.1:8765/v1/chat/completions"
        bar.show(Status(url, 430, 430, 1.5, "openai-chat", "recording", "streaming", live=live))
        await pilot.pause()
        assert len(bar._line(set()).plain) > 160  # all of it would not fit
        shown = bar.render().plain
        assert live in shown and url in shown and len(shown) <= 160


# -- the help ---------------------------------------------------------------------------


async def test_the_help_at_80_columns_cuts_no_line():
    app = app_for(SAMPLES / "demo.sse")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        text = app.export_screenshot()
    # a line cut short ends in an ellipsis: the help's text wraps at spaces instead
    import re

    cut = [t for t in re.findall(r">([^<>]*)<", text) if t.endswith("…")]
    assert cut == []
