"""Component styles read once per theme, not once per line.

``get_component_rich_style`` walks the styles each call; the stream list asks
for a dozen per row. The mixin keeps what it read until the styles change.
"""

from __future__ import annotations

from rich.style import Style


class ComponentStyles:
    """Mixin for widgets with ``COMPONENT_CLASSES`` named ``<PREFIX>--<name>``."""

    STYLE_PREFIX = ""

    def _style(self, name: str) -> Style:
        cache: dict[str, Style] | None = self.__dict__.get("_style_cache")
        if cache is None:
            cache = self.__dict__["_style_cache"] = {}
        style = cache.get(name)
        if style is None:
            style = self.get_component_rich_style(  # type: ignore[attr-defined]
                f"{self.STYLE_PREFIX}--{name}", partial=True
            )
            cache[name] = style
        return style

    def notify_style_update(self) -> None:
        self.__dict__.pop("_style_cache", None)
        super().notify_style_update()  # type: ignore[misc]
