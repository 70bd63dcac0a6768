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
import signal
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.driver import Driver
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Header

from ..fit import Fit
from ..stream import Stream
from . import clipboard
from .commands import FraglensCommands
from .keys import BINDINGS, KEY_BAR
from .screens.chunking import ChunkingScreen
from .screens.explain import ExplainScreen
from .screens.help import HelpScreen
from .screens.history import HistoryScreen
from .screens.jump import JumpScreen
from .screens.raw_event import RawEventScreen
from .screens.tools import ToolsScreen
from .steps import StepIndex
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
        self, stream: Stream, source: str = "", step: int | None = None, fit: Fit | None = None
    ) -> None:
        """``step``: where to open; by default just before the first data event,
        past the comments a capture may open with, so that ``n`` shows the first
        chunk. ``fit``: the calls against the declared tools, when they are known."""
        super().__init__()
        self.boundaries = False
        self.speed = 1.0
        self._timer: Timer | None = None
        #: 128 + the signal's number once SIGTERM or SIGHUP ended the app, else None:
        #: what the process should exit with (143, 129: the shell's convention)
        self.signal_status: int | None = None
        #: the handlers in place before the app caught ``QUIT_SIGNALS``, by signal
        self._previous_handlers: dict[int, Any] = {}
        self._take(stream, source, step, fit)

    def _take(
        self, stream: Stream, source: str, step: int | None, fit: Fit | None = None
    ) -> None:
        """The view state that belongs to one stream."""
        self.stream = stream
        self.index = StepIndex(stream, fit)
        self.source = source or "stream"
        self.sub_title = self.source
        if step is None:
            first = next((e.number for e in stream.events if e.kind != "comment"), 0)
            step = first - 1
        self.step = max(0, min(step, self.index.last))
        #: the call the user picked; None = the one being written at the step
        self.pinned: int | None = None
        #: step through this call's fragments only
        self.follow: int | None = None
        self.playing = False
        self.new_events = 0
        self._seen = self.index.last

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
        self.step = max(0, min(step, last))
        if self.step >= self._seen:
            self.new_events = 0
        self._show()

    def _show(self) -> None:
        step, selected = self.step, self.selected
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
            source=self.source,
            step=self.step,
            last=self.index.last,
            time=time,
            format=stream.format,
            framing=stream.framing,
            end=stream.end if stream.closed else "streaming",
            playing=self.playing,
            speed=self.speed,
            paced=self.index.timed,
            follow=follow_text,
            live=self.live_status,
            new_events=self.new_events,
        )

    def watch_live_status(self) -> None:
        self.query_one(StatusBar).show(self._status())

    # -- a growing stream ------------------------------------------------------
    def refresh_stream(self) -> None:
        """Re-read the stream after new events were fed to it. At the last
        event the view follows the new ones (a tail); elsewhere it stays put
        and the status line counts what is new."""
        at_end = self.step >= self._seen
        self.index.refresh()
        grown = self.index.last - self._seen
        self._seen = self.index.last
        self.query_one(StreamList).sync()
        if at_end and not self.playing:
            self.goto(self.index.last)
        else:
            self.new_events += max(0, grown)
            self._show()

    def on_stream_grew(self, message: StreamGrew) -> None:
        self.refresh_stream()

    # -- where the next step goes ---------------------------------------------
    def _next(self) -> int | None:
        call = self.index.call(self.follow)
        if call is not None:
            return self.index.next_fragment(call, self.step)
        return self.step + 1 if self.step < self.index.last else None

    def _previous(self) -> int | None:
        call = self.index.call(self.follow)
        if call is not None:
            return self.index.previous_fragment(call, self.step)
        return self.step - 1 if self.step > 0 else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """None greys an action out in the footer and the palette: it cannot
        be done at this step."""
        possible = {
            "step_next": lambda: self._next() is not None,
            "step_prev": lambda: self._previous() is not None,
            "step_first": lambda: self.step > 0,
            "step_last": lambda: self.step < self.index.last,
            "next_diagnostic": lambda: self.index.next_diagnostic(self.step) is not None,
            "previous_diagnostic": lambda: self.index.previous_diagnostic(self.step) is not None,
            "play": lambda: self.playing or self._next() is not None,
            "faster": lambda: self.speed < SPEEDS[-1],
            "slower": lambda: self.speed > SPEEDS[0],
            "follow_call": lambda: self.selected is not None and self.follow != self.selected,
            "follow_all": lambda: self.follow is not None,
            "copy_arguments": self._can_copy_arguments,
            "copy_raw": lambda: self.selected is not None,
            "copy_message": lambda: bool(self.index.calls or self.stream.reassembler.choices),
            "show_history": lambda: bool(self.index.calls),
            "show_tools": lambda: self.index.fit is not None,
            "show_raw": lambda: self.index.last >= 0,
            "jump": lambda: self.index.last > 0,
        }.get(action)
        if possible is None:
            return True
        return True if possible() else None

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
        self.goto(0)

    def action_step_last(self) -> None:
        self.goto(self.index.last)

    def action_goto(self, step: int) -> None:
        self.goto(step)

    def action_next_diagnostic(self) -> None:
        target = self.index.next_diagnostic(self.step)
        if target is not None:
            self.goto(target)

    def action_previous_diagnostic(self) -> None:
        target = self.index.previous_diagnostic(self.step)
        if target is not None:
            self.goto(target)

    def action_jump(self) -> None:
        def jumped(step: int | None) -> None:
            if step is not None:
                self.goto(step)

        self.push_screen(JumpScreen(self.index.last), jumped)

    # -- playing -------------------------------------------------------------------
    def action_play(self) -> None:
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
        clipboard.copy(self, clipboard.pretty_json(result.arguments), what)

    def action_copy_raw(self) -> None:
        call = self.index.call(self.selected)
        if call is None:
            return
        text = call.text[: call.length_at(self.step)]
        what = f"raw arguments of #{self.index.position[call.seq]} {call.name_at(self.step)}"
        clipboard.copy(self, text, what)

    def action_copy_message(self) -> None:
        text, notes = clipboard.message_for_history(self.stream)
        if text is None:
            self.notify("No assistant text and no tool call to send back.", severity="warning")
            return
        clipboard.copy(self, text, "the assistant message (whole stream)")
        for note in notes:
            self.notify(note, title="History note", severity="warning", timeout=8)

    # -- screens ------------------------------------------------------------------------
    def action_show_history(self) -> None:
        self.push_screen(HistoryScreen(self.stream))

    def action_show_tools(self) -> None:
        if self.index.fit is not None:
            self.push_screen(ToolsScreen(self.index.fit.tools))

    def show_chunking(self) -> None:
        self.push_screen(ChunkingScreen(self.stream))

    def action_show_raw(self) -> None:
        self.push_screen(RawEventScreen(self.index, self.step))

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
        """The help screen shows the keys as bound now (after a keymap)."""
        keys: dict[str, list[str]] = {}
        for key, active in self.screen.active_bindings.items():
            binding = active.binding
            if binding.id:
                keys.setdefault(binding.id, []).append(key)
        defaults = {b.id: b.key.split(",") for b in BINDINGS}
        shown: dict[str, list[str]] = {}
        for id_, found in keys.items():
            order = defaults.get(id_, [])
            found.sort(key=lambda k: order.index(k) if k in order else len(order))
            shown[id_] = [self.get_key_display(Binding(k, "")) for k in found]
        self.push_screen(HelpScreen(shown, BINDINGS))
