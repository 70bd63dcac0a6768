"""OpenAI Chat Completions, and every backend that copies it.

Each ``choices[].delta.tool_calls[]`` entry becomes one ``ToolDelta`` carrying
the wire ``index``, ``id``, ``name`` and ``arguments`` exactly as sent, in the
order sent: which call an entry belongs to is decided by the engine (the
``index-*``, ``id-*`` and ``name-*`` codes), never here. The non-streamed
``chat.completion`` body (``choices[].message``) goes through the same path;
there the array is complete, so an entry's position is its identity when it
has no ``index``.
"""

from __future__ import annotations

from typing import Any

from ..engine.fragments import (
    NO_OBJECT,
    Finish,
    Notice,
    Op,
    StreamError,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from .base import (
    Continuation,
    as_dict,
    as_int,
    as_list,
    as_str,
    error_message,
    text_of,
    tool_call_entries,
    unread,
)

#: Reasoning text goes by several names; the first non-empty one wins, so a
#: gateway that fills two of them with the same text is not shown twice.
REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_text")


def tool_delta(choice: int, entry: dict[str, Any], index: int | None) -> ToolDelta | None:
    """One ``tool_calls[]`` entry as a fragment, or None for a metadata-only entry.

    An entry with no ``id``, no name and no ``arguments`` key at all (Gemini's
    ``extra_content.thought_signature``, a bare ``{"index": 0, "type": ...}``)
    says nothing about a call and must never open one (reasoning fields are text, not calls).
    """
    fn = entry.get("function")
    fn = fn if isinstance(fn, dict) else entry  # a few relays flatten the entry
    has_args = "arguments" in fn
    cid, name = as_str(entry.get("id")), as_str(fn.get("name"))
    if cid is None and name is None and not has_args:
        return None
    raw = fn.get("arguments")
    args: str | None = None
    args_null = False
    args_obj: Any = NO_OBJECT
    if isinstance(raw, str):
        args = raw
    elif raw is None:
        args_null = has_args
    else:
        args_obj = raw  # args-object: an object (or any non-string value) instead of text
    return ToolDelta(
        choice=choice,
        index=index,
        id=cid,
        name=name,
        args=args,
        args_null=args_null,
        args_obj=args_obj,
    )


_FAST_CHOICE_KEYS = frozenset({"index", "delta", "finish_reason", "logprobs"})


def bare_continuation(payload: Any) -> Continuation | None:
    """``(choice, index, text)`` when the chunk has the shape of nearly every
    chunk of a long call — one choice whose delta is one ``tool_calls`` entry
    carrying only ``index`` and argument text — read with a handful of lookups.
    Anything else (or anything odd) is None: the full path reads it, and for
    this shape gives the same answer (a test holds the two together)."""
    if type(payload) is not dict:
        return None
    choices = payload.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict:
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or len(delta) != 1:
        return None
    calls = delta.get("tool_calls")
    if type(calls) is not list or len(calls) != 1:
        return None
    entry = calls[0]
    if type(entry) is not dict or len(entry) != 2:
        return None
    fn = entry.get("function")
    if type(fn) is not dict or len(fn) != 1:
        return None
    args = fn.get("arguments")
    index = entry.get("index")
    number = choice.get("index", 0)
    if type(args) is not str or type(index) is not int or type(number) is not int:
        return None
    if choice.get("finish_reason") is not None or not (choice.keys() <= _FAST_CHOICE_KEYS):
        return None
    if (
        payload.get("usage") is not None
        or "error" in payload
        or "prompt_filter_results" in payload
        or payload.get("object") == "error"
    ):
        return None
    return number, index, args


class OpenAIChatAdapter:
    """Chat Completions chunks (and the whole ``chat.completion`` body)."""

    name = "openai-chat"
    ends_with = "done"
    indexes_calls = True
    continuation = staticmethod(bare_continuation)
    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("choices", 0, "delta", "tool_calls", 0, "function", "arguments")
    #: top-level fields no reading of a chunk looks at: OpenAI's random-length
    #: padding of every chunk (a hole in an envelope: adapters/envelope.py)
    unread_fields = ("obfuscation",)

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        fast = bare_continuation(payload)
        if fast is None:
            return self.feed_full(payload)
        choice, index, text = fast
        return [ToolDelta(choice, index, None, None, text)]

    def feed_full(self, payload: Any) -> list[Op]:
        """Every chunk shape; ``feed`` takes a shortcut for the commonest one."""
        if not isinstance(payload, dict):
            return []
        ops: list[Op] = []
        finishes: list[Op] = []
        errors: list[Op] = []

        err = payload.get("error")
        if err not in (None, False, "", {}, []):
            # Groq's refused tool call; its json_validate_failed (a JSON answer
            # that missed its schema) carries a generation too, but no call
            refused = isinstance(err, dict) and err.get("code") == "tool_use_failed"
            generation = err.get("failed_generation") if refused else None
            errors.append(StreamError(
                error_message(err, "error"),
                generation if isinstance(generation, str) and generation else None,
            ))
        elif payload.get("object") == "error":
            errors.append(StreamError(error_message(payload, "error")))

        choices = payload.get("choices")
        for pos, choice in enumerate(as_list(choices)):
            if not isinstance(choice, dict):
                continue
            number = as_int(choice.get("index"))
            number = pos if number is None else number
            self._choice(number, choice, ops, finishes, errors)

        usage = payload.get("usage")
        has_usage = isinstance(usage, dict)
        if isinstance(choices, list) and not choices:
            if has_usage:
                ops.append(Notice("usage-only-chunk", "a chunk with choices: [] carried usage"))
            elif not errors and payload.get("prompt_filter_results"):
                # an empty chunk with no annotation either carries nothing to report
                ops.append(Notice(
                    "annotation-chunk",
                    "a chunk with choices: [] and no usage (prompt filter results)",
                ))
        elif "prompt_filter_results" in payload and not ops and not finishes:
            ops.append(Notice("annotation-chunk", "prompt filter results with no delta"))
        ops.extend(finishes)
        if isinstance(usage, dict):
            ops.append(Usage(dict(usage)))
        ops.extend(errors)
        return ops

    def _choice(
        self,
        number: int,
        choice: dict[str, Any],
        ops: list[Op],
        finishes: list[Op],
        errors: list[Op],
    ) -> None:
        message = choice.get("message")
        whole = isinstance(message, dict) and not isinstance(choice.get("delta"), dict)
        delta = as_dict(message if whole else choice.get("delta"))
        before = len(ops)

        for key in REASONING_KEYS:
            reasoning = delta.get(key)
            if isinstance(reasoning, str) and reasoning:
                ops.append(TextDelta(number, reasoning, "reasoning"))
                break
        for key in ("content", "refusal"):
            text = text_of(delta.get(key))
            if text:
                ops.append(TextDelta(number, text))
        legacy_text = choice.get("text")  # legacy completions
        if isinstance(legacy_text, str) and legacy_text:
            ops.append(TextDelta(number, legacy_text))

        calls = delta.get("tool_calls")
        for pos, entry in tool_call_entries(calls, ops):
            wire_index = entry.get("index")
            index = as_int(wire_index)
            if index is None and wire_index is not None:
                ops.append(unread(f"tool_calls[{pos}].index is not a whole number: read as "
                                  "no index", wire_index))
            if index is None and whole:
                index = pos  # a complete message: the array position is the call
            fn = entry.get("function")
            if fn is not None and not isinstance(fn, dict):
                ops.append(unread(f"tool_calls[{pos}].function is not an object: ignored", fn))
            op = tool_delta(number, entry, index)
            if op is not None:
                ops.append(op)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            # the legacy single-call form has no index: one call per choice, slot 0
            op = tool_delta(number, {"function": legacy}, 0)
            if op is not None:
                ops.append(op)

        raw = choice.get("finish_reason")
        if isinstance(raw, str) and raw and raw.lower() not in ("null", "none"):
            finishes.append(Finish(number, normalize_finish(raw), raw))
            # OpenRouter puts the error message at the top level next to this
            # finish: one error, not two
            if raw.lower() == "error" and (choice.get("error") is not None or not errors):
                errors.append(
                    StreamError(error_message(choice.get("error"), "finish_reason: error"))
                )
        elif choice.get("error") is not None:
            errors.append(StreamError(error_message(choice.get("error"), "error")))

        # an empty results object annotates nothing: a trailing chunk with an empty
        # delta is not an annotation chunk
        filtered = any(
            choice.get(key)
            for key in ("content_filter_results", "content_filter_result", "content_filter_offsets")
        )
        if filtered and len(ops) == before and raw in (None, "", "null"):
            ops.append(Notice("annotation-chunk", f"choice {number}: content filter results"))
