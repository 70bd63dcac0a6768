"""The AWS event-stream decoder: its own rules, and agreement with botocore's parser.

botocore's ``EventStreamBuffer`` is AWS's reference reader in Python. On every
bundled ``.eventstream`` sample, and on damaged copies of them, fraglens must
read exactly the messages botocore reads, in the same order, with the same
headers and payloads, up to the point where botocore gives up; where it gives
up, fraglens reports damage instead of raising, and keeps going.
"""

from __future__ import annotations

import json
import random
import zlib

import pytest

from fraglens.framing.detect import read_stream
from fraglens.framing.eventstream import (
    Damage,
    EventStreamDecoder,
    Message,
    encode_message,
    looks_like_eventstream,
)

from .conftest import SAMPLES

botocore_es = pytest.importorskip("botocore.eventstream")

BINARY = sorted(SAMPLES.glob("*.eventstream"))


def decode(data: bytes, step: int | None = None) -> list[Message | Damage]:
    decoder = EventStreamDecoder()
    out: list[Message | Damage] = []
    if step is None:
        out += decoder.feed(data)
    else:
        for i in range(0, len(data), step):
            out += decoder.feed(data[i : i + step])
    return out + decoder.close()


def botocore_messages(data: bytes) -> tuple[list[tuple[dict, bytes]], bool]:
    """What botocore reads, and whether it stopped on an error."""
    buf = botocore_es.EventStreamBuffer()
    buf.add_data(data)
    out = []
    try:
        for message in buf:
            out.append((dict(message.headers), bytes(message.payload)))
    except botocore_es.ParserError:
        return out, True
    return out, False


def ours(items: list[Message | Damage]) -> list[tuple[dict, bytes]]:
    return [(m.headers, m.payload) for m in items if isinstance(m, Message)]


def test_there_are_binary_samples():
    assert len(BINARY) >= 6


@pytest.mark.parametrize("path", BINARY, ids=lambda p: p.name)
def test_agrees_with_botocore_on_every_sample(path):
    data = path.read_bytes()
    theirs, failed = botocore_messages(data)
    items = decode(data)
    if not failed and not any(isinstance(i, Damage) for i in items):
        assert ours(items) == theirs
    else:
        # botocore stops at the first bad message; everything before it agrees
        assert ours(items)[: len(theirs)] == theirs
        assert any(isinstance(i, Damage) for i in items)


@pytest.mark.parametrize("path", BINARY, ids=lambda p: p.name)
def test_any_split_of_the_input_reads_the_same(path):
    data = path.read_bytes()
    whole = decode(data)
    for step in (1, 7, 64):
        assert decode(data, step) == whole


def _mutations(data: bytes, seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        mutated = bytearray(data)
        how = rng.choice(("flip", "cut", "insert", "delete"))
        at = rng.randrange(len(data))
        if how == "flip":
            mutated[at] ^= 1 << rng.randrange(8)
        elif how == "cut":
            del mutated[at:]
        elif how == "insert":
            mutated[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        else:
            del mutated[at : at + rng.randrange(1, 9)]
        yield how, bytes(mutated)


@pytest.mark.parametrize("path", BINARY, ids=lambda p: p.name)
def test_damaged_copies_agree_with_botocore_up_to_the_damage(path):
    """Flip, cut, insert, delete bytes: no exception ever; the messages before
    the first bad one are botocore's; damage is reported, never hidden; and
    every message botocore accepts after resync is byte-identical to one of
    the original's (a false prelude would give a message that never was)."""
    data = path.read_bytes()
    original = ours(decode(data))
    for how, mutated in _mutations(data, seed=sum(data) % 997, count=60):
        items = decode(mutated)
        theirs, failed = botocore_messages(mutated)
        got = ours(items)
        assert got[: len(theirs)] == theirs, how
        damaged = any(isinstance(i, Damage) for i in items)
        if failed or len(mutated) < len(data) and not damaged:
            # botocore stopped (or the cut fell between messages): fewer messages, no lies
            assert damaged or got == original[: len(got)], how
        for message in got:
            assert message in original, f"{how}: a message that was not in the stream"


def test_a_cut_message_is_damage_with_the_announced_size():
    message = encode_message({":event-type": "chunk"}, b'{"bytes":""}')
    items = decode(message + message[:20])
    assert isinstance(items[0], Message)
    assert isinstance(items[1], Damage) and items[1].kind == "cut"
    assert f"of the {len(message)}" in items[1].reason
    assert items[1].span == (len(message), len(message) + 20)


def test_a_message_crc_mismatch_is_skipped_by_its_trusted_length():
    a = encode_message({":event-type": "messageStart"}, b'{"role":"assistant"}')
    b = bytearray(encode_message({":event-type": "messageStop"}, b'{"stopReason":"tool_use"}'))
    b[-6] ^= 0xFF  # inside the payload: the prelude still holds, the message CRC not
    c = encode_message({":event-type": "metadata"}, b"{}")
    items = decode(a + bytes(b) + c)
    assert [type(i).__name__ for i in items] == ["Message", "Damage", "Message"]
    assert items[1].kind == "crc" and "message CRC" in items[1].reason
    assert items[2].headers[":event-type"] == "metadata"


def test_garbage_between_messages_is_skipped_once_and_reading_resumes():
    a = encode_message({":event-type": "messageStart"}, b"{}")
    junk = b"\r\nHTTP/1.1 chunk noise\r\n"
    items = decode(a + junk + a)
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["Message", "Damage", "Message"]
    assert items[1].span == (len(a), len(a) + len(junk))


def test_every_header_type_reads_as_botocore_reads_it():
    head = b"".join([
        b"\x01t\x00", b"\x01f\x01", b"\x01b\x02\xff", b"\x01s\x03\x01\x00",
        b"\x01i\x04\x00\x00\x01\x00", b"\x01l\x05" + (2**40).to_bytes(8, "big"),
        b"\x02by\x06\x00\x03abc", b"\x02st\x07\x00\x03h\xc3\xa9",
        b"\x02ts\x08" + (1700000000000).to_bytes(8, "big"), b"\x02id\x09" + bytes(range(16)),
    ])
    payload = b"{}"
    total = 12 + len(head) + len(payload) + 4
    lengths = total.to_bytes(4, "big") + len(head).to_bytes(4, "big")
    body = lengths + zlib.crc32(lengths).to_bytes(4, "big") + head + payload
    data = body + zlib.crc32(body).to_bytes(4, "big")
    (message,) = decode(data)
    theirs, failed = botocore_messages(data)
    assert not failed and ours([message]) == theirs
    assert message.headers["b"] == -1 and message.headers["l"] == 2**40


def test_a_prelude_announcing_more_than_the_limit_is_not_waited_for():
    lengths = (1 << 31).to_bytes(4, "big") + (0).to_bytes(4, "big")
    prelude = lengths + zlib.crc32(lengths).to_bytes(4, "big")
    assert not looks_like_eventstream(prelude + b"x" * 100)
    decoder = EventStreamDecoder()
    decoder.feed(prelude + b"x" * 100)
    assert len(decoder._buf) < 12  # scanned on, not buffered for 2 GiB


def test_detection_reads_binary_as_eventstream_and_text_never():
    data = BINARY[0].read_bytes()
    framed = read_stream(data)
    assert framed.framing == "eventstream"
    assert all(ev.span is not None for ev in framed.events)
    assert not looks_like_eventstream(b'data: {"a":1}\n\n')
    assert not looks_like_eventstream(b"\x00\x00\x00")


def test_error_messages_keep_their_header_text():
    headers = {":message-type": "error", ":error-code": "InternalFailure",
               ":error-message": "something broke"}
    data = encode_message(headers, b"")
    (ev,) = read_stream(data).events
    assert ev.event == "InternalFailure"
    assert json.loads(ev.data) == {"message": "something broke"}
