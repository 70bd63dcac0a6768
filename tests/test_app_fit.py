"""The app's view of the fit (Pilot): the verdict beside the parse status, the
failing paths marked in the value, the declared tools one key away."""

from __future__ import annotations

import argparse
import json

from rich.text import Text

from fraglens.app.app import FraglensApp
from fraglens.app.screens.tools import ToolsScreen
from fraglens.app.widgets.cut import STRING_CHARS
from fraglens.app.widgets.fit_marks import marked_value
from fraglens.app.widgets.parse import CallResult, DiagnosticsView
from fraglens.cli.debugger import run as run_app
from fraglens.fit.tools import read_tools
from fraglens.fit.verdicts import check_fit
from fraglens.reading.capture import load_stream, stream_from_bytes

from .conftest import SAMPLES
from .test_app import SIZE, flat, pane_text, result_text, shown

SAMPLE = SAMPLES / "fit_openai_chat.sse"
TOOLS = SAMPLES / "fit_openai_chat.tools.json"


def fit_app(with_tools: bool = True) -> FraglensApp:
    stream, _ = load_stream(str(SAMPLE))
    tools = read_tools(json.loads(TOOLS.read_text(encoding="utf-8")))
    fit = check_fit(stream, tools) if with_tools else None
    return FraglensApp(stream, source=str(SAMPLE), fit=fit)


def marked_spans(widget: CallResult) -> list[str]:
    """The pieces of the rendered value that carry the fit mark."""
    mark = widget._style("fit-mark")
    found = []
    for part in widget.content(widget.content_size.width).renderables:
        if isinstance(part, Text):
            found += [part.plain[s.start : s.end] for s in part.spans if s.style == mark]
    return found


async def test_each_verdict_sits_beside_the_parse_status_once_the_call_is_judged():
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        texts = [flat(result_text(app, i)) for i in range(6)]
    assert "✔ ok ✖ 1 schema error" in texts[0]
    assert "(the whole value) 'city' is a required property (required)" in texts[0]
    assert "/days '3' is not of type 'integer' (type)" in texts[1]
    assert "/unit 'kelvin' is not one of ['c', 'f'] (enum)" in texts[2]
    assert "✖ undeclared tool" in texts[3]
    assert "strict broken" in texts[4] and "the provider broke its promise" in texts[4]
    assert "✔ fits get_weather" in texts[5]


async def test_while_a_call_streams_there_is_no_fit_verdict_yet():
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(4):  # call 0 opens and streams; the finish is far away
            await pilot.press("n")
        await pilot.pause()
        text = flat(result_text(app, 0))
    assert "streaming" in text and "schema" not in text


async def test_the_failing_path_is_marked_in_the_parsed_value():
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        results = list(app.query(CallResult))
        assert marked_spans(results[1]) == ['"days": "3"']
        assert marked_spans(results[2]) == ['"unit": "kelvin"']
        # a required field is missing: nothing in the value to mark
        assert marked_spans(results[0]) == []


def test_the_marked_value_is_the_same_text_json_dumps_writes():
    value = {"a": [1, {"b/c": None, "~": "x"}], "e": {}, "f": [], "g": "ü"}
    mark = "bold"
    text = marked_value(value, {"/a/1/b~1c", "/a/0", "/a/1/~0"}, mark, 100)
    assert text.plain == json.dumps(value, indent=2, ensure_ascii=False)
    marked = sorted(text.plain[s.start : s.end] for s in text.spans if s.style == mark)
    assert marked == ['"b/c": null', '"~": "x"', "1"]


def test_a_long_marked_value_is_cut_like_the_plain_one():
    text = marked_value(list(range(100)), {"/50"}, "bold", 10)
    assert text.plain.splitlines()[:10] == json.dumps(list(range(100)), indent=2).splitlines()[:10]
    assert text.plain.endswith("… (v shows it whole, c copies it)")


def test_a_marked_value_cuts_long_strings_and_walks_no_further_than_the_lines_shown():
    class Counting(list):
        """A list that counts how many of its items were read."""

        read = 0

        def __iter__(self):
            for item in super().__iter__():
                Counting.read += 1
                yield item

    big = "x" * 1_000_000
    value = {"content": big, "path": 7, "rest": Counting(range(100_000))}
    text = marked_value(value, {"/content", "/path", "/rest"}, "bold", 10)
    plain = text.plain
    assert len(plain) < STRING_CHARS + 400  # bounded by the screen, not the megabyte
    assert f'"{"x" * STRING_CHARS}… [+{1_000_000 - STRING_CHARS:,} chars]"' in plain
    assert plain.endswith("… (v shows it whole, c copies it)")
    assert len(plain.splitlines()) == 11  # ten lines, then the cut note
    assert Counting.read <= 12
    marked = [plain[s.start : s.end] for s in text.spans if s.style == "bold"]
    assert marked[0].startswith('"content": "xxx') and marked[1] == '"path": 7'
    # the member the cut fell in is marked up to the cut: its head, then each
    # item line shown (a span per line once cut into lines)
    assert marked[2] == '"rest": ['
    assert [m.strip() for m in marked[3:]] == ["0,", "1,", "2,", "3,", "4,", "5,"]


async def test_t_shows_the_declared_tools_and_their_schemas():
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, ToolsScreen)
        listing = flat(shown(app.screen.listing(), 100))
        assert "get_weather" in listing and "Current weather for a city" in listing
        assert "book_table strict" in listing and '"additionalProperties": false' in listing
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ToolsScreen)


async def test_without_declared_tools_t_is_greyed_out_and_nothing_is_judged():
    app = fit_app(with_tools=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        assert app.check_action("show_tools", ()) is None
        await pilot.press("t")
        await pilot.pause()
        assert not isinstance(app.screen, ToolsScreen)
        [note] = [n for n in app._notifications if n.title == "Cannot do that here"]
        assert note.message.startswith("No declared tools") and "--tools FILE" in note.message
        assert "schema" not in flat(result_text(app, 0))


async def test_the_fit_diagnostics_are_listed_and_bracket_keys_reach_them():
    app = fit_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        listed = flat(pane_text(app.query_one(DiagnosticsView)))
        assert "args-schema" in listed and "tool-undeclared" in listed
        assert "strict-broken" in listed
        undeclared = next(d.event for d in app.index.fit.diagnostics if d.code == "tool-undeclared")
        await pilot.press("home")
        while app.step < undeclared:
            await pilot.press("right_square_bracket")
        assert app.step == undeclared


def test_the_debugger_refuses_an_unreadable_tools_file_in_one_line(tmp_path, capsys):
    bad = tmp_path / "tools.json"
    bad.write_text('{"model": "m"}', encoding="utf-8")
    args = argparse.Namespace(path=str(SAMPLE), format=None, max_arg_bytes=1 << 20, tools=str(bad))
    assert run_app(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'no "tools" list' in err


async def test_a_live_call_is_judged_against_its_request_tools_once_it_ends(tmp_path):
    from fraglens.app.live import make_live_app
    from fraglens.net.live import LiveCall, Phase
    from fraglens.net.replay import Pace
    from fraglens.net.request import build_spec
    from fraglens.net.serve import start_server

    from .test_live_app import wait_until

    body = json.loads(TOOLS.read_text(encoding="utf-8"))  # a whole Chat request body
    with start_server([str(SAMPLE)], pace=Pace("fixed", 0)) as server:
        spec, _ = build_spec(server.url + "/v1", body=body, environ={})
        call = LiveCall(spec)
        app = make_live_app(call)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: call.status.phase.finished)
            await wait_until(pilot, lambda: app.index.fit is not None)
            await pilot.pause()
            assert call.status.phase is Phase.DONE
            assert app.check_action("show_tools", ()) is True
            await pilot.press("end")
            await pilot.pause()
            assert "✖ undeclared tool" in flat(result_text(app, 3))
            assert "✔ fits get_weather" in flat(result_text(app, 5))


async def test_a_proxy_flow_opened_in_the_panes_is_judged_against_its_request_tools():
    from fraglens.app.screens.flows import ProxyFlowsApp
    from fraglens.net.proxy.flows import FlowStore

    from .test_proxy_ui import SIZE as FLOWS_SIZE
    from .test_proxy_ui import finished, opened, settle

    store = FlowStore()
    finished(store, SAMPLE.read_bytes(), request_body=TOOLS.read_bytes())
    app = ProxyFlowsApp(store)
    async with app.run_test(size=FLOWS_SIZE) as pilot:
        await pilot.press("enter")
        await settle(pilot, lambda: opened(app), "the panes")
        assert app.index.fit is not None
        await pilot.press("end")
        await pilot.pause()
        assert "✖ undeclared tool" in flat(result_text(app, 3))
        assert "strict broken" in flat(result_text(app, 4))


async def test_a_megabyte_string_that_breaks_its_schema_is_cut_in_the_parse_pane():
    """The marked value and the failure's message (which quotes the value)."""
    from .test_app_reading import _write_file_capture

    content = "x" * 1_000_000
    stream, _ = stream_from_bytes(_write_file_capture(content))
    schema = {"type": "object", "properties": {"path": {"type": "string"},
                                               "content": {"type": "string", "maxLength": 10}}}
    tools = read_tools([{"type": "function", "function": {"name": "write_file",
                                                          "parameters": schema}}])
    app = FraglensApp(stream, source="big", fit=check_fit(stream, tools))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        widget = app.query_one(CallResult)
        text = flat(result_text(app, 0))
        # the failure by its pointer, its message (which quotes the value) cut too
        assert "/content 'xxx" in text and "chars] (maxLength)" in text
        marked = marked_spans(widget)
        assert len(marked) == 1 and marked[0].startswith('"content": "xxx')
        assert f"… [+{1_000_000 - STRING_CHARS:,} chars]" in marked[0]
        assert len(widget._strips) < SIZE[1] * 2  # rendered within the screen


async def test_the_status_line_counts_the_fit_errors_check_counts():
    # as `fraglens FILE --tools TOOLS` opens it: read in slices, judged once read
    from fraglens.app.widgets.status import StatusBar
    from fraglens.reading.progressive import Loading

    tools = read_tools(json.loads(TOOLS.read_text(encoding="utf-8")))
    loading = Loading(SAMPLE.read_bytes(), str(SAMPLE))
    app = FraglensApp(
        loading=loading, source=str(SAMPLE), fit_when_loaded=lambda s: check_fit(s, tools)
    )
    async with app.run_test(size=SIZE) as pilot:
        while app.loading is not None:
            await pilot.pause(0.02)
        await pilot.pause()
        line = app.query_one(StatusBar).status.summary
    # check: every call parses (ok), six of them break their schema or name no tool
    assert line == "6 calls: 6 ok · 6 errors"
