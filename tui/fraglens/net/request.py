"""What ``fraglens live`` sends: the endpoint, the JSON body and the headers of one request.

Everything the user typed becomes a :class:`RequestSpec` here, checked before any
socket opens, so that a typo is a one-line usage error and not a network failure.
The API key is read from the environment only and lives in the spec's headers,
which ``repr`` does not show; :meth:`RequestSpec.for_record` is the only view
of the request that leaves this module for a file, and ``secrets`` (every
credential sent: the key, ``-H`` headers, the URL's password) scrubs what
comes back.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

from ..fit.tools import tool_parts
from ..redact import Fingerprints, Secrets, redact_headers, redact_url

__all__ = [
    "ENDPOINTS",
    "EVENTSTREAM_FORMATS",
    "KEY_ENVS",
    "LIVE_FORMATS",
    "NDJSON_FORMATS",
    "RequestError",
    "RequestSpec",
    "build_body",
    "build_spec",
    "format_for_path",
    "is_loopback",
]

#: the wire formats a live call can speak, and the path each one posts to
ENDPOINTS = {
    "openai-chat": "/chat/completions",
    "anthropic": "/messages",
    "openai-responses": "/responses",
    # Ollama's native API lives beside its /v1 compatibility layer, not under it
    "ollama": "/api/chat",
}
#: Bedrock's two streaming operations: SigV4-signed, answered in the AWS binary
#: event stream; their requests are built by ``fraglens.net.bedrock``
EVENTSTREAM_FORMATS = ("bedrock-converse", "bedrock-invoke")
LIVE_FORMATS = tuple(ENDPOINTS) + EVENTSTREAM_FORMATS
#: the formats whose streams are NDJSON lines rather than SSE
NDJSON_FORMATS = ("ollama",)

#: seconds to wait for a connection, or between two reads of the stream
DEFAULT_TIMEOUT = 60.0
#: where the key is read from when ``--api-key-env`` is not given
KEY_ENVS = {
    "openai-chat": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
}
ANTHROPIC_VERSION = "2023-06-01"
#: Anthropic requires max_tokens; what ``--prompt`` requests get unless the file says
DEFAULT_MAX_TOKENS = 1024


class RequestError(ValueError):
    """The request cannot be built from what was given: a one-line reason."""


def format_for_path(path: str) -> str | None:
    """The wire format an endpoint path implies, if it names one."""
    path = path.rstrip("/")
    for fmt, endpoint in ENDPOINTS.items():
        if path.endswith(endpoint):
            return fmt
    return None


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class RequestSpec:
    """One request, ready to send. ``headers`` carry the key: never print them."""

    url: str
    format: str
    body: dict[str, Any]
    headers: tuple[tuple[str, str], ...] = field(repr=False)
    #: the environment variable the key came from (its name is not a secret)
    key_env: str | None = None
    method: str = "POST"
    #: credentials the request was made with but does not carry, as (where, value):
    #: the AWS secret key that signed it. Scrubbed like the ones sent
    unsent: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    #: for a signed request: the same request signed anew (a signature expires)
    resign: Callable[[], RequestSpec] | None = field(default=None, repr=False, compare=False)

    @property
    def content(self) -> bytes:
        """The body exactly as sent (and as recorded)."""
        return json.dumps(self.body, ensure_ascii=False).encode("utf-8")

    @cached_property
    def secrets(self) -> Secrets:
        """Every credential sent (the key, ``-H`` headers, the URL's password) or
        used to sign (``unsent``), for scrubbing what comes back."""
        return Secrets.of_request(self.headers, self.url, self.unsent)

    @cached_property
    def fingerprints(self) -> Fingerprints:
        """The secrets as a recording keeps them: enough to scrub them from a
        report, never their values."""
        return self.secrets.fingerprints()

    def for_record(self) -> dict[str, Any]:
        """The request as a recording or a log may show it: secrets redacted."""
        secrets = self.secrets
        return {
            "method": self.method,
            "url": secrets.scrub_text(redact_url(self.url)),
            "headers": secrets.scrub_value(redact_headers(self.headers)),
            "body": secrets.scrub_value(self.body),
        }

    def safe(self, text: str) -> str:
        """``text`` (an error message, a log line) with every credential scrubbed out."""
        return self.secrets.scrub_text(text)


# -- building -------------------------------------------------------------------


def split_url(url: str) -> SplitResult:
    """``url``'s parts, or a RequestError that says what is wrong with it (its
    credentials redacted): an http(s) scheme, a host, a port that is one."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # urllib checks the port only when asked
    except ValueError as exc:  # an unclosed "[" of an IPv6 host, a port past 65535
        raise RequestError(f"not a valid URL ({exc}): {redact_url(url)!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RequestError(f"not an http(s) URL: {redact_url(url)!r}")
    if port == 0:
        raise RequestError(f"port 0 is no port to connect to: {redact_url(url)!r}")
    return parts


def check_header(name: str, value: str, where: str) -> None:
    """A RequestError unless HTTP can carry ``value`` as it is: a line break would
    end the header (or smuggle another), and httpx sends header values in ASCII.
    The value is never quoted: it may be a key."""
    if any(c in "\r\n\0" for c in value):
        raise RequestError(f"{where} holds a line break or a NUL: a header cannot carry it")
    if not value.isprintable() and any(c != "\t" and not c.isprintable() for c in value):
        raise RequestError(f"{where} holds a control character: a header cannot carry it")
    if not value.isascii():
        at = next(i for i, c in enumerate(value) if not c.isascii())
        raise RequestError(
            f"{where} holds a character that is not ASCII (at {at}): an HTTP header"
            " cannot carry it as it is"
        )


def resolve_url(url: str, format: str | None) -> tuple[str, str]:
    """A base URL (``https://host/v1``) or a full endpoint -> (endpoint URL, format)."""
    parts = split_url(url)
    assert parts.hostname is not None  # split_url refuses a URL without one
    by_path = format_for_path(parts.path)
    if by_path is not None:
        return urlunsplit(parts), format or by_path
    if format is None:
        format = "anthropic" if parts.hostname.endswith("anthropic.com") else "openai-chat"
    path = parts.path.rstrip("/")
    if format == "ollama":
        # http://localhost:11434 (or .../api, or the compatibility layer's .../v1)
        # -> .../api/chat, the native endpoint
        base = path.removesuffix("/v1").removesuffix("/api")
        return urlunsplit(parts._replace(path=base + "/api/chat")), format
    if not path:
        # a bare host: every provider fraglens speaks puts its API under /v1
        path = "/v1"
    return urlunsplit(parts._replace(path=path + ENDPOINTS[format])), format


def convert_tools(tools: Sequence[Any], format: str) -> list[Any]:
    """Tools written for one API, reshaped for ``format``; unknown shapes pass as they are."""
    out: list[Any] = []
    for tool in tools:
        parts = tool_parts(tool)
        if parts is None:
            out.append(tool)
            continue
        name, description, schema = parts
        if format == "anthropic":
            item: dict[str, Any] = {"name": name, "input_schema": schema}
        elif format == "openai-responses":
            item = {"type": "function", "name": name, "parameters": schema}
        else:
            item = {"type": "function", "function": {"name": name, "parameters": schema}}
        if description is not None:
            (item["function"] if "function" in item else item)["description"] = description
        out.append(item)
    return out


def build_body(
    format: str,
    *,
    request: Mapping[str, Any] | None = None,
    model: str | None = None,
    prompt: str | None = None,
    tools: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """The JSON body, with streaming (and usage reporting) switched on."""
    if request is not None:
        if prompt is not None:
            raise RequestError("give either --request FILE or --prompt TEXT, not both")
        body = dict(request)
    else:
        if prompt is None:
            raise RequestError("say what to send: --request FILE.json, or --model M --prompt TEXT")
        if format == "openai-responses":
            body = {"input": prompt}
        else:
            body = {"messages": [{"role": "user", "content": prompt}]}
        if format == "anthropic":
            body["max_tokens"] = DEFAULT_MAX_TOKENS
    if model is not None:
        body = {"model": model, **{k: v for k, v in body.items() if k != "model"}}
    if "model" not in body:
        raise RequestError('no model: pass --model M (or put "model" in the request file)')
    if tools is not None:
        body["tools"] = convert_tools(tools, format)
    body["stream"] = True
    if format == "openai-chat":
        options = body.get("stream_options")
        body["stream_options"] = {
            **(options if isinstance(options, Mapping) else {}),
            "include_usage": True,
        }
    return body


#: headers httpx sets from the body it sends: given by hand, they disagree with it
_FRAMING_HEADERS = ("content-length", "transfer-encoding", "host")


def parse_header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    shown = text.split(":")[0][:40]
    if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
        raise RequestError(f"a header is 'Name: value', got {shown!r}")
    name, value = name.strip(), value.strip(" \t")
    if not name.isascii() or not name.isprintable():
        raise RequestError(f"a header's name is printable ASCII, got {shown!r}")
    if name.lower() in _FRAMING_HEADERS:
        raise RequestError(
            f"-H {name}: fraglens sets it from the request it sends (a hand-made one would"
            " not match the body)"
        )
    check_header(name, value, f"the {name} header (-H)")
    return name, value


def with_headers(pairs: list[tuple[str, str]], headers: Sequence[str]) -> list[tuple[str, str]]:
    """``pairs`` with each ``-H`` header put in, in place of those of the same name."""
    for text in headers:
        name, value = parse_header(text)
        pairs = [(n, v) for n, v in pairs if n.lower() != name.lower()]
        pairs.append((name, value))
    return pairs


def api_key(
    environ: Mapping[str, str], env: str | None, named: bool, going: str
) -> tuple[str | None, str | None]:
    """The key in ``$env``, checked as a header must be, and a note when there is
    none (``going``: what the call does without it); a RequestError when
    ``--api-key-env`` named the variable (``named``) and it is not set."""
    secret = (environ.get(env) or None) if env else None
    if secret is not None:
        check_header("authorization", secret, f"${env}")
        return secret, None
    if env is None:
        return None, None
    if named:
        raise RequestError(f"${env} is not set (--api-key-env {env}): export the key there")
    return None, f"${env} is not set: {going} without an API key"


def unscrubbed_note(spec: RequestSpec) -> str | None:
    """What the user should know when a credential sent is too short to scrub by value."""
    short = spec.secrets.unscrubbed
    if not short:
        return None
    return (
        f"{', '.join(short)} carried a value too short to scrub safely: it is"
        " redacted where its name is known, not where the server echoes it"
    )


def build_spec(
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
    """Build the request; returns it and a note for the user (a missing key), if any."""
    environ = os.environ if environ is None else environ
    endpoint, fmt = resolve_url(url, format)
    payload = build_body(fmt, request=body, model=model, prompt=prompt, tools=tools)
    # a local Ollama takes no key: none is looked for unless --api-key-env names one
    env = key_env or KEY_ENVS.get(fmt)
    secret, note = api_key(environ, env, key_env is not None, "sending the request")
    pairs: list[tuple[str, str]] = [("content-type", "application/json")]
    # the bytes recorded are the bytes the server sent, not a decompressed copy
    pairs.append(("accept-encoding", "identity"))
    if fmt == "anthropic":
        pairs.append(("anthropic-version", ANTHROPIC_VERSION))
        if secret:
            pairs.append(("x-api-key", secret))
    elif secret:
        pairs.append(("authorization", f"Bearer {secret}"))
    pairs = with_headers(pairs, headers)
    spec = RequestSpec(url=endpoint, format=fmt, body=payload, headers=tuple(pairs), key_env=env)
    return spec, "; ".join(n for n in (note, unscrubbed_note(spec)) if n) or None
