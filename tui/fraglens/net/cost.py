"""Token usage as the stream reported it, and what the call cost at the user's prices.

Providers name the same two numbers differently (``prompt_tokens`` /
``input_tokens`` / ``promptTokenCount``...). Prices are per million tokens, as
every price list states them; ``markup`` multiplies the total, for aggregators
that bill the official price times a factor. Cached-input discounts are not
modelled: the cost is what uncached tokens at the given prices would cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Prices", "Tokens", "cost", "tokens"]

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


@dataclass(frozen=True)
class Prices:
    """Per million tokens; ``markup`` multiplies the total (1.3 = official price x 1.3)."""

    input: float
    output: float
    markup: float = 1.0


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


def cost(used: Tokens | None, prices: Prices | None) -> float | None:
    """In the prices' currency; None until the stream reported usage."""
    if used is None or prices is None:
        return None
    total = (used.input or 0) * prices.input + (used.output or 0) * prices.output
    return total / 1_000_000 * prices.markup
