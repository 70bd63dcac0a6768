"""OpenAI Responses streaming (``response.*`` events), and the non-streamed body.

A call is an output item keyed by its ``output_index`` (sent as the fragment
``index``) with its ``item_id`` alongside (the fragment ``item``): some
gateways re-encrypt ``item_id`` on every event, so the index is what holds a
call together. ``call_id`` is the id the conversation history uses.

Arguments come from ``response.function_call_arguments.delta`` (and
``custom_tool_call_input.delta``, ``mcp_call_arguments.delta``); the
``.done`` event and ``response.output_item.done`` restate them whole and are
passed on as ``ArgsFinal`` for the engine to cross-check. Hosted tool items
without a name (``web_search_call``, ``tool_search_call``...) are not calls a
client runs and are not opened.

Captures sometimes hold several responses back to back (a WebSocket carries
one after another); output indexes count from 0 in each, so a
``response.created`` after a finished response shifts the new response's
indexes past every index already used. ``responses``, ``ends``,
``response_id`` and ``response_status`` say which response the last event
belonged to and how the last one ended, for the reader that tells a
connection's responses apart (``reading/ws_responses.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

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
from .base import (
    Continuation,
    as_dict,
    as_int,
    as_list,
    as_str,
    dump,
    error_message,
    unread,
)

#: Item types that are always client-side calls, whether or not the name came yet.
CALL_ITEMS = frozenset({"function_call", "custom_tool_call"})

TEXT_EVENTS = {
    "response.output_text.delta": "content",
    "response.refusal.delta": "content",
    "response.reasoning_text.delta": "reasoning",
    "response.reasoning_summary_text.delta": "reasoning",
}

#: Argument deltas of a call item; ``mcp_call`` only counts once its item was opened.
ARG_DELTAS = frozenset(
    {
        "response.function_call_arguments.delta",
        "response.custom_tool_call_input.delta",
        "response.mcp_call_arguments.delta",
    }
)
ARG_DONES = frozenset(
    {
        "response.function_call_arguments.done",
        "response.custom_tool_call_input.done",
        "response.mcp_call_arguments.done",
    }
)


def is_call(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    if not isinstance(kind, str):
        return False
    if kind in CALL_ITEMS:
        return True
    name = item.get("name")
    return kind.endswith("_call") and isinstance(name, str) and bool(name)


def item_args(item: dict[str, Any]) -> str | None:
    """The complete argument text an item restates (``arguments`` or ``input``)."""
    for key in ("arguments", "input"):
        value = item.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, (dict, list)):
            return dump(value)
    return None


class ResponsesAdapter:
    """Responses API SSE events."""

    name = "openai-responses"
    ends_with = "terminal"
    indexes_calls = False

    def __init__(self) -> None:
        self._base = 0
        self._next_base = 0
        self._started = False
        self._ended = False
        self._opened: set[int] = set()  # shifted indexes opened as calls, this response
        self._items: dict[str, int] = {}  # item_id -> shifted index
        #: responses begun so far, and ended (a terminal event each)
        self.responses = 0
        self.ends = 0
        #: the id the current response's server named, if it did
        self.response_id: str | None = None
        #: how the last response ended (``completed``, ``failed``...), once it did
        self.response_status: str | None = None

    def continuation(self, payload: Any) -> Continuation | None:
        """``(0, index, text)`` for a ``function_call_arguments.delta`` of an item
        already opened under that index and item id (so the engine's keying by
        item has nothing new to learn from it); None for anything else."""
        if type(payload) is not dict:
            return None
        if payload.get("type") != "response.function_call_arguments.delta":
            return None
        piece = payload.get("delta")
        wire = payload.get("output_index")
        item_id = payload.get("item_id")
        if type(piece) is not str or type(wire) is not int or type(item_id) is not str:
            return None
        index = self._base + wire
        if self._items.get(item_id) != index or index not in self._opened:
            return None
        return 0, index, piece

    #: where ``continuation`` reads the piece (adapters/envelope.py)
    continuation_path = ("delta",)
    #: top-level fields no reading of an event looks at: the event's number and
    #: OpenAI's random-length padding (holes in an envelope: adapters/envelope.py)
    unread_fields = ("sequence_number", "obfuscation")

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type")
        if not isinstance(kind, str):
            kind = event if isinstance(event, str) else ""
        if not kind and payload.get("object") == "response":
            return self._body(payload)
        if kind in TEXT_EVENTS:
            text = payload.get("delta")
            return [TextDelta(0, text, TEXT_EVENTS[kind])] if isinstance(text, str) and text else []
        if kind in ARG_DELTAS:
            return self._arg_delta(kind, payload)
        if kind in ARG_DONES:
            return self._arg_done(payload)
        handler = self._HANDLERS.get(kind)
        if handler is not None:
            return handler(self, payload)
        if not kind and payload.get("error") not in (None, ""):
            return [StreamError(error_message(payload.get("error"), "error")), Terminal("error")]
        return self._unknown(kind, payload)

    def _unknown(self, kind: str, payload: dict[str, Any]) -> list[Op]:
        """An event type this adapter does not know: nothing, unless it carries
        tool data - named for what it looks like (an arguments event, a call
        item) or for whom (``delta``/``arguments``/``input`` for an item opened
        as a call) - which is named with its wire value, never dropped."""
        carried = next((key for key in ("delta", "arguments", "input") if key in payload), None)
        item_id = as_str(payload.get("item_id"))
        wire = as_int(payload.get("output_index"))
        known = (item_id is not None and self._items.get(item_id) in self._opened) or (
            wire is not None and self._base + wire in self._opened
        )
        looks = kind.endswith(("arguments.delta", "arguments.done", "_call.delta"))
        if looks or (known and carried is not None) or is_call(as_dict(payload.get("item"))):
            value = payload[carried] if carried is not None else payload.get("item")
            return [unread(f"event {kind!r} carries tool-call data fraglens does not read: "
                           "ignored", value)]
        return []

    # -- indexes -----------------------------------------------------------------
    def _new_response(self) -> None:
        if self._ended or not self._started:
            self._base = self._next_base
            self._opened = set()
            self._items = {}
            self.responses += 1
            self.response_id = None
        self._started, self._ended = True, False

    def _end_response(self, status: str) -> None:
        self._ended = True
        self.ends += 1
        self.response_status = status

    def _index(self, payload: dict[str, Any], item_id: str | None) -> int | None:
        wire = as_int(payload.get("output_index"))
        if wire is None:
            return self._items.get(item_id) if item_id is not None else None
        index = self._base + wire
        self._next_base = max(self._next_base, index + 1)
        if item_id is not None:
            self._items.setdefault(item_id, index)
        return index

    # -- events ------------------------------------------------------------------
    def _created(self, payload: dict[str, Any]) -> list[Op]:
        self._new_response()
        self.response_id = as_str(as_dict(payload.get("response")).get("id"))
        return []

    def _open(self, index: int | None, item: dict[str, Any]) -> list[Op]:
        if index is not None:
            self._opened.add(index)
        cid = as_str(item.get("call_id"))
        if cid is None and item.get("type") not in ("function_call", "custom_tool_call"):
            cid = as_str(item.get("id"))  # hosted calls (mcp_call) have only the item id
        return [
            ToolDelta(
                choice=0,
                index=index,
                id=cid,
                name=as_str(item.get("name")),
                item=as_str(item.get("id")),
                native_index=True,
                hosted=item.get("type") not in ("function_call", "custom_tool_call"),
            )
        ]

    def _item_added(self, payload: dict[str, Any]) -> list[Op]:
        if not self._started:
            self._new_response()
        item = as_dict(payload.get("item"))
        if not is_call(item):
            return []
        item_id = as_str(item.get("id"))
        index = self._index(payload, item_id)
        ops = self._open(index, item)
        text = item_args(item)
        if text:  # a gateway that sends the arguments with the item
            ops.append(ArgsFinal(0, index, text, item=item_id))
        return ops

    def _item_done(self, payload: dict[str, Any]) -> list[Op]:
        item = as_dict(payload.get("item"))
        if not is_call(item):
            return []
        item_id = as_str(item.get("id"))
        index = self._index(payload, item_id)
        ops: list[Op] = []
        if index is None or index not in self._opened:
            ops.extend(self._open(index, item))
        # the final item restates the arguments and the call_id the server
        # stored: the engine checks both against what streamed
        cid = as_str(item.get("call_id"))
        text = item_args(item)
        if text or cid:
            ops.append(ArgsFinal(0, index, text or "", id=cid, item=item_id))
        return ops

    def _arg_delta(self, kind: str, payload: dict[str, Any]) -> list[Op]:
        piece = payload.get("delta")
        if not isinstance(piece, str):
            if piece is None and "delta" not in payload:
                return []
            return [unread(f"{kind}: the delta is not text: ignored", piece)]
        item_id = as_str(payload.get("item_id"))
        index = self._index(payload, item_id)
        if kind == "response.mcp_call_arguments.delta" and index not in self._opened:
            return []
        return [ToolDelta(choice=0, index=index, args=piece, item=item_id, native_index=True)]

    def _arg_done(self, payload: dict[str, Any]) -> list[Op]:
        item_id = as_str(payload.get("item_id"))
        index = self._index(payload, item_id)
        text = payload.get("arguments", payload.get("input"))
        if isinstance(text, (dict, list)):
            text = dump(text)
        if not isinstance(text, str) or not text:
            return []
        return [ArgsFinal(0, index, text, item=item_id)]

    def _completed(self, payload: dict[str, Any]) -> list[Op]:
        response = as_dict(payload.get("response"))
        ops = self._summary(response)
        kind = payload.get("type")
        if kind == "response.incomplete" or response.get("status") == "incomplete":
            details = as_dict(response.get("incomplete_details"))
            raw = details.get("reason")
            raw = raw if isinstance(raw, str) and raw else "incomplete"
            reason = "length" if raw == "incomplete" else normalize_finish(raw)
            ops.append(Finish(0, reason, raw))
        else:
            ops.append(self._finish(response.get("status")))
        status = response.get("status")
        if not isinstance(status, str) or not status:
            status = "incomplete" if kind == "response.incomplete" else "completed"
        self._end_response(status)
        ops.append(Terminal(kind if isinstance(kind, str) and kind else "response.completed"))
        return ops

    def _failed(self, payload: dict[str, Any]) -> list[Op]:
        response = as_dict(payload.get("response"))
        ops = self._summary(response)
        ops.append(StreamError(error_message(response.get("error"), "response.failed")))
        self._end_response("failed")
        ops.append(Terminal("response.failed"))
        return ops

    def _error(self, payload: dict[str, Any]) -> list[Op]:
        self._end_response("error")
        inner = payload.get("error")
        message = error_message(inner if inner not in (None, "") else payload, "error event")
        return [StreamError(message), Terminal("error")]

    def _body(self, response: dict[str, Any]) -> list[Op]:
        """A whole non-streamed ``{"object": "response", ...}`` body."""
        self._new_response()
        ops: list[Op] = []
        for item in as_list(response.get("output")):
            item = as_dict(item)
            if item.get("type") == "message":
                for part in as_list(item.get("content")):
                    text = as_dict(part).get("text")
                    if isinstance(text, str) and text:
                        ops.append(TextDelta(0, text))
        ops.extend(self._summary(response))
        status = response.get("status")
        if status == "failed":
            ops.append(StreamError(error_message(response.get("error"), "response failed")))
        elif status == "incomplete":
            details = as_dict(response.get("incomplete_details"))
            raw = details.get("reason")
            raw = raw if isinstance(raw, str) and raw else "incomplete"
            ops.append(Finish(0, "length" if raw == "incomplete" else normalize_finish(raw), raw))
        elif isinstance(status, str) and status:
            ops.append(self._finish(status))
        self.response_id = as_str(response.get("id"))
        self._end_response(status if isinstance(status, str) and status else "completed")
        return ops

    def _summary(self, response: dict[str, Any]) -> list[Op]:
        """Calls in the final ``output`` that never streamed, then usage."""
        ops: list[Op] = []
        for pos, item in enumerate(as_list(response.get("output"))):
            item = as_dict(item)
            if not is_call(item):
                continue
            index = self._base + pos
            if index in self._opened:
                continue
            self._next_base = max(self._next_base, index + 1)
            ops.extend(self._open(index, item))
            text = item_args(item)
            if text:
                ops.append(
                    ArgsFinal(
                        0, index, text, id=as_str(item.get("call_id")), item=as_str(item.get("id"))
                    )
                )
        usage = response.get("usage")
        if isinstance(usage, dict):
            ops.append(Usage(dict(usage)))
        return ops

    def _finish(self, status: Any) -> Finish:
        raw = status if isinstance(status, str) and status else "completed"
        if self._opened:
            return Finish(0, "tool_calls", raw)
        return Finish(0, "stop" if raw == "completed" else normalize_finish(raw), raw)

    _HANDLERS: ClassVar[dict[str, Callable[[ResponsesAdapter, dict[str, Any]], list[Op]]]] = {
        "response.created": _created,
        "response.output_item.added": _item_added,
        "response.output_item.done": _item_done,
        "response.completed": _completed,
        "response.incomplete": _completed,
        "response.failed": _failed,
        "error": _error,
    }
