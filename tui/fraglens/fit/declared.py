"""Which part of a request declares its tools, found without reading them.

Apart from ``tools``, which reads the declarations (and loads what the schema
checks need with it), so that ``check`` can tell a request that declares no
tools, as most recordings' requests are, without loading the schema checks:
about a tenth of a small recording's whole check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["converse_tools", "declaring_body"]


def declaring_body(request: Any) -> Mapping[str, Any] | None:
    """The part of a recorded request (a recording's or a HAR entry's
    ``request``, the proxy's flow) that lists its tools: its body, or the
    ``response`` or ``session`` of a Realtime API message in it. None when
    the body lists none. The body may still be bytes, as the proxy holds it."""
    body = request.get("body") if isinstance(request, Mapping) else None
    if isinstance(body, (bytes, bytearray)):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):
            return None
    if not isinstance(body, Mapping):
        return None
    for inner in ("response", "session"):
        # a Realtime API message: response.create's response, session.update's session
        held = body.get(inner)
        if (
            "tools" not in body
            and isinstance(held, Mapping)
            and isinstance(held.get("tools"), list)
        ):
            body = held
    if not isinstance(body.get("tools"), list) and converse_tools(body) is None:
        return None
    return body


def converse_tools(body: Mapping[str, Any]) -> list[Any] | None:
    """``toolConfig.tools`` of a Bedrock Converse request (Gemini's toolConfig has none)."""
    config = body.get("toolConfig")
    tools = config.get("tools") if isinstance(config, Mapping) else None
    return tools if isinstance(tools, list) else None
