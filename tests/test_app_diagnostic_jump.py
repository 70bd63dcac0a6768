"""``]`` and ``[`` go from diagnostic to diagnostic, one at a time even when an
event raised several (a finish that judged six calls), and each shows its own
call: selected, its card in the Buffers pane and its verdict in Parse on
screen, the diagnostic right under the verdict, at 80×24 as at 200×50."""

from __future__ import annotations

import json

import pytest

from fraglens.app.app import FraglensApp
from fraglens.app.widgets.buffers import BuffersPane
from fraglens.app.widgets.parse import ParsePane
from fraglens.fit.tools import read_tools
from fraglens.fit.verdicts import check_fit
from fraglens.reading.capture import load_stream

from .conftest import SAMPLES
from .test_app import pane_text

SAMPLE = SAMPLES / "fit_openai_chat.sse"
TOOLS = SAMPLES / "fit_openai_chat.tools.json"


def fit_app() -> FraglensApp:
    stream, _ = load_stream(str(SAMPLE))
    tools = read_tools(json.loads(TOOLS.read_text(encoding="utf-8")))
    return FraglensApp(stream, source=str(SAMPLE), fit=check_fit(stream, tools))


def on_screen(pane, widget, lines: int) -> bool:
    """The first ``lines`` lines of ``widget`` are within ``pane``'s view."""
    top = widget.virtual_region.y - round(pane.scroll_y)
    return 0 <= top and top + lines <= pane.scrollable_content_region.height


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
async def test_each_diagnostic_shows_its_call_card_verdict_and_itself(size):
    app = fit_app()
    expected = [d for d in app.index.diagnostics_at(None) if d.event is not None]
    # the finish judged the calls: five diagnostics, two of them call 4's
    assert sum(d.event == 20 for d in expected) == 5
    async with app.run_test(size=size) as pilot:
        await pilot.press("home")
        seen = []
        while app.check_action("next_diagnostic", ()):
            await pilot.press("right_square_bracket")
            await pilot.pause()
            event, k = app.shown_diagnostic
            d = app.index.at_event[event][k]
            seen.append((d.event, d.code, d.call))
            assert app.step == d.event
            if d.call is None:
                continue
            assert app.selected == d.call
            buffers, parse = app.query_one(BuffersPane), app.query_one(ParsePane)
            card, result = buffers.cards[d.call], parse.results[d.call]
            assert on_screen(buffers, card, 2), "the card's title and first line"
            # the verdict line, its meaning, then what the call raised here
            lines = pane_text(result).splitlines()
            said = f"{d.code} at e{d.event}: {d.message}"[:30]
            [at] = [i for i, line in enumerate(lines) if said in line]
            assert at <= 4, lines  # under the verdict (two lines, when it wraps), one a line
            assert on_screen(parse, result, at + 1), "the verdict and the diagnostic"
        # every diagnostic after the first event once, in event order
        assert sorted(seen, key=lambda x: x[0]) == seen
        listed = [(d.event, d.code, d.call) for d in expected if d.event > 0]
        assert sorted(seen, key=str) == sorted(listed, key=str)
        # and back again, one at a time
        for wanted in reversed(seen[:-1]):
            await pilot.press("left_square_bracket")
            event, k = app.shown_diagnostic
            d = app.index.at_event[event][k]
            assert (d.event, d.code, d.call) == wanted
