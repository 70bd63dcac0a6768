"""Token usage as a stream reports it, read into one shape whatever the wire
format calls its numbers.

Providers count differently, not only name differently, and a bill depends
on it:

- OpenAI (Chat Completions and Responses), DeepSeek, xAI, DashScope and the
  Realtime API count cached input *inside* the input (``prompt_tokens`` with
  ``prompt_tokens_details.cached_tokens``, ``input_tokens`` with
  ``input_tokens_details.cached_tokens``, ``prompt_cache_hit_tokens``), and
  reasoning inside the output (``completion_tokens_details.reasoning_tokens``);
- Anthropic counts cache reads and writes *outside* ``input_tokens``
  (``cache_read_input_tokens``, ``cache_creation_input_tokens``), and so does
  Bedrock (``cacheReadInputTokens``, ``cacheWriteInputTokens``);
- Gemini counts the model's thoughts *outside* ``candidatesTokenCount``
  (``thoughtsTokenCount``) and cached input inside ``promptTokenCount``
  (``cachedContentTokenCount``); xAI counts reasoning outside
  ``completion_tokens`` under OpenAI's field names, which only its
  ``total_tokens`` tells (prompt + completion + reasoning).

``Usage`` says every number the one way: ``input`` is every input token,
cached ones included; ``cached`` and ``cache_write`` are the parts of it read
from and written to the provider's cache; ``output`` is every output token,
reasoning included; ``reasoning`` the part of it spent thinking; the audio
counts where the API gives them. What the stream said is kept beside it
(``reported``). The reading goes by the fields present, not by the format,
so a gateway that relays one provider's usage under another's API reads
right too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord

if TYPE_CHECKING:
    from typing import Final

#: the cost note of a stream that reported no usage: nothing to price (here,
#: so that a report of such a stream does not load the price table's module)
NO_USAGE = "no cost: the stream reported no usage"

__all__ = ["Tokens", "Usage", "read_usage", "tokens", "usage_text"]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _at(usage: Mapping[str, Any], *path: str) -> int | None:
    node: Any = usage
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return _int(node)


def _first(usage: Mapping[str, Any], *paths: tuple[str, ...]) -> int | None:
    for path in paths:
        found = _at(usage, *path)
        if found is not None:
            return found
    return None


def _sum(*parts: int | None) -> int | None:
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


class Usage(FrozenRecord):
    __slots__ = (
        "input",
        "cached",
        "cache_write",
        "output",
        "reasoning",
        "audio_input",
        "audio_output",
        "reported",
    )
    #: every input token, cached ones included
    input: Final[int | None]
    #: of ``input``, read from the provider's cache (billed at its discount)
    cached: Final[int | None]
    #: of ``input``, written to the provider's cache (billed at its own rate)
    cache_write: Final[int | None]
    #: every output token, reasoning included
    output: Final[int | None]
    #: of ``output``, spent reasoning or thinking
    reasoning: Final[int | None]
    audio_input: Final[int | None]
    audio_output: Final[int | None]
    #: the usage as the stream reported it
    reported: Final[Mapping[str, Any] | None]

    def __init__(
        self, input: int | None, cached: int | None, cache_write: int | None, output: int | None,
        reasoning: int | None, audio_input: int | None = None, audio_output: int | None = None,
        reported: Mapping[str, Any] | None = None,
    ) -> None:
        self.input = input
        self.cached = cached
        self.cache_write = cache_write
        self.output = output
        self.reasoning = reasoning
        self.audio_input = audio_input
        self.audio_output = audio_output
        self.reported = reported

    def as_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "cached": self.cached,
            "cache_write": self.cache_write,
            "output": self.output,
            "reasoning": self.reasoning,
            "audio_input": self.audio_input,
            "audio_output": self.audio_output,
            "reported": dict(self.reported) if self.reported is not None else None,
        }


def _cohere(usage: Mapping[str, Any]) -> Mapping[str, Any]:
    """Cohere nests its counts: billed units first (what is charged), then tokens."""
    for nested in ("billed_units", "tokens"):
        inner = usage.get(nested)
        if isinstance(inner, Mapping) and ("input_tokens" in inner or "output_tokens" in inner):
            return inner
    return usage


def _reasoning_outside(u: Mapping[str, Any], prompt: int | None, completion: int | None,
                       reasoning: int) -> bool:
    """Reasoning counted beside the completion, not in it: xAI's total is
    prompt + completion + reasoning, where OpenAI's is prompt + completion."""
    total = _at(u, "total_tokens")
    return (total is not None and prompt is not None and completion is not None
            and total == prompt + completion + reasoning)


def read_usage(reported: Mapping[str, Any] | None) -> Usage | None:
    """The usage a stream reported (its last record: every adapter keeps the
    running totals there), in one shape; None when it reported none."""
    if not isinstance(reported, Mapping):
        return None
    u = _cohere(reported)
    # cache reads and writes counted outside the input (Anthropic, Bedrock)
    outside_read = _first(u, ("cache_read_input_tokens",), ("cacheReadInputTokens",),
                          ("cacheReadInputTokenCount",))
    outside_write = _first(u, ("cache_creation_input_tokens",), ("cacheWriteInputTokens",),
                           ("cacheWriteInputTokenCount",))
    # cache reads counted inside it (OpenAI, DeepSeek, Gemini, the Realtime API, the AI SDK)
    inside_read = _first(
        u,
        ("prompt_tokens_details", "cached_tokens"),
        ("input_tokens_details", "cached_tokens"),
        ("input_token_details", "cached_tokens"),
        ("prompt_cache_hit_tokens",),
        ("cachedContentTokenCount",),
        ("cachedInputTokens",),
    )
    base_input = _first(u, ("prompt_tokens",), ("input_tokens",), ("promptTokenCount",),
                        ("inputTokens",), ("inputTokenCount",), ("prompt_eval_count",))
    if outside_read is not None or outside_write is not None:
        total_input = _sum(base_input, outside_read, outside_write)
        cached, cache_write = outside_read, outside_write
    else:
        total_input, cached, cache_write = base_input, inside_read, None
    candidates = _first(u, ("completion_tokens",), ("output_tokens",), ("candidatesTokenCount",),
                        ("outputTokens",), ("outputTokenCount",), ("eval_count",))
    thoughts = _at(u, "thoughtsTokenCount")  # Gemini: outside the candidates
    reasoning = _first(
        u,
        ("completion_tokens_details", "reasoning_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
        ("reasoningTokens",),
    )
    if thoughts is not None:
        output = _sum(candidates, thoughts)
        reasoning = thoughts
    elif reasoning and _reasoning_outside(u, base_input, candidates, reasoning):
        output = _sum(candidates, reasoning)  # xAI: the total says so
    else:
        output = candidates
    audio_input = _first(u, ("prompt_tokens_details", "audio_tokens"),
                         ("input_token_details", "audio_tokens"))
    audio_output = _first(u, ("completion_tokens_details", "audio_tokens"),
                          ("output_token_details", "audio_tokens"))
    found = Usage(total_input, cached, cache_write, output, reasoning, audio_input, audio_output,
                  reported)
    if found.input is None and found.output is None:
        return None
    return found


class Tokens(FrozenRecord):
    """Input and output, for a line of text: ``1,204 in / 88 out``."""

    __slots__ = ("input", "output")
    input: Final[int | None]
    output: Final[int | None]

    def __init__(self, input: int | None, output: int | None) -> None:
        self.input = input
        self.output = output

    def __str__(self) -> str:
        def n(v: int | None) -> str:
            return "?" if v is None else f"{v:,}"

        return f"{n(self.input)} in / {n(self.output)} out"


def tokens(usage: Mapping[str, Any] | None) -> Tokens | None:
    """Input and output of what a stream reported (``read_usage``'s reading)."""
    found = read_usage(usage)
    return None if found is None else Tokens(found.input, found.output)


def usage_text(usage: Mapping[str, Any] | None) -> str | None:
    """``check --json``'s ``usage`` in a few words: ``12,000 in (8,000 cached)
    / 900 out (300 reasoning)``; None when none was reported."""
    if not usage:
        return None

    def n(key: str) -> str:
        value = usage.get(key)
        return "?" if value is None else f"{value:,}"

    inside = [f"{usage[k]:,} {word}" for k, word in (("cached", "cached"),
              ("cache_write", "written to the cache"), ("audio_input", "audio")) if usage.get(k)]
    out = [f"{usage[k]:,} {word}" for k, word in (("reasoning", "reasoning"),
           ("audio_output", "audio")) if usage.get(k)]
    text = f"{n('input')} in" + (f" ({', '.join(inside)})" if inside else "")
    return text + f" / {n('output')} out" + (f" ({', '.join(out)})" if out else "")
