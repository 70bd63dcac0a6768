"""``?`` on every screen lists that screen's keys, read from the bindings its
footer (or key bar) is drawn from, and nothing it does not offer."""

from __future__ import annotations

import json

import pytest

from fraglens.app.app import FraglensApp
from fraglens.app.keys import BINDINGS
from fraglens.app.screens.flows import FlowsScreen, ProxyFlowsApp
from fraglens.app.screens.help import HelpScreen
from fraglens.fit.tools import read_tools
from fraglens.fit.verdicts import check_fit
from fraglens.net.proxy.flows import FlowStore
from fraglens.reading.capture import load_stream

from .conftest import SAMPLES
from .test_app import SIZE, shown
from .test_proxy_ui import finished

FIT = SAMPLES / "fit_openai_chat.sse"
DEBUGGER_ONLY = {b.tooltip for b in BINDINGS} - {
    b.tooltip for b in BINDINGS if b.id in ("app.help", "app.quit")
}


def help_text(app) -> str:
    """The help's text, each line's runs of spaces as one (a cell wrapped onto
    the next line then reads on)."""
    assert isinstance(app.screen, HelpScreen)
    text = "\n".join(shown(s.content, 200) for s in app.screen.query("Static"))
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def offered(screen) -> set[str]:
    """What each binding of ours the screen offers does: its tooltip, else its
    description (the Stream pane's copies of n, p, home and end have neither of
    their own, and are listed with the app's)."""
    found = {}
    for a in screen.active_bindings.values():
        if a.binding.id is not None and (a.binding.tooltip or a.binding.id not in found):
            found[a.binding.id] = a.binding.tooltip or a.binding.description
    return set(found.values())


async def open_help(app, pilot) -> tuple[set[str], str]:
    screen = app.screen
    await pilot.pause()
    expected = offered(screen)
    await pilot.press("question_mark")
    await pilot.pause()
    text = help_text(app)
    await pilot.press("escape")
    await pilot.pause()
    assert app.screen is screen
    return expected, text


def fit_app() -> FraglensApp:
    stream, _ = load_stream(str(FIT))
    tools = read_tools(json.loads(FIT.with_name("fit_openai_chat.tools.json").read_text()))
    return FraglensApp(stream, source=str(FIT), fit=check_fit(stream, tools))


async def test_the_debugger_lists_its_keys_and_panes():
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        _, text = await open_help(app, pilot)
    # the whole table (the pane's own copies of n, p, home and end with it)
    assert [b.tooltip for b in BINDINGS if b.tooltip not in text] == []
    assert "Buffers" in text and "(unbound)" not in text


# the screens in front of the panes: (keys that open it, a key of its own it lists)
MODALS = [
    (["end", "v"], "Boundaries"),
    (["end", "h"], "Show the history in the next API shape"),
    (["C"], "Close"),
    (["ampersand"], "Apply"),
    (["g"], "Close"),
    (["t"], "Close"),
    (["end", "e"], "Close"),
    (["enter"], "Close"),
]


@pytest.mark.parametrize(("keys", "own"), MODALS, ids=[" ".join(k) for k, _ in MODALS])
async def test_a_screen_in_front_of_the_panes_lists_its_own_keys_only(keys, own):
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys)
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen) and app.screen.is_modal
        expected, text = await open_help(app, pilot)
    assert own in expected and all(what in text for what in expected)
    # none of the debugger's keys: they do not act here
    assert not [tip for tip in DEBUGGER_ONLY if tip in text]
    assert "(unbound)" not in text


async def test_the_flows_screen_lists_the_flows_keys_not_the_debuggers():
    store = FlowStore()
    finished(store)
    app = ProxyFlowsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, FlowsScreen)
        expected, text = await open_help(app, pilot)
    assert all(what in text for what in expected)
    for key, what in [
        ("⏎", "Open the flow in the three panes"),
        ("s", "Save the selected flow"),
        ("/", "Show only the flows whose line contains a text"),
        ("esc", "Show every flow again"),
        ("end", "Put the cursor on the newest flow"),
        ("l", "back to this list from the three panes"),
    ]:
        [line] = [line for line in text.splitlines() if what in line]
        assert f" {line.split(what)[0]}".rstrip().endswith(f" {key}"), line
    assert not [tip for tip in DEBUGGER_ONLY if tip in text]
    assert "(unbound)" not in text and "Buffers" not in text


async def test_the_diff_screen_lists_its_keys_not_the_panes():
    from fraglens.app.screens.diff import DiffApp, DiffScreen
    from fraglens.cli.diff import read
    from fraglens.engine.reassembler import DEFAULT_MAX_ARG_BYTES
    from fraglens.report.diff import diff_doc

    a, b = str(SAMPLES / "demo.sse"), str(FIT)
    (a_stream, a_doc), (b_stream, b_doc) = (read(p, None, DEFAULT_MAX_ARG_BYTES) for p in (a, b))
    app = DiffApp(diff_doc(a, a_doc, b, b_doc), (a, a_stream, a_doc), (b, b_stream, b_doc))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen)
        expected, text = await open_help(app, pilot)
    assert [what for what in expected if what not in text] == []
    assert "Open capture A in the three panes" in text and "Diff" in text
    assert "Buffers" not in text and not [tip for tip in DEBUGGER_ONLY if tip in text]
