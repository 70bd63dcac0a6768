"""Credentials out of everything fraglens writes: headers by name, URLs by their parts.

Recordings, HAR imports, the proxy's flows and ``live``'s echoes all pass
through here, so there is one list of what counts as a secret. Sans-I/O: it
takes and returns values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["REDACTED", "Headers", "is_secret_name", "redact_headers", "redact_url"]

REDACTED = "[redacted]"

Headers = Mapping[str, Any] | Iterable[tuple[str, Any]]

_SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "openai-api-key",
        "anthropic-api-key",
    }
)
# Providers invent new header names for keys all the time: a name that merely
# looks secret is redacted too. Over-redaction costs a little debugging
# information; under-redaction leaks a key into a file people attach to issues.
_SECRET_PARTS = ("key", "token", "secret", "auth", "password")
# Except "token" in a rate-limit header (x-ratelimit-remaining-tokens,
# anthropic-ratelimit-input-tokens-limit): those tokens are model tokens, the
# values counts and reset times, and they are what someone debugging a 429 came
# to see. Only "token" is forgiven there: a rate-limit header whose name also
# says key, secret, auth or password is still redacted.
_RATE_LIMIT_PARTS = ("ratelimit", "rate-limit")
_RATE_LIMIT_SECRET_PARTS = tuple(part for part in _SECRET_PARTS if part != "token")
# Azure SAS and signed URLs carry their credential in ``sig=``.
_SECRET_PARAMS = frozenset({"sig"})


def is_secret_name(name: str) -> bool:
    lowered = name.strip().lower()
    if lowered in _SECRET_HEADERS:
        return True
    rate_limit = any(part in lowered for part in _RATE_LIMIT_PARTS)
    parts = _RATE_LIMIT_SECRET_PARTS if rate_limit else _SECRET_PARTS
    return any(part in lowered for part in parts)


def redact_headers(headers: Headers | None) -> dict[str, str]:
    """Copy ``headers`` with the value of every secret-looking header replaced.

    Accepts a mapping or (name, value) pairs (HAR, ``httpx.Headers.multi_items()``);
    repeated names are joined with ", " as HTTP allows.
    """
    if headers is None:
        return {}
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for name, value in pairs:
        text = REDACTED if is_secret_name(name) else str(value)
        if name in out and text != REDACTED:
            out[name] = f"{out[name]}, {text}"
        else:
            out[name] = text
    return out


def redact_url(url: str) -> str:
    """Replace credentials in a URL: ``key=``/``api_key=``-like query values and userinfo."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        params = []
        for param in query.split("&"):
            name, eq, _ = param.partition("=")
            plain = unquote(name)
            if eq and (is_secret_name(plain) or plain.lower() in _SECRET_PARAMS):
                param = f"{name}={REDACTED}"
            params.append(param)
        query = "&".join(params)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


