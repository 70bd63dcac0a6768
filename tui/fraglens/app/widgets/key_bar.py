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
        """The keys in order; when the line is too short, keys are left out from
        the end of the list, but the last one (quit) and ``^p`` always stay."""
        key, description = self._style("key"), self._style("description")
        disabled = self._style("disabled")
        parts: list[Text] = []
        for i, binding in enumerate(self.bindings):
            enabled = self.possible[i] if i < len(self.possible) else True
            click = Style(meta={"@click": f"app.{binding.action}"})
            part = Text(end="")
            part.append(
                f" {self.app.get_key_display(binding)}", (key if enabled else disabled) + click
            )
            part.append(f" {binding.description} ", (description if enabled else disabled) + click)
            parts.append(part)
        palette = Text.assemble((" ^p", key), (" palette", description), end="")
        kept = parts[-1:] + [palette]
        room = (self.size.width or 10_000) - sum(p.cell_len for p in kept)
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        for part in parts[:-1]:
            if part.cell_len > room:
                break
            out.append_text(part)
            room -= part.cell_len
        for part in kept:
            out.append_text(part)
        return out
