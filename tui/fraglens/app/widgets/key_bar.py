"""The key line at the bottom: the main keys, greyed out when they cannot act.

Textual's ``Footer`` rebuilds a widget per key whenever an action's
availability changes, which at the first and last event costs more than the
step itself; this is one line of text, redrawn only when something changed.
Keys are clickable.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget

from .styled import ComponentStyles


class KeyBar(ComponentStyles, Widget):
    STYLE_PREFIX = "key-bar"

    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description", "key-bar--disabled"}

    def __init__(self, bindings: list[Binding], order: tuple[str, ...], **kwargs) -> None:
        """Shows the ``bindings`` whose id is in ``order``, in that order."""
        super().__init__(**kwargs)
        by_id = {b.id: b for b in bindings if isinstance(b, Binding)}
        self.bindings = [by_id[i] for i in order if i in by_id]
        self.possible: tuple[bool | None, ...] = ()

    def show(self, possible: tuple[bool | None, ...]) -> None:
        """``possible``: ``check_action`` for each binding shown, in order."""
        if possible != self.possible:
            self.possible = possible
            self.refresh()

    def render(self) -> Text:
        key, description = self._style("key"), self._style("description")
        disabled = self._style("disabled")
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        for i, binding in enumerate(self.bindings):
            enabled = self.possible[i] if i < len(self.possible) else True
            click = Style(meta={"@click": f"app.{binding.action}"})
            out.append(
                f" {self.app.get_key_display(binding)}", (key if enabled else disabled) + click
            )
            out.append(f" {binding.description} ", (description if enabled else disabled) + click)
        out.append(" ^p", key)
        out.append(" palette", description)
        return out
