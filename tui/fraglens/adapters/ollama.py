"""Ollama's native ``/api/chat`` stream: one JSON object per line (NDJSON).

Every line is a ``message`` piece: ``content`` (answer text), ``thinking``
(reasoning, with ``think`` on) and ``tool_calls``, where each call arrives
whole - ``function.name``, ``function.arguments`` as a JSON object (not a
string: that is the native shape, not ``args-object``) and ``function.index`` - usually
in one line, or one line per call. The last line has ``done: true``, a
``done_reason`` (``stop``, ``length``...) and the counts (``prompt_eval_count``,
``eval_count``, durations in nanoseconds), read as usage. A failure mid-stream
is a line ``{"error": "..."}``. Source: Ollama's API reference (``docs/api.md``,
"Generate a chat completion").

Ollama has no tool-call ``done_reason``: a turn that called tools ends with
``stop``, passed on as ``tool_calls`` (raw ``stop``), as the Gemini adapter
does with ``STOP``. Calls without ``function.index`` are numbered in arrival
order; the wire gives no id in most versions (then one is synthesized).
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    NO_OBJECT,
    Finish,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from ..engine.plain_json import compact_text
from .base import as_dict, as_int, as_list, as_str, dump, error_message

#: the counts of the last line, read as usage
USAGE_KEYS = (
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


class OllamaAdapter:
    """``/api/chat`` lines."""

    name = "ollama"
    ends_with = "terminal"
    indexes_calls = True
    continuation = None  # no shortcut: every chunk goes through feed
    #: where ``text_continuation`` reads the piece of each channel (ndjson_runs.py)
    text_paths = {"content": ("message", "content"), "reasoning": ("message", "thinking")}
    #: top-level fields this adapter never reads: the server's clock stamps
    #: each line, so lines that only add text still differ in it (ndjson_runs.py)
    unread_fields = ("created_at",)

    def __init__(self) -> None:
        self._calls = 0  # calls so far: the index of one that names none
        #: the payload being fed holds no float (``feed_plain``)
        self._plain = False

    @staticmethod
    def text_continuation(payload: Any) -> tuple[int, str, str] | None:
        """The commonest line, one that only adds text, as ``(choice, channel,
        piece)``; None for any other. ``{"message": {"role": "assistant",
        "content": piece}, "done": false}`` and any other top-level fields but
        ``error``, or the same with ``"content": ""`` and ``"thinking": piece``
        (reasoning). The piece is read as any string (an empty one adds
        nothing), and the line changes no state of the adapter: ``feed`` reads
        every such line through here."""
        if type(payload) is not dict or payload.get("done") is not False or "error" in payload:
            return None
        message = payload.get("message")
        if type(message) is not dict or message.get("role") != "assistant":
            return None
        content = message.get("content")
        if type(content) is not str:
            return None
        if len(message) == 2:
            return 0, "content", content
        thinking = message.get("thinking")
        if len(message) == 3 and content == "" and type(thinking) is str:
            return 0, "reasoning", thinking
        return None

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        found = self.text_continuation(payload)
        if found is not None:
            choice, channel, text = found
            return [TextDelta(choice, text, channel)] if text else []
        message = as_dict(payload.get("message"))
        ops: list[Op] = []
        thinking = message.get("thinking")
        if isinstance(thinking, str) and thinking:
            ops.append(TextDelta(0, thinking, "reasoning"))
        content = message.get("content")
        if isinstance(content, str) and content:
            ops.append(TextDelta(0, content))
        for entry in as_list(message.get("tool_calls")):
            if isinstance(entry, dict):
                ops.append(self._call(entry))
        err = payload.get("error")
        if err not in (None, "", {}):
            ops.append(StreamError(error_message(err, "error")))
        if payload.get("done") is True:
            usage = {k: payload[k] for k in USAGE_KEYS if k in payload}
            if usage:
                ops.append(Usage(usage))
            raw = payload.get("done_reason")
            raw = raw if isinstance(raw, str) and raw else "stop"
            reason = normalize_finish(raw)
            if reason == "stop" and self._calls:
                reason = "tool_calls"  # Ollama has no tool-call done_reason
            ops.append(Finish(0, reason, raw))
            ops.append(Terminal("done"))
        return ops

    def feed_plain(self, payload: Any, event: str | None = None) -> list[Op]:
        """``feed`` of a payload known to hold no float (a large one, which the
        stream read with ``strict_loads``): its arguments objects are written
        as text by msgspec, which writes what ``dump`` does several times as
        fast (engine/plain_json.py)."""
        self._plain = True
        try:
            return self.feed(payload, event)
        finally:
            self._plain = False

    def _call(self, entry: dict[str, Any]) -> ToolDelta:
        fn = as_dict(entry.get("function"))
        wire = as_int(fn.get("index"))
        if wire is None:
            wire = as_int(entry.get("index"))
        index = self._calls if wire is None else wire
        self._calls += 1
        raw = fn.get("arguments")
        value: Any = NO_OBJECT
        if raw is None:
            args = None  # no arguments key: the engine reports args-empty
        elif isinstance(raw, str):
            args = raw  # an older server or a relay that sends text
        else:
            args = compact_text(raw) if self._plain else None
            if args is None:  # a float, or a lone surrogate msgspec cannot write
                args = dump(raw)
            if self._plain:
                value = raw  # no float: the text reads back as this very value
        return ToolDelta(
            choice=0, index=index, id=as_str(entry.get("id")), name=as_str(fn.get("name")),
            args=args, args_value=value,
        )
