"""Snapshot tests of the demo (pytest-textual-snapshot, pinned textual).

A failing snapshot means what users see changed: look at the report, and if
the change is wanted, update with ``pytest --snapshot-update``.
"""

from __future__ import annotations

from fraglens.app.app import FraglensApp
from fraglens.reading.capture import load_stream

WIDE = (120, 36)
NARROW = (80, 24)
#: the demo mid-stream: three calls interleaved
MID_STREAM = ("colon", "4", "0", "enter")


def demo() -> FraglensApp:
    stream, _ = load_stream(":demo:")
    return FraglensApp(stream, source="demo")


class TestDemoWide:
    def test_opening(self, snap_compare):
        assert snap_compare(demo(), terminal_size=WIDE)

    def test_mid_stream(self, snap_compare):
        assert snap_compare(demo(), press=MID_STREAM, terminal_size=WIDE)

    def test_last_event(self, snap_compare):
        assert snap_compare(demo(), press=("end",), terminal_size=WIDE)

    def test_help(self, snap_compare):
        assert snap_compare(demo(), press=("question_mark",), terminal_size=WIDE)

    def test_call_list(self, snap_compare):
        """C: every call on one line, the usage, no timing (the demo has no times)."""
        assert snap_compare(demo(), press=("C",), terminal_size=WIDE)

    def test_value_view(self, snap_compare):
        """v on the repaired read_file call: its arguments whole, as JSON."""
        press = ("end", "tab", "up", "v")
        assert snap_compare(demo(), press=press, terminal_size=WIDE)


    def test_filter_choices(self, snap_compare):
        """&: the choices the demo offers, in their four groups."""
        assert snap_compare(demo(), press=("ampersand",), terminal_size=WIDE)

    def test_filtered_stream(self, snap_compare):
        """& on get_weather (#2) only, then two steps: the Stream pane lists its
        events alone, the buffers show every call as it stood then."""
        # the list opens on its first choice (hide keep-alives); #2 is four down
        press = ("ampersand", "down", "down", "down", "down", "space", "enter", "n", "n")
        assert snap_compare(demo(), press=press, terminal_size=WIDE)

    def test_naive_view(self, snap_compare):
        """g at the last event: the three calls beside the two naive groupings."""
        async def replayed(pilot):
            await pilot.press("end", "g")
            while pilot.app.screen.found is None:  # the replay runs on the app's loop
                await pilot.pause()

        assert snap_compare(demo(), run_before=replayed, terminal_size=WIDE)

    def test_value_view_with_boundaries(self, snap_compare):
        """v then b on read_file: its text as received, each fragment shaded."""
        press = ("end", "tab", "up", "v", "b")
        assert snap_compare(demo(), press=press, terminal_size=WIDE)


class TestDemoNarrow:
    def test_opening(self, snap_compare):
        assert snap_compare(demo(), terminal_size=NARROW)

    def test_mid_stream(self, snap_compare):
        assert snap_compare(demo(), press=MID_STREAM, terminal_size=NARROW)

    def test_last_event_with_buffers_focused(self, snap_compare):
        assert snap_compare(demo(), press=("end", "tab"), terminal_size=NARROW)
