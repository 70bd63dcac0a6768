"""What fits where: the Parse pane's room for a comparison, and narrow layouts
that leave things out on purpose rather than cutting them."""

from __future__ import annotations

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
