"""Widgets rendered once per change, then shown line by line.

Textual measures a widget's height by rendering it and then renders it again
to paint it; a card that changes on every step paid that twice per step. These
widgets render their content into strips when it changes (or their width
does) and hand them out through the Line API.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget


class Prerendered(Widget):
    """Subclasses implement ``content(width)`` and call ``update_content()``
    when what it returns changed."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._strips: list[Strip] = []
        self._width = 0

    def content(self, width: int) -> RenderableType:
        raise NotImplementedError

    def update_content(self) -> None:
        """Render again; ask for a layout pass only if the height changed."""
        before = len(self._strips)
        self._render_strips(self._width or self.content_size.width)
        self.refresh(layout=len(self._strips) != before)

    def _render_strips(self, width: int) -> None:
        self._width = width
        if width <= 0:
            self._strips = []
            return
        console = self.app.console
        style = self.visual_style.rich_style
        options = console.options.update_width(width).update(height=None)
        lines = console.render_lines(self.content(width), options, style=style, pad=True)
        self._strips = [Strip(line, width) for line in lines]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._width or not self._strips:
            self._render_strips(width)
        return len(self._strips)

    def render_line(self, y: int) -> Strip:
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self._width, self.visual_style.rich_style)

    def on_resize(self) -> None:
        if self.content_size.width != self._width:
            self._width = 0
            self.update_content()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:  # a new theme or focus: the base style changed
            self._width = 0
            self.refresh(layout=True)
