"""What an exchange cost: its usage (``usage.py``) at a model's prices.

The prices come from pydantic's ``genai-prices`` (its bundled snapshot: it
is never updated over the network here), for the model the stream or the
request names and the provider the wire format implies (``--provider`` to
say another); a user's prices (``--prices FILE``, ``--price-in`` …) replace
the table's for the models they name. ``markup`` multiplies the total, for
an aggregator that bills the official price times a factor.

Each part (uncached input, cache reads, cache writes, output, reasoning) is
the model's unit price for it times its count, the way ``genai-prices``
computes (a tiered price goes by the whole input, and crossing a tier
prices every token at the tier's rate), and the total is their sum; the
tests hold it to ``genai_prices.calc_price`` on the same usage.

Importing ``genai-prices`` costs more than checking a small capture (its
table is a megabyte of Python, and it loads an HTTP client for its optional
updates), so a model's resolved unit prices are kept in a small cache file
(``$XDG_CACHE_HOME/fraglens/prices.json``), keyed by the table's version,
the day, the provider and the model (and the minute, for a model whose
price changes with the hour): the table is loaded once a day per model,
and never when a capture has no usage; a process reads the file once per
model. The price is the one in force when the stream says it was made (its
chunks' ``created``), else now. A model the table does not know, or a
stream without usage, gives no cost and a note saying why: never a guess.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord
from .usage import NO_USAGE, Usage

if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "FORMAT_PROVIDERS", "PriceOptions", "UserPrices", "cost_of", "cost_text", "table_version",
    "warm",
]

#: the wire format -> the provider whose prices apply, where the format says
#: it (an OpenAI-compatible stream may come from any backend: the table finds
#: the provider from the model's name)
FORMAT_PROVIDERS: dict[str, str | None] = {
    "openai-chat": None,
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "cohere": "cohere",
    "dashscope": None,
    "bedrock-converse": "aws",
    "bedrock-invoke": "aws",
    "ollama": None,
    "ai-sdk": None,
}
#: a sum of money is given to this many decimal places (a millionth of a cent is 1e-8)
_PLACES = Decimal("1e-10")
_MILLION = Decimal(1_000_000)
#: the table's unit prices a part is priced at (the cache ones fall back to input)
_UNITS = ("input_mtok", "cache_read_mtok", "cache_write_mtok", "output_mtok")
#: resolved models kept in the cache file at most
_CACHE_ENTRIES = 512
#: what this process resolved, by cache file and key: the file is read once
#: per model, not once per capture (a batch prices thousands of captures of a
#: few models; reading the file each time was 6% of ``check --jsonl``'s time)
_RESOLVED: dict[tuple[str, str], dict[str, Any]] = {}


class UserPrices(FrozenRecord):
    """Per million tokens, in the user's currency; the cache prices default
    to the input price (no discount the user did not state)."""

    __slots__ = ("input", "output", "cached_input", "cache_write", "currency")
    input: Final[float]
    output: Final[float]
    cached_input: Final[float | None]
    cache_write: Final[float | None]
    currency: Final[str]

    def __init__(
        self, input: float, output: float, cached_input: float | None = None,
        cache_write: float | None = None, currency: str = "USD",
    ) -> None:
        self.input = input
        self.output = output
        self.cached_input = cached_input
        self.cache_write = cache_write
        self.currency = currency


class PriceOptions(FrozenRecord):
    __slots__ = ("provider", "user", "markup")
    #: the provider to price as (``--provider``), else the one the format implies
    provider: Final[str | None]
    #: prices per model (``--prices FILE``); the key ``*`` is any model
    user: Final[Mapping[str, UserPrices]]
    markup: Final[float]

    def __init__(
        self, provider: str | None = None, user: Mapping[str, UserPrices] | None = None,
        markup: float = 1.0,
    ) -> None:
        self.provider = provider
        self.user = {} if user is None else user
        self.markup = markup


@lru_cache(maxsize=1)
def table_version() -> str | None:
    """``genai-prices X.Y.Z``, or None when it is not installed; asked once.

    Read from the package's ``.dist-info`` folder, the first on ``sys.path``
    as ``importlib.metadata`` finds it, without importing that: it brings
    ``email``, ``zipfile``, ``csv`` and a socket module, about 15 ms, which
    was more than the rest of checking a capture that reported usage."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a folder gone
            continue
        for name in names:
            if name.lower().startswith("genai_prices-") and name.endswith(".dist-info"):
                version = _metadata_version(os.path.join(entry, name, "METADATA"))
                if version is not None:
                    return f"genai-prices {version}"
    # installed some other way (an egg), or not at all: the standard reading
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return f"genai-prices {installed('genai-prices')}"
    except PackageNotFoundError:  # not installed (it needs Python 3.11)
        return None


def _metadata_version(path: str) -> str | None:
    """The ``Version:`` of a package's ``METADATA`` file (in its header, which
    ends at the first blank line)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    return None
                if line.startswith("Version:"):
                    return line[len("Version:") :].strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _money(value: Decimal) -> float:
    return float(value.quantize(_PLACES))


def _uncached(usage: Usage) -> int:
    return max(0, (usage.input or 0) - (usage.cached or 0) - (usage.cache_write or 0))


def _visible(usage: Usage) -> int:
    return max(0, (usage.output or 0) - (usage.reasoning or 0))


def _document(parts: dict[str, Decimal], markup: float, currency: str, source: str,
              **extra: Any) -> dict[str, Any]:
    m = Decimal(str(markup))
    return {
        "total": _money(sum(parts.values(), Decimal(0)) * m),
        "currency": currency,
        "markup": markup,
        "source": source,
        "parts": {name: _money(value * m) for name, value in parts.items()},
        **extra,
    }


def _user_cost(usage: Usage, prices: UserPrices, markup: float) -> dict[str, Any]:
    def per(value: float) -> Decimal:
        return Decimal(str(value)) / _MILLION

    cached = prices.input if prices.cached_input is None else prices.cached_input
    write = prices.input if prices.cache_write is None else prices.cache_write
    parts = {
        "input": _uncached(usage) * per(prices.input),
        "cached": (usage.cached or 0) * per(cached),
        "cache_write": (usage.cache_write or 0) * per(write),
        "output": _visible(usage) * per(prices.output),
        "reasoning": (usage.reasoning or 0) * per(prices.output),
    }
    return _document(parts, markup, prices.currency, "user")


# -- the table's prices ------------------------------------------------------------

#: a unit price: per million tokens, or tiers ``{"base": x, "tiers": [[start, x]...]}``
_Price = Decimal | dict[str, Any]


def _unit(price: _Price | None, count: int, whole_input: int) -> Decimal:
    """``count`` tokens at ``price``: as ``genai_prices.types.calc_unit_price``
    reads a price (a tier crossed by the whole input prices every token)."""
    if price is None or not count:
        return Decimal(0)
    if isinstance(price, dict):
        rate = Decimal(price["base"])
        for start, tier_rate in reversed(price["tiers"]):
            if whole_input > start:
                rate = Decimal(tier_rate)
                break
    else:
        rate = price
    return rate * count / _MILLION


def _cache_path() -> str:
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "fraglens", "prices.json")


def _cache_read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            cache = json.load(f)
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def _cache_write(path: str, cache: dict[str, Any]) -> None:
    """Best effort: a cache that cannot be written only costs the next run time."""
    if len(cache) > _CACHE_ENTRIES:
        cache = dict(list(cache.items())[-_CACHE_ENTRIES:])
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{os.path.splitext(path)[0]}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(cache))
        os.replace(tmp, path)
    except OSError:
        pass


def _plain(price: Any) -> str | dict[str, Any] | None:
    """A table price as JSON: a decimal string, or its tiers."""
    if price is None:
        return None
    if hasattr(price, "tiers"):
        return {"base": str(price.base), "tiers": [[t.start, str(t.price)] for t in price.tiers]}
    return str(price)


def _resolve(model: str, provider: str | None, at: float | None = None) -> dict[str, Any]:
    """The table's entry for ``model``: ``{"model", "provider", "units"}``, or
    ``{"unknown": reason}``, at the time ``at`` (seconds since the epoch; None:
    now); from the cache when it has it. A model whose price depends on the
    time of day (``by_hour``: DeepSeek's off-peak hours) is resolved, and
    cached, by the minute."""
    version = table_version() or ""
    day = time.strftime("%Y-%m-%d", time.localtime() if at is None else time.gmtime(at))
    key = "|".join((version, day, provider or "", model))
    known = _known(key, model, provider, at)
    if known.get("by_hour"):
        minute = time.strftime("%H:%MZ", time.gmtime(at))
        known = _known(f"{key}|{minute}", model, provider, at)
    return dict(known)


def _known(key: str, model: str, provider: str | None, at: float | None) -> dict[str, Any]:
    path = _cache_path()
    known = _RESOLVED.get((path, key))
    if known is None:
        known = _resolve_from(path, key, model, provider, at)
        if len(_RESOLVED) >= _CACHE_ENTRIES:
            _RESOLVED.clear()
        _RESOLVED[path, key] = known
    return known


def _resolve_from(path: str, key: str, model: str, provider: str | None,
                  at: float | None = None) -> dict[str, Any]:
    """``_resolve`` from the cache file at ``path``, else from the table (then cached there)."""
    cache = _cache_read(path)
    if key in cache:
        return dict(cache[key])
    from datetime import datetime, timezone

    from genai_prices import Usage as TableUsage
    from genai_prices import calc_price

    when = None if at is None else datetime.fromtimestamp(at, timezone.utc)
    try:
        calc = calc_price(TableUsage(input_tokens=1, output_tokens=1), model_ref=model,
                          provider_id=provider, genai_request_timestamp=when)
    except (LookupError, ValueError) as exc:
        found: dict[str, Any] = {"unknown": str(exc)}
    else:
        units = {name: _plain(getattr(calc.model_price, name, None)) for name in _UNITS}
        found = {"model": calc.model.id, "provider": calc.provider.id,
                 "units": {k: v for k, v in units.items() if v is not None}}
        if _by_hour(calc.model.prices):
            found["by_hour"] = True
    cache[key] = found
    _cache_write(path, cache)
    return found


def _by_hour(prices: Any) -> bool:
    """Whether a model's table prices change with the time of day."""
    return isinstance(prices, list) and any(
        type(getattr(p, "constraint", None)).__name__ == "TimeOfDateConstraint" for p in prices)


def _table_cost(usage: Usage, model: str, provider: str | None,
                markup: float, made: float | None = None
                ) -> tuple[dict[str, Any] | None, str | None]:
    source = table_version()
    if source is None:
        return None, "no cost: genai-prices is not installed (it needs Python 3.11 or later)"
    entry = _resolve(model, provider, made)
    if "unknown" in entry:
        where = f" from {provider}" if provider else ""
        return None, f"no cost: no price for the model {model!r}{where} in {source}"
    units: dict[str, _Price] = {
        name: (Decimal(v) if isinstance(v, str) else v) for name, v in entry["units"].items()
    }
    whole = usage.input or 0

    def at(name: str, fallback: str, count: int) -> Decimal:
        return _unit(units.get(name, units.get(fallback)), count, whole)

    parts = {
        "input": at("input_mtok", "input_mtok", _uncached(usage)),
        "cached": at("cache_read_mtok", "input_mtok", usage.cached or 0),
        "cache_write": at("cache_write_mtok", "input_mtok", usage.cache_write or 0),
        "output": at("output_mtok", "output_mtok", _visible(usage)),
        "reasoning": at("output_mtok", "output_mtok", usage.reasoning or 0),
    }
    return _document(parts, markup, "USD", source, model=entry["model"],
                     provider=entry["provider"]), None


def warm(model: str | None, fmt: str | None, opts: PriceOptions) -> None:
    """Resolve ``model``'s prices now (the table loads, unless today's cache
    has them), so that pricing it later costs nothing: ``compare`` does this
    before its clocks start, as loading the table would stall every stream
    that shares the event loop."""
    if model is None or opts.user.get(model) or opts.user.get("*") or table_version() is None:
        return
    if fmt == "ollama" and opts.provider is None:
        return
    provider = opts.provider if opts.provider is not None else FORMAT_PROVIDERS.get(fmt or "")
    _resolve(model, provider)


def cost_of(usage: Usage | None, model: str | None, fmt: str | None,
            opts: PriceOptions, at: float | None = None
            ) -> tuple[dict[str, Any] | None, str | None]:
    """The cost document (``check --json``'s ``cost``) and None, or None and
    the reason there is no cost. ``at``: when the exchange was made, in
    seconds since the epoch, if the stream says (None: now)."""
    if usage is None:
        return None, NO_USAGE
    user = opts.user.get(model or "") or opts.user.get("*")
    if user is not None:
        return _user_cost(usage, user, opts.markup), None
    if model is None:
        return None, "no cost: neither the stream nor the request names the model"
    if fmt == "ollama" and opts.provider is None:
        return None, ("no cost: a local model (Ollama) has no price list; "
                      "give --price-in/--price-out")
    provider = opts.provider if opts.provider is not None else FORMAT_PROVIDERS.get(fmt or "")
    return _table_cost(usage, model, provider, opts.markup, at)


def cost_text(cost: Mapping[str, Any] | None, note: str | None = None) -> str:
    """The cost in a few words, the same wherever it is shown: ``0.0377 USD
    (genai-prices 0.2.3: gpt-4o at openai, markup 1.3)``; else the note."""
    if not cost:
        return note or "no cost"
    how = [cost["source"]]
    if cost.get("model"):
        how[0] += f": {cost['model']} at {cost.get('provider')}"
    if cost.get("markup") != 1:
        how.append(f"markup {cost['markup']}")
    return f"{cost['total']:.6f} {cost['currency']} ({', '.join(how)})"
