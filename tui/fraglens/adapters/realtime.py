"""OpenAI Realtime API server events (``wss://…/v1/realtime``), one JSON message each.

The Realtime API streams a response much as the Responses API does: a
``response.created``, output items (``response.output_item.added`` with a
``function_call`` item: ``call_id``, ``name``), argument pieces in
``response.function_call_arguments.delta`` {response_id, item_id,
output_index, call_id, delta}, the whole arguments restated in
``response.function_call_arguments.done`` and ``response.output_item.done``,
then ``response.done`` with the response's status, its output and its usage.
So this adapter is the Responses one with Realtime's own names: calls keyed
by ``output_index`` with ``item_id`` beside it and ``call_id`` as the id,
restatements cross-checked by the engine, ``response.done`` ending each
response (one session carries many).

Text comes as ``response.output_text.delta``, and a spoken answer's words as
``response.output_audio_transcript.delta`` (``response.text.delta`` and
``response.audio_transcript.delta`` in the beta API): both are shown as the
response's text. Audio itself (``response.output_audio.delta``) is base64
sound, not read. An ``error`` event is reported; the session goes on after
most of them, so it does not end a response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..engine.fragments import (
    Finish,
    Op,
    StreamError,
    Terminal,
    TextDelta,
    ToolDelta,
    normalize_finish,
)
from .base import as_dict, as_str, error_message
from .event_types import REALTIME_ONLY_TYPES
from .responses import ResponsesAdapter

__all__ = ["RealtimeAdapter", "REALTIME_ONLY_TYPES"]

TEXT_EVENTS = {
    "response.output_text.delta": "content",
    "response.text.delta": "content",
    "response.output_audio_transcript.delta": "content",
    "response.audio_transcript.delta": "content",
}



class RealtimeAdapter(ResponsesAdapter):
    """Realtime API server events."""

    name = "openai-realtime"

    def feed(self, payload: Any, event: str | None = None) -> list[Op]:
        if isinstance(payload, dict):
            kind = payload.get("type")
            kind = kind if isinstance(kind, str) else ""
            if kind in TEXT_EVENTS:
                text = payload.get("delta")
                return [TextDelta(0, text)] if isinstance(text, str) and text else []
            handler = self._REALTIME.get(kind)
            if handler is not None:
                return handler(self, payload)
        return super().feed(payload, event)

    def _arg_delta(self, kind: str, payload: dict[str, Any]) -> list[Op]:
        """As Responses', and a piece of a call whose item never opened names
        the call by the ``call_id`` every Realtime delta carries."""
        ops = super()._arg_delta(kind, payload)
        delta = ops[0] if len(ops) == 1 else None
        if isinstance(delta, ToolDelta) and delta.index not in self._opened:
            delta.id = as_str(payload.get("call_id"))
        return ops

    def _done(self, payload: dict[str, Any]) -> list[Op]:
        """``response.done``: calls the response's output holds that never
        streamed, its usage, then how it ended (``status_details`` says why)."""
        response = as_dict(payload.get("response"))
        if self.response_id is None and isinstance(response.get("id"), str):
            self.response_id = response["id"]
        ops = self._summary(response)
        status = response.get("status")
        status = status if isinstance(status, str) and status else "completed"
        details = as_dict(response.get("status_details"))
        if status == "failed":
            ops.append(StreamError(error_message(details.get("error"), "response failed")))
        elif status in ("incomplete", "cancelled"):
            raw = details.get("reason")
            raw = raw if isinstance(raw, str) and raw else status
            reason = "length" if raw == "max_output_tokens" else normalize_finish(raw)
            ops.append(Finish(0, reason, raw))
        else:
            ops.append(self._finish(status))
        self._end_response(status)
        ops.append(Terminal("response.done"))
        return ops

    def _realtime_error(self, payload: dict[str, Any]) -> list[Op]:
        inner = payload.get("error")
        return [StreamError(error_message(inner if inner not in (None, "") else payload,
                                          "error event"))]

    _REALTIME: ClassVar[dict[str, Callable[[RealtimeAdapter, dict[str, Any]], list[Op]]]] = {
        "response.done": _done,
        "error": _realtime_error,
    }
