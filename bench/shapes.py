"""Streams shaped as providers really send them, for the benchmarks.

Every generator here writes tool calls whose arguments (about ``arg_bytes``
of JSON per call, in ``frag``-character pieces) arrive with the per-event
variation the real captures in ``../shared/real_streams`` and
``sample_streams/`` show, so that no two consecutive events are the same
bytes around their pieces:

- **openai-chat**: the chunk's ``id``, ``created``, ``model``,
  ``service_tier``, ``system_fingerprint``, ``"usage":null``, and an
  ``"obfuscation"`` of 1-16 random characters on every chunk;
- **openai-responses**: an increasing ``sequence_number`` and an
  ``obfuscation`` on every delta;
- **anthropic**: 0-15 spaces of padding before each payload's closing brace;
- **gemini** (Vertex streamed arguments): one ``partialArgs`` entry per chunk
  (a number leaf, a string leaf in pieces with ``willContinue``, an empty
  piece to end it), ``usageMetadata`` with a growing token count on every
  chunk, CRLF line ends; ``gemini-long`` is one string value in all the
  pieces;
- **cohere**: the v2 ``tool-call-delta`` (Cohere's events vary only in the
  piece);
- **dashscope** (native, ``incremental_output``): an ``id:`` line counting
  up, the ``:HTTP_STATUS/200`` comment, and usage growing on every event;
- **bedrock-converse**, **bedrock-invoke**: a ``"p"`` padding of random
  length on every event-stream message;
- **ollama**: 100k text lines each with its own ``created_at`` (nanosecond
  stamps that grow), then the calls whole;
- **ai-sdk**: the UI message stream's ``tool-input-delta`` parts.

``calls`` > 1 interleaves the calls' events round-robin where the wire can
carry parallel calls so (Chat Completions and DashScope by ``index``, the AI
SDK by ``toolCallId``) and sends them one after the other where it cannot
(content blocks, output items, Gemini parts, Bedrock blocks, Ollama's one line).

``identical(...)`` keeps the old synthetic streams, one byte-identical
envelope around every piece, labelled as such in the tables.
``recording(...)`` wraps a body in a fraglens recording, as the network
delivered it: 1-3 events per read, some reads cut inside an event, some
inside a UTF-8 character.
"""

from __future__ import annotations

import base64
import bisect
import io
import json
import random
import string
from collections.abc import Callable, Iterator
from typing import Any

FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini", "gemini-long", "cohere",
           "dashscope", "bedrock-converse", "bedrock-invoke", "ollama", "ai-sdk")
#: formats whose parallel calls can interleave event by event on the wire
INTERLEAVED = frozenset({"openai-chat", "dashscope", "ai-sdk"})

_CHARS = string.ascii_letters + string.digits
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def rows(call: int, arg_bytes: int) -> list[dict]:
    """The arguments' value: rows of a number and a string with an escape and
    non-ASCII text (so that pieces cut escapes and characters)."""
    out, size, i = [], 0, 0
    while size < arg_bytes:
        text = f'word {i} of call {call}, déjà vu "quoted"'
        out.append({"line": i, "text": text})
        size += len(text) + 24
        i += 1
    return out


def args_text(call: int, arg_bytes: int) -> str:
    return _dumps({"rows": rows(call, arg_bytes)})


def _pieces(text: str, frag: int) -> list[str]:
    return [text[i : i + frag] for i in range(0, len(text), frag)]


def _turns(seqs: list[list[str]], interleave: bool) -> Iterator[tuple[int, str]]:
    """(call, piece) in wire order: round-robin, or one call after the other."""
    if not interleave:
        for c, seq in enumerate(seqs):
            for piece in seq:
                yield c, piece
        return
    for k in range(max(len(s) for s in seqs)):
        for c, seq in enumerate(seqs):
            if k < len(seq):
                yield c, seq[k]


def _obfuscation(rnd: random.Random) -> str:
    return "".join(rnd.choices(_CHARS, k=rnd.randint(1, 16)))


def _sse(events: Iterator[tuple[str | None, str]], eol: str = "\n") -> bytes:
    out = io.StringIO()
    for name, payload in events:
        if name:
            out.write(f"event: {name}{eol}")
        out.write(f"data: {payload}{eol}{eol}")
    return out.getvalue().encode()


def _chat(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    head = ('{"id":"chatcmpl-C2QD2NQfRbWW5ww5we2oDjS1mgHtK","object":"chat.completion.chunk",'
            '"created":1754693440,"model":"gpt-4o-2024-08-06","service_tier":"default",'
            '"system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":')
    tail = ',"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":'

    def chunk(delta: dict) -> str:
        return f"{head}{_dumps(delta)}{tail}{_dumps(_obfuscation(rnd))}}}"

    def events() -> Iterator[tuple[None, str]]:
        for c in range(calls):
            yield None, chunk({"tool_calls": [{"index": c, "id": f"call_{c}", "type": "function",
                                               "function": {"name": f"tool_{c}",
                                                            "arguments": ""}}]})
        seqs = [_pieces(args_text(c, arg_bytes), frag) for c in range(calls)]
        for c, piece in _turns(seqs, True):
            yield None, chunk({"tool_calls": [{"index": c, "function": {"arguments": piece}}]})
        yield None, (f'{head}{{}},"logprobs":null,"finish_reason":"tool_calls"}}],'
                     f'"usage":null,"obfuscation":{_dumps(_obfuscation(rnd))}}}')
        yield None, "[DONE]"
    return _sse(events())


def _responses(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    seq = iter(range(1 << 62))

    def ev(payload: dict) -> tuple[str, str]:
        return payload["type"], _dumps({"type": payload["type"], "sequence_number": next(seq),
                                        **{k: v for k, v in payload.items() if k != "type"}})

    def events() -> Iterator[tuple[str, str]]:
        yield ev({"type": "response.created", "response": {"id": "resp_1",
                                                           "status": "in_progress"}})
        for c in range(calls):
            item = {"id": f"fc_{c}", "type": "function_call", "status": "in_progress",
                    "arguments": "", "call_id": f"call_{c}", "name": f"tool_{c}"}
            yield ev({"type": "response.output_item.added", "output_index": c, "item": item})
            for piece in _pieces(args_text(c, arg_bytes), frag):
                yield ev({"type": "response.function_call_arguments.delta", "item_id": f"fc_{c}",
                          "output_index": c, "delta": piece,
                          "obfuscation": _obfuscation(rnd)})
            yield ev({"type": "response.function_call_arguments.done", "item_id": f"fc_{c}",
                      "output_index": c, "arguments": args_text(c, arg_bytes)})
        yield ev({"type": "response.completed", "response": {"id": "resp_1",
                                                             "status": "completed"}})
    return _sse(events())


def _anthropic_events(calls: int, arg_bytes: int, frag: int) -> Iterator[dict]:
    yield {"type": "message_start", "message": {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}
    for c in range(calls):
        yield {"type": "content_block_start", "index": c, "content_block": {
            "type": "tool_use", "id": f"toolu_{c}", "name": f"tool_{c}", "input": {}}}
        for piece in _pieces(args_text(c, arg_bytes), frag):
            yield {"type": "content_block_delta", "index": c,
                   "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield {"type": "content_block_stop", "index": c}
    yield {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
           "usage": {"output_tokens": 99}}
    yield {"type": "message_stop"}


def _anthropic(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    def padded(ev: dict) -> tuple[str, str]:
        text = _dumps(ev)
        return ev["type"], text[:-1] + " " * rnd.randint(0, 15) + "}"
    return _sse(padded(e) for e in _anthropic_events(calls, arg_bytes, frag))


def _gemini(calls: int, arg_bytes: int, frag: int, rnd: random.Random,
            long: bool = False) -> bytes:
    tail = ('"modelVersion":"gemini-3.1-pro-preview","createTime":"2026-04-02T17:03:50.399550Z",'
            '"responseId":"dqHOab6xGLzWodAPkPuViA4"}')
    tokens = iter(range(1, 1 << 62))

    def chunk(call: dict, finish: bool = False) -> tuple[None, str]:
        candidate: dict = {"content": {"role": "model", "parts": [{"functionCall": call}]}}
        if finish:
            candidate["finishReason"] = "STOP"
        usage = {"promptTokenCount": 29, "candidatesTokenCount": next(tokens),
                 "trafficType": "ON_DEMAND"}
        return None, f'{{"candidates":[{_dumps(candidate)}],"usageMetadata":{_dumps(usage)},{tail}'

    def entries(c: int) -> Iterator[dict]:
        if long:
            value = "".join(r["text"] + "\n" for r in rows(c, arg_bytes))
            for piece in _pieces(value, frag):
                yield {"jsonPath": "$.text", "stringValue": piece, "willContinue": True}
            yield {"jsonPath": "$.text", "stringValue": ""}
            return
        for r in rows(c, arg_bytes):
            i = r["line"]
            yield {"jsonPath": f"$.rows[{i}].line", "numberValue": i}
            for piece in _pieces(r["text"], frag):
                yield {"jsonPath": f"$.rows[{i}].text", "stringValue": piece,
                       "willContinue": True}
            yield {"jsonPath": f"$.rows[{i}].text", "stringValue": ""}

    def events() -> Iterator[tuple[None, str]]:
        for c in range(calls):
            yield chunk({"name": f"tool_{c}", "willContinue": True})
            for entry in entries(c):
                yield chunk({"partialArgs": [entry], "willContinue": True})
            yield chunk({}, finish=c == calls - 1)
    return _sse(events(), eol="\r\n")


def _cohere(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    def events() -> Iterator[tuple[str, str]]:
        yield "message-start", _dumps({"id": "m1", "type": "message-start", "delta": {
            "message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
                        "citations": []}}})
        for c in range(calls):
            yield "tool-call-start", _dumps({"type": "tool-call-start", "index": c, "delta": {
                "message": {"tool_calls": {"id": f"tool_{c}_x", "type": "function", "function": {
                    "name": f"tool_{c}", "arguments": ""}}}}})
            for piece in _pieces(args_text(c, arg_bytes), frag):
                yield "tool-call-delta", _dumps({"type": "tool-call-delta", "index": c, "delta": {
                    "message": {"tool_calls": {"function": {"arguments": piece}}}}})
            yield "tool-call-end", _dumps({"type": "tool-call-end", "index": c})
        yield "message-end", _dumps({"type": "message-end", "delta": {
            "finish_reason": "TOOL_CALL", "usage": {"billed_units": {"output_tokens": 9}}}})
    return _sse(events())


def _dashscope(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    out = io.StringIO()
    counter = iter(range(1, 1 << 62))

    def event(message: dict, finish: str = "null") -> None:
        n = next(counter)
        payload = {"output": {"choices": [{"message": message, "finish_reason": finish}]},
                   "usage": {"total_tokens": 268 + n, "output_tokens": n, "input_tokens": 268},
                   "request_id": "3aba7d41-3934-2a43-eb83-38eb3f2d1b17"}
        out.write(f"id:{n}\nevent:result\n:HTTP_STATUS/200\ndata:{_dumps(payload)}\n\n")

    def call(c: int, piece: str, first: bool) -> dict:
        fn = {"name": f"tool_{c}", "arguments": piece} if first else {"arguments": piece}
        tc = {"function": fn, "index": c}
        if first:
            tc.update(id=f"call_{c}", type="function")
        return {"content": "", "tool_calls": [tc], "role": "assistant"}

    seqs = [_pieces(args_text(c, arg_bytes), frag) for c in range(calls)]
    started: set[int] = set()
    for c, piece in _turns(seqs, True):
        event(call(c, piece, c not in started))
        started.add(c)
    event({"content": "", "role": "assistant"}, finish="tool_calls")
    return out.getvalue().encode()


def _pad(rnd: random.Random) -> str:
    """Bedrock's ``"p"``: a prefix of this alphabet, of a random length."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase + string.digits
    return alphabet[: rnd.randint(1, len(alphabet))]


def _bedrock_converse(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    from fraglens.framing.eventstream import encode_message

    def ev(name: str, payload: dict) -> bytes:
        body = _dumps({**payload, "p": _pad(rnd)}).encode()
        return encode_message({":event-type": name, ":content-type": "application/json",
                               ":message-type": "event"}, body)
    out = [ev("messageStart", {"role": "assistant"})]
    for c in range(calls):
        out.append(ev("contentBlockStart", {"contentBlockIndex": c, "start": {"toolUse": {
            "toolUseId": f"tooluse_{c}", "name": f"tool_{c}"}}}))
        out.extend(ev("contentBlockDelta", {"contentBlockIndex": c,
                                            "delta": {"toolUse": {"input": p}}})
                   for p in _pieces(args_text(c, arg_bytes), frag))
        out.append(ev("contentBlockStop", {"contentBlockIndex": c}))
    out.append(ev("messageStop", {"stopReason": "tool_use"}))
    return b"".join(out)


def _bedrock_invoke(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    from fraglens.framing.eventstream import encode_message

    def chunk(inner: dict) -> bytes:
        raw = _dumps(inner).encode()
        body = _dumps({"bytes": base64.b64encode(raw).decode(), "p": _pad(rnd)}).encode()
        return encode_message({":event-type": "chunk", ":content-type": "application/json",
                               ":message-type": "event"}, body)
    return b"".join(chunk(e) for e in _anthropic_events(calls, arg_bytes, frag))


def _ollama(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    micros = iter(range(118203, 1 << 62, 7))

    def line(message: str, done: bool = False, extra: str = "") -> str:
        us = next(micros)
        stamp = f"2025-09-12T08:{us // 60_000_000 % 60:02d}:{us // 1_000_000 % 60:02d}." \
                f"{us % 1_000_000:06d}{rnd.randint(0, 999):03d}Z"
        return (f'{{"model":"qwen3:8b","created_at":"{stamp}","message":{{"role":"assistant",'
                f'{message}}},"done":{"true" if done else "false"}{extra}}}\n')
    text = "".join(r["text"] + "\n" for r in rows(0, arg_bytes * calls))
    out = [line(f'"content":{_dumps(p)}') for p in _pieces(text, frag)]
    tool_calls = [{"function": {"name": f"tool_{c}", "arguments": {"rows": rows(c, arg_bytes)}}}
                  for c in range(calls)]
    out.append(line(f'"content":"","tool_calls":{_dumps(tool_calls)}'))
    out.append(line('"content":""', done=True, extra=',"done_reason":"stop","eval_count":9'))
    return "".join(out).encode()


def _ai_sdk(calls: int, arg_bytes: int, frag: int, rnd: random.Random) -> bytes:
    def events() -> Iterator[tuple[None, str]]:
        yield None, _dumps({"type": "start", "messageId": "msg-1"})
        yield None, _dumps({"type": "start-step"})
        for c in range(calls):
            yield None, _dumps({"type": "tool-input-start", "toolCallId": f"call_{c}",
                                "toolName": f"tool_{c}"})
        seqs = [_pieces(args_text(c, arg_bytes), frag) for c in range(calls)]
        for c, piece in _turns(seqs, True):
            yield None, _dumps({"type": "tool-input-delta", "toolCallId": f"call_{c}",
                                "inputTextDelta": piece})
        for c in range(calls):
            yield None, _dumps({"type": "tool-input-available", "toolCallId": f"call_{c}",
                                "toolName": f"tool_{c}",
                                "input": {"rows": rows(c, arg_bytes)}})
        yield None, _dumps({"type": "finish-step"})
        yield None, _dumps({"type": "finish"})
        yield None, "[DONE]"
    return _sse(events())


_MAKERS: dict[str, Callable[[int, int, int, random.Random], bytes]] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "gemini-long": lambda c, a, f, r: _gemini(c, a, f, r, long=True),
    "cohere": _cohere,
    "dashscope": _dashscope,
    "bedrock-converse": _bedrock_converse,
    "bedrock-invoke": _bedrock_invoke,
    "ollama": _ollama,
    "ai-sdk": _ai_sdk,
}


def real_shape(fmt: str, calls: int = 1, arg_bytes: int = 1_000_000, frag: int = 10,
               seed: int = 24) -> bytes:
    """``calls`` calls of about ``arg_bytes`` of arguments each, as ``fmt``
    really streams them; seeded, so every run times the same bytes."""
    return _MAKERS[fmt](calls, arg_bytes, frag, random.Random(seed))


def identical(fmt: str, calls: int = 1, arg_bytes: int = 1_000_000, frag: int = 10) -> bytes:
    """The synthetic stream of the earlier benchmarks: one byte-identical
    envelope around every piece (what the bulk readers were first built on)."""
    from engine import format_stream, make_stream

    if fmt == "openai-chat":
        return make_stream(calls, arg_bytes, frag)
    return format_stream(fmt, arg_bytes, frag)


def recording(body: bytes, seed: int = 24, secrets: Any = None, version: int = 3) -> bytes:
    """``body`` as a fraglens recording of the reads that delivered it: each
    read 1-3 events, one read in five cut inside the next event, and about
    one cut in three of those inside a UTF-8 character. ``secrets``: the
    fingerprints its header carries (``redact.Fingerprints``), if any;
    ``version``: 3, as fraglens writes it, or 1 (JSON lines)."""
    from fraglens.framing.recording import RecordingWriter

    rnd = random.Random(seed)
    sep = b"\r\n\r\n" if b"\r\n\r\n" in body[:4096] else b"\n\n"
    ends, at = [], 0
    while (at := body.find(sep, at)) >= 0:
        at += len(sep)
        ends.append(at)
    if not ends or ends[-1] != len(body):
        ends.append(len(body))
    out = io.BytesIO()
    writer = RecordingWriter(out, version=version)
    writer.start({"method": "POST", "url": "https://api.example.com/v1/chat/completions",
                  "headers": {"content-type": "application/json"}, "body": {"stream": True}},
                 created="2026-12-02T08:00:00.000Z", secrets=secrets)
    writer.response(200, {"content-type": "text/event-stream"}, t=0.25)
    t, pos = 0.25, 0
    while pos < len(body):
        k = min(bisect.bisect_right(ends, pos) + rnd.randint(0, 2), len(ends) - 1)
        cut = ends[k]
        if rnd.random() < 0.2 and k + 1 < len(ends):
            nxt = ends[k + 1]
            cut = rnd.randrange(cut + 1, nxt)
            if rnd.random() < 0.35:  # inside a character, where the next one is multi-byte
                high = body.find(b"\xc3", cut, nxt - 1)
                if high >= 0:
                    cut = high + 1
        t += rnd.uniform(0.0005, 0.02)
        writer.chunk(t, body[pos:cut])
        pos = cut
    writer.end("eof", t=t + 0.001)
    return out.getvalue()
