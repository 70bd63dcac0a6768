"""A live Bedrock request: ConverseStream or InvokeModelWithResponseStream, SigV4-signed.

Bedrock takes no API key header: each request is signed with AWS Signature
Version 4 from the caller's AWS credentials. This module builds what
``fraglens live`` sends for

- ``--format bedrock-converse``: ``POST /model/{modelId}/converse-stream``
  with a Converse body (``messages`` of content blocks, ``toolConfig``);
- ``--format bedrock-invoke``: ``POST /model/{modelId}/invoke-with-response-stream``
  with the model's own body; from ``--prompt`` that is Anthropic Messages
  (``anthropic_version: "bedrock-2023-05-31"``, no ``model`` field), the body
  Claude takes on Bedrock.

Signing and credentials are botocore's, never crypto of our own: its session
(the standard chain: environment variables, the shared config and
credentials files, ``--profile``, SSO and instance roles) and its ``SigV4Auth``
with the signing name ``bedrock`` (the service model's ``signingName``; the
endpoint's prefix is ``bedrock-runtime``). botocore is an optional extra,
imported only here and only when a Bedrock call is made: without it the call
is refused with one line naming ``pip install 'fraglens[bedrock]'``.

What the signature leaves on the request (``Authorization``, which holds the
access key id and the signature; ``X-Amz-Security-Token``) is redacted by
name and scrubbed by value as any key is (``fraglens.redact``); the secret
key is never sent, so the spec carries it in ``unsent`` to be scrubbed by
value as well. A signature is valid for minutes: ``RequestSpec.resign`` signs
the same request again for "send again".

A Bedrock API key in ``AWS_BEARER_TOKEN_BEDROCK`` is used instead of signing,
as botocore itself prefers it for Bedrock when that variable is set: it is
sent as ``Authorization: Bearer …`` (a key like any other, redacted and
scrubbed as such), and needs no botocore.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from ..fit.tools import tool_parts
from .request import (
    DEFAULT_MAX_TOKENS,
    EVENTSTREAM_FORMATS,
    RequestError,
    RequestSpec,
    check_header,
    convert_tools,
    split_url,
    unscrubbed_note,
    with_headers,
)

__all__ = [
    "ANTHROPIC_BEDROCK_VERSION",
    "BEARER_ENV",
    "INSTALL_HINT",
    "OPERATIONS",
    "SERVICE",
    "MissingExtra",
    "Signer",
    "bedrock_url",
    "build_bedrock_body",
    "build_bedrock_spec",
    "format_for_bedrock_path",
    "load_signer",
]

#: the name requests are signed for (bedrock-runtime's service model says so)
SERVICE = "bedrock"
#: the last segment of each operation's path
OPERATIONS = {
    "bedrock-converse": "converse-stream",
    "bedrock-invoke": "invoke-with-response-stream",
}
#: what Claude's body on Bedrock carries instead of the anthropic-version header
ANTHROPIC_BEDROCK_VERSION = "bedrock-2023-05-31"
INSTALL_HINT = "pip install 'fraglens[bedrock]'"
#: a Bedrock API key: botocore's name for the bearer token of the signing name "bedrock"
BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
_NO_MODEL = "no model: pass --model ID (a Bedrock model id, inference profile or ARN)"
#: us-east-1, eu-central-2, us-gov-west-1, cn-north-1...
_REGION = re.compile(r"[a-z]{2}(?:-[a-z0-9]+)+-[0-9]+")


class MissingExtra(RequestError):
    """botocore is not installed: Bedrock calls cannot be signed."""


def _check_region(region: str) -> str:
    if not _REGION.fullmatch(region):  # it becomes part of a host name
        raise RequestError(f"not an AWS region: {region[:40]!r} (like us-east-1)")
    return region


def _botocore() -> Any:
    """botocore's modules this needs, imported on first use (an optional extra)."""
    try:
        import botocore.auth
        import botocore.awsrequest
        import botocore.credentials
        import botocore.exceptions
        import botocore.session
    except ImportError:
        raise MissingExtra(
            f"Bedrock calls are signed with botocore, which is not installed: {INSTALL_HINT}"
        ) from None
    return botocore


@dataclass(frozen=True)
class Signer:
    """Credentials frozen for one call, and the region they sign for."""

    region: str
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_region(self.region)

    def unsent(self) -> tuple[tuple[str, str], ...]:
        """The credentials the signature uses but the request does not carry."""
        return (("the AWS secret access key", self.secret_key),)

    def sign(
        self, url: str, content: bytes, headers: Sequence[tuple[str, str]]
    ) -> tuple[tuple[str, str], ...]:
        """``headers`` with X-Amz-Date, X-Amz-Security-Token (temporary credentials)
        and Authorization added: a SigV4 signature over the method, path, the
        headers given, the host and the body's SHA-256."""
        botocore = _botocore()
        credentials = botocore.credentials.Credentials(self.access_key, self.secret_key, self.token)
        request = botocore.awsrequest.AWSRequest(
            method="POST", url=url, data=content, headers=dict(headers)
        )
        botocore.auth.SigV4Auth(credentials, SERVICE, self.region).add_auth(request)
        return tuple((str(name), str(value)) for name, value in request.headers.items())


def load_signer(region: str | None = None, profile: str | None = None) -> Signer:
    """Credentials from botocore's standard chain, and the region: ``region``,
    else the profile's or ``AWS_DEFAULT_REGION`` (botocore's own answer), else
    ``AWS_REGION`` (what the other AWS SDKs read)."""
    botocore = _botocore()
    errors = botocore.exceptions
    try:
        session = botocore.session.Session(profile=profile)
        credentials = session.get_credentials()
        region = region or session.get_config_variable("region") or os.environ.get("AWS_REGION")
        frozen = credentials.get_frozen_credentials() if credentials is not None else None
    except errors.BotoCoreError as exc:
        raise RequestError(f"AWS credentials: {_one_line(str(exc))}") from None
    if frozen is None or not frozen.access_key or not frozen.secret_key:
        raise RequestError(
            "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,"
            " or name a profile of ~/.aws/credentials or ~/.aws/config (--profile, AWS_PROFILE)"
        )
    if not region:
        raise RequestError("no AWS region: pass --region (or set AWS_REGION, or a profile region)")
    return Signer(region, frozen.access_key, frozen.secret_key, frozen.token or None)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def format_for_bedrock_path(path: str) -> str | None:
    """bedrock-converse or bedrock-invoke, when ``path`` is one of their endpoints."""
    path = path.rstrip("/")
    for fmt, operation in OPERATIONS.items():
        if path.endswith("/" + operation):
            return fmt
    return None


def bedrock_url(format: str, model: str | None, region: str, url: str | None = None) -> str:
    """The endpoint: ``url`` as given when it already names the operation, else
    ``/model/{modelId}/{operation}`` under ``url`` (a VPC endpoint, a test server)
    or under the region's public endpoint. The model id is percent-encoded
    whole (``:`` and ``/`` of ids and ARNs included), as botocore encodes it."""
    if url is None:
        suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
        url = f"https://bedrock-runtime.{region}{suffix}"
    parts = split_url(url)
    if format_for_bedrock_path(parts.path) is not None:
        return urlunsplit(parts)
    if not model:
        raise RequestError(_NO_MODEL)
    path = f"{parts.path.rstrip('/')}/model/{quote(model, safe='')}/{OPERATIONS[format]}"
    return urlunsplit(parts._replace(path=path))


def _converse_tools(tools: Sequence[Any]) -> list[Any]:
    """Tools in OpenAI, Responses or Anthropic shape as Converse ``toolSpec`` entries;
    a tool already in Converse shape (or unknown) passes as it is."""
    out: list[Any] = []
    for tool in tools:
        parts = tool_parts(tool)
        if parts is None:
            out.append(tool)
            continue
        name, description, schema = parts
        spec: dict[str, Any] = {"name": name, "inputSchema": {"json": schema}}
        if description is not None:
            spec["description"] = description
        out.append({"toolSpec": spec})
    return out


def build_bedrock_body(
    format: str,
    *,
    request: Mapping[str, Any] | None = None,
    prompt: str | None = None,
    tools: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """The JSON body: a request file as it is, or one user message; ``tools`` set in
    the operation's shape. No ``model`` (it is in the path) and no ``stream``
    flag (the operation streams)."""
    if request is not None:
        if prompt is not None:
            raise RequestError("give either --request FILE or --prompt TEXT, not both")
        body = {k: v for k, v in request.items() if k != "modelId"}
    elif prompt is None:
        raise RequestError("say what to send: --request FILE.json, or --model ID --prompt TEXT")
    elif format == "bedrock-converse":
        body = {
            "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"maxTokens": DEFAULT_MAX_TOKENS},
        }
    else:
        body = {
            "anthropic_version": ANTHROPIC_BEDROCK_VERSION,
            "max_tokens": DEFAULT_MAX_TOKENS,
            "messages": [{"role": "user", "content": prompt}],
        }
    if tools is not None:
        if format == "bedrock-converse":
            config = body.get("toolConfig")
            body["toolConfig"] = {
                **(config if isinstance(config, Mapping) else {}),
                "tools": _converse_tools(tools),
            }
        else:
            body["tools"] = convert_tools(tools, "anthropic")
    return body


def _signed(
    signer: Signer,
    url: str,
    format: str,
    body: dict[str, Any],
    headers: tuple[tuple[str, str], ...],
) -> RequestSpec:
    unsigned = RequestSpec(url=url, format=format, body=body, headers=headers)
    return RequestSpec(
        url=url,
        format=format,
        body=body,
        headers=signer.sign(url, unsigned.content, headers),
        unsent=signer.unsent(),
        resign=partial(_signed, signer, url, format, body, headers),
    )


def build_bedrock_spec(
    format: str,
    *,
    url: str | None = None,
    region: str | None = None,
    profile: str | None = None,
    body: Mapping[str, Any] | None = None,
    model: str | None = None,
    prompt: str | None = None,
    tools: Sequence[Any] | None = None,
    headers: Sequence[str] = (),
    signer: Signer | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[RequestSpec, str | None]:
    """The signed request, and a note for the user if any. ``signer``: credentials
    already loaded (else botocore's chain is asked), unless ``environ`` holds a
    Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``), which is sent instead. Checks
    what it can before loading credentials, so a typo is reported as such."""
    if format not in EVENTSTREAM_FORMATS:
        raise RequestError(f"not a Bedrock format: {format}")
    environ = os.environ if environ is None else environ
    api_key = (environ.get(BEARER_ENV) or "").strip() if signer is None else ""
    if api_key:
        check_header("authorization", api_key, f"${BEARER_ENV}")
    if signer is None and not api_key:
        _botocore()  # the missing extra first: nothing else matters without it
    if model is None and body is not None and isinstance(body.get("modelId"), str):
        model = body["modelId"]
    payload = build_bedrock_body(format, request=body, prompt=prompt, tools=tools)
    pairs: list[tuple[str, str]] = [
        ("content-type", "application/json"),
        # the bytes recorded are the bytes the server sent, not a decompressed copy
        ("accept-encoding", "identity"),
    ]
    if format == "bedrock-invoke":
        # the MIME type of the model's events inside the stream's chunks
        pairs.append(("x-amzn-bedrock-accept", "application/json"))
    pairs = with_headers(pairs, headers)
    if model is None and (url is None or format_for_bedrock_path(urlsplit(url).path) is None):
        raise RequestError(_NO_MODEL)
    if api_key:
        region = region or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
        if not region:
            raise RequestError("no AWS region: pass --region (or set AWS_REGION)")
        endpoint = bedrock_url(format, model, _check_region(region), url)
        pairs.append(("authorization", f"Bearer {api_key}"))
        spec = RequestSpec(url=endpoint, format=format, body=payload, headers=tuple(pairs))
    else:
        if signer is None:
            signer = load_signer(region, profile)
        elif region is not None and region != signer.region:
            signer = Signer(region, signer.access_key, signer.secret_key, signer.token)
        endpoint = bedrock_url(format, model, signer.region, url)
        spec = _signed(signer, endpoint, format, payload, tuple(pairs))
    notes = []
    if format == "bedrock-invoke" and prompt is not None and "anthropic" not in endpoint:
        notes.append(
            "--prompt builds an Anthropic Messages body (Claude); for another model's"
            " own format pass --request FILE.json"
        )
    short = unscrubbed_note(spec)
    if short:
        notes.append(short)
    return spec, "; ".join(notes) or None
