"""The diagnostics reference: every code explained, every example true to its code."""

from __future__ import annotations

import pytest

from fraglens.engine.diagnostics import CODES
from fraglens.engine.explanations import EXPLANATIONS, explain
from fraglens.fit.tools import read_tools
from fraglens.fit.verdicts import check_fit
from fraglens.framing.eventstream import encode_message
from fraglens.framing.sse import DEFAULT_MAX_LINE
from fraglens.reading.capture import stream_from_bytes


def test_every_code_has_an_explanation_and_every_explanation_a_code():
    assert set(EXPLANATIONS) == set(CODES)


@pytest.mark.parametrize("code", sorted(EXPLANATIONS))
def test_an_entry_says_all_four_things(code):
    entry = EXPLANATIONS[code]
    for field in (entry.means, entry.wire, entry.did, entry.todo):
        assert field.strip(), code
    assert 1 <= len(entry.wire.splitlines()) <= 4, code


def _message(payload: bytes = b'{"contentBlockIndex":0}') -> bytes:
    return encode_message({":event-type": "contentBlockStop"}, payload)


def _flipped() -> bytes:
    damaged = bytearray(_message())
    damaged[-6] ^= 0x01  # a payload bit: the message CRC no longer holds
    return _message() + bytes(damaged) + _message()


#: the binary (Bedrock) codes: their wire example describes bytes in words
BINARY_EXAMPLES = {
    "frame-damaged": _flipped,
    "frame-truncated": lambda: _message() + _message()[:20],
}


@pytest.mark.parametrize("code", sorted(EXPLANATIONS))
def test_the_wire_example_raises_its_code(code):
    """Each line of the example is one SSE event; fed to fraglens as a stream,
    it must raise the code it illustrates (the size limit needs a tiny limit)."""
    events = EXPLANATIONS[code].wire.splitlines()
    data = "".join(line + "\n\n" for line in events).encode("utf-8")
    if code in BINARY_EXAMPLES:  # the example describes bytes: these are they
        data = BINARY_EXAMPLES[code]()
    if code == "frame-too-large":  # the example's last line, as long as it says
        data = data.rstrip(b"\n") + b"x" * DEFAULT_MAX_LINE
    if code == "bytes-replaced":  # the example spells the byte that is not UTF-8
        data = data.replace(b"<0xFC>", b"\xfc")
    limit = {"max_arg_bytes": 8} if code == "args-over-limit" else {}
    stream, _ = stream_from_bytes(data, **limit)
    stream.close()
    found = stream.reassembler.diagnostics()
    tools = EXPLANATIONS[code].tools
    if tools is not None:  # a fit code: the calls held to the tools the example declared
        found += check_fit(stream, read_tools(tools)).diagnostics
    assert code in [d.code for d in found]


def test_explain_gives_the_summary_then_the_four_parts():
    text = explain("args-truncated")
    first, *rest = text.splitlines()
    assert first == "args-truncated (error): arguments end inside an open value"
    body = "\n".join(rest)
    # paragraphs are wrapped (at 78 unless told), the words all there
    assert " ".join(body.split()).startswith(" ".join(EXPLANATIONS["args-truncated"].means.split()))
    assert all(len(line) <= 78 for line in rest if not line.startswith("  data:"))
    assert '\n  data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n' in body
    assert body.index("On the wire") < body.index("What fraglens did") < body.index("What to do")
    assert text.endswith("\n")
    narrow = explain("args-truncated", width=50).splitlines()[1:]
    assert all(len(line) <= 50 for line in narrow if not line.startswith("  data:"))


def test_explain_refuses_an_unknown_code():
    with pytest.raises(KeyError):
        explain("no-such-code")
