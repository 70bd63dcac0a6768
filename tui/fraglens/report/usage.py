"""Token usage as a stream reports it, whatever the wire format calls the two numbers.

Providers name them differently (``prompt_tokens`` / ``input_tokens`` /
``promptTokenCount``...); ``live``'s cost line and the stream timing's tokens
per second both read them here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Tokens", "tokens"]

_INPUT_KEYS = ("prompt_tokens", "input_tokens", "promptTokenCount")
_OUTPUT_KEYS = ("completion_tokens", "output_tokens", "candidatesTokenCount")


@dataclass(frozen=True)
class Tokens:
    input: int | None
    output: int | None

    def __str__(self) -> str:
        def n(v: int | None) -> str:
            return "?" if v is None else f"{v:,}"

        return f"{n(self.input)} in / {n(self.output)} out"


def _first_int(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    # Cohere nests them: {"billed_units": {"input_tokens": ...}, "tokens": {...}}
    for nested in ("billed_units", "tokens"):
        inner = usage.get(nested)
        if isinstance(inner, Mapping):
            found = _first_int(inner, keys)
            if found is not None:
                return found
    return None


def tokens(usage: Mapping[str, Any] | None) -> Tokens | None:
    if not isinstance(usage, Mapping):
        return None
    found = Tokens(_first_int(usage, _INPUT_KEYS), _first_int(usage, _OUTPUT_KEYS))
    return None if found.input is None and found.output is None else found
