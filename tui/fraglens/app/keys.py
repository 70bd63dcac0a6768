"""Every key of the debugger, in one table.

Each binding has an ``id`` ("section.name") so users can remap it with a
Textual keymap, a short description for the footer and a tooltip; the help
screen and the command palette ("step: next diagnostic") read the same table,
so the three can never disagree.
"""

from __future__ import annotations

from textual.binding import Binding

SECTIONS = {
    "step": "Stepping",
    "find": "Finding",
    "play": "Playing",
    "call": "Calls",
    "copy": "Copying",
    "view": "Viewing",
    "app": "App",
}

# fmt: off
#: (keys, action, id, short description, palette title, tooltip, key shown)
_TABLE: list[tuple[str, str, str, str, str, str, str | None]] = [
    ("n,right", "step_next", "step.next", "Next", "next event",
     "Show the state after the next event", "n"),
    ("p,left", "step_prev", "step.previous", "Prev", "previous event",
     "Show the state after the previous event", "p"),
    ("home", "step_first", "step.first", "First", "first event",
     "Go to the first event", None),
    ("end", "step_last", "step.last", "Last", "last event",
     "Go to the last event", None),
    ("colon", "jump", "step.jump", "Jump", "jump to an event number…",
     "Go to an event by its number", ":"),
    ("right_square_bracket", "next_diagnostic", "step.next-diagnostic", "Next diag",
     "next diagnostic", "Go to the next diagnostic, one at a time, and select its call", "]"),
    ("left_square_bracket", "previous_diagnostic", "step.previous-diagnostic", "Prev diag",
     "previous diagnostic", "Go to the previous diagnostic and select its call", "["),
    ("slash", "search", "find.search", "Find", "find text or a pattern…",
     "Find a text or pattern in the events and in each call's arguments", "/"),
    ("full_stop", "next_match", "find.next", "Next match", "next match",
     "Go to the next event with a match of the last search", "."),
    ("comma", "previous_match", "find.previous", "Prev match", "previous match",
     "Go to the previous event with a match of the last search", ","),
    ("space", "play", "play.toggle", "Play", "play / pause",
     "Play or pause, at the recording's pace when it has times", None),
    ("plus,equals_sign", "faster", "play.faster", "Faster", "faster",
     "Play twice as fast", "+"),
    ("minus", "slower", "play.slower", "Slower", "slower",
     "Play half as fast", "-"),
    ("f", "follow_call", "call.follow", "Follow", "follow the selected call only",
     "Step through the selected call's fragments only", None),
    ("F", "follow_all", "call.follow-all", "All calls", "follow all calls",
     "Step through every event again", "F"),
    ("c", "copy_arguments", "copy.arguments", "Copy args", "arguments (parsed, pretty JSON)",
     "Copy the selected call's parsed arguments as pretty JSON", None),
    ("r", "copy_raw", "copy.raw", "Copy raw", "raw argument text",
     "Copy the selected call's argument text as received", None),
    ("m", "copy_message", "copy.message", "Copy msg", "final assistant message",
     "Copy the final assistant message with its tool calls (whole stream), for the history",
     None),
    ("enter", "show_raw", "view.raw", "Raw JSON", "raw JSON of this event",
     "Show the current event's raw JSON", None),
    ("e", "explain", "view.explain", "Explain", "explain a diagnostic",
     "What the diagnostic at this event (or the latest before it) means, and what to do", None),
    ("h", "show_history", "view.history", "History", "history to send back…",
     "The messages that go back to the model for the final calls (whole stream), and their check",
     None),
    ("v", "show_value", "view.value", "Value", "the selected call's arguments whole…",
     "Read the selected call's arguments whole, string values unescaped", None),
    ("C", "show_calls", "view.calls", "Calls", "every call, one line each…",
     "Every call on one line (verdict, size, events), usage and timing; enter goes to one",
     "C"),
    ("ampersand", "filter_rows", "view.filter", "Filter", "filter the Stream pane…",
     "Show some calls, types or diagnostics only, or hide keep-alives and usage", "&"),
    ("g", "show_naive", "view.naive", "Naive", "what a naive client would have built…",
     "The calls beside what grouping the fragments by id or by arrival would have built",
     None),
    ("x", "toggle_raw_rows", "view.raw-rows", "Raw rows", "stream rows: raw chunks / fragments",
     "Show each event's JSON in the Stream rows, or (again) the fragments it fed", None),
    ("t", "show_tools", "view.tools", "Tools", "declared tools…",
     "The tools the request declared, and each one's schema", None),
    ("b", "toggle_boundaries", "view.boundaries", "Boundaries", "fragment boundaries on / off",
     "Show or hide where each fragment ends in the buffers", None),
    ("o", "open", "app.open", "Open", "open another capture…",
     "Open another capture without quitting", None),
    ("question_mark", "help", "app.help", "Help", "keys and panes",
     "The keys of the screen you are on, and what it shows", "?"),
    ("q", "quit", "app.quit", "Quit", "quit", "Quit fraglens", None),
]
# fmt: on

#: binding id -> its command palette title, after the section
COMMANDS: dict[str, str] = {row[2]: row[4] for row in _TABLE}

#: the keys on the bottom line, most useful first (a narrow terminal cuts the end)
KEY_BAR = (
    "step.next",
    "step.previous",
    "play.toggle",
    "step.next-diagnostic",
    "app.help",
    "copy.arguments",
    "copy.message",
    "call.follow",
    "app.quit",
)

BINDINGS: list[Binding] = [
    Binding(keys, action, short, show=id_ in KEY_BAR, key_display=shown, id=id_, tooltip=tip)
    for keys, action, id_, short, _, tip, shown in _TABLE
]

#: ``?`` on a screen shown in front of the panes: that screen's keys (not on the
#: screens that ask for text, where ``?`` is typed)
HELP_BINDING = Binding(
    "question_mark", "app.help", "Help", id="app.help", tooltip="The keys of this screen"
)

#: The scrolling panes bind these keys to scrolling; inside them they keep their
#: app meaning (same ids, so a keymap moves both).
_SCROLL_KEYS = ("left", "right", "home", "end")
PANE_BINDINGS: list[Binding] = [
    Binding(key, f"app.{action}", short, show=False, id=id_)
    for keys, action, id_, short, *_ in _TABLE
    for key in keys.split(",")
    if key in _SCROLL_KEYS
]

#: keys that only act in one pane (listed on the help screen too)
PANE_KEYS = [
    ("Stream", "↑ ↓  j k", "previous / next event"),
    ("Stream", "pgup pgdn", "a page of events"),
    ("Stream", "click", "go to that event"),
    ("Buffers", "↑ ↓  j k", "select the previous / next call (c, r and f act on it)"),
    ("Buffers", "esc", "select automatically again: the call being written"),
    ("Parse", "click e12", "go to event 12"),
    ("Parse", "click a code", "what that diagnostic means (as `fraglens explain CODE` says)"),
    ("anywhere", "tab  shift+tab", "move between panes"),
    ("anywhere", "ctrl+p", "command palette: every action by name"),
]


def palette_title(binding: Binding) -> str:
    """ "step: next diagnostic": the section, then what the key does."""
    assert binding.id is not None
    return f"{binding.id.split('.')[0]}: {COMMANDS[binding.id]}"
