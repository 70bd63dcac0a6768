"""What a call cost at the user's prices, from the usage the stream reported
(read by ``fraglens.report.usage``). Prices are per million tokens, as
every price list states them; ``markup`` multiplies the total, for aggregators
that bill the official price times a factor. Cached-input discounts are not
modelled: the cost is what uncached tokens at the given prices would cost.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..report.usage import Tokens, tokens

__all__ = ["Prices", "Tokens", "cost", "tokens"]


@dataclass(frozen=True)
class Prices:
    """Per million tokens; ``markup`` multiplies the total (1.3 = official price x 1.3)."""

    input: float
    output: float
    markup: float = 1.0


def cost(used: Tokens | None, prices: Prices | None) -> float | None:
    """In the prices' currency; None until the stream reported usage."""
    if used is None or prices is None:
        return None
    total = (used.input or 0) * prices.input + (used.output or 0) * prices.output
    return total / 1_000_000 * prices.markup
