"""Border titles that repaint only when they change.

Setting ``border_title`` or ``border_subtitle`` repaints the whole widget even
when the text is the same; panes set theirs on every step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a mixin for widgets: typed as one, without being one at run time
    from textual.widget import Widget

    _Base = Widget
else:
    _Base = object


class Titled(_Base):
    """Mixin for widgets: ``set_titles`` remembers what it set last."""

    _titles: tuple[str | None, str | None] = (None, None)

    def set_titles(self, title: str | None = None, subtitle: str | None = None) -> None:
        old_title, old_subtitle = self._titles
        if title is not None and title != old_title:
            self.border_title = title
            old_title = title
        if subtitle is not None and subtitle != old_subtitle:
            self.border_subtitle = subtitle
            old_subtitle = subtitle
        self._titles = (old_title, old_subtitle)
