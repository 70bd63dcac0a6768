"""The command palette (ctrl+p): every key's action by name ("step: next
diagnostic", "copy: assistant message"), the views with no key of their own
("view: chunking profile"), each diagnostic (to find it, and its code to
explain), and each call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .keys import BINDINGS, palette_title

if TYPE_CHECKING:
    from .app import FraglensApp

#: diagnostics offered by name, so that a noisy stream does not flood the palette
PALETTE_DIAGNOSTICS = 200


class FraglensCommands(Provider):
    def _commands(self) -> Iterator[tuple[str, str, Callable]]:
        app: FraglensApp = self.app  # type: ignore[assignment]
        for binding in BINDINGS:
            # greyed-out actions (check_action -> None) are left out, like the footer dims them
            if app.check_action(binding.action, ()):
                yield (
                    palette_title(binding),
                    binding.tooltip,
                    partial(app.run_action, binding.action),
                )
        yield (
            "view: chunking profile",
            "How the tool calls were cut into fragments: sizes, cuts inside strings…",
            app.show_chunking,
        )
        index = app.index
        for position, call in enumerate(index.calls):
            title = f"call: select #{position} {call.name or '(no name)'}"
            yield (
                title,
                f"choice {call.choice}, events {call.first_event}–{call.last_event}",
                (partial(app.select_call, call.seq)),
            )
        diagnostics = index.diagnostics_at(None)
        found = [(d, d.event) for d in diagnostics if d.event is not None]
        for d, event in found[:PALETTE_DIAGNOSTICS]:
            yield f"find: {d.code} at event {event}", d.message, partial(app.goto, event)
        for code in dict.fromkeys(d.code for d in diagnostics):
            yield (
                f"explain: {code}",
                "what it means and what to do",
                partial(app.run_action, f"explain({code!r})"),
            )

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
