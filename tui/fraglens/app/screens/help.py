"""``?``: the keys of the screen it was pressed on, and what that screen shows.

The keys are read from the screen's active bindings, the table its footer (or
key bar) is drawn from, as bound now (after a keymap): a key the screen does
not offer is not listed, so nothing reads "(unbound)". Each screen says what
it shows in ``ABOUT`` (a few lines: a name, then what it means), and keys that
are no binding of ours (a list's arrow keys, a click) in ``ABOUT_KEYS``; the
three panes' text is here, as the debugger's own screen has no class of its
own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ..keys import PANE_KEYS, SECTIONS

#: (name, what it says): the debugger's three panes
PANES = [
    (
        "Stream",
        "Every event as it arrived: number, time (when the recording has times), type, "
        "then which call it fed (#0, #1…; #0+2 is #0 and two more) and what it fed: "
        "a new call's name and id, "
        'the fragment as a JSON string (+"{\\"city\\": \\"Li"), the assistant\'s text. An event '
        "that fed nothing shows its chunk on one line, repeated keys elided ({…,); x shows "
        "every chunk so. ▶ marks the current event; ● ▲ ✖ mark an info, warning or error "
        "diagnostic.",
    ),
    (
        "Buffers",
        "One card per tool call: its index as the wire numbers it (a content block "
        "for Anthropic and Bedrock, where a text block before it counts too; an "
        "output item for the Responses API), its id (or the one fraglens made up "
        "when none came), its argument text as it stood after the current "
        "event, the bytes this event added highlighted (+N now), fragment and char "
        "counts, and the JSON scanner's state: valid (a prefix of some valid JSON) with "
        "where it stands and the nesting depth, complete, or invalid from a char. "
        "▶ marks the selected call: c, r and f act on it.",
    ),
    (
        "Parse",
        "Each call's verdict once it is finished: ok, empty, repaired, truncated, "
        "invalid or aborted, the parsed value, and for a repair what changed, with the "
        "raw and repaired text side by side. Below: the diagnostics up to the current "
        "event; click e12 to go to event 12, click a code (or press e) for what it means "
        "and what to do, the text `fraglens explain CODE` prints.",
    ),
    (
        "A step",
        "is one event. The panes show the state after it, exactly as it was then: "
        "n and p step, ] goes to the next diagnostic, f steps through one call only.",
    ),
]

#: a binding id's first part -> the heading its keys are listed under
HEADINGS = {
    **SECTIONS,
    "flows": "Flows",
    "proxy": "Flows",
    "compare": "Backends",
    "live": "Live call",
}


def screen_keys(
    active: dict[str, ActiveBinding],
    display: Callable[[str], str],
    tooltips: dict[str, str] | None = None,
) -> list[tuple[str, str, str]]:
    """(heading, keys, what they do) for every binding of ours the screen offers,
    the keys of one binding id together, headings in the order they first come
    (the focused widget's, the screen's, then the app's). ``tooltips``: binding
    id -> what it does, for a pane's copy of an app key that shadows the app's
    own (home in the Stream pane)."""
    keys: dict[str, list[str]] = {}
    first: dict[str, Binding] = {}
    for key, active_binding in active.items():
        binding = active_binding.binding
        if binding.id is None:  # Textual's own (tab, ctrl+c…): the same on every screen
            continue
        keys.setdefault(binding.id, []).append(key)
        known = first.get(binding.id)
        if known is None or (binding.tooltip and not known.tooltip):
            # a pane's copy of an app key (right in the Stream pane) has no tooltip
            first[binding.id] = binding
    # the screen's own keys first, then the app's in its table's order (a pane's
    # copies of app keys would come first otherwise)
    table_order = {id_: k for k, id_ in enumerate(tooltips or {})}
    ordered = sorted(keys, key=lambda i: table_order.get(i, -1))
    by_heading: dict[str, list[tuple[str, str, str]]] = {}
    for id_ in ordered:
        found = keys[id_]
        binding = first[id_]
        # the keys in the order the binding lists them ("n,right": n first)
        order = binding.key.split(",")
        found.sort(key=lambda k: order.index(k) if k in order else len(order))
        prefix = id_.split(".")[0]
        heading = HEADINGS.get(prefix, prefix.replace("-", " ").capitalize())
        what = binding.tooltip or (tooltips or {}).get(id_) or binding.description
        by_heading.setdefault(heading, []).append(
            (heading, "  ".join(display(k) for k in found), what)
        )
    return [row for rows in by_heading.values() for row in rows]


def screen_help(screen: Screen) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """What ``screen`` shows and the keys that are no binding: its ``ABOUT`` and
    ``ABOUT_KEYS``, the debugger's panes for the debugger's own screen."""
    about = getattr(screen, "ABOUT", None)
    extra = getattr(screen, "ABOUT_KEYS", None)
    if about is None and not isinstance(screen, ModalScreen):
        return PANES, PANE_KEYS
    return list(about or []), list(extra or [])


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss(None)", "Close", id="help.close"),
    ]

    def __init__(
        self,
        title: str,
        about: Sequence[tuple[str, str]],
        keys: Sequence[tuple[str, str, str]],
        extra: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        """``about``: (name, what it says) lines; ``keys``: (heading, keys, what
        they do) from the screen's bindings; ``extra``: (where, keys, what) for
        keys that are no binding."""
        super().__init__()
        self.title_text = title
        self.about = about
        self.keys = keys
        self.extra = extra

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = self.title_text
            box.border_subtitle = "esc closes"
            if self.about:
                yield Static(self._about(), id="help-panes")
            yield Static(self._keys(), id="help-keys")

    def _about(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(ratio=1)
        for name, what in self.about:
            table.add_row(name, what)
        return table

    def _keys(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(ratio=1)
        for rows in (self.keys, self.extra):
            heading = None
            for head, keys, what in rows:
                table.add_row(head if head != heading else "", keys, what)
                heading = head
        return table
