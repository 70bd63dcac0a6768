"""Which model answered, and the response's id, as the stream's first chunks
name them: ``model``/``id`` (Chat Completions, Cohere, DashScope, Ollama),
``message.model``/``message.id`` (Anthropic), ``response.model``/``response.id``
(Responses), ``modelVersion``/``responseId`` (Gemini); LangGraph's
``[message, metadata]`` pairs name the model in the metadata
(``ls_model_name``). Bedrock's stream names neither (the model is in the
request's URL).

When: ``created`` (Chat Completions, DashScope, the OpenAI-compatible
backends) or ``response.created_at`` (Responses), seconds since the epoch:
the time the call was priced at (a price can depend on the hour: DeepSeek's
off-peak discount), else the time of the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..framing.events import RawEvent
from ..records import FrozenRecord

if TYPE_CHECKING:
    from typing import Final

__all__ = ["Identity", "streamed_identity"]

#: how many events to look through (the names ride on the first ones)
_FIRST_EVENTS = 8
_MODEL_KEYS = ("model", "modelVersion")
_ID_KEYS = ("id", "responseId")


class Identity(FrozenRecord):
    __slots__ = ("model", "response_id", "created")
    model: Final[str | None]
    response_id: Final[str | None]
    #: when the response was made, in seconds since the epoch, as it says
    created: Final[float | None]

    def __init__(self, model: str | None = None, response_id: str | None = None,
                 created: float | None = None) -> None:
        self.model = model
        self.response_id = response_id
        self.created = created


def _first_str(holder: dict[str, object], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = holder.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _seconds(holder: dict[str, object]) -> float | None:
    """``created``/``created_at`` as seconds since the epoch, when it is a
    number of them (ints only: a bool, a string or a date far off is not)."""
    for key in ("created", "created_at"):
        value = holder.get(key)
        if type(value) is int and 0 < value < 1 << 36:
            return float(value)
    return None


def streamed_identity(events: Sequence[RawEvent]) -> Identity:
    """The model and the response id the first chunks of ``events`` name."""
    model = response_id = None
    created: float | None = None
    for ev in events[:_FIRST_EVENTS]:
        if ev.kind != "data":
            continue
        try:
            doc = json.loads(ev.data)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, list) and len(doc) == 2 and isinstance(doc[1], dict):
            name = doc[1].get("ls_model_name")  # a LangGraph message's metadata
            model = model or (name if isinstance(name, str) and name else None)
            continue
        if not isinstance(doc, dict):
            continue
        for holder in (doc, doc.get("message"), doc.get("response")):
            if isinstance(holder, dict):
                model = model or _first_str(holder, _MODEL_KEYS)
                response_id = response_id or _first_str(holder, _ID_KEYS)
                created = created if created is not None else _seconds(holder)
        if model and response_id and created is not None:
            break
    return Identity(model, response_id, created)
