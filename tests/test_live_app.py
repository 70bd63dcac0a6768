"""fraglens live in the app, driven by Pilot against fraglens serve on loopback."""

from __future__ import annotations

import pytest

from fraglens.net.live import LiveCall, Phase
from fraglens.net.replay import Chaos, Pace
from fraglens.net.request import build_spec
from fraglens.net.serve import start_server

from .test_live_streams import FAKE_KEY, OPENAI_ARGS, OPENAI_ARGS_2, OPENAI_SSE, write

pytest.importorskip("fraglens.app.app")

from fraglens.app.live import AGAIN, make_live_app  # noqa: E402

SIZE = (120, 36)
#: Pilot pauses to wait for the call before giving up (no clock involved): at
#: least a minute of them, a hang guard for a busy machine, never a measure
PATIENCE = 12000


async def wait_until(pilot, condition) -> None:
    for _ in range(PATIENCE):
        if condition():
            return
        await pilot.pause(0.005)
    raise AssertionError("the live call never got there")


def spec_for(url: str):
    spec, _ = build_spec(url + "/v1", model="m", prompt="hi", environ={"OPENAI_API_KEY": FAKE_KEY})
    return spec


async def test_the_calls_fill_in_while_the_server_streams_and_escape_cancels(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    # the stream stops after the first call's arguments: the app shows a call half written
    with start_server([source], pace=Pace("fixed", 0), chaos=Chaos(stall_after=5)) as server:
        call = LiveCall(spec_for(server.url), record=tmp_path / "r.fraglens")
        app = make_live_app(call)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stream.events) == 5)
            await wait_until(pilot, lambda: app.index.last == 4)
            calls = app.stream.reassembler.calls
            assert [c.text for c in calls] == ["".join(OPENAI_ARGS)]
            assert call.status.phase is Phase.STREAMING
            assert "streaming" in app.live_status and "5 events" in app.live_status
            await pilot.press("escape")
            await wait_until(pilot, lambda: call.status.phase.finished)
            await wait_until(pilot, lambda: "cancelled" in app.live_status)
            assert call.status.phase is Phase.CANCELLED
            assert len(app.stream.events) == 5
            assert FAKE_KEY not in app.live_status


async def test_a_whole_stream_ends_done_with_both_calls_shown(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    with start_server([source], pace=Pace("fixed", 200)) as server:
        call = LiveCall(spec_for(server.url))
        app = make_live_app(call)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: call.status.phase.finished)
            await wait_until(pilot, lambda: app.index.last == len(app.stream.events) - 1)
            assert call.status.phase is Phase.DONE
            assert [c.text for c in app.stream.reassembler.calls] == [
                "".join(OPENAI_ARGS),
                "".join(OPENAI_ARGS_2),
            ]
            assert app.step == app.index.last  # the view followed the stream to its end
            assert "done" in app.live_status


async def test_the_base_app_is_mounted_once(tmp_path, monkeypatch):
    # Textual calls each class's on_mount along the MRO: a subclass that also
    # called super().on_mount() showed and focused everything twice
    from fraglens.app.app import FraglensApp

    mounted = []
    base = FraglensApp.on_mount

    def counted(self):
        mounted.append(type(self).__name__)
        base(self)

    monkeypatch.setattr(FraglensApp, "on_mount", counted)
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    with start_server([source], pace=Pace("fixed", 0)) as server:
        call = LiveCall(spec_for(server.url))
        app = make_live_app(call)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: call.status.phase.finished)
            assert len(mounted) == 1


async def test_ctrl_r_asks_to_send_the_request_again(tmp_path):
    source = write(tmp_path, "chat.sse", OPENAI_SSE)
    with start_server([source], pace=Pace("fixed", 0), chaos=Chaos(stall_after=3)) as server:
        call = LiveCall(spec_for(server.url))
        app = make_live_app(call)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stream.events) >= 3)
            await pilot.press("ctrl+r")
            await wait_until(pilot, lambda: call.status.phase.finished)
        assert app.return_value == AGAIN
        again = call.again()
        assert again.spec == call.spec and again is not call and not again.stream.events


async def test_with_nothing_listening_the_status_says_no_events_and_no_warning():
    import socket

    from fraglens.app.widgets.parse import DiagnosticsView
    from fraglens.app.widgets.status import StatusBar

    from .test_app import pane_text

    with socket.socket() as s:  # a port nothing listens on: bound, then freed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    call = LiveCall(spec_for(f"http://127.0.0.1:{port}"))
    app = make_live_app(call)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(pilot, lambda: call.status.phase.finished)
        await pilot.pause()
        line = app.query_one(StatusBar).render().plain
        listed = pane_text(app.query_one(DiagnosticsView))
    assert call.status.phase is Phase.FAILED
    assert line.startswith(" no events ") and "event 0/-1" not in line
    assert "connection refused" in line and "end: nothing received" in line
    # no warning counted that the Diagnostics list (none so far) does not show
    assert "0 calls" in line and "warning" not in line
    assert listed.strip() == "none so far"
