"""One capture checked: a path and the options of ``check`` in, its report out.

What ``fraglens check`` prints and what a batch (``check --jsonl``, on local
processes or a Dask cluster) writes one line of: the same function, so a
capture gets the same verdict whichever way it was checked. The options are
plain data, so they travel to another process as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.plural import counted
from ..engine.reassembler import DEFAULT_MAX_ARG_BYTES
from ..fit.declared import declaring_body
from ..fit.timeout import DEFAULT_BUDGET
from ..reading.capture import LoadError, load_stream, stream_from_bytes
from ..reading.stream import Stream
from ..records import FrozenRecord
from .document import build_report
from .timing import DEFAULT_STALL_MS

if TYPE_CHECKING:  # the schema checks and the price table load only where needed (start-up)
    from typing import Final

    from ..fit.tools import Tool
    from .cost import PriceOptions

__all__ = ["CheckOptions", "NoResponse", "checked", "refuse_unread"]


class NoResponse(LoadError):
    """The capture was read but holds no model response: a one-line reason
    (exit 2, as for input that cannot be read)."""


def refuse_unread(stream: Stream, source: str, meta: dict[str, Any]) -> None:
    """``NoResponse`` when the stream holds nothing to judge: every headless
    reading of a capture (``check``, ``fraglens PATH`` without a terminal)
    refuses the same captures with the same line (``meta``: what its
    framing or recording said of it)."""
    if not stream.events:
        raise NoResponse(f"{source}: {_nothing(meta)}")
    if not stream.model_response:
        raise NoResponse(f"{source}: no model response found ({stream.framing} of "
                         f"{counted(len(stream.events), 'event')}, none of them a model API's)")


class CheckOptions(FrozenRecord):
    __slots__ = (
        "format",
        "max_arg_bytes",
        "compare",
        "chunking",
        "stall_ms",
        "tools",
        "prices",
        "schema_budget",
    )
    format: Final[str | None]
    max_arg_bytes: Final[int]
    #: add what naive by-id / by-arrival grouping gives
    compare: Final[bool]
    #: add how the calls were cut into fragments
    chunking: Final[bool]
    stall_ms: Final[float]
    #: ``--tools``: the declared tools, else those of the request a capture holds
    tools: Final[tuple[Tool, ...] | None]
    #: how the usage is priced (the table's prices by default)
    prices: Final[PriceOptions | None]
    #: ``--schema-timeout``: seconds each call's check against its tool may take (None: no limit)
    schema_budget: Final[float | None]

    def __init__(
        self, format: str | None = None, max_arg_bytes: int = DEFAULT_MAX_ARG_BYTES,
        compare: bool = False, chunking: bool = False, stall_ms: float = DEFAULT_STALL_MS,
        tools: tuple[Tool, ...] | None = None, prices: PriceOptions | None = None,
        schema_budget: float | None = DEFAULT_BUDGET,
    ) -> None:
        self.format = format
        self.max_arg_bytes = max_arg_bytes
        self.compare = compare
        self.chunking = chunking
        self.stall_ms = stall_ms
        self.tools = tools
        self.prices = prices
        self.schema_budget = schema_budget


def checked(path: str, opts: CheckOptions, data: bytes | None = None) -> tuple[dict[str, Any],
                                                                             Stream]:
    """The report of the capture at ``path`` (or of ``data``, named ``path``)
    and the stream it was read into. LoadError (``NoResponse`` among them)
    when it cannot be read or holds no model response."""
    kwargs: dict[str, Any] = {"format": opts.format, "max_arg_bytes": opts.max_arg_bytes,
                              "keep_naive": opts.compare}
    if data is None:
        stream, framed = load_stream(path, **kwargs)
    else:
        stream, framed = stream_from_bytes(data, path, **kwargs)
    refuse_unread(stream, path, framed.meta)
    tools = list(opts.tools) if opts.tools is not None else None
    request = framed.meta.get("request")
    fit = None
    # the schema checks load only for tools to check: given, or declared by the
    # request (fit_for_request gives None for a request that declares none)
    if tools is not None or declaring_body(request) is not None:
        from ..fit.verdicts import fit_for_request

        fit = fit_for_request(stream, request, tools, opts.schema_budget)
    doc = build_report(stream, compare=opts.compare, fit=fit, stall_ms=opts.stall_ms,
                       prices=opts.prices, request_model=_request_model(request))
    if opts.chunking:
        from .chunking import chunking_profile

        doc["chunking"] = chunking_profile(stream)
    return doc, stream


def _nothing(meta: dict[str, Any]) -> str:
    """Why a capture holds no event, where its recording says."""
    response = meta.get("response") or {}
    status = response.get("status") if isinstance(response, dict) else None
    if meta.get("transport") == "websocket" and isinstance(status, int) and status != 101:
        return f"no messages: the WebSocket handshake was answered with HTTP {status}"
    return "no events in the stream"


def _request_model(request: Any) -> str | None:
    """The model a recording's or HAR's request names, if it does."""
    body = request.get("body") if isinstance(request, dict) else None
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model else None
