"""Text made safe for the cell grid: emoji sequences that terminals disagree on.

A skin-tone modifier (👍🏽), a flag (two regional indicators, 🇨🇳) or a
zero-width-joined family (👨‍👩‍👧) is one glyph two cells wide in some
terminals and two or more glyphs in others (tmux, older emulators). Rich
counts the first way; when the terminal draws the second, every cell after it
shifts and the pane's right border breaks. Shown here, each of those code
points gets a stand-in whose width no terminal disputes: a modifier its
Fitzpatrick type as a full-width digit (👍４), a regional indicator its
letter in full width (ＣＮ), a joiner ``+``. One character for one, so every
offset into the text (the bytes an event added, a bad character) stays right.
The text copied or exported is never changed.
"""

from __future__ import annotations

_STAND_INS: dict[int, str] = {0x200D: "+"}
# U+1F3FB is Fitzpatrick type 1-2, then 3, 4, 5, 6
_STAND_INS.update({0x1F3FB + i: chr(0xFF12 + i) for i in range(5)})
# regional indicators A-Z -> full-width A-Z
_STAND_INS.update({0x1F1E6 + i: chr(0xFF21 + i) for i in range(26)})


def cell_safe(text: str) -> str:
    """``text`` with the disputed code points replaced, one for one."""
    return text.translate(_STAND_INS)
