"""Credentials out of everything fraglens writes: headers by name, URLs by their parts,
and the values a request sent wherever they come back.

Recordings, HAR imports, the proxy's flows and ``live``'s echoes all pass
through here, so there is one list of what counts as a secret. Sans-I/O: it
takes and returns values.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "MIN_SECRET",
    "REDACTED",
    "Fingerprints",
    "Headers",
    "Scrubber",
    "Secrets",
    "TextScrub",
    "is_secret_name",
    "redact_headers",
    "redact_url",
]

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
        if str(name).strip().lower() == _SUBPROTOCOLS:
            text = ", ".join(_subprotocol(p) for p in text.split(","))
        if name in out and text != REDACTED:
            out[name] = f"{out[name]}, {text}"
        else:
            out[name] = text
    return out


#: the WebSocket handshake's subprotocols: a browser cannot set headers, so the
#: Realtime API takes the key as one (``openai-insecure-api-key.sk-...``)
_SUBPROTOCOLS = "sec-websocket-protocol"
# Patterns a recording's reader meets only in some requests are left to re,
# which compiles one at its first use and keeps it: compiled at import, they
# were a third of this module's import.
_KEY_SUBPROTOCOL = r"(?i)(\s*[^\s.]*(?:key|token|secret|auth)[^\s.]*\.)(.+)"


def _subprotocol(protocol: str) -> str:
    """One offered subprotocol, its value redacted when its name says it carries a key."""
    m = re.fullmatch(_KEY_SUBPROTOCOL, protocol)
    return f"{m.group(1).strip()}{REDACTED}" if m else protocol.strip()


def _subprotocol_secrets(value: str) -> list[tuple[str, str]]:
    where = f"the {_SUBPROTOCOLS} header"
    found = (re.fullmatch(_KEY_SUBPROTOCOL, p) for p in value.split(","))
    return [(where, m.group(2).strip()) for m in found if m]


def redact_url(url: str) -> str:
    """Replace credentials in a URL: ``key=``/``api_key=``-like query values and userinfo.

    Idempotent: a URL this returned comes back unchanged. The userinfo becomes
    ``%5Bredacted%5D@``, percent-encoded, because a bracket in the authority
    (``http://[redacted]@h``) makes URL parsers read an IPv6 host and refuse it.
    Never raises: a URL that does not parse has every ``...@`` before its path
    and every secret-looking query value replaced by hand.
    """
    if _PLAIN_URL.fullmatch(url):
        # what urlsplit and urlunsplit would give back unchanged (see _PLAIN_URL)
        head, mark, query = url.partition("?")
        return head + mark + _redact_query(query) if mark else url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return _redact_unparsed(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{_USERINFO}@{netloc.rpartition('@')[2]}"
    return urlunsplit(
        (parts.scheme, netloc, parts.path, _redact_query(parts.query), parts.fragment)
    )


#: what a URL's userinfo becomes: "[redacted]", percent-encoded (see redact_url)
_USERINFO = "%5Bredacted%5D"
#: a URL that urlsplit splits where its "://", first "/" and first "?" are, and
#: urlunsplit joins again as it was: a lower-case scheme (urlsplit lowers it), a
#: host, no userinfo, escape, fragment, bracket, space or control character,
#: and a "?" only before a query (urlunsplit drops an empty one). Most URLs a
#: recording holds are such, and reading one then needs no urllib.parse, whose
#: import (ipaddress with it) was a tenth of what a recording's reader loads.
#: The tests hold it to urlsplit and urlunsplit.
_PLAIN_URL = re.compile(
    r"[a-z][a-z0-9+.-]*://[A-Za-z0-9._~:-]+(?:/[A-Za-z0-9._~:/!$&'()*+,;=-]*)?"
    r"(?:\?[A-Za-z0-9._~:/?!$&'()*+,;=-]+)?"
)
_AUTHORITY = r"^([a-zA-Z][a-zA-Z0-9+.-]*://)([^/?#]*)"  # compiled at first use


def _redact_unparsed(url: str) -> str:
    def authority(m: re.Match[str]) -> str:
        host = m.group(2)
        return m.group(1) + (f"{_USERINFO}@{host.rpartition('@')[2]}" if "@" in host else host)

    head, mark, query = re.sub(_AUTHORITY, authority, url, count=1).partition("?")
    return head + mark + _redact_query(query) if mark else head


def _redact_query(query: str) -> str:
    if not query:
        return query
    params = []
    for param in query.split("&"):
        name, eq, _ = param.partition("=")
        if eq and _is_secret_param(_unquote(name)):
            param = f"{name}={REDACTED}"
        params.append(param)
    return "&".join(params)


def _unquote(text: str) -> str:
    """``urllib.parse.unquote``, which returns text without a ``%`` as it is:
    loaded only for text with one (start-up)."""
    if "%" not in text:
        return text
    from urllib.parse import unquote

    return unquote(text)


def _is_secret_param(name: str) -> bool:
    return is_secret_name(name) or name.lower() in _SECRET_PARAMS


# -- by value ---------------------------------------------------------------------------
#
# A name tells which header holds a key; it does not stop a server from echoing
# the key back in a body ("Incorrect API key provided: sk-..."), a response
# header or an error message. So the values that were sent are collected from
# the request, and every copy of them is replaced in whatever is written: as
# sent, JSON-escaped character by character (``sk-\u0053...``, which a JSON
# reader would decode back into the key), percent-encoded, and in base64 and
# hex (``_encodings``), each of those spelled in the same three ways. A value shorter
# than MIN_SECRET would also match ordinary text, so it is not scrubbed, and
# Secrets.unscrubbed says where it came from, for the caller to report.

#: a value shorter than this is not scrubbed by value (it would match ordinary text)
MIN_SECRET = 8
_REDACTED_BYTES = REDACTED.encode()


def _hex(code: int, width: int) -> str:
    """A regex for ``code`` as ``width`` hex digits, each letter in either case."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in f"{code:0{width}x}")


def _char_pattern(char: str) -> str:
    """A regex for one character in any of its spellings: as is, JSON-escaped, percent-encoded."""
    forms = [re.escape(char), "".join("%" + _hex(b, 2) for b in char.encode("utf-8"))]
    if ord(char) < 0x10000:
        forms.append(r"\\u" + _hex(ord(char), 4))
    if char == "/":
        forms.append(r"\\/")
    if char == " ":
        forms.append(r"\+")
    return "(?:" + "|".join(forms) + ")"


@lru_cache(maxsize=64)
def _patterns(spelled: tuple[str, ...]) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """The scrub pattern of these spellings and the bytes they can start with. Built
    once per set of values: a proxy sees the same key on every request, and the
    pattern of one key (every character in every spelling) took 14 ms to build."""
    alternatives = ["".join(_char_pattern(c) for c in v) for v in spelled]
    pattern = re.compile("|".join(alternatives).encode("utf-8"))
    firsts = {v[0].encode("utf-8")[:1] for v in spelled} | {b"\\", b"%", b"+"}
    return pattern, re.compile(b"[" + b"".join(re.escape(f) for f in firsts) + b"]")


def _encodings(value: str) -> list[str]:
    """``value`` as base64 and as hex: a server or a model may hand a key back
    encoded (a Basic header, a signed blob, a dump of bytes). Base64 is spelled
    at each of the three offsets a value can start at inside a longer encoded
    text, keeping only the characters its bytes alone decide (standard and
    URL-safe alphabets); hex in lower and upper case."""
    raw = value.encode("utf-8")
    out = []
    for shift in range(3):
        first = -(-shift * 8 // 6)  # the first character no byte before the value touches
        last = (shift + len(raw)) * 8 // 6  # past the last one no byte after it touches
        core = base64.b64encode(bytes(shift) + raw + bytes(2)).decode("ascii")[first:last]
        out += [core, core.translate(_URLSAFE)]
    out += [raw.hex(), raw.hex().upper()]
    return [e for e in dict.fromkeys(out) if len(e) >= MIN_SECRET and e != value]


_URLSAFE = str.maketrans("+/", "-_")


def _basic_parts(token: str) -> list[str]:
    """The user and password inside a Basic credential, when it decodes."""
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return []
    user, colon, password = decoded.partition(":")
    return [decoded, password] if colon and password else [decoded]


class Secrets:
    """The credential values one request carried, and a way to scrub them out of text.

    ``unscrubbed`` names (never shows) the values too short to scrub safely.
    """

    def __init__(
        self, named: Iterable[tuple[str, str]] = (), unscrubbed: Iterable[str] = ()
    ) -> None:
        """``named``: (where it came from, value) pairs; ``unscrubbed``: sources already
        found too short (a copy of another ``Secrets``, rebuilt from its two fields)."""
        values: dict[str, None] = {}
        self.unscrubbed: list[str] = list(unscrubbed)
        for where, value in named:
            value = value.strip()
            if not value or value == REDACTED:
                continue
            if len(value) < MIN_SECRET:
                if where not in self.unscrubbed:
                    self.unscrubbed.append(where)
                continue
            values[value] = None
        # a value holding another ("Bearer sk-..." holds "sk-...") is covered by it
        kept = [v for v in values if not any(o != v and o in v for o in values)]
        self.values: tuple[str, ...] = tuple(sorted(kept, key=len, reverse=True))
        #: the values and their base64 and hex spellings, each also spelled character
        #: by character as the pattern allows
        self.spelled: tuple[str, ...] = tuple(
            dict.fromkeys(s for v in self.values for s in (v, *_encodings(v)))
        )
        self._pattern: re.Pattern[bytes] | None = None
        #: the same alternatives over text, for ``spans`` (compiled when first asked)
        self._text_pattern: re.Pattern[str] | None = None
        #: the bytes a spelling of a value can start with: where a cut spelling may begin
        self._first: re.Pattern[bytes] | None = None
        #: the longest spelling of any value, in bytes: the most a scrubber holds back
        self.longest = max((len(v.encode("utf-8")) * 6 for v in self.spelled), default=0)
        if self.values:
            self._pattern, self._first = _patterns(self.spelled)
        #: the values whose spelling as they are starts with a byte: a tail that starts
        #: there with no escape can begin only those (a digit, most often one hex form)
        self._starting: dict[int, list[str]] = {}
        #: the same, as their bytes: a tail with no escape in it begins one of them
        #: exactly when it is a shorter prefix of its bytes
        self._starting_bytes: dict[int, list[bytes]] = {}
        for v in self.spelled:
            utf8 = v.encode("utf-8")
            self._starting.setdefault(utf8[0], []).append(v)
            self._starting_bytes.setdefault(utf8[0], []).append(utf8)

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:  # never the values
        return f"Secrets({len(self.values)} values, {len(self.unscrubbed)} unscrubbed)"

    @classmethod
    def of_request(
        cls,
        headers: Headers | None = None,
        url: str = "",
        unsent: Iterable[tuple[str, str]] = (),
    ) -> Secrets:
        """Every credential in the request's headers (by name) and URL (userinfo, query),
        and the ``unsent`` ones: (where, value) pairs the request was made with but does
        not carry, such as the AWS secret key that signed it."""
        named: list[tuple[str, str]] = list(unsent)
        pairs = (headers.items() if isinstance(headers, Mapping) else headers) if headers else ()
        for name, raw in pairs:
            lowered, value = str(name).strip().lower(), str(raw)
            if lowered in ("cookie", "set-cookie"):
                for crumb in value.split(";"):
                    _, eq, crumb_value = crumb.partition("=")
                    if eq:
                        named.append((f"the {lowered} header", crumb_value))
            elif lowered == _SUBPROTOCOLS:
                named += _subprotocol_secrets(value)
            elif is_secret_name(lowered):
                where = f"the {lowered} header"
                named.append((where, value))
                scheme, space, token = value.strip().partition(" ")
                if space and lowered in ("authorization", "proxy-authorization"):
                    named.append((where, token))
                    if scheme.lower() == "basic":
                        named += [(where, part) for part in _basic_parts(token.strip())]
                    elif scheme.upper() == _SIGV4:
                        named += [(where, part) for part in _sigv4_parts(token)]
        named += _url_secrets(url)
        return cls(named)

    def scrub(self, data: bytes) -> bytes:
        """``data`` with every spelling of every value replaced by ``[redacted]``."""
        if self._pattern is None:
            return data
        return self._pattern.sub(_REDACTED_BYTES, data)

    def scrub_text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self.scrub(text.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")

    def scrub_value(self, value: Any) -> Any:
        """A JSON-like value (strings in dicts and lists, at any depth) with its strings
        scrubbed; keys too."""
        if self._pattern is None:
            return value
        return _map_strings(value, self.scrub_text, self.scrub)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``scrub_text`` would replace something in ``text``: (start, end) pairs
        in order, for a view that keeps its own offsets (styles, matches)."""
        if not self.values:
            return []
        if self._text_pattern is None:
            alternatives = ["".join(_char_pattern(c) for c in v) for v in self.spelled]
            self._text_pattern = re.compile("|".join(alternatives))
        return [m.span() for m in self._text_pattern.finditer(text)]

    def fingerprints(self, salt: bytes | None = None) -> Fingerprints:
        """What finds these values again without holding them (see ``Fingerprints``);
        ``salt``: random unless given."""
        from secrets import token_bytes  # only a writer makes fingerprints (start-up)

        return Fingerprints.of(self.spelled, token_bytes(16) if salt is None else salt)

    def scrubber(self) -> Scrubber:
        return Scrubber(self)

    def cut_at(self, data: bytes) -> int:
        """Where the longest tail of ``data`` that may begin a spelling of a value starts
        (``len(data)`` when none does): the part a scrubber holds back."""
        if self._first is None:
            return len(data)
        start = max(len(data) - self.longest + 1, 0)
        # every spelling but the one as it is starts with an escape byte: a tail past
        # the last of them is checked with one bytes comparison per value, not
        # character by character (the proxy checks every read it forwards)
        escaped = max(data.rfind(b"\\"), data.rfind(b"%"), data.rfind(b"+"))
        for m in self._first.finditer(data, start):
            at = m.start()
            tail = data[at:]
            if at > escaped:
                n = len(tail)
                if any(
                    n < len(v) and v.startswith(tail)
                    for v in self._starting_bytes.get(data[at], ())
                ):
                    return at
                continue
            if tail[1:2] and tail[:1] == b"\\" and tail[1:2] not in b"uU/":
                continue  # an escaped quote in JSON text: the escape of no character of a key
            values = self.spelled if data[at] in _ESCAPES else self._starting.get(data[at], ())
            if any(_prefix_of_spelling(tail, value) for value in values):
                return at
        return len(data)


#: the scheme of an AWS Signature Version 4 authorization header
_SIGV4 = "AWS4-HMAC-SHA256"
_SIGV4_FIELD = r"(Credential|Signature)=([^,\s]+)"  # compiled at first use


def _sigv4_parts(token: str) -> list[str]:
    """The access key id and the signature inside a SigV4 authorization header
    (``Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=...,
    Signature=hex``): either may come back on its own in an error message."""
    parts = []
    for name, value in re.findall(_SIGV4_FIELD, token):
        parts.append(value.partition("/")[0] if name == "Credential" else value)
    return parts


def _url_secrets(url: str) -> list[tuple[str, str]]:
    if not url:
        return []
    from urllib.parse import unquote, unquote_plus, urlsplit

    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    named: list[tuple[str, str]] = []
    if password:
        named.append(("the URL's password", unquote(password)))
        # sent as a Basic authorization header, which a server may echo too
        basic = f"{unquote(user or '')}:{unquote(password)}".encode()
        named.append(("the URL's password", base64.b64encode(basic).decode("ascii")))
    elif user and unquote(user) != REDACTED:
        # https://KEY@host: a user alone is how some gateways take a key
        named.append(("the URL's user", unquote(user)))
    for param in parts.query.split("&"):
        name, eq, value = param.partition("=")
        if eq and _is_secret_param(unquote(name)):
            named.append((f"the URL's {unquote(name)} parameter", unquote_plus(value)))
    return named


def _prefix_of_spelling(tail: bytes, value: str) -> bool:
    """Does ``tail`` start a spelling of ``value`` and end before it is complete?"""
    pos = 0
    for char in value:
        if pos == len(tail):
            return True
        rest = tail[pos:]
        step = _spelled(rest, char)
        if step is None:
            return False
        if step == 0:  # the rest is a cut spelling of this character
            return True
        pos += step
    return False  # a whole spelling: scrub() has replaced it already


#: the first bytes of the spellings that are not the character itself
_ESCAPES = b"\\%+"


@lru_cache(maxsize=1024)
def _forms(char: str) -> tuple[bytes, ...]:
    """``char``'s spellings: as it is first, then the escapes (lower-case hex)."""
    utf8 = char.encode("utf-8")
    forms = [utf8, "".join(f"%{b:02x}" for b in utf8).encode()]
    if ord(char) < 0x10000:
        forms.append(f"\\u{ord(char):04x}".encode())
    if char == "/":
        forms.append(b"\\/")
    if char == " ":
        forms.append(b"+")
    return tuple(forms)


def _spelled(rest: bytes, char: str) -> int | None:
    """How many bytes of ``rest`` spell ``char``; 0 when ``rest`` ends inside a spelling
    of it; None when it does not spell it."""
    forms = _forms(char)
    for i, form in enumerate(forms):
        head = rest[: len(form)]
        same = head == form[: len(head)] if i == 0 else head.lower() == form[: len(head)]
        if same:
            return len(form) if len(head) == len(form) else 0
    return None


class Scrubber:
    """Scrubs a byte stream read by read, catching a value cut across two reads.

    A read whose end could be the start of a spelling of a value is held back
    (at most ``Secrets.longest`` bytes) until the next read decides; any other
    read passes whole, so read boundaries move only where a key may be cut.
    """

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets
        self._held = b""

    def feed(self, data: bytes) -> bytes:
        secrets = self.secrets
        if not secrets:
            return data
        data = secrets.scrub(self._held + data)
        cut = secrets.cut_at(data)
        self._held = data[cut:]
        return data[:cut]

    def close(self) -> bytes:
        """The end of the stream: what was held back (no value follows it now)."""
        held, self._held = self._held, b""
        return held


# -- fingerprints -----------------------------------------------------------------------
#
# A key streamed back in two pieces is in no single read, so the scrub of the
# reads cannot see it: it is whole only once the pieces are joined, in a
# report. A process that holds the key (``live``, ``compare``) scrubs the report
# with its Secrets. One that never held it (``check`` of a recording, the
# proxy's flows, whose forwarding process alone holds the keys) gets
# Fingerprints instead: per spelled value, its length, its first characters (a
# quarter of it at most, four at most: a vendor's prefix such as "sk-p"), 16 bits
# of a salted SHA-256 and a salted scrypt hash. Where the head occurs in the
# joined text, the window of the value's length whose two hashes match is the
# value found again, and the Secrets of what was found scrub it in every
# spelling. A search is one fast string search per head, a SHA-256 per place a
# head occurs, and scrypt only for the 1 in 65,536 that pass; scrypt
# makes each guess at a value from its fingerprint cost tens of milliseconds.

_SCRYPT: dict[str, int] = {"n": 2**12, "r": 8, "p": 1, "dklen": 16}
_ESCAPE = r"\\u([0-9a-fA-F]{4})|\\/"  # compiled at first use


# hashlib (with OpenSSL) is loaded where a fingerprint is made or sought, not
# by every reader of a recording (start-up)
def _quick(salt: bytes, value: str) -> str:
    import hashlib

    return hashlib.sha256(salt + value.encode("utf-8", "surrogatepass")).hexdigest()[:4]


def _slow(salt: bytes, value: str) -> str:
    import hashlib

    return hashlib.scrypt(value.encode("utf-8", "surrogatepass"), salt=salt, **_SCRYPT).hex()


class Fingerprints:
    """Enough of some secrets to find them in a text and scrub them, never their values."""

    def __init__(self, salt: bytes, prints: Iterable[tuple[int, str, str, str]]) -> None:
        """``prints``: (length, head, quick hash, slow hash) per value."""
        self.salt = salt
        self.prints = tuple(prints)
        self._by_head: dict[str, list[tuple[int, str, str]]] = {}
        for n, head, quick, slow in self.prints:
            self._by_head.setdefault(head, []).append((n, quick, slow))

    @classmethod
    def of(cls, values: Iterable[str], salt: bytes) -> Fingerprints:
        prints = [
            (len(v), v[: min(4, len(v) // 4)], _quick(salt, v), _slow(salt, v)) for v in values
        ]
        return cls(salt, prints)

    def __bool__(self) -> bool:
        return bool(self.prints)

    def __repr__(self) -> str:
        return f"Fingerprints({len(self.prints)} values)"

    def as_json(self) -> dict[str, Any]:
        """As a recording's header and the proxy's pipe carry it."""
        return {
            "salt": base64.b64encode(self.salt).decode("ascii"),
            "values": [
                {"n": n, "head": head, "quick": quick, "slow": slow}
                for n, head, quick, slow in self.prints
            ],
        }

    @classmethod
    def from_json(cls, doc: Any) -> Fingerprints | None:
        """What ``as_json`` wrote; None for anything else (a hand-edited file): the
        entries that are not fingerprints are left out."""
        if not isinstance(doc, Mapping) or not isinstance(doc.get("salt"), str):
            return None
        try:
            salt = base64.b64decode(doc["salt"], validate=True)
        except ValueError:
            return None
        prints = []
        values = doc.get("values")
        for item in values[:_MAX_PRINTS] if isinstance(values, list) else ():
            if not isinstance(item, Mapping):
                continue
            n, head = item.get("n"), item.get("head")
            quick, slow = item.get("quick"), item.get("slow")
            if (
                isinstance(n, int)
                and not isinstance(n, bool)
                and MIN_SECRET <= n <= _MAX_PRINTED
                and isinstance(head, str)
                and 0 < len(head) <= min(4, n // 4)
                and isinstance(quick, str)
                and isinstance(slow, str)
            ):
                prints.append((n, head, quick, slow))
        return cls(salt, prints) if prints else None

    def found_in(self, value: Any) -> Secrets:
        """The values these fingerprints stand for that occur in the strings of
        ``value`` (a JSON-like document), as they are or JSON-escaped or
        percent-encoded."""
        return Secrets(("a fingerprint", v) for v in self.values_in(value, {}))

    def values_in(self, value: Any, tried: dict[str, bool]) -> list[str]:
        """The values found in ``value``'s strings; ``tried``: each window scrypt has
        judged (True when it is a value), kept by a caller that asks again and again."""
        found: dict[str, None] = {}
        for text in _strings(value):
            for form in _decodings(text):
                for head, prints in self._by_head.items():
                    # str.find, not a regular expression: a few times quicker on long
                    # text, and each place a head occurs is found, overlapping or not
                    at = form.find(head)
                    while at >= 0:
                        for n, quick, slow in prints:
                            window = form[at : at + n]
                            if len(window) < n or _quick(self.salt, window) != quick:
                                continue
                            # scrypt once per window that passes (the key, many times)
                            if window not in tried:
                                tried[window] = _slow(self.salt, window) == slow
                            if tried[window]:
                                found[window] = None
                        at = form.find(head, at + 1)
        return list(found)

    def scrub_value(self, value: Any) -> Any:
        """``value`` with every value these fingerprints stand for scrubbed out."""
        secrets = self.found_in(value)
        return secrets.scrub_value(value) if secrets else value


#: windows a TextScrub remembers having checked with scrypt, at most
_TRIED_KEPT = 4096


class TextScrub:
    """Scrubs one text at a time with what a stream knows of its credentials, for a
    view that shows small parts of the joined text again and again (the app's
    panes, a step at a time) and cannot scrub the whole stream each time.

    ``Secrets`` scrub as they are. ``Fingerprints`` scrub the values found so far
    in what was shown: a head's places are hashed with SHA-256 each time, but a
    window that passes is judged by scrypt once, however often it is shown again.
    """

    def __init__(self, known: Secrets | Fingerprints | None) -> None:
        self.known = known
        self._prints = known if isinstance(known, Fingerprints) else None
        self.secrets = known if isinstance(known, Secrets) else Secrets()
        #: the windows scrypt judged; one enters only when its 16-bit hash passes
        #: (1 place in 65,536), and at _TRIED_KEPT the ones that were no value go
        self._tried: dict[str, bool] = {}
        self._found: dict[str, None] = {}

    def __bool__(self) -> bool:
        return bool(self.secrets) or bool(self._prints)

    def __repr__(self) -> str:
        return f"TextScrub({self.known!r})"

    @property
    def reach(self) -> int:
        """The longest spelling of a value, in characters: how far before a window a
        value cut by the window's edge may begin."""
        if self._prints is not None:
            # a character is 4 UTF-8 bytes at most, each "%XX" at most
            return max(n for n, *_ in self._prints.prints) * 12
        return self.secrets.longest

    def _learn(self, text: str) -> None:
        if self._prints is None:
            return
        if len(self._tried) > _TRIED_KEPT:
            self._tried = {window: True for window in self._found}
        new = [v for v in self._prints.values_in(text, self._tried) if v not in self._found]
        if new:
            self._found.update(dict.fromkeys(new))
            self.secrets = Secrets(("a fingerprint", v) for v in self._found)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where a value is in ``text``, in any spelling: (start, end) pairs in order."""
        self._learn(text)
        return self.secrets.spans(text)

    def text(self, text: str) -> str:
        if not self:
            return text
        self._learn(text)
        return self.secrets.scrub_text(text)


#: the longest value a fingerprint is taken from a file for (a window is hashed at each
#: place its head occurs), and the most fingerprints taken (each head is searched for
#: in the whole report): a request carries a few credentials, each spelled seven ways
_MAX_PRINTED = 64 * 1024
_MAX_PRINTS = 256


def _decodings(text: str) -> list[str]:
    """``text`` as it is, and with its JSON escapes and its percent-encoding undone."""
    forms = [text]
    if "\\" in text:
        forms.append(
            re.sub(_ESCAPE, lambda m: chr(int(m.group(1), 16)) if m.group(1) else "/", text))
    if "%" in text:
        forms.append(_unquote(text))
    return forms


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, keys too, however deep (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _map_strings(value: Any, text: Any, data: Any) -> Any:
    """``value`` rebuilt with ``text`` applied to its strings (keys too) and ``data``
    to its bytes, however deep (no recursion)."""
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, str):
            holder[key] = text(item)
        elif isinstance(item, (bytes, bytearray)):
            holder[key] = data(bytes(item))
        elif isinstance(item, Mapping):
            copy: dict[Any, Any] = {}
            for k, v in item.items():
                copy[text(k) if isinstance(k, str) else k] = v
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(item, (list, tuple)):
            items = list(item)
            holder[key] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]
