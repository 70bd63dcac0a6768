"""Framing: bytes in, events out (SSE, NDJSON, JSON, HAR, fraglens recordings).

Sans-I/O: every reader takes bytes its caller read; nothing here opens files
or sockets. ``read_stream`` detects the framing; ``SSEDecoder`` reads a live
stream incrementally; ``recording`` and ``har`` hold the container formats.
"""

from .detect import read_stream
from .events import DecoderMisuse, Framed, FrameTooLarge, FramingError, FramingProblem, RawEvent
from .sse import SSEDecoder

__all__ = [
    "DecoderMisuse",
    "FrameTooLarge",
    "Framed",
    "FramingError",
    "FramingProblem",
    "RawEvent",
    "SSEDecoder",
    "read_stream",
]
