"""A capture opens progressively: shown and steppable while the rest loads.

And without a terminal, ``fraglens FILE`` prints the check report instead of
drawing the app into a file.
"""

from __future__ import annotations

from pathlib import Path

from fraglens.app import app as app_module
from fraglens.app.app import FraglensApp
from fraglens.app.widgets.status import StatusBar, loading_bar
from fraglens.cli import main
from fraglens.reading import progressive as loading_module
from fraglens.reading.capture import load_stream
from fraglens.reading.progressive import Loading

SAMPLES = Path(__file__).resolve().parent.parent / "sample_streams"
SEED = SAMPLES / "seed_interleaved_two_calls.sse"
SIZE = (120, 36)


def _slow_loading(monkeypatch) -> Loading:
    """The seed read 40 bytes a slice, one slice between two looks at the
    screen, and the panes redrawn after each."""
    monkeypatch.setattr(loading_module, "SLICE_BYTES", 40)
    monkeypatch.setattr(app_module, "LOAD_SLICE", 0.0)
    monkeypatch.setattr(app_module, "LOAD_REDRAW", 0.0)
    return Loading(SEED.read_bytes(), "seed")


async def test_a_capture_is_shown_and_steppable_while_it_loads(monkeypatch):
    job = _slow_loading(monkeypatch)
    whole, _ = load_stream(str(SEED))
    app = FraglensApp(loading=job, source=str(SEED))
    seen: list[tuple[int, bool, str]] = []
    refresh = app.refresh_stream

    def watched() -> None:
        refresh()
        status = app.query_one(StatusBar)
        seen.append((len(app.stream.events), job.done, str(status.render())))

    monkeypatch.setattr(app, "refresh_stream", watched)
    async with app.run_test(size=SIZE) as pilot:
        while app.loading is not None:
            await pilot.pause()
        # some screens showed part of the stream, saying it was loading
        partial = [s for s in seen if not s[1] and 0 < s[0] < len(whole.events)]
        assert partial
        assert all(" loading " in text for _, done, text in seen if not done)
        assert all("end: loading" in text for _, done, text in seen if not done)
        # the whole stream in the end, the same as a whole read, every call scanned
        assert len(app.stream.events) == len(whole.events)
        assert app.stream.closed
        assert all(len(c.frag_shape) == c.fragments for c in app.index.calls)
        # opened just before the first chunk, as a whole read opens
        first = next(e.number for e in whole.events if e.kind != "comment")
        assert app.step == first - 1
        text = str(app.query_one(StatusBar).render())
        assert " loading " not in text
        assert "2 calls: 2 ok" in text
        # the status line names the file, not its whole path
        assert "seed_interleaved_two_calls.sse" in text and str(SAMPLES) not in text


async def test_a_step_taken_while_loading_is_kept(monkeypatch):
    job = _slow_loading(monkeypatch)
    app = FraglensApp(loading=job, source="seed")
    refresh = app.refresh_stream
    moved: list[int] = []

    def user_steps() -> None:
        refresh()
        if not moved and len(app.stream.events) > 9 and not job.done:
            app.goto(9)  # what a key does between two slices
            moved.append(len(app.stream.events))

    monkeypatch.setattr(app, "refresh_stream", user_steps)
    async with app.run_test(size=SIZE) as pilot:
        while app.loading is not None:
            await pilot.pause()
        assert moved
        assert app.step == 9  # neither sent back to the opening nor to the end


def test_loading_bar_reads_without_colour():
    assert loading_bar(0.0) == "▱▱▱▱▱▱▱▱▱▱ 0%"
    assert loading_bar(0.42) == "▰▰▰▰▱▱▱▱▱▱ 42%"
    assert loading_bar(1.0) == "▰▰▰▰▰▰▰▰▰▰ 100%"


def test_without_a_terminal_the_check_report_is_printed(capsys):
    """pytest's stdout is no terminal: what `fraglens FILE > out` sees."""
    repaired = str(SAMPLES / "quirk_args_repaired.sse")
    code = main([repaired])
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "fraglens check" in err
    assert main(["check", repaired]) == code == 1  # a repaired call: exit 1, as check
    assert out == capsys.readouterr().out


async def test_while_loading_the_stream_grows_without_laying_the_screen_out_again(monkeypatch):
    """Once the Stream pane has its scrollbar, more events only lengthen it:
    no layout pass per redraw; the rows still scroll to the last event."""
    from textual.widget import Widget

    from fraglens.app.widgets.stream_list import StreamList

    from .test_app_filter import _one_call

    monkeypatch.setattr(loading_module, "SLICE_BYTES", 20_000)
    monkeypatch.setattr(app_module, "LOAD_SLICE", 0.0)
    monkeypatch.setattr(app_module, "LOAD_REDRAW", 0.0)
    job = Loading(_one_call(5_000), "big")
    app = FraglensApp(loading=job, source="big")
    layouts: list[int] = []
    refresh = Widget.refresh

    def counting(self, *regions, **kwargs):
        if kwargs.get("layout") and isinstance(self, StreamList):
            layouts.append(len(app.stream.events))
        return refresh(self, *regions, **kwargs)

    monkeypatch.setattr(Widget, "refresh", counting)
    syncs: list[int] = []
    sync = StreamList.sync

    def counted_sync(self) -> None:
        syncs.append(len(app.stream.events))
        sync(self)

    monkeypatch.setattr(StreamList, "sync", counted_sync)
    async with app.run_test(size=SIZE) as pilot:
        while app.loading is not None:
            await pilot.pause()
        stream_list = app.query_one(StreamList)
        # the first rows, then the scrollbar's arrival: no layout after that
        assert len(set(syncs)) > 10 and len(layouts) <= 2
        assert stream_list.virtual_size.height == len(app.stream.events) == 5_000
        assert stream_list.vertical_scrollbar.window_virtual_size == 5_000
        await pilot.press("end")
        await pilot.pause()
        top = int(stream_list.scroll_y)
        assert top <= app.step < top + stream_list.scrollable_content_region.height
        assert stream_list.max_scroll_y == 5_000 - stream_list.scrollable_content_region.height
