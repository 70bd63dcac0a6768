"""SIGTERM (``kill``, systemd, a pane manager) and SIGHUP (the terminal closed) end
the app the way ``q`` does: the terminal restored (alternate screen left, mouse
reporting off), a live call cancelled and its recording ended, the proxy stopped
and its recordings closed; the exit status is 128 + the signal's number.

The app runs for real, in a pseudo-terminal that is its controlling terminal, as
from a shell; the test reads what it writes to the terminal. The last test runs
it in-process: the handlers are the app's only while it runs.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from fraglens.framing.events import FramingError
from fraglens.framing.recording import to_json_lines
from fraglens.net.serve import ServerHandle, bind
from fraglens.reading.capture import load_stream

from .conftest import PATIENCE, ROOT, SAMPLES
from .test_proxy import KEY, MESSAGES
from .test_proxy_serve import CHAT, events_in, needs_proc, running, sample, the_child
from .test_proxy_ui import HeldUpstream

termios = pytest.importorskip("termios", reason="no pseudo-terminals on this platform")
fcntl = pytest.importorskip("fcntl", reason="no pseudo-terminals on this platform")
pytest.importorskip("fraglens.app.app")
if not hasattr(os, "openpty") or not hasattr(termios, "TIOCSCTTY"):
    pytest.skip("no pseudo-terminals on this platform", allow_module_level=True)

from fraglens.app.app import FraglensApp  # noqa: E402

ROWS, COLS = 36, 160
SEED = SAMPLES / "seed_interleaved_two_calls.sse"

ALT_SCREEN_ON, ALT_SCREEN_OFF = b"\x1b[?1049h", b"\x1b[?1049l"
MOUSE_ON, MOUSE_OFF = b"\x1b[?1000h", b"\x1b[?1000l"
#: a cursor move to row;column, as every frame the app draws has
CURSOR_TO = re.compile(rb"\x1b\[\d+;\d+H")

# fraglens as a shell starts it: the pty is the session's controlling terminal
# (closing it hangs the app up), SIGTERM and SIGHUP at their defaults whatever
# this test run inherited (nohup ignores SIGHUP, and the app leaves an ignored
# signal ignored). With FRAGLENS_TEST_STDERR, Python's own error output (a
# traceback) goes to that file; the screen still goes to the terminal.
AS_FROM_A_SHELL = """\
import fcntl, os, signal, sys, termios
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
for sig in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_DFL)
if os.environ.get("FRAGLENS_TEST_STDERR"):
    sys.stderr = open(os.environ["FRAGLENS_TEST_STDERR"], "w", buffering=1)
from fraglens.cli import main
raise SystemExit(main())
"""


class PtyApp:
    """``fraglens ARGS`` in a pseudo-terminal of ROWS x COLS, TERM=xterm-256color.
    ``output`` is everything it wrote to the terminal; ``after`` what it wrote
    from the moment the test sent a signal or a key."""

    def __init__(self, *args: str, stderr_to: Path | None = None) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("COLUMNS", "LINES", "NO_COLOR") and not k.startswith("TEXTUAL")
        }
        env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT / "tui"), OPENAI_API_KEY=KEY)
        if stderr_to is not None:
            env["FRAGLENS_TEST_STDERR"] = str(stderr_to)
        self.master, follower = os.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", AS_FROM_A_SHELL, *args],
                stdin=follower,
                stdout=follower,
                stderr=follower,
                cwd=ROOT,
                env=env,
                start_new_session=True,
            )
        finally:
            os.close(follower)  # the app's copies only: EOF once it has exited
        self.output = bytearray()
        self.mark = 0
        self.eof = False

    @property
    def after(self) -> bytes:
        return bytes(self.output[self.mark :])

    def _read(self, wait: float) -> None:
        if self.eof or not select.select([self.master], [], [], wait)[0]:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: no one holds the terminal any more
            data = b""
        if data:
            self.output += data
        else:
            self.eof = True

    def read_until(self, done: Callable[[bytes], bool], what: str) -> None:
        """Read what the app draws (it must be read, or the app blocks on a full
        terminal) until ``done(output)``. PATIENCE bounds a hang only."""
        deadline = _deadline()
        while not done(bytes(self.output)):
            if self.eof:
                raise AssertionError(f"the app ended before {what}: {self.tail()!r}")
            if _past(deadline):
                raise AssertionError(f"never happened: {what}: {self.tail()!r}")
            self._read(0.2)

    def drawn(self, text: bytes) -> None:
        """The first screen is up: the alternate screen entered, then ``text`` drawn."""

        def up(out: bytes) -> bool:
            start = out.find(ALT_SCREEN_ON)
            return start >= 0 and text in out[start:]

        self.read_until(up, f"the first screen with {text!r}")

    def send_signal(self, sig: int) -> None:
        self.mark = len(self.output)
        self.proc.send_signal(sig)

    def press(self, key: bytes) -> None:
        self.mark = len(self.output)
        os.write(self.master, key)

    def finish(self) -> int:
        """Read to the end of the output, then the exit status."""
        deadline = _deadline()
        while not self.eof and not _past(deadline):
            self._read(0.2)
        assert self.eof, f"the app never closed the terminal: {self.tail()!r}"
        return self.proc.wait(PATIENCE)

    def hang_up(self) -> int:
        """Close the terminal, as closing its window does; then the exit status."""
        os.close(self.master)
        self.master = -1
        return self.proc.wait(PATIENCE)

    def tail(self) -> bytes:
        return bytes(self.output[-600:])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


def _deadline() -> float:
    return time.monotonic() + PATIENCE


def _past(deadline: float) -> bool:
    return time.monotonic() > deadline


@contextmanager
def fraglens(*args: str, stderr_to: Path | None = None) -> Iterator[PtyApp]:
    app = PtyApp(*args, stderr_to=stderr_to)
    try:
        yield app
    finally:
        app.close()


def assert_terminal_restored(app: PtyApp) -> None:
    out = bytes(app.output)
    assert MOUSE_ON in out[: app.mark], "the app never turned mouse reporting on"
    assert ALT_SCREEN_OFF in app.after, f"the alternate screen was not left: {app.tail()!r}"
    assert MOUSE_OFF in app.after, f"mouse reporting was not turned off: {app.tail()!r}"
    # the restore comes last: no frame is drawn over the shell's screen after it
    moves = [m.start() for m in CURSOR_TO.finditer(app.after)]
    assert not moves or moves[-1] < app.after.rfind(ALT_SCREEN_OFF), app.tail()
    assert b"Traceback" not in out, out.decode("utf-8", "replace")


def recording_lines(path: Path) -> list[dict]:
    """A recording being written, as what its reader gets of it, in version 1's
    lines (version 3's last reads have no time yet, a line may be half written)."""
    try:
        data = path.read_bytes()
        return [json.loads(line) for line in to_json_lines(data).splitlines()]
    except (FileNotFoundError, FramingError):  # not yet made, or its header half written
        return []


def has_chunks(path: Path) -> bool:
    return any("b" in line or "b64" in line for line in recording_lines(path))


EXIT = {signal.SIGTERM: 143, signal.SIGHUP: 129}
BY_SIGNAL = pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])


# -- a capture --------------------------------------------------------------------------


@BY_SIGNAL
def test_a_signal_restores_the_terminal_and_exits_128_plus_its_number(sig):
    if not SEED.exists():
        pytest.skip(f"{SEED.name} is not among the bundled samples")
    with fraglens(str(SEED.relative_to(ROOT))) as app:
        app.drawn(b"end of stream")  # the last row of the Stream pane
        app.send_signal(sig)
        code = app.finish()
        assert code == EXIT[sig], app.tail()
        assert_terminal_restored(app)


# -- a live call: cancelled, its recording ended, as on q --------------------------------


@contextmanager
def live_call_in_flight(tmp_path: Path, stderr_to: Path | None = None):
    """``fraglens live --record`` in the app, half the stream arrived and recorded,
    the rest held back by the upstream: the call is surely in flight."""
    upstream = HeldUpstream(sample(CHAT), held=events_in(CHAT) // 2)
    record = tmp_path / "call.jsonl"
    with (
        ServerHandle(upstream, bind("127.0.0.1", 0)).start() as up,
        upstream.released_at_exit(),
        fraglens(
            "live", "--url", up.url + "/v1", "--model", "gpt-4o", "--prompt", "hi",
            "--record", str(record), stderr_to=stderr_to,
        ) as app,
    ):  # fmt: skip
        app.read_until(lambda out: has_chunks(record), "the first chunks in the recording")
        app.drawn(b"Quit")  # the key line: the whole screen is up
        assert "end" not in recording_lines(record)[-1]
        yield app, record


@pytest.mark.parametrize(
    "how, status",
    [("q", 0), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["q", "TERM", "HUP"],
)
def test_a_live_call_is_cancelled_and_its_recording_ended_as_on_q(tmp_path, how, status):
    with live_call_in_flight(tmp_path) as (app, record):
        if how == "q":
            app.press(b"q")
        else:
            app.send_signal(how)
        code = app.finish()
        assert code == status, app.tail()
        assert_terminal_restored(app)
    *_, last = recording_lines(record)
    assert last.get("end") == "cancelled", last


def test_closing_the_terminal_ends_the_app_with_129(tmp_path):
    """The window closed for real: the kernel hangs the app up (SIGHUP, then
    SIGCONT) and every write to the terminal fails from then on, so Textual's
    writer thread dies. The app still gets out, with 129 and nothing on stderr
    (it used to block for good on its way out, its output queue full)."""
    if not SEED.exists():
        pytest.skip(f"{SEED.name} is not among the bundled samples")
    errors = tmp_path / "stderr.txt"
    with fraglens(str(SEED.relative_to(ROOT)), stderr_to=errors) as app:
        app.drawn(b"end of stream")
        code = app.hang_up()
    assert (code, errors.read_text()) == (129, "")


def test_closing_the_terminal_cancels_a_live_call_and_ends_its_recording(tmp_path):
    errors = tmp_path / "stderr.txt"
    with live_call_in_flight(tmp_path, stderr_to=errors) as (app, record):
        code = app.hang_up()
    assert (code, errors.read_text()) == (129, "")
    *_, last = recording_lines(record)
    assert last.get("end") == "cancelled", last


# -- the proxy: stopped, its recordings closed, as on q ----------------------------------

LISTENING = re.compile(rb"Listening on (http://127\.0\.0\.1:\d+)")


@needs_proc
@BY_SIGNAL
def test_the_proxy_app_stops_the_proxy_and_closes_its_recordings(tmp_path, sig):
    upstream = HeldUpstream(sample(CHAT), held=events_in(CHAT) // 2)
    with (
        ServerHandle(upstream, bind("127.0.0.1", 0)).start() as up,
        upstream.released_at_exit(),
        fraglens(
            "proxy", "--upstream", up.url + "/v1", "--port", "0",
            "--record-dir", str(tmp_path),
        ) as app,
    ):  # fmt: skip
        app.read_until(lambda out: LISTENING.search(out) is not None, "the Flows screen")
        app.drawn(b"Quit")
        match = LISTENING.search(bytes(app.output))
        assert match is not None
        base = match[1].decode() + "/v1"
        child, born = the_child(app.proc)
        body = {"model": "gpt-4o", "messages": MESSAGES, "stream": True}
        headers = {"authorization": f"Bearer {KEY}"}
        with httpx.stream(
            "POST", base + "/chat/completions", json=body, headers=headers, timeout=PATIENCE
        ) as response:
            assert next(response.iter_raw())  # the first half has come through
            app.read_until(
                lambda out: any(has_chunks(p) for p in tmp_path.iterdir()),
                "the flow's first chunks in its recording",
            )
            app.send_signal(sig)
            code = app.finish()
        still_running = running(child, born)  # the moment the proxy has exited
        assert code == EXIT[sig], app.tail()
        assert_terminal_restored(app)
    assert not still_running, "the forwarding child outlived the proxy"
    (recording,) = tmp_path.iterdir()
    *_, last = recording_lines(recording)
    assert "end" in last, "the recording was closed with its end"


# -- in-process: the handlers are the app's only while it runs -----------------------------


async def test_the_handlers_are_the_apps_while_it_runs_and_given_back_after():
    if not SEED.exists():
        pytest.skip(f"{SEED.name} is not among the bundled samples")
    seen: list[int] = []

    def ours(signum, frame) -> None:  # catches SIGTERM if the app did not
        seen.append(signum)

    before_term = signal.signal(signal.SIGTERM, ours)
    before_hup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        stream, _ = load_stream(str(SEED))
        app = FraglensApp(stream)
        async with app.run_test() as pilot:
            assert signal.getsignal(signal.SIGTERM) is not ours
            # ignored on purpose (as under nohup): it stays ignored
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            signal.raise_signal(signal.SIGTERM)
            for _ in range(int(PATIENCE / 0.01)):
                if app.signal_status is not None:
                    break
                await pilot.pause(0.01)
        assert app.signal_status == 143
        assert app.return_code == 143
        assert seen == []
        assert signal.getsignal(signal.SIGTERM) is ours
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before_term)
        signal.signal(signal.SIGHUP, before_hup)
