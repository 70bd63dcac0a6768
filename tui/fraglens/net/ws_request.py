"""What ``fraglens live --url ws://…`` sends: the handshake and one ``response.create``.

The Responses API's WebSocket mode takes the body a ``POST /v1/responses``
would carry as a ``{"type": "response.create", …}`` message (``stream`` is
implicit, and not sent); the Realtime API takes the model in the URL's query
(``/v1/realtime?model=…``) and a ``response.create`` whose ``response`` holds
the tools and the input. Both are answered with ``response.*`` messages. The
key goes in the handshake's ``authorization`` header, as the openai SDK sends
it; the spec is the same :class:`RequestSpec` as for HTTP (method ``GET``),
so redaction and scrubbing are the same too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..redact import redact_url
from .request import (
    RequestError,
    RequestSpec,
    api_key,
    build_body,
    convert_tools,
    unscrubbed_note,
    with_headers,
)

__all__ = ["WS_FORMATS", "build_ws_spec", "is_websocket_url"]

#: the wire formats spoken over WebSocket, and the path each one connects to
WS_FORMATS = {"openai-responses": "/responses", "openai-realtime": "/realtime"}


def is_websocket_url(url: str | None) -> bool:
    """``url`` names a ``ws://`` or ``wss://`` endpoint (by its scheme alone:
    whether the rest parses is for the request's builder to say)."""
    scheme = str(url or "").strip().partition(":")[0].lower()
    return scheme in ("ws", "wss")


def _endpoint(url: str, format: str | None, model: str | None) -> tuple[str, str]:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - a port past 65535 raises here, not at connect
    except ValueError as exc:
        raise RequestError(f"not a valid URL ({exc}): {redact_url(url)!r}") from None
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise RequestError(f"not a ws(s) URL: {redact_url(url)!r}")
    path = parts.path.rstrip("/")
    by_path = next((fmt for fmt, end in WS_FORMATS.items() if path.endswith(end)), None)
    fmt = format or by_path or "openai-responses"
    if by_path is None:
        path = (path or "/v1") + WS_FORMATS[fmt]
    query = parts.query
    if fmt == "openai-realtime":
        pairs = parse_qsl(query, keep_blank_values=True)
        if model is not None:
            pairs = [(k, v) for k, v in pairs if k != "model"] + [("model", model)]
        if not any(k == "model" for k, _ in pairs):
            raise RequestError("no model: the Realtime API takes it in the URL (--model M)")
        query = urlencode(pairs)
    return urlunsplit(parts._replace(path=path, query=query)), fmt


def _realtime_message(
    request: Mapping[str, Any] | None, prompt: str | None, tools: Sequence[Any] | None
) -> dict[str, Any]:
    if request is not None:
        if prompt is not None:
            raise RequestError("give either --request FILE or --prompt TEXT, not both")
        response = dict(request.get("response", request))
    else:
        if prompt is None:
            raise RequestError("say what to send: --request FILE.json, or --prompt TEXT")
        response = {
            "output_modalities": ["text"],
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": prompt}]}],
        }
    if tools is not None:
        response["tools"] = convert_tools(tools, "openai-responses")
    return {"type": "response.create", "response": response}


def build_ws_spec(
    url: str,
    *,
    format: str | None = None,
    body: Mapping[str, Any] | None = None,
    model: str | None = None,
    prompt: str | None = None,
    tools: Sequence[Any] | None = None,
    headers: Sequence[str] = (),
    key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[RequestSpec, str | None]:
    """The handshake (URL, headers) and the ``response.create`` message (``body``)."""
    environ = os.environ if environ is None else environ
    if format is not None and format not in WS_FORMATS:
        raise RequestError(f"--format {format} is not spoken over WebSocket: use "
                           f"{' or '.join(WS_FORMATS)} with a ws:// URL")
    endpoint, fmt = _endpoint(url, format, model)
    if fmt == "openai-realtime":
        message = _realtime_message(body, prompt, tools)
    else:
        message = build_body(fmt, request=body, model=model, prompt=prompt, tools=tools)
        message.pop("stream", None)  # implicit over a WebSocket, and not to be sent
        message = {"type": "response.create", **message}
    env = key_env or "OPENAI_API_KEY"
    secret, note = api_key(environ, env, key_env is not None, "connecting")
    pairs: list[tuple[str, str]] = []
    if secret:
        pairs.append(("authorization", f"Bearer {secret}"))
    pairs = with_headers(pairs, headers)
    spec = RequestSpec(url=endpoint, format=fmt, body=message, headers=tuple(pairs),
                       key_env=env, method="GET")
    return spec, "; ".join(n for n in (note, unscrubbed_note(spec)) if n) or None
