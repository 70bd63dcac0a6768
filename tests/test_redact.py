"""Redaction by value: every spelling of every credential a request sent, read by read.

The URL and header-name rules are tested with the recording writer
(``test_recording.py``); here, what a server can echo back and in what form.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fraglens import redact
from fraglens.redact import MIN_SECRET, REDACTED, Fingerprints, Scrubber, Secrets, redact_url

KEY = "sk-fraglens-redact-9d2e4c7a1b"
SECRETS = Secrets.of_request({"authorization": f"Bearer {KEY}"})


def _json_escaped(text: str) -> str:
    """Every character as a JSON \\u escape, upper-case hex: what no reader leaves as is."""
    return "".join(f"\\u{ord(c):04X}" for c in text)


@pytest.mark.parametrize(
    "spelling",
    [
        KEY,
        _json_escaped(KEY),
        # the escape of one character only, as in "sk-\u0053..." echoes
        KEY[:3] + "\\u0066" + KEY[4:],
        quote(KEY, safe=""),
        "".join(f"%{b:02x}" for b in KEY.encode()),  # every byte, lower-case hex
    ],
    ids=["as-sent", "json-escaped", "one-char-escaped", "url-encoded", "all-percent"],
)
def test_every_spelling_of_the_key_is_scrubbed(spelling):
    body = f'{{"error": {{"message": "Incorrect API key provided: {spelling}."}}}}'.encode()
    out = SECRETS.scrub(body)
    assert out == b'{"error": {"message": "Incorrect API key provided: [redacted]."}}'
    # and reading the JSON does not bring it back
    assert KEY not in json.loads(out)["error"]["message"]


def test_other_text_is_untouched():
    text = b'data: {"arguments": "{\\"path\\": \\"sk-other-value\\"}"}\n\n'
    assert SECRETS.scrub(text) == text


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13])
def test_a_key_cut_across_reads_is_scrubbed_and_nothing_else_is_lost(size):
    text = (
        f'data: echo {KEY} then {_json_escaped(KEY)} then %s; a \\"quote\\" and 100%%\n\n'
        % quote(KEY, safe="")
    ).encode()
    scrubber = Scrubber(SECRETS)
    out = b"".join(scrubber.feed(text[i : i + size]) for i in range(0, len(text), size))
    out += scrubber.close()
    assert out == SECRETS.scrub(text)
    assert out.count(REDACTED.encode()) == 3
    assert KEY.encode() not in out


def test_the_scrubber_holds_back_only_what_may_start_the_key():
    scrubber = Scrubber(SECRETS)
    # no prefix of any spelling at the end: the read passes whole
    assert scrubber.feed(b"data: {}\n\n") == b"data: {}\n\n"
    # "sk-fr" may be the key's start: held until the next read says
    assert scrubber.feed(b"data: sk-fr") == b"data: "
    assert scrubber.feed(b"ench\n\n") == b"sk-french\n\n"
    # the end of the stream gives back what is held
    assert scrubber.feed(b"x \\u0073") == b"x "
    assert scrubber.close() == b"\\u0073"


def test_held_bytes_are_bounded_by_the_longest_spelling():
    scrubber = Scrubber(SECRETS)
    out = scrubber.feed(b"%" * 10_000)
    assert 10_000 - len(out) < SECRETS.longest


def test_secrets_of_a_request_come_from_every_credential_it_carried():
    basic = base64.b64encode(b"alice:hunter2-long-password").decode()
    secrets = Secrets.of_request(
        [
            ("x-api-key", "anthropic-key-0123456789"),
            ("api-key", "azure-key-0123456789"),
            ("x-goog-api-key", "AIzaSy-goog-0123456789"),
            ("cookie", "theme=dark; session=cookie-session-0123456789"),
            ("proxy-authorization", f"Basic {basic}"),
            ("content-type", "application/json-not-a-secret"),
        ],
        url="https://bob:url-password-0123@h.test/v1?key=query-key-0123456789&alt=sse",
    )
    for value in (
        "anthropic-key-0123456789",
        "azure-key-0123456789",
        "AIzaSy-goog-0123456789",
        "cookie-session-0123456789",
        basic,
        "hunter2-long-password",
        "url-password-0123",
        "query-key-0123456789",
    ):
        assert secrets.scrub(f"<{value}>".encode()) == b"<[redacted]>", value
    assert secrets.scrub(b"application/json-not-a-secret") == b"application/json-not-a-secret"
    # the cookie "dark" is too short to scrub: said, not silently dropped (a Basic
    # credential's user name is not a secret, its password is)
    assert secrets.unscrubbed == ["the cookie header"]


def test_short_secrets_are_reported_and_never_shown():
    secrets = Secrets.of_request({"x-api-key": "k" * (MIN_SECRET - 1)})
    assert not secrets
    assert secrets.unscrubbed == ["the x-api-key header"]
    assert "k" * (MIN_SECRET - 1) not in repr(secrets)
    assert secrets.scrub(b"kkkkkkk") == b"kkkkkkk"


def test_scrub_value_walks_json_values():
    doc = {"headers": {"x-echo": KEY}, "list": [f"a {KEY}", 3, None], KEY: "key as a name"}
    assert SECRETS.scrub_value(doc) == {
        "headers": {"x-echo": REDACTED},
        "list": [f"a {REDACTED}", 3, None],
        REDACTED: "key as a name",
    }


@pytest.mark.parametrize(
    "url",
    [
        "http://user:password@127.0.0.1:8080/v1?key=abc&n=1",
        "http://sk-key-only@h.test/v1",
        "https://h.test/v1?api_key=x",
        # what earlier versions wrote: a bracket in the userinfo, which urlsplit refuses
        "http://[redacted]@h.test:80/v1?key=[redacted]",
    ],
)
def test_redact_url_is_idempotent_and_reparses(url):
    once = redact_url(url)
    assert redact_url(once) == once
    parts = urlsplit(once)  # raises on a bracket in the authority
    assert parts.password is None
    assert parts.hostname in ("127.0.0.1", "h.test")
    assert httpx.URL(once).host == parts.hostname
    assert "password" not in once and "sk-key-only" not in once


def test_redact_url_never_raises():
    assert redact_url("http://[::1") == "http://[::1"
    assert (
        redact_url("http://u:p@[bad/v1?token=t") == "http://%5Bredacted%5D@[bad/v1?token=[redacted]"
    )


def _redacted_by_urlsplit(url: str) -> str | None:
    """What redact_url gave for every URL before it learnt to leave urllib.parse
    unloaded for a plain one: urlsplit, the userinfo and query redacted,
    urlunsplit. None where urlsplit refuses the URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{quote(REDACTED, safe='')}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{name}={REDACTED}" if eq and redact._is_secret_param(redact._unquote(name)) else param
        for param in parts.query.split("&")
        for name, eq, _ in [param.partition("=")]
    ) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


#: the pieces a URL is made of here: a scheme (or none, or one urlsplit lowers),
#: then text of the characters that matter to urlsplit and to the plain URLs
_SCHEMES = ("https://", "http://", "wss://", "HTTPS://", "Https://", "h+t.-1://", "foo:",
            "1x://", "", "//")
#: mostly the characters of a plain URL, so that many are, and a few that no plain URL holds
_URL_PIECE = st.text("aZ09.-_~:/?&=", max_size=12) | st.text(
    "aZ09.-_~:/?#@%[]&=;+!$'()*, \t\n\x00\x1f\u2100é", max_size=12)


@given(st.sampled_from(_SCHEMES), _URL_PIECE, _URL_PIECE, _URL_PIECE)
@example("https://", "api.openai.com", "/v1/chat/completions", "")
@example("https://", "generativelanguage.googleapis.com",
         "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "?alt=sse&key=abcdefgh")
@example("https://", "h.test:8443", "/v1", "?token=[redacted]&n=1")
@example("https://", "user:pw@h.test", "/v1", "")
@example("foo:", "//h", "", "?")
@example("https://", "h", "/p?", "")
@settings(max_examples=400)
def test_redact_url_gives_what_urlsplit_gave(scheme: str, host: str, path: str, query: str):
    url = scheme + host + path + query
    expected = _redacted_by_urlsplit(url)
    if expected is not None:
        assert redact_url(url) == expected
    if redact._PLAIN_URL.fullmatch(url):
        # a plain URL is split where urlsplit splits it and comes back whole
        assert expected is not None
        head, _, rest = url.partition("://")
        host_part = rest.partition("/")[0]
        parts = urlsplit(url)
        netloc = host_part.partition("?")[0]
        assert (parts.scheme, parts.netloc, parts.fragment) == (head, netloc, "")
        assert urlunsplit(parts) == url


def test_the_userinfo_is_redacted_percent_encoded():
    assert redact._USERINFO == quote(REDACTED, safe="")
    assert redact_url("https://u:p@h.test/v1") == f"https://{quote(REDACTED, safe='')}@h.test/v1"


def test_a_sigv4_authorization_gives_its_key_id_and_signature_and_unsent_values_count():
    signature = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    auth = (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE1234/20260101/us-east-1/bedrock/aws4_request,"
        f" SignedHeaders=content-type;host;x-amz-date, Signature={signature}"
    )
    secrets = Secrets.of_request(
        [("Authorization", auth), ("X-Amz-Security-Token", "session/token+value==")],
        unsent=[("the AWS secret access key", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")],
    )
    # each one alone, as an error message may repeat it, and JSON-escaped
    for value in (
        "AKIDEXAMPLE1234",
        signature,
        "session/token+value==",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    ):
        assert secrets.scrub_text(f"<{value}>") == f"<{REDACTED}>"
        escaped = "".join(f"\\u{ord(c):04x}" for c in value)
        assert secrets.scrub_text(f"<{escaped}>") == f"<{REDACTED}>"
    # the region and the date in the scope are no secrets
    assert secrets.scrub_text("us-east-1 20260101") == "us-east-1 20260101"


# -- base64 and hex ---------------------------------------------------------------------


@pytest.mark.parametrize("before", ["", "u", "us", "use"])
@pytest.mark.parametrize("urlsafe", [False, True], ids=["standard", "url-safe"])
def test_base64_of_the_key_is_scrubbed_at_every_offset_in_a_longer_text(before, urlsafe):
    """A key inside base64 (a Basic credential, a signed blob) is spelled one of three
    ways, by where it starts; the characters its own bytes alone decide are scrubbed."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(f"{before}:{KEY}:tail".encode())
    out = SECRETS.scrub(b"auth " + blob + b" end")
    assert out.startswith(b"auth ") and out.endswith(b" end") and REDACTED.encode() in out
    # nothing left in the output decodes to the key
    for start in range(len(out)):
        for end in range(start + 4, len(out) + 1):
            chunk = out[start:end].translate(bytes.maketrans(b"-_", b"+/"))
            try:
                decoded = base64.b64decode(chunk + b"=" * (-len(chunk) % 4))
            except ValueError:
                continue
            assert KEY.encode()[4:-4] not in decoded


@pytest.mark.parametrize("case", [str.lower, str.upper])
def test_hex_of_the_key_is_scrubbed(case):
    spelled = case(KEY.encode().hex())
    out = SECRETS.scrub_text(f'{{"dump": "{spelled}", "as": "{quote(spelled)}"}}')
    assert out == f'{{"dump": "{REDACTED}", "as": "{REDACTED}"}}'


def test_a_base64_spelling_cut_across_two_reads_is_scrubbed():
    blob = base64.b64encode(KEY.encode())
    data = b"data: " + blob + b"\n\n"
    for cut in range(1, len(data)):
        scrubber = SECRETS.scrubber()
        out = scrubber.feed(data[:cut]) + scrubber.feed(data[cut:]) + scrubber.close()
        assert blob[:-4] not in out, cut


def test_scrub_value_walks_a_value_deeper_than_the_recursion_limit():
    deep: object = KEY
    for _ in range(5000):
        deep = [deep]
    out = SECRETS.scrub_value(deep)
    for _ in range(5000):
        out = out[0]
    assert out == REDACTED


# -- fingerprints ------------------------------------------------------------------------


def test_fingerprints_hold_no_spelling_of_the_key():
    text = json.dumps(SECRETS.fingerprints().as_json())
    for spelled in (KEY, KEY[4:], _json_escaped(KEY), KEY.encode().hex(),
                    base64.b64encode(KEY.encode()).decode()[:-4]):  # fmt: skip
        assert spelled not in text and spelled.lower() not in text.lower()
    for item in json.loads(text)["values"]:
        assert len(item["head"]) <= min(4, item["n"] // 4)


def test_fingerprints_find_the_key_in_a_joined_text_and_scrub_every_spelling():
    prints = Fingerprints.from_json(json.loads(json.dumps(SECRETS.fingerprints().as_json())))
    assert prints is not None
    doc = {
        "arguments": {"note": f"the key {KEY}!"},
        "arguments_raw": '{"note": "' + _json_escaped(KEY) + '"}',
        "text": {"0": f"url {quote(KEY, safe='').replace('-', '%2D')}"},
        "b64": base64.b64encode(KEY.encode()).decode(),
        "other": "sk-fraglens-redact-0000000000 is not the key",
    }
    assert prints.scrub_value(doc) == {
        "arguments": {"note": f"the key {REDACTED}!"},
        "arguments_raw": '{"note": "' + REDACTED + '"}',
        "text": {"0": f"url {REDACTED}"},
        # the last character holds bits past the key's (the padding's): it stays
        "b64": REDACTED + doc["b64"][len(KEY) * 8 // 6 :],
        "other": "sk-fraglens-redact-0000000000 is not the key",
    }
    # each spelling alone is found too (the escaped and encoded ones by decoding)
    for alone in (doc["arguments_raw"], doc["text"]["0"], doc["b64"]):
        assert REDACTED in prints.scrub_value(alone)


@pytest.mark.parametrize(
    "junk",
    [None, [], {"salt": 1}, {"salt": "not base64!"}, {"salt": "AAAA", "values": "x"},
     {"salt": "AAAA", "values": [{"n": 10**9, "head": "sk", "quick": "", "slow": ""}]},
     {"salt": "AAAA", "values": [{"n": 40, "head": "sk-long-head", "quick": "", "slow": ""}]},
     {"salt": "AAAA", "values": [{"n": True, "head": "s", "quick": "", "slow": ""}]}],
)  # fmt: skip
def test_fingerprints_from_a_hand_edited_file_are_refused_not_trusted(junk):
    assert Fingerprints.from_json(junk) is None


def _cut_at_char_by_char(secrets: Secrets, data: bytes) -> int:
    """cut_at as it was: every candidate tail checked character by character."""
    from fraglens.redact import _ESCAPES, _prefix_of_spelling

    start = max(len(data) - secrets.longest + 1, 0)
    for at in range(start, len(data)):
        first = data[at : at + 1]
        if first in _ESCAPES and first:
            values = secrets.spelled
        else:
            values = tuple(v for v in secrets.spelled if v.encode()[:1] == first)
        if any(_prefix_of_spelling(data[at:], value) for value in values):
            return at
    return len(data)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                KEY,
                '\\"',
                "\\U0073",
                KEY[:5],
                KEY[5:12],
                KEY[12:],
                "Bearer ",
                "\\u0073",
                "%73",
                "\\/",
                "+",
                "%",
                "\\",
                " data ",
                "9d2e",
                base64.b64encode(KEY.encode()).decode()[:9],
                "é",
                "sk-",
            ]
        ),  # fmt: skip
        max_size=12,
    ),
    st.integers(0, 6),
)
@example(["data ", KEY], 0)  # a whole value at the end: nothing of it is held back
@example(["data ", KEY], 3)
def test_the_held_back_tail_is_the_one_the_character_by_character_check_finds(pieces, cut):
    """cut_at compares a tail with no escape in it to each value's bytes at once;
    the place it finds is the one the check of each character finds."""
    data = "".join(pieces).encode()
    data = data[: max(len(data) - cut, 0)]
    assert SECRETS.cut_at(data) == _cut_at_char_by_char(SECRETS, data)
