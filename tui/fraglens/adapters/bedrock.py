"""AWS Bedrock streaming: ``ConverseStream`` and ``InvokeModelWithResponseStream``.

Both arrive in the binary event-stream framing (``framing/eventstream.py``),
which hands each message on with its ``:event-type`` header as the event name
and its JSON payload as the data.

**ConverseStream** is Bedrock's own shape, the same for every model
(API reference: ``ConverseStreamOutput``): ``messageStart``, then per content
block ``contentBlockStart`` (``start.toolUse`` with ``toolUseId`` and
``name`` opens a call), ``contentBlockDelta`` (``delta.toolUse.input`` is
argument text; ``delta.text`` and ``delta.reasoningContent.text`` are the
answer and the reasoning) and ``contentBlockStop``, then ``messageStop``
(``stopReason``) and ``metadata`` (usage, latency). A call is keyed by its
``contentBlockIndex``, a position among every block (text included), so an
index above 0 is no quirk. Modelled exceptions (``throttlingException``,
``modelStreamErrorException``, ``validationException``...) arrive as
messages named after them, with ``{"message": ...}``: errors.

**InvokeModelWithResponseStream** wraps the model's own stream: each
``chunk`` event is ``{"bytes": base64}`` whose decoded bytes are one event of
the model's native API - Anthropic Messages events for Claude - and is handed
to that format's adapter. The last chunk's ``amazon-bedrock-invocationMetrics``
(token counts, latency) is usage.

Tool input this adapter cannot read - a ``toolUse.input`` that is not text,
an event it does not know carrying a ``toolUse`` - is named with its wire
value (``chunk-unreadable``), never dropped silently. A ``start.toolUse``
that holds the whole ``input`` (Converse defines none there; a gateway that
copies Anthropic's block start does) is restated at ``contentBlockStop``, as
the Anthropic adapter does, for the engine to weigh against the deltas.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..engine.fragments import (
    ArgsFinal,
    Finish,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    Usage,
    normalize_finish,
)
from .anthropic import AnthropicAdapter
from .base import Continuation, as_dict, as_int, as_str, dump, error_message, unread
from .event_types import CONVERSE_EVENTS
from .openai_chat import OpenAIChatAdapter

#: Bedrock's stop reasons that mean a filter stopped the answer
_FILTERED = frozenset({"guardrail_intervened", "content_filtered"})


def _finish(raw: str) -> Finish:
    return Finish(0, "content_filter" if raw in _FILTERED else normalize_finish(raw), raw)


def _is_exception(event: str | None) -> bool:
    """The event stream names a modelled exception after its type
    (``throttlingException``), and an exception or error message whose name
    header is missing ``exception`` or ``error``: whatever its payload holds, it is one."""
    return event is not None and (event.endswith("Exception") or event in ("exception", "error"))


def _exception(event: str | None, payload: Any) -> StreamError:
    name = event or "exception"
    message = error_message(payload, name)
    return StreamError(message if message == name else f"{name}: {message}")


_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads(raw: bytes) -> Any:
    """``json.loads(raw)``, without its layers for what nearly every chunk is:
    UTF-8 text of one object with nothing around it. ``json.loads`` reads bytes
    that open with ``{`` and a non-zero byte as UTF-8 (surrogates passed
    through); anything else, or anything the scanner stops short of, is given
    to ``json.loads`` itself, which reads it or raises the same error."""
    if len(raw) >= 4 and raw[0] == 0x7B and raw[1]:
        text = raw.decode("utf-8", "surrogatepass")
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            return json.loads(raw)
        if end == len(text):
            return value
    return json.loads(raw)


def _unknown_event(event: str | None, payload: dict[str, Any]) -> list[Op]:
    """An event this adapter does not know: nothing, unless a ``toolUse`` sits
    in its ``delta`` or ``start`` (or in the event it wraps), which is named."""
    for outer in (payload, *(v for v in payload.values() if isinstance(v, dict))):
        for key in ("delta", "start"):
            tool = as_dict(outer.get(key)).get("toolUse")
            if tool is not None:
                return [unread(f"event {event or next(iter(payload), '')!r} carries a toolUse "
                               "fraglens does not read: ignored", tool)]
    return []


class BedrockConverseAdapter:
    """``ConverseStream`` events, one decoded payload (and its event name) at a time."""

    name = "bedrock-converse"
    ends_with = "terminal"
    indexes_calls = False

    def __init__(self) -> None:
        #: block index -> (toolUseId, the input a start.toolUse held)
        self._inputs: dict[int | None, tuple[str | None, Any]] = {}
    @staticmethod
    def continuation(payload: Any) -> Continuation | None:
        """``(0, index, text)`` for a ``contentBlockDelta`` of tool input, read
        from its payload alone (every converse event has a distinct shape,
        whether or not Bedrock padded it with ``"p"``); None for anything else."""
        if type(payload) is not dict or len(payload) != (3 if "p" in payload else 2):
            return None
        index = payload.get("contentBlockIndex")
        delta = payload.get("delta")
        if type(index) is not int or type(delta) is not dict or len(delta) != 1:
            return None
        tool = delta.get("toolUse")
        text = tool.get("input") if type(tool) is dict else None
        return (0, index, text) if type(text) is str else None

    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("delta", "toolUse", "input")
    #: the event name ``continuation``'s payloads come under: an exception
    #: message's payload could have a delta's shape, and its name says it is none
    continuation_event = "contentBlockDelta"
    #: top-level fields never read: Bedrock pads every payload with a string of
    #: random length, so no two deltas are the same bytes around their pieces
    #: (eventstream_runs.py reads them in runs all the same)
    unread_fields = ("p",)

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        if _is_exception(event):
            return [_exception(event, payload)]
        if event is None or event not in CONVERSE_EVENTS:
            # a whole event wrapped in its name, as SDKs print them (and as
            # Nova's InvokeModel chunks are): {"contentBlockDelta": {...}}
            for key, inner in payload.items():
                if key in CONVERSE_EVENTS and isinstance(inner, dict):
                    return self._event(key, inner)
            if _is_exception(event) or "message" in payload:
                return [_exception(event, payload)]
            return _unknown_event(event, payload)
        return self._event(event, payload)

    def _event(self, event: str, payload: dict[str, Any]) -> list[Op]:
        index = as_int(payload.get("contentBlockIndex"))
        if event == "contentBlockDelta":
            delta = as_dict(payload.get("delta"))
            tool = delta.get("toolUse")
            if isinstance(tool, dict):
                text = tool.get("input")
                if not isinstance(text, str):
                    if text is None and "input" not in tool:
                        return []
                    return [unread("delta.toolUse.input is not text: ignored", text)]
                return [ToolDelta(choice=0, index=index, args=text, native_index=True)]
            text = delta.get("text")
            if isinstance(text, str):
                return [TextDelta(0, text)] if text else []
            reasoning = as_dict(delta.get("reasoningContent")).get("text")
            if isinstance(reasoning, str) and reasoning:
                return [TextDelta(0, reasoning, "reasoning")]
            return []  # signatures, citations: metadata
        if event == "contentBlockStart":
            tool = as_dict(as_dict(payload.get("start")).get("toolUse"))
            if not tool:
                return []
            if tool.get("input") not in (None, {}, ""):
                self._inputs[index] = (as_str(tool.get("toolUseId")), tool.get("input"))
            return [
                ToolDelta(
                    choice=0,
                    index=index,
                    id=as_str(tool.get("toolUseId")),
                    name=as_str(tool.get("name")),
                    native_index=True,
                )
            ]
        if event == "messageStop":
            raw = payload.get("stopReason")
            ops: list[Op] = []
            if isinstance(raw, str) and raw:
                ops.append(_finish(raw))
            ops.append(Terminal("messageStop"))
            return ops
        if event == "metadata":
            usage = payload.get("usage")
            if isinstance(usage, dict):
                data = dict(usage)
                metrics = payload.get("metrics")
                if isinstance(metrics, dict):
                    data["metrics"] = dict(metrics)
                return [Usage(data)]
        if event == "contentBlockStop" and index in self._inputs:
            cid, value = self._inputs.pop(index)
            text = value if isinstance(value, str) else dump(value)
            return [ArgsFinal(0, index, text, id=cid)]
        return []  # messageStart, contentBlockStop: nothing to read


class BedrockInvokeAdapter:
    """``InvokeModelWithResponseStream`` ``chunk`` events: the model's own events, wrapped."""

    name = "bedrock-invoke"
    ends_with = "terminal"
    indexes_calls = False
    #: top-level fields of a chunk never read: its padding, as in ConverseStream
    unread_fields = ("p",)
    #: the event name ``continuation``'s chunks come under (see the converse adapter's)
    continuation_event = "chunk"

    def __init__(self) -> None:
        self._inner: AnthropicAdapter | BedrockConverseAdapter | OpenAIChatAdapter | None = None
        #: the last chunk decoded and what its bytes held, so that feed does not
        #: decode again a chunk the continuation shortcut read
        self._decoded: tuple[Any, Any] = (None, None)

    @property
    def wrapped_path(self) -> tuple[str | int, ...] | None:
        """Where the wrapped model's shortcut reads the piece in the event a
        chunk's bytes hold (its ``continuation_path``), once its adapter is
        chosen: how eventstream_runs.py learns the envelope inside the base64."""
        return getattr(self._inner, "continuation_path", None)

    def continuation(self, payload: Any) -> Continuation | None:
        """The wrapped model's own shortcut, once its adapter is chosen."""
        if self._inner is None or type(payload) is not dict:
            return None
        shortcut = self._inner.continuation
        if shortcut is None:
            return None
        try:
            inner = self._unwrap(payload)
        except ValueError:
            return None  # feed says what is wrong with it
        return shortcut(inner) if inner is not None else None

    def _unwrap(self, payload: dict[str, Any]) -> Any:
        """The chunk's bytes decoded as JSON; None when it has none; raises
        ValueError when they are not base64 JSON."""
        if self._decoded[0] is payload:
            return self._decoded[1]
        wrapped = payload.get("bytes")
        if not isinstance(wrapped, str):
            return None
        try:
            inner = _loads(base64.b64decode(wrapped, validate=True))
        except (binascii.Error, ValueError, RecursionError):
            raise ValueError(wrapped[:60]) from None
        self._decoded = (payload, inner)
        return inner

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        if _is_exception(event):
            return [_exception(event, payload)]  # its name says so, whatever it holds
        try:
            inner = self._unwrap(payload)
        except ValueError as exc:
            return [StreamError(f"a chunk whose bytes are not base64 JSON: {str(exc)!r}")]
        if inner is None:
            if "message" in payload:
                return [_exception(event, payload)]
            return []
        if not isinstance(inner, dict):
            return []
        ops: list[Op] = []
        metrics = inner.get("amazon-bedrock-invocationMetrics")
        adapter = self._adapter_for(inner)
        if adapter is not None:
            ops.extend(adapter.feed(inner))
        if isinstance(metrics, dict) and not any(isinstance(op, Usage) for op in ops):
            ops.append(Usage(dict(metrics)))
        return ops

    def _adapter_for(
        self, inner: dict[str, Any]
    ) -> AnthropicAdapter | BedrockConverseAdapter | OpenAIChatAdapter | None:
        """The adapter of the wrapped model's API, chosen by the first chunk that shows it:
        Anthropic Messages events (Claude), Converse-shaped events (Nova), or
        Chat Completions chunks (the OpenAI-compatible models)."""
        if self._inner is None:
            if isinstance(inner.get("type"), str):
                self._inner = AnthropicAdapter()
            elif any(key in CONVERSE_EVENTS for key in inner):
                self._inner = BedrockConverseAdapter()
            elif isinstance(inner.get("choices"), list):
                self._inner = OpenAIChatAdapter()
        return self._inner
