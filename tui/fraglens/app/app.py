"""The debugger: a stream, three panes, and a step.

The app owns one number, the step (an event number), plus a few view choices
(the selected call, follow mode, playing). It tells the panes to show the step
(attributes down); the panes read engine state through ``StepIndex`` and send
clicks back as messages (messages up). Nothing here reassembles anything.

A stream may grow while shown (live calls, the proxy): post ``StreamGrew`` to
the app, or call ``refresh_stream()``, and set ``live_status`` for the status
line.

SIGTERM (``kill``, systemd) and SIGHUP (the terminal closed) end the app the
way its quit key does, terminal restored, and leave the shell's exit status
(128 + the signal's number) in ``signal_status``.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual.actions import ActionParseResult
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.driver import Driver
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Header

from ..engine.plural import counted
from ..fit.verdicts import Fit
from ..fit.verdicts import fit_for_request as fit_request
from ..reading.capture import LoadError, read_bytes
from ..reading.progressive import Loading
from ..reading.stream import Stream
from . import clipboard, recent
from .commands import FraglensCommands
from .keys import BINDINGS, KEY_BAR
from .rows import RowFilter, Rows
from .screens.calls import CallsScreen
from .screens.chunking import ChunkingScreen
from .screens.explain import ExplainScreen
from .screens.filter import FilterScreen
from .screens.help import HelpScreen, screen_help, screen_keys
from .screens.history import HistoryScreen
from .screens.jump import JumpScreen
from .screens.naive import NaiveScreen
from .screens.open import OpenScreen
from .screens.prompt import TypeAhead
from .screens.raw_event import RawEventScreen
from .screens.search import SearchScreen
from .screens.tools import ToolsScreen
from .screens.value import ValueScreen, readable
from .search import Found, compile_query, next_match, search
from .steps import StepIndex, verdict_summary
from .widgets.buffers import BuffersPane, CallCard
from .widgets.key_bar import KeyBar
from .widgets.parse import ParsePane
from .widgets.status import Status, StatusBar
from .widgets.stream_list import StreamList

#: play speeds, as multiples of the recorded pace (or of the steady rate)
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: events per second at speed 1 when the recording has no times
STEADY_RATE = 8.0
#: a recorded pause longer than this (seconds, at speed 1) is shortened to it
LONGEST_PAUSE = 2.0
#: signals that end the app as its quit key does: ``kill``, systemd, a pane
#: manager (SIGTERM); the terminal window closed (SIGHUP). SIGINT is left as it was.
QUIT_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
#: seconds of loading between two looks at the keyboard and the screen
LOAD_SLICE = 0.05
#: seconds between two redraws of a capture being loaded
LOAD_REDRAW = 0.5
#: fragments the scanner reads per slice once the capture is loaded
SCAN_SLICE = 20_000


class StreamGrew(Message):
    """New events were fed to the stream the app shows. Many in a row
    coalesce into one re-read."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StreamGrew)


class FraglensApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "fraglens"
    COMMANDS = App.COMMANDS | {FraglensCommands}
    BINDINGS: ClassVar[list[BindingType]] = [*BINDINGS]
    #: binding ids on the key line, in order (a subclass may add its own)
    KEY_BAR: ClassVar[tuple[str, ...]] = KEY_BAR
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    #: one line from the live-calls / proxy features, shown in the status line
    live_status: reactive[str] = reactive("", init=False)

    def __init__(
        self,
        stream: Stream | None = None,
        source: str = "",
        step: int | None = None,
        loading: Loading | None = None,
        fit: Fit | None = None,
        fit_when_loaded: Callable[[Stream], Fit | None] | None = None,
    ) -> None:
        """``step``: where to open; by default just before the first data event,
        past the comments a capture may open with, so that ``n`` shows the first
        chunk. ``loading``: a capture still being read (its ``stream`` is shown
        and grows while the app reads the rest in the background).
        ``fit``: the calls against the declared tools, when they are known;
        ``fit_when_loaded`` gives it once a loading capture is whole."""
        super().__init__()
        #: the capture being read, until it is whole and every call scanned
        self.loading = loading
        self._fit_when_loaded = fit_when_loaded
        if loading is not None:
            stream = loading.stream
        assert stream is not None, "a stream or a loading capture"
        self.boundaries = False
        self.speed = 1.0
        self._timer: Timer | None = None
        #: 128 + the signal's number once SIGTERM or SIGHUP ended the app, else None:
        #: what the process should exit with (143, 129: the shell's convention)
        self.signal_status: int | None = None
        #: the handlers in place before the app caught ``QUIT_SIGNALS``, by signal
        self._previous_handlers: dict[int, Any] = {}
        #: keys that came while a prompt (: or /) opens, for it
        self.type_ahead = TypeAhead()
        self._take(stream, source, step, fit)

    def _take(
        self, stream: Stream, source: str, step: int | None, fit: Fit | None = None
    ) -> None:
        """The view state that belongs to one stream."""
        self.stream = stream
        self.index = StepIndex(stream, fit)
        self.source = source or "stream"
        self.sub_title = self.source
        #: the user has not moved yet: a loading capture opens before its first chunk
        self._opening = step is None
        if step is None:
            step = self._first_step()
        self.step = max(0, min(step, self.index.last))
        #: the last search's matches (``/``), for ``.`` and ``,``
        self.found: Found | None = None
        #: the diagnostic ] or [ went to last: (event, which of its diagnostics)
        self.shown_diagnostic: tuple[int, int] | None = None
        #: the call the user picked; None = the one being written at the step
        self.pinned: int | None = None
        #: step through this call's fragments only
        self.follow: int | None = None
        self.playing = False
        #: what the Stream pane shows (n / p step over the rows it hides), and
        #: the rows it shows (the pane's own list; None: every event)
        self.row_filter = RowFilter()
        self.rows: Rows | None = None
        self.new_events = 0
        self._seen = self.index.last
        #: the summary line, and the fit it counted (the fit may come later: once
        #: a capture is read, once a live call ends)
        self._summary_text: str | None = None
        self._summary_fit: Fit | None = None

    def _first_step(self) -> int:
        """Just before the first data event (the opening step)."""
        first = next((e.number for e in self.stream.events if e.kind != "comment"), 0)
        return max(0, first - 1)

    async def show_stream(self, stream: Stream, source: str, step: int | None = None) -> None:
        """Show another stream in the same app (the proxy opens flow after flow):
        the view state is reset and the panes are mounted again for it."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._take(stream, source, step)
        panes = self.screen_stack[0].query_one("#panes", Horizontal)
        await panes.remove_children()
        await panes.mount_all(self._panes())
        self.query_one(StreamList).focus()
        self._show()

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="panes"):
            yield from self._panes()
        yield StatusBar(self._status(), id="status")
        yield KeyBar([b for b in self.BINDINGS if isinstance(b, Binding)], self.KEY_BAR, id="keys")

    def _panes(self) -> list[Widget]:
        return [
            StreamList(self.index, id="stream"),
            BuffersPane(self.index, id="buffers"),
            ParsePane(self.index, id="parse"),
        ]

    def on_mount(self) -> None:
        self.query_one(StreamList).focus()
        self._show()
        if self.loading is not None and Path(self.source).is_file():
            recent.remember(self.source)  # for o, next time
        if self.loading is not None:
            self.run_worker(self._load(self.loading), name="load", exclusive=True)

    # -- a capture read in the background ------------------------------------
    async def _load(self, loading: Loading) -> None:
        """Read the capture a slice at a time on the app's own loop, showing what
        came after each slice (steppable while the rest loads); then let the
        scanner catch up with every call, so that no key pays for it later.
        The garbage collector is paused while loading, as ``reading.capture`` does for a
        whole read: the new objects form no cycles."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            shown = 0.0  # the first slice is shown at once
            while not loading.done:
                deadline = time.perf_counter() + LOAD_SLICE
                loading.advance()
                while not loading.done and time.perf_counter() < deadline:
                    loading.advance()
                # keys are handled between two slices; the panes are redrawn
                # less often, since a redraw costs as much as a slice
                if time.perf_counter() >= shown:
                    self.refresh_stream()
                    shown = time.perf_counter() + LOAD_REDRAW
                await asyncio.sleep(0)
        finally:
            if collecting:
                gc.enable()
        gc.freeze()  # what was loaded lives until exit: never walked again
        for call in list(self.index.calls):
            for k in range(SCAN_SLICE, call.fragments + SCAN_SLICE, SCAN_SLICE):
                call.scan_at(call.frag_event[min(k, call.fragments) - 1])
                await asyncio.sleep(0)
        if self._fit_when_loaded is not None:
            # the calls against the declared tools, once every call has its
            # verdict; in a thread, as each check may take up to its time budget
            # and keys are read meanwhile (the closed stream is only read)
            self.index.fit = await asyncio.to_thread(self._fit_when_loaded, self.stream)
        self.loading = None
        self.refresh_stream()

    async def on_event(self, event: events.Event) -> None:
        """Keys that come while a prompt opens are kept for it (``screens/prompt.py``)."""
        if self.type_ahead.hold(self, event):
            return
        await super().on_event(event)

    # -- SIGTERM and SIGHUP: the quit key's way out ------------------------------
    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver, made to drop its output once the terminal is
        gone (``terminal.py``), so that SIGHUP from a closed window can end the
        app; any other driver as it is."""
        driver = super().get_driver_class()
        try:
            from textual.drivers.linux_driver import LinuxDriver
        except ImportError:  # no termios (Windows)
            return driver
        if driver is not LinuxDriver:
            return driver
        from .terminal import TerminalDriver

        return TerminalDriver

    def on_load(self) -> None:
        """Catch ``QUIT_SIGNALS`` on the app's own event loop, from before the
        terminal is put in application mode: Textual leaves them at their
        default, which kills the process with the terminal still in raw mode, on
        the alternate screen, reporting the mouse."""
        if self._previous_handlers:
            return  # caught already (a subclass calling super().on_load())
        loop = asyncio.get_running_loop()
        for sig in QUIT_SIGNALS:
            previous = signal.getsignal(sig)
            if previous is signal.SIG_IGN:
                continue  # ignored on purpose (nohup, a trap ''): it stays ignored
            try:
                loop.add_signal_handler(sig, self._quit_on_signal, sig)
            except (ValueError, RuntimeError, NotImplementedError):
                continue  # not the main thread, or no such signals here: as before
            self._previous_handlers[sig] = previous

    def _quit_on_signal(self, sig: int) -> None:
        """What the quit key does: Textual cancels the app's workers (a live call,
        which ends its recording) and restores the terminal, and whoever ran the
        app stops what it started (the proxy); the exit status is 128 + the
        signal's number. A second signal while the app is ending changes nothing."""
        if self.signal_status is None:
            self.signal_status = 128 + sig
            self.exit(return_code=self.signal_status)

    def on_unmount(self) -> None:
        """The terminal is restored by now: give the signals back to whoever had
        them (``remove_signal_handler`` alone would leave the default)."""
        loop = asyncio.get_running_loop()
        for sig, previous in self._previous_handlers.items():
            loop.remove_signal_handler(sig)
            # None: a handler installed from C, which Python cannot put back
            signal.signal(sig, signal.SIG_DFL if previous is None else previous)
        self._previous_handlers.clear()

    # -- what everything shows ----------------------------------------------
    @property
    def selected(self) -> int | None:
        """The call ``c``, ``r`` and ``f`` act on: picked, or the latest written."""
        call = self.index.call(self.pinned)
        if call is not None and call.first_event <= self.step:
            return call.seq
        latest = self.index.latest_call(self.step)
        return latest.seq if latest else None

    def goto(self, step: int) -> None:
        """Show the state after event ``step``."""
        last = self.index.last
        if last < 0:
            return
        self._opening = False
        self.step = max(0, min(step, last))
        if self.step >= self._seen:
            self.new_events = 0
        self._show()

    def _comparing(self, selected: int | None) -> bool:
        """The Parse pane shows the selected call's raw and repaired text side by
        side: two columns that need the room more than the Stream pane does."""
        call = self.index.call(selected)
        result = call.result_at(self.step) if call is not None else None
        return result is not None and result.status != "ok" and result.repaired_text is not None

    def _show(self) -> None:
        step, selected = self.step, self.selected
        panes = self.screen_stack[0].query_one("#panes", Horizontal)
        comparing = self._comparing(selected)
        if panes.has_class("-comparing") != comparing:  # a class change restyles them
            panes.set_class(comparing, "-comparing")
        with self.batch_update():
            stream_list = self.query_one(StreamList)
            stream_list.current = step
            self.query_one(BuffersPane).show(step, self.boundaries, selected)
            self.query_one(ParsePane).show(step, selected)
            self.query_one(StatusBar).show(self._status())
        key_bar = self.query_one(KeyBar)
        possible = tuple(self.check_action(b.action, ()) for b in key_bar.bindings)
        if possible != key_bar.possible:
            key_bar.show(possible)
            self.refresh_bindings()

    def _status(self) -> Status:
        stream = self.stream
        time = stream.events[self.step].time if stream.events else None
        follow = self.index.call(self.follow)
        follow_text = None
        if follow is not None:
            follow_text = f"#{self.index.position[follow.seq]} {follow.name or '(no name)'}"
        return Status(
            source=Path(self.source).name or self.source,
            step=self.step,
            last=self.index.last,
            time=time,
            format=stream.format,
            framing=stream.framing,
            end=(stream.end if stream.events else "nothing received") if stream.closed else (
                "loading" if self.loading is not None else "streaming"),
            playing=self.playing,
            speed=self.speed,
            paced=self.index.timed,
            follow=follow_text,
            live=self.live_status,
            new_events=self.new_events,
            loading=self.loading.fraction if self.loading is not None else None,
            summary=self._summary(),
        )

    def _summary(self) -> str:
        """"3 calls: 2 ok · 1 repaired · 1 warning": the verdicts of the whole
        stream, shown from the first step on once the stream is read."""
        if not self.stream.closed:
            return ""
        if self._summary_text is None or self._summary_fit is not self.index.fit:
            self._summary_text = verdict_summary(self.index)
            self._summary_fit = self.index.fit
        return self._summary_text

    def watch_live_status(self) -> None:
        self.query_one(StatusBar).show(self._status())

    # -- a growing stream ------------------------------------------------------
    def refresh_stream(self) -> None:
        """Re-read the stream after new events were fed to it. At the last
        event the view follows the new ones (a tail); elsewhere it stays put
        and the status line counts what is new."""
        loading = self.loading is not None
        at_end = self.step >= self._seen and not loading
        self.index.refresh()
        grown = self.index.last - self._seen
        self._seen = self.index.last
        self.query_one(StreamList).sync()
        if at_end and not self.playing:
            self.goto(self.index.last)
            return
        if self._opening:
            self.step = self._first_step()
        elif not loading:
            self.new_events += max(0, grown)
        self._show()

    def on_stream_grew(self, message: StreamGrew) -> None:
        self.refresh_stream()

    # -- where the next step goes ---------------------------------------------

    def _next(self) -> int | None:
        call = self.index.call(self.follow)
        if call is not None:
            found = self.index.next_fragment(call, self.step)
            if found is None and call.results and call.results[-1][0] > self.step:
                return call.results[-1][0]  # after its last fragment: its verdict
            return found
        rows = self.rows
        if rows is not None:  # over the hidden rows, as a filtered list steps
            return rows.after(self.step)
        return self.step + 1 if self.step < self.index.last else None

    def _previous(self) -> int | None:
        call = self.index.call(self.follow)
        if call is not None:
            return self.index.previous_fragment(call, self.step)
        rows = self.rows
        if rows is not None:
            return rows.before(self.step)
        return self.step - 1 if self.step > 0 else None

    def _first(self) -> int:
        """Where ``home`` goes: the first event, or the first one shown."""
        rows = self.rows
        return rows.events[0] if rows is not None and len(rows) else 0

    def _last(self) -> int:
        rows = self.rows
        return rows.events[-1] if rows is not None and len(rows) else self.index.last

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """None greys an action out in the footer and the palette: it cannot
        be done at this step."""
        possible = {
            "step_next": lambda: self._next() is not None,
            "step_prev": lambda: self._previous() is not None,
            "step_first": lambda: self.step != self._first(),
            "step_last": lambda: self.step != self._last(),
            "next_diagnostic": lambda: self._diagnostic(+1) is not None,
            "previous_diagnostic": lambda: self._diagnostic(-1) is not None,
            "play": lambda: self.playing or self.index.last > 0,
            "faster": lambda: self.speed < SPEEDS[-1],
            "slower": lambda: self.speed > SPEEDS[0],
            "follow_call": lambda: self.selected is not None and self.follow != self.selected,
            "follow_all": lambda: self.follow is not None,
            "copy_arguments": self._can_copy_arguments,
            "copy_raw": lambda: self.selected is not None,
            "copy_message": lambda: bool(self.index.calls or self.stream.reassembler.choices),
            "show_history": lambda: bool(self.index.calls),
            "show_calls": lambda: bool(self.index.calls),
            "show_naive": lambda: bool(self.index.calls),
            "show_tools": lambda: self.index.fit is not None,
            "show_raw": lambda: self.index.last >= 0,
            "show_value": lambda: self.selected is not None,
            "jump": lambda: self.index.last > 0,
        }.get(action)
        if possible is None:
            return True
        return True if possible() else None

    def why_not(self, action: str) -> str | None:
        """Why ``action`` cannot act at this step, in a few words (None: it can,
        or it has nothing to say). A key pressed in vain shows this instead of
        doing nothing."""
        if self.check_action(action, ()):
            return None
        at = f"event {self.step:,}"
        loading = " (still loading)" if self.loading is not None else ""
        shown = ""
        if self.rows is not None and self.follow is None:
            shown = " shown by the filter (& changes it)"
        follow = self.index.call(self.follow)
        if action in ("step_next", "play") and follow is not None:
            name = f"#{self.index.position[follow.seq]} {follow.name_at(self.step) or ''}".strip()
            return f"No fragment of {name} and no verdict after {at}; F steps through every event."
        call = self.index.call(self.selected)
        reasons = {
            "step_next": f"This is the last event{shown}{loading}.",
            "step_last": f"This is the last event{shown}{loading}.",
            "step_prev": f"This is the first event{shown}.",
            "step_first": f"This is the first event{shown}.",
            "next_diagnostic": f"No diagnostic after {at}{loading}; [ goes back.",
            "previous_diagnostic": f"No diagnostic before {at}; ] goes forward.",
            "faster": "Already playing at the fastest speed.",
            "slower": "Already playing at the slowest speed.",
            "follow_call": "No call to follow at this event."
            if call is None else "Already following this call; F follows every event.",
            "follow_all": "Already stepping through every event.",
            "copy_raw": "No call at this event yet.",
            "show_value": "No call at this event yet.",
            "copy_message": "No assistant text and no tool call to copy.",
            "show_history": "No tool call in this stream: no history to build.",
            "show_calls": "No tool call in this stream yet.",
            "show_naive": "No tool call in this stream yet: nothing to group.",
            "show_tools": "No declared tools: open the capture with --tools FILE (a recording "
            "or a live call brings its request's own).",
            "play": "Only one event: nothing to play.",
            "jump": "Only one event: nowhere to jump.",
        }
        if action == "copy_arguments":
            if call is None:
                return "No call at this event yet."
            name = f"#{self.index.position[call.seq]} {call.name_at(self.step) or ''}".strip()
            result = call.result_at(self.step)
            if result is None:
                return (f"{name} is still streaming at {at}: no parsed value until its choice "
                        "finishes (r copies the text so far).")
            return f"{name} has no parsed value ({result.status}); r copies the text as sent."
        return reasons.get(action)

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Textual skips an action its ``check_action`` greys out; a key pressed
        for one says why instead of doing nothing."""
        done = await super().run_action(action, default_namespace, namespaces)
        if not done and isinstance(action, str):
            app_action = action.startswith("app.") or default_namespace in (None, self)
            name = action.removeprefix("app.").split("(")[0]
            reason = self.why_not(name) if app_action else None
            if reason:
                self.notify(reason, title="Cannot do that here", severity="warning", timeout=4)
        return done

    def _can_copy_arguments(self) -> bool:
        call = self.index.call(self.selected)
        if call is None:
            return False
        result = call.result_at(self.step)
        return result is not None and result.has_value

    # -- stepping ----------------------------------------------------------------
    def action_step_next(self) -> None:
        target = self._next()
        if target is not None:
            self.goto(target)

    def action_step_prev(self) -> None:
        target = self._previous()
        if target is not None:
            self.goto(target)

    def action_step_first(self) -> None:
        self.goto(self._first())

    def action_step_last(self) -> None:
        self.goto(self._last())

    def action_goto(self, step: int) -> None:
        self.goto(step)

    def _diagnostic(self, direction: int) -> tuple[int, int] | None:
        """Where ``]`` (+1) or ``[`` (-1) goes: (event, which of its diagnostics).
        An event that raised several (a finish judging six calls) is gone
        through one diagnostic at a time, each showing its own call."""
        here = self.index.at_event.get(self.step, [])
        shown = self.shown_diagnostic
        if shown is not None and shown[0] == self.step:
            k = shown[1] + direction
            if 0 <= k < len(here):
                return self.step, k
        if direction > 0:
            target = self.index.next_diagnostic(self.step)
            return None if target is None else (target, 0)
        target = self.index.previous_diagnostic(self.step)
        return None if target is None else (target, len(self.index.at_event[target]) - 1)

    def _to_diagnostic(self, direction: int) -> None:
        """Go to the diagnostic's event, select the call it names, and bring
        that call's card and verdict into view, at every size."""
        found = self._diagnostic(direction)
        if found is None:
            return
        event, k = found
        self.shown_diagnostic = found
        diagnostic = self.index.at_event[event][k]
        call = self.index.call(diagnostic.call)
        if call is not None and call.first_event <= event:
            self.pinned = call.seq
        self.query_one(BuffersPane).reveal()
        self.query_one(ParsePane).reveal()
        self.goto(event)

    def action_next_diagnostic(self) -> None:
        self._to_diagnostic(+1)

    def action_previous_diagnostic(self) -> None:
        self._to_diagnostic(-1)

    def action_jump(self) -> None:
        def jumped(step: int | None) -> None:
            if step is None:
                return
            last = self.index.last
            if step > last:
                where = "loaded yet" if self.loading is not None else "in the stream"
                self.notify(f"No event {step:,} {where}: the last is {last:,}; went there.",
                            severity="warning")
            self.goto(step)

        self.push_screen(JumpScreen(self.index.last), jumped)

    # -- finding ------------------------------------------------------------------
    def action_search(self) -> None:
        def searched(query: str | None) -> None:
            if not query:
                return
            found = self.found = search(self.index, query)
            pattern = compile_query(query) if found.events else None
            self.query_one(StreamList).mark(pattern)
            self.query_one(BuffersPane).highlight = pattern
            if not found.events:
                self.notify(f"No match for {query!r}.", severity="warning")
                return
            target = next_match(found, self.step - 1, +1)
            if target is None:
                target = found.events[0]  # after the last one: from the top again
            more = " (stopped at 10,000)" if found.capped else ""
            self.notify(
                f"{counted(len(found.events), 'event')}{more}: "
                f"{found.in_calls:,} in call arguments "
                f"(at the event that completed each), {found.in_events:,} in event text; "
                ". next, , previous",
                title=f"Found {query!r}",
            )
            self.goto(target)

        self.push_screen(SearchScreen(self.found.query if self.found else ""), searched)

    def action_next_match(self) -> None:
        self._to_match(+1)

    def action_previous_match(self) -> None:
        self._to_match(-1)

    def _to_match(self, direction: int) -> None:
        if self.found is None:
            self.notify("Nothing searched yet: / finds a text or pattern.", severity="warning")
            return
        found = self.found
        target = next_match(found, self.step, direction)
        if target is None and found.events:
            # past the last match, from the top again (before the first: from the
            # bottom), saying so, as less and vim do
            target = found.events[0] if direction > 0 else found.events[-1]
            if target == self.step:
                self.notify(f"{found.query!r} matches at this event only.")
                return
            said = "the last match; from the first again" if direction > 0 else (
                "the first match; from the last again")
            self.notify(f"Past {said} (event {target:,}).", title=f"Search {found.query!r}")
        if target is None:
            self.notify(f"No match of {found.query!r}.", severity="warning")
            return
        self.goto(target)

    # -- playing -------------------------------------------------------------------
    def action_play(self) -> None:
        if not self.playing and self._next() is None:
            # at the end: play again from the start (from the followed call's first fragment)
            follow = self.index.call(self.follow)
            self.goto(follow.frag_event[0] if follow is not None and follow.fragments
                      else self._first_step())
            self.notify("Playing again from the start.", timeout=3)
        self.playing = not self.playing
        if self.playing:
            self._schedule()
        elif self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._show()

    def _schedule(self) -> None:
        target = self._next()
        if target is None:
            self.playing = False
            self._show()
            return
        events = self.stream.events
        then, now = events[self.step].time, events[target].time
        if self.index.timed and then is not None and now is not None:
            delay = min(max(0.0, now - then), LONGEST_PAUSE)
        else:
            delay = (target - self.step) / STEADY_RATE if self.follow is None else 1 / STEADY_RATE
        self._timer = self.set_timer(delay / self.speed, self._tick)

    def _tick(self) -> None:
        if not self.playing:
            return
        target = self._next()
        if target is not None:
            self.goto(target)
        self._schedule()

    def action_faster(self) -> None:
        self._set_speed(+1)

    def action_slower(self) -> None:
        self._set_speed(-1)

    def _set_speed(self, direction: int) -> None:
        i = SPEEDS.index(self.speed) + direction
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i))]
        self._show()

    # -- calls -----------------------------------------------------------------------
    def select_call(self, seq: int) -> None:
        call = self.index.call(seq)
        if call is None:
            return
        self.pinned = seq
        if call.first_event > self.step:
            self.goto(call.first_event)
        else:
            self._show()

    def on_call_card_chosen(self, message: CallCard.Chosen) -> None:
        self.select_call(message.seq)

    def action_select_call(self, offset: int) -> None:
        shown = self.index.calls_at(self.step)
        if not shown:
            return
        current = self.selected
        seqs = [c.seq for c in shown]
        i = seqs.index(current) if current in seqs else -1
        self.pinned = seqs[max(0, min(len(seqs) - 1, i + offset))]
        self._show()

    def action_unpin(self) -> None:
        self.pinned = None
        self._show()

    def action_follow_call(self) -> None:
        seq = self.selected
        if seq is None:
            return
        self.follow = self.pinned = seq
        call = self.index.call(seq)
        name = call.name if call else None
        self.notify(
            f"n / p now step through #{self.index.position[seq]} {name}'s fragments; "
            "F for all events",
            title="Following one call",
        )
        self._show()

    def action_follow_all(self) -> None:
        self.follow = None
        self.pinned = None
        self._show()

    def action_filter_rows(self) -> None:
        def chosen(flt: RowFilter | None) -> None:
            if flt is None:
                return
            self.row_filter = flt
            stream_list = self.query_one(StreamList)
            stream_list.set_filter(flt)
            rows = self.rows = stream_list.rows
            if rows is not None and not len(rows):
                self.notify("No event matches this filter (yet): the rows are empty.",
                            severity="warning")
            self._show()

        self.push_screen(FilterScreen(self.index, self.row_filter), chosen)

    def action_toggle_raw_rows(self) -> None:
        stream_list = self.query_one(StreamList)
        stream_list.show_raw(not stream_list.raw)

    def action_toggle_boundaries(self) -> None:
        self.boundaries = not self.boundaries
        self._show()

    def on_stream_list_selected(self, message: StreamList.Selected) -> None:
        self.goto(message.event)

    # -- copying --------------------------------------------------------------------
    def action_copy_arguments(self) -> None:
        call = self.index.call(self.selected)
        result = call.result_at(self.step) if call else None
        if call is None or result is None or not result.has_value:
            self.notify("This call has no parsed value at this event yet.", severity="warning")
            return
        what = f"arguments of #{self.index.position[call.seq]} {call.name_at(self.step)}"
        if result.status not in ("ok", "empty"):
            what += f" ({result.status})"
        clipboard.copy(self, clipboard.pretty_json(result.arguments), what, self.stream.secrets)

    def action_copy_raw(self) -> None:
        call = self.index.call(self.selected)
        if call is None:
            return
        text = call.text[: call.length_at(self.step)]
        what = f"raw arguments of #{self.index.position[call.seq]} {call.name_at(self.step)}"
        clipboard.copy(self, text, what, self.stream.secrets)

    def action_copy_message(self) -> None:
        text, notes = clipboard.message_for_history(self.stream)
        if text is None:
            self.notify("No assistant text and no tool call to send back.", severity="warning")
            return
        what = "the assistant message (whole stream)"
        if self.step < self.index.last:  # m gives the final message, whatever the step
            what = f"the final assistant message (whole stream, not as of event {self.step})"
        clipboard.copy(self, text, what, self.stream.secrets)
        for note in notes:
            self.notify(note, title="History note", severity="warning", timeout=8)

    # -- screens ------------------------------------------------------------------------
    def action_show_history(self) -> None:
        step = self.step if self.step < self.index.last else None
        self.push_screen(HistoryScreen(self.stream, step))

    def action_show_value(self) -> None:
        call = self.index.call(self.selected)
        if call is None:
            self.notify("No call at this event yet.", severity="warning")
            return
        step = self.step
        title = f"#{self.index.position[call.seq]} {call.name_at(step) or '(no name yet)'}"
        result = call.result_at(step)
        raw = call.text[: call.length_at(step)]
        if result is not None and result.has_value:
            about = f"{result.status} · parsed value at event {step} · {len(raw):,} chars as sent"
            text = "\n".join(readable(result.arguments))
        else:
            state = "no verdict yet" if result is None else result.status
            about = f"{state} · the argument text as received at event {step} ({len(raw):,} chars)"
            text = raw
        # shown whole: scrubbed once here, not per screen line
        text = self.index.scrub.text(text)
        view = ValueScreen(title, about, text, call, step, self.boundaries, self.index.scrub)
        self.push_screen(view)

    def action_show_tools(self) -> None:
        if self.index.fit is not None:
            self.push_screen(ToolsScreen(self.index.fit.tools))

    def show_chunking(self) -> None:
        self.push_screen(ChunkingScreen(self.stream))

    def action_show_calls(self) -> None:
        def chosen(seq: int | None) -> None:
            call = self.index.call(seq)
            if call is not None:
                self.pinned = call.seq
                self.goto(call.first_event)

        self.push_screen(CallsScreen(self.index), chosen)

    def action_show_naive(self) -> None:
        self.push_screen(NaiveScreen(self.index))

    def action_show_raw(self) -> None:
        self.push_screen(RawEventScreen(self.index, self.step))

    def action_open(self) -> None:
        folder = Path(self.source).parent if Path(self.source).is_file() else Path.cwd()

        def chosen(path: str | None) -> None:
            if path is not None:
                self.run_worker(self.open_path(path), name="open", exclusive=True)

        shown = Path(self.source).resolve()
        before = [p for p in recent.recent_files() if Path(p) != shown]
        self.push_screen(OpenScreen(folder.resolve(), before), chosen)

    async def open_path(self, path: str) -> None:
        """Show the capture at ``path`` in place of this one, read while shown
        as the first one was; a file that cannot be read leaves this one shown
        and says why in one line."""
        try:
            loading = Loading(read_bytes(path), path)
        except LoadError as exc:
            self.notify(str(exc), title="Cannot open", severity="error", timeout=8)
            return
        if loading.known_empty:
            self.notify(f"{path}: no events in the stream", title="Cannot open", severity="error")
            return
        self.loading = loading
        recent.remember(path)
        # the calls against the tools its recorded request declared, once read
        self._fit_when_loaded = partial(fit_request, request=loading.meta.get("request"))
        await self.show_stream(loading.stream, path)
        self.run_worker(self._load(loading), name="load", exclusive=True)

    def action_explain(self, code: str | None = None) -> None:
        """What a diagnostic means: the one named (a click on its code), else
        the one at this event, else the latest before it."""
        if code is None:
            found = self.index.diagnostics_at(self.step)
            here = [d for d in found if d.event == self.step]
            dated = [d for d in found if d.event is not None]
            if not found:
                self.notify("No diagnostic up to this event; ] goes to the next one.")
                return
            code = (here or dated or found)[-1].code
        self.push_screen(ExplainScreen(code))

    def action_help(self) -> None:
        """The keys of the screen ``?`` was pressed on, as bound now (after a
        keymap), read from the bindings its footer shows."""
        screen = self.screen
        if isinstance(screen, HelpScreen):
            return
        tips = {b.id: b.tooltip for b in self.BINDINGS if isinstance(b, Binding) and b.id}

        def display(key: str) -> str:
            return self.get_key_display(Binding(key, ""))

        keys = screen_keys(screen.active_bindings, display, tips)
        about, extra = screen_help(screen)
        name = getattr(screen, "ABOUT_TITLE", None) or "keys and panes"
        self.push_screen(HelpScreen(f"fraglens — {name}", about, keys, extra))
