"""What every subcommand shares: the usage error, argument types, JSON output.

Exit codes everywhere: 0 all good, 1 read but something is wrong, 2 could not
read / bad usage: always with a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

from ..engine.plural import noun
from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from ..fit.timeout import DEFAULT_BUDGET
from ..reading.capture import LoadError, read_bytes
from ..reading.stream import FORMATS
from ..report.document import utf8_parts
from .exits import EXIT_CODES, CliError

__all__ = [
    "CliError",
    "EXIT_CODES",
    "add_otlp_options",
    "add_price_options",
    "add_schema_timeout_option",
    "price_options",
    "otlp_wanted",
    "add_stall_option",
    "add_stream_options",
    "count",
    "non_negative",
    "positive",
    "positive_count",
    "read_json",
    "schema_budget",
    "size",
    "write_json",
]

def size(text: str) -> int:
    """An argparse type: a positive byte count, ``512k``, ``4M``, ``1GiB``..."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    mult = units.get(t[-1:], 1)
    number = t[:-1] if t[-1:] in units else t
    try:
        value = float(number) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if not math.isfinite(value) or value >= 2**63:
        raise argparse.ArgumentTypeError(f"not a usable size: {text!r}")
    if int(value) <= 0:
        raise argparse.ArgumentTypeError("the size must be positive")
    return int(value)


def _number(kind: type, above_zero: bool) -> Callable[[str], Any]:
    """An argparse type: a float or int that must be > 0, or >= 0."""
    word = "a number" if kind is float else "a whole number"
    bound = "more than 0" if above_zero else "0 or more"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {word}: {text!r}") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
        if value < 0 or (above_zero and value == 0):
            raise argparse.ArgumentTypeError(f"must be {bound}")
        return value

    return parse


positive = _number(float, above_zero=True)
non_negative = _number(float, above_zero=False)
count = _number(int, above_zero=False)
positive_count = _number(int, above_zero=True)


def add_stream_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, help="force the wire format (default: detect)")
    p.add_argument(
        "--max-arg-bytes",
        type=size,
        default=DEFAULT_MAX_ARG_BYTES,
        metavar="N",
        help="stop buffering a call past this size (default 16MiB; 512k, 4M, ... accepted)",
    )


def add_stall_option(p: argparse.ArgumentParser) -> None:
    from ..report.timing import DEFAULT_STALL_MS

    p.add_argument(
        "--stall-ms",
        type=positive,
        default=DEFAULT_STALL_MS,
        metavar="MS",
        help="a gap between two events longer than this is a stall (default 1000)",
    )


def add_schema_timeout_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument(
        "--schema-timeout",
        type=non_negative,
        default=DEFAULT_BUDGET,
        metavar="S",
        help="seconds each call's check against its tool's schema may take; past it the call "
        f"is left unchecked (schema-too-slow). 0: no limit (default {DEFAULT_BUDGET:g})",
    )


def schema_budget(args: argparse.Namespace) -> float | None:
    """``--schema-timeout`` as the fit takes it: seconds, or None for no limit."""
    seconds: float = args.schema_timeout
    return seconds or None


def add_read_caps(group: argparse._ArgumentGroup, *, line: str, decoded: str) -> None:
    """``--max-line-bytes`` and ``--max-decoded-bytes``: the caps on what a
    network read decodes, spelled and defaulted once for ``live`` and ``proxy``;
    ``line`` and ``decoded`` say what each caps in that command."""
    from ..net.limits import DEFAULT_LIMITS  # not for check, which reads no network

    group.add_argument(
        "--max-line-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_line,
        metavar="N",
        help=f"{line} (default 4M)",
    )
    group.add_argument(
        "--max-decoded-bytes",
        type=size,
        default=DEFAULT_LIMITS.max_decoded,
        metavar="N",
        help=f"{decoded} (default 64M)",
    )


def write_json(doc: object, exact: Iterable[Any] = ()) -> None:
    """JSON on stdout as UTF-8, whatever the terminal's locale says: indented
    for a person at a terminal, one line for a pipe or a file (as ``gh`` does).
    ``exact``: a report's arguments known to hold no float (``exact_arguments``)."""
    sys.stdout.buffer.writelines(utf8_parts(doc, pretty=sys.stdout.isatty(), exact=exact))
    sys.stdout.flush()


def read_json(path: str, what: str) -> Any:
    """A JSON file named on the command line, or a one-line CliError."""
    try:
        data = read_bytes(path)
    except LoadError as exc:
        raise CliError(f"{what}: {exc}") from None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{what} {path}: not JSON ({exc})") from None


def add_otlp_options(p: argparse.ArgumentParser, what: str = "exchange") -> None:
    """``--otlp URL`` and ``--otlp-content``: one OpenTelemetry span per ``what``."""
    p.add_argument(
        "--otlp",
        metavar="URL",
        help=f"send one OpenTelemetry span per {what} over OTLP/HTTP to URL/v1/traces "
        "(default: $OTEL_EXPORTER_OTLP_ENDPOINT when set; needs fraglens[otel])",
    )
    p.add_argument(
        "--otlp-content",
        action="store_true",
        help="put the calls' text and arguments in the spans (gen_ai.output.messages); "
        "off by default, as the conventions ask",
    )


def otlp_wanted(args: argparse.Namespace) -> bool:
    """Spans are asked for: ``--otlp``, or an OTLP endpoint in the environment
    (``net/otlp.py`` says which one is used). Checked before the exporter's
    module is loaded, so that a plain ``check`` loads nothing of ``net``."""
    return bool(args.otlp) or any(
        value and name.startswith("OTEL_EXPORTER_OTLP_") and name.endswith("ENDPOINT")
        for name, value in os.environ.items()
    )


def add_price_options(p: argparse.ArgumentParser, each: str = "") -> argparse._ArgumentGroup:
    """The "cost" group, as ``check``, ``live``, ``compare`` and the app take
    it: the table's prices unless the user gives their own (``each``: words
    after a price's help)."""
    price = p.add_argument_group(
        "cost (prices from the genai-prices table unless given; per million tokens)"
    )
    price.add_argument(
        "--provider",
        metavar="NAME",
        help="price as this provider's model (genai-prices' ids: openai, anthropic, google, "
        "aws, deepseek, x-ai, mistral, groq...; default: the one the wire format implies)",
    )
    price.add_argument(
        "--prices",
        metavar="FILE.json",
        help='per model: {"gpt-4o": {"input": 2.5, "output": 10, "cached_input": 1.25, '
        '"cache_write": 3.75}} ("*": any model)',
    )
    price.add_argument(
        "--price-in", type=non_negative, metavar="X", help=f"per million input tokens{each}"
    )
    price.add_argument(
        "--price-out", type=non_negative, metavar="Y", help=f"per million output tokens{each}"
    )
    price.add_argument(
        "--price-cached-in",
        type=non_negative,
        metavar="X",
        help="per million input tokens read from the cache (default: --price-in)",
    )
    price.add_argument(
        "--price-cache-write",
        type=non_negative,
        metavar="X",
        help="per million input tokens written to the cache (default: --price-in)",
    )
    price.add_argument(
        "--markup", type=positive, default=1.0, metavar="M",
        help="multiplies the total: an aggregator billing the official price x 1.3 is 1.3",
    )
    return price


def _price(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CliError(f"{where}: a price must be a number, not {value!r}")
    if not math.isfinite(value) or value < 0:
        raise CliError(f"{where}: a price must be 0 or more, not {value!r}")
    return float(value)


def _user_prices(entry: Any, where: str) -> Any:
    from ..report.cost import UserPrices

    if isinstance(entry, list) and len(entry) == 2:
        return UserPrices(_price(entry[0], where), _price(entry[1], where))
    if not isinstance(entry, dict) or not {"input", "output"} <= entry.keys():
        raise CliError(f'{where}: expected {{"input": X, "output": Y}} or [X, Y]')
    unknown = entry.keys() - {"input", "output", "cached_input", "cache_write", "currency"}
    if unknown:
        keys = noun(len(unknown), "key")
        raise CliError(f"{where}: unknown {keys} {', '.join(sorted(unknown))}")
    optional = {k: _price(entry[k], where) for k in ("cached_input", "cache_write") if k in entry}
    currency = entry.get("currency", "USD")
    if not isinstance(currency, str) or not currency:
        raise CliError(f"{where}: the currency must be a name such as USD")
    return UserPrices(_price(entry["input"], where), _price(entry["output"], where),
                      currency=currency, **optional)


def prices_asked(args: argparse.Namespace) -> bool:
    """Any of the cost flags was given (else the table's prices, the default,
    are loaded only for a stream that reported usage)."""
    flags = (args.prices, args.provider, args.price_in, args.price_out, args.price_cached_in,
             args.price_cache_write)
    return any(v is not None for v in flags) or args.markup != 1.0


def price_options(args: argparse.Namespace) -> Any:
    """The ``PriceOptions`` the cost flags ask for: the table's prices, a
    ``--prices`` file's per model, ``--price-in``/``--price-out`` for any model."""
    from ..report.cost import PriceOptions, UserPrices

    user: dict[str, UserPrices] = {}
    if args.prices:
        doc = read_json(args.prices, "--prices")
        if not isinstance(doc, dict):
            raise CliError(f"--prices {args.prices}: expected an object mapping model -> prices")
        for model, entry in doc.items():
            user[model] = _user_prices(entry, f"--prices {args.prices}: {model}")
    flags = (args.price_in, args.price_out, args.price_cached_in, args.price_cache_write)
    if any(v is not None for v in flags):
        if args.price_in is None or args.price_out is None:
            raise CliError("--price-in and --price-out go together (the cache prices are optional)")
        user.setdefault("*", UserPrices(args.price_in, args.price_out, args.price_cached_in,
                                        args.price_cache_write))
    return PriceOptions(provider=args.provider, user=user, markup=args.markup)
