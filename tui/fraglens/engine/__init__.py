"""The reassembly engine: sans-I/O, free of Textual and httpx.

Fed decoded events, it keeps per-call append-only buffers, an incremental JSON
scanner per call and the diagnostics, and finalizes each call strictly first,
then with an honest repair.

The public surface is below; the modules behind it are the engine's own and
may change shape: ``fragments`` (what adapters hand in), ``reassembler`` (the
state machine), ``calls`` (per-call buffers), ``slots`` (which call a fragment
belongs to), ``scanner`` (incremental JSON), ``finalize`` (strict, then honest
repair), ``leaks`` (tool calls that leaked into the text: the markup families),
``diagnostics`` (the code table) and ``explanations`` (its reference, kept
out of this surface: only ``explain`` and the app's ``e`` need it, and
``check`` should not pay for importing it).
"""

from .calls import Call
from .diagnostics import CODES, SEVERITY_RANK, Diagnostic, Severity
from .finalize import OK_STATUSES, Result
from .fragments import (
    ArgsFinal,
    ArgsParsed,
    Finish,
    Notice,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    Usage,
)
from .reassembler import DEFAULT_MAX_ARG_BYTES, Reassembler
from .scanner import Scanner, ScanState

__all__ = [
    "CODES",
    "DEFAULT_MAX_ARG_BYTES",
    "OK_STATUSES",
    "SEVERITY_RANK",
    "ArgsFinal",
    "ArgsParsed",
    "Call",
    "Diagnostic",
    "Finish",
    "Notice",
    "Op",
    "Reassembler",
    "Result",
    "ScanState",
    "Scanner",
    "Severity",
    "StreamError",
    "Terminal",
    "TextDelta",
    "ToolDelta",
    "Usage",
]
