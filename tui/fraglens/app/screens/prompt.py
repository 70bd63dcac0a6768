"""A prompt in front of the panes (``:`` and ``/``), and the keys typed ahead of it.

A paste or a slow link can bring ``:5⏎`` in one read: the app takes every
key of it before the prompt is on screen, so the digits went to the panes and
the enter submitted an empty prompt. The app holds what comes after a key that
opens a prompt (:class:`TypeAhead`); the prompt, once on screen, types the
held text into its field (as its own keys would, restrictions included), and
an enter submits it, an escape cancels it. Whatever came after that enter
stays held until the prompt is gone, then goes to the app as keys: ``:5⏎n``
jumps, then steps.
"""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Input

__all__ = ["PromptScreen", "TypeAhead", "keys_of"]

#: the actions that open a prompt
PROMPT_ACTIONS = frozenset({"jump", "search"})

#: control characters a paste may hold, as the keys a terminal sends for them
_CONTROL = {"\r": "enter", "\n": "enter", "\t": "tab", "\x1b": "escape", "\x7f": "backspace"}


def keys_of(text: str) -> list[events.Key]:
    """The keys that type ``text``."""
    from textual.keys import _character_to_key

    return [events.Key(_CONTROL.get(c) or _character_to_key(c), c) for c in text]


class TypeAhead:
    """The keys held while a prompt opens, or after it was answered (None:
    nothing is held, keys go where they go)."""

    def __init__(self) -> None:
        self.held: list[events.Key] | None = None

    def hold(self, app: App, event: events.Event) -> bool:
        """True when ``event`` is a key that came while a prompt opens (kept for
        it), or a paste that starts with a key that opens one (typed, as keys)."""
        if isinstance(event, events.Paste) and not event.is_forwarded:
            if event.text and self._opens_prompt(app, keys_of(event.text[0])[0].key):
                for key in keys_of(event.text):
                    app.post_message(key)
                return True
            return False
        if not isinstance(event, events.Key) or event.is_forwarded:
            return False
        if self.held is not None:
            self.held.append(event)
            return True
        if self._opens_prompt(app, event.key):
            self.held = []
        return False

    @staticmethod
    def _opens_prompt(app: App, key: str) -> bool:
        if isinstance(app.focused, Input):
            return False  # typed into a field
        active = app.screen.active_bindings.get(key)
        return (
            active is not None and active.enabled and active.binding.action in PROMPT_ACTIONS
        )

    def take(self) -> list[events.Key]:
        """The held keys, for the prompt; nothing is held any more."""
        held, self.held = self.held or [], None
        return held

    def release(self, app: App) -> None:
        """Send the held keys to the app again (the prompt is gone)."""
        for key in self.take():
            app.post_message(events.Key(key.key, key.character))


class PromptScreen(ModalScreen):
    """A prompt with one field: the keys typed ahead of it go into it."""

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.focus()
        type_ahead = getattr(self.app, "type_ahead", None)
        if not isinstance(type_ahead, TypeAhead):
            return
        held = type_ahead.take()
        for i, key in enumerate(held):
            if key.key in ("enter", "escape"):
                # the rest waits, held, until the prompt is gone
                type_ahead.held = held[i + 1 :]
                if key.key == "enter":
                    self.call_after_refresh(field.action_submit)
                else:
                    self.dismiss(None)
                return
            if key.key == "backspace":
                field.action_delete_left()
            elif key.is_printable and key.character:
                field.insert_text_at_cursor(key.character)

    def on_unmount(self) -> None:
        type_ahead = getattr(self.app, "type_ahead", None)
        if isinstance(type_ahead, TypeAhead):
            self.app.call_later(type_ahead.release, self.app)
