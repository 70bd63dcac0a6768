"""Copying: OSC 52 through the terminal (works over SSH), and the system
clipboard through pyperclip when there is one. Both are tried; the
notification says which reached where.

Terminals cap what one OSC 52 sequence may carry (tmux drops anything past
about 100 KB; others truncate or ignore it) and never say so: a larger text is
not sent that way and never reported as copied there. When no system
clipboard takes it either, it is written to a file, and the notification
gives the path.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from textual.app import App

from ..engine.plural import counted
from ..history.build import assistant_message, build_history
from ..reading.stream import Stream
from ..redact import Fingerprints, Secrets
from ..report.document import build_report

#: base64 bytes one OSC 52 sequence may carry through tmux and most terminals
OSC52_LIMIT = 100_000


def osc52_size(text: str) -> int:
    """Bytes of the base64 payload OSC 52 would send for ``text``."""
    return (len(text.encode("utf-8")) + 2) // 3 * 4


def system_copy(text: str) -> str | None:
    """Copy with pyperclip; None on success, else why not (in a few words,
    cut at a word, never inside one)."""
    try:
        import pyperclip

        pyperclip.copy(text)
    except Exception as exc:  # pyperclip raises its own and OS errors alike
        reason = str(exc).split("\n")[0] or type(exc).__name__
        return textwrap.shorten(reason, 80, placeholder=" …")
    return None


def save_to_file(text: str, what: str) -> Path:
    """Write ``text`` to a file only this user can read, under the temporary
    directory; its path is what the user gets instead of a clipboard."""
    folder = Path(tempfile.gettempdir()) / "fraglens"
    folder.mkdir(mode=0o700, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", what).strip("-")[:40] or "copy"
    fd, name = tempfile.mkstemp(prefix=f"{slug}-", suffix=".txt", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return Path(name)


def copy(app: App, text: str, what: str, secrets: Secrets | Fingerprints | None = None) -> None:
    """Copy ``text`` everywhere we can and say where it went; ``secrets``: the
    stream's credentials, scrubbed out (the arguments may join a key's pieces)."""
    if secrets:
        text = secrets.scrub_value(text)
    fits = osc52_size(text) <= OSC52_LIMIT
    if fits:
        app.copy_to_clipboard(text)  # OSC 52; also sets app.clipboard
    failed = system_copy(text)
    size = counted(len(text), "char")
    title = f"Copied {what}"
    if failed is None:
        where = "system clipboard and terminal (OSC 52)" if fits else (
            "system clipboard (too large for the terminal's OSC 52)")
        app.notify(f"{size} → {where}", title=title)
    elif fits:
        app.notify(
            f"{size} → terminal (OSC 52) only; no system clipboard here ({failed})", title=title
        )
    else:
        try:
            path = save_to_file(text, what)
        except OSError as exc:
            app.notify(
                f"{size}: too large for the terminal (OSC 52), no system clipboard here "
                f"({failed}), and no file could be written ({exc.strerror or exc}).",
                title=f"Could not copy {what}", severity="error", timeout=10,
            )
            return
        app.notify(
            f"{size}: too large for the terminal (OSC 52) and no system clipboard here; "
            f"written to {path}",
            title=f"Saved {what} to a file", severity="warning", timeout=12,
        )


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def message_for_history(stream: Stream) -> tuple[str | None, list[str]]:
    """The assistant turn with its tool calls in the stream's API shape (OpenAI
    chat, or Anthropic ``tool_use`` blocks), as pretty JSON, and the notes on
    what departs from the wire. None when there is nothing to send back."""
    report = build_report(stream)
    message = assistant_message(report)
    notes = build_history(report)["notes"]
    return (None if message is None else pretty_json(message)), notes
