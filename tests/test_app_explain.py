"""The app explains a diagnostic: `e` at an event, or a click on a code in the Parse pane."""

from __future__ import annotations

from rich.console import Console

from fraglens.app.app import FraglensApp
from fraglens.app.commands import FraglensCommands
from fraglens.app.screens.explain import ExplainScreen
from fraglens.app.widgets.parse import DiagnosticsView
from fraglens.engine.explanations import EXPLANATIONS
from fraglens.reading.capture import stream_from_bytes

SIZE = (120, 36)


def truncated_app(step: int) -> FraglensApp:
    """The args-truncated wire example, ended by [DONE]: event 0 opens a call,
    event 1 finishes at the token limit (finish-length and args-truncated)."""
    wire = EXPLANATIONS["args-truncated"].wire.splitlines() + ["data: [DONE]"]
    stream, _ = stream_from_bytes("".join(e + "\n\n" for e in wire).encode())
    stream.close()
    assert [(d.code, d.event) for d in stream.reassembler.diagnostics()] == [
        ("finish-length", 1),
        ("args-truncated", 1),
    ]
    return FraglensApp(stream, source="truncated.sse", step=step)


def flat(renderable, width: int = 100) -> str:
    console = Console(width=width, color_system=None, record=True, file=None)
    with console.capture() as capture:
        console.print(renderable)
    return " ".join(capture.get().split())


async def test_e_explains_the_diagnostic_at_this_event():
    app = truncated_app(step=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        assert isinstance(app.screen, ExplainScreen)
        assert app.screen.code == "args-truncated"  # the latest of the two at event 1
        text = flat(app.screen.query_one("#explain-text").content)
        assert text.startswith("✖ args-truncated error: arguments end inside an open value")
        assert " ".join(EXPLANATIONS["args-truncated"].todo.split()) in text
        assert "fraglens explain args-truncated prints this" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, ExplainScreen)


async def test_e_before_any_diagnostic_says_so_and_opens_nothing():
    app = truncated_app(step=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, ExplainScreen)
        assert any("No diagnostic up to this event" in n.message for n in app._notifications)


async def test_a_click_on_a_code_in_the_parse_pane_explains_that_code():
    app = truncated_app(step=2)
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(DiagnosticsView)
        view.scroll_visible(animate=False)
        await pilot.pause()
        # where the code is drawn, as the user sees it
        region = view.content_region
        for y in range(region.height):
            line = view.render_line(y).text
            if "finish-length" in line:
                x = line.index("finish-length")
                break
        else:
            raise AssertionError("finish-length is not on screen")
        offset = (region.x - view.region.x + x + 2, region.y - view.region.y + y)
        await pilot.click(DiagnosticsView, offset=offset)
        assert isinstance(app.screen, ExplainScreen)
        assert app.screen.code == "finish-length"


async def test_the_palette_offers_to_explain_each_code_of_the_stream():
    app = truncated_app(step=2)
    async with app.run_test(size=SIZE):
        titles = [t for t, *_ in FraglensCommands(app.screen)._commands()]
        assert [t for t in titles if t.startswith("explain: ")] == [
            "explain: finish-length",
            "explain: args-truncated",
        ]
