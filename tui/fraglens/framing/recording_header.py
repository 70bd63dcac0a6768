"""Is this a fraglens recording? Told from its first line alone.

Apart from ``recording.py`` so that an NDJSON capture, which opens with ``{``
too, need not import the recordings' reader (URLs, headers, the redaction)
to be told it is none; ``detect`` and ``recording`` both ask here.
"""

from __future__ import annotations

import json
import re

_FIRST_LINE = re.compile(rb"\s*([^\n]*)")
#: how every recording a fraglens writer made starts (its header's first key)
WRITTEN_START = b'{"fraglens"'


def _first_line(data: bytes) -> bytes:
    match = _FIRST_LINE.match(data)
    return match.group(1) if match else b""


def is_recording(data: bytes) -> bool:
    """Does ``data`` start like a fraglens recording (even one cut off in its
    header)?"""
    first = _first_line(data)
    if first.startswith(WRITTEN_START):
        return True
    if not first.startswith(b"{") or b'"fraglens"' not in first:
        return False
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(header, dict) and header.get("fraglens") == "recording"
