"""Copying: OSC 52 through the terminal (works over SSH), and the system
clipboard through pyperclip when there is one. Both are tried; the
notification says which reached where."""

from __future__ import annotations

import json
from typing import Any

from textual.app import App

from ..history.build import assistant_message, build_history
from ..report import build_report
from ..stream import Stream


def system_copy(text: str) -> str | None:
    """Copy with pyperclip; None on success, else why not (in a few words)."""
    try:
        import pyperclip

        pyperclip.copy(text)
    except Exception as exc:  # pyperclip raises its own and OS errors alike
        reason = str(exc).split("\n")[0] or type(exc).__name__
        return reason[:80]
    return None


def copy(app: App, text: str, what: str) -> None:
    """Copy ``text`` everywhere we can and say where it went."""
    app.copy_to_clipboard(text)  # OSC 52; also sets app.clipboard
    failed = system_copy(text)
    size = f"{len(text):,} chars"
    if failed is None:
        app.notify(f"{size} → system clipboard and terminal (OSC 52)", title=f"Copied {what}")
    else:
        app.notify(
            f"{size} → terminal (OSC 52) only; no system clipboard here ({failed})",
            title=f"Copied {what}",
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
