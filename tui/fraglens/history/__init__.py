"""Tool-call history: the messages that go back to the model after a streamed
turn, and a check that a conversation's calls and results pair up.

A view, like ``check`` and the app: it reads the ``check --json`` report and
conversations as plain JSON values, and imports nothing of the engine.
"""

from .build import SHAPES, assistant_message, build_history, default_shape
from .errors import HistoryError
from .validate import (
    EXIT_UNREADABLE,
    PROBLEM_CODES,
    Problem,
    check_conversation,
    exit_code,
    format_problems,
    load_conversation,
    problems_json,
)

__all__ = [
    "EXIT_UNREADABLE",
    "PROBLEM_CODES",
    "SHAPES",
    "HistoryError",
    "Problem",
    "assistant_message",
    "build_history",
    "check_conversation",
    "default_shape",
    "exit_code",
    "format_problems",
    "load_conversation",
    "problems_json",
]
