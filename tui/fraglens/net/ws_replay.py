"""What ``fraglens serve`` sends over a WebSocket: a recorded connection, response by response.

A recording of a WebSocket connection (``framing/recording.py``, version 2)
is cut into what the server said before the client asked for anything (the
Realtime API's ``session.created``...: the greeting, sent on connect) and one
script per response: the server's messages after each client
``response.create``, each with its delay after that request, until the next
request. ``serve`` answers the n-th ``response.create`` on a connection with
the n-th script (round-robin past the last), at the recorded pace, or at
``--rate`` for ``--pace fixed``; messages are sent exactly as they were
recorded, text as text and binary as binary.

A ``response.create`` with ``"generate": false`` asks the Responses API to
prepare a response's state without any output (Codex sends one when it
connects: a prewarm). Those are answered from the recorded answers to such
requests, in their own round; a recording that holds none answers one as the
API does, with a ``response.created`` and a ``response.completed`` carrying no
output, so that a client's prewarm never uses up a recorded response. A connection the server closed
in the recording (a close ``from`` the server) is closed the same way, with
the same code and reason, after the script it followed.

The chaos options apply to the server's messages of a connection, counted
from its first: ``--drop-after N`` closes it abruptly (code 1011) after N,
``--stall-after N`` pauses there. A message is whole on a WebSocket, so the
``--split-*`` options do not apply.

Sans-I/O: a parsed recording in, a :class:`WSScript` out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..framing.recording import Recording

__all__ = ["WSMessage", "WSScript", "prewarm_answer", "request_kind", "script_from_recording"]


@dataclass(frozen=True, slots=True)
class WSMessage:
    #: text as recorded, or binary bytes
    data: str | bytes
    #: seconds after the request it answers (the connection's start for the greeting)
    at: float


@dataclass(frozen=True)
class WSScript:
    """A recorded connection, as the server's side of it."""

    greeting: list[WSMessage]
    responses: list[list[WSMessage]]
    #: the recorded answers to ``"generate": false`` requests (prewarms)
    prewarms: list[list[WSMessage]]
    #: the close the server sent in the recording, after the script it followed:
    #: (after how many answered requests, prewarms counted; code; reason)
    server_close: tuple[int, int, str] | None = None

    @property
    def total(self) -> int:
        return len(self.greeting) + sum(len(r) for r in (*self.responses, *self.prewarms))

    def paced(self, messages: list[WSMessage], mode: str, rate: float) -> list[WSMessage]:
        """``messages`` at the recorded pace, or at ``rate`` a second for ``fixed``."""
        if mode == "recorded":
            return messages
        step = 1 / rate if rate > 0 else 0.0
        return [WSMessage(m.data, n * step) for n, m in enumerate(messages)]


def request_kind(text: str | None) -> str | None:
    """``generate`` for a ``response.create``, ``prewarm`` for one with
    ``"generate": false``, None for any other message."""
    if text is None or '"response.create"' not in text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("type") != "response.create":
        return None
    return "prewarm" if doc.get("generate") is False else "generate"


def prewarm_answer(number: int) -> list[WSMessage]:
    """What the API answers to a prewarm: a response with no output."""
    response = {"id": f"resp_fraglens_prewarm_{number}", "object": "response",
                "status": "in_progress", "output": []}
    done = dict(response, status="completed")
    return [WSMessage(json.dumps({"type": "response.created", "sequence_number": 0,
                                  "response": response}), 0.0),
            WSMessage(json.dumps({"type": "response.completed", "sequence_number": 1,
                                  "response": done}), 0.0)]


def script_from_recording(rec: Recording) -> WSScript:
    """The server's side of ``rec``: its greeting and one script per response."""
    greeting: list[WSMessage] = []
    responses: list[list[WSMessage]] = []
    prewarms: list[list[WSMessage]] = []
    current = greeting
    start = next((f.t for f in rec.frames if f.t is not None), 0.0) or 0.0
    for frame in rec.frames:
        t = frame.t if frame.t is not None else start
        kind = request_kind(frame.text) if frame.sender == "client" else None
        if kind is not None:
            current = []
            (prewarms if kind == "prewarm" else responses).append(current)
            start = t
            continue
        if frame.sender != "server":
            continue
        data: str | bytes | None = frame.text if frame.text is not None else frame.data
        if data is None:
            continue  # refused for its size when recorded: nothing was kept to send
        current.append(WSMessage(data, max(0.0, t - start)))
    close = rec.close
    server_close = None
    if close is not None and close.get("from") == "server" and isinstance(close.get("code"), int):
        reason = close.get("reason")
        answered = len(responses) + len(prewarms)
        server_close = (answered, close["code"], reason if isinstance(reason, str) else "")
    return WSScript(greeting, responses, prewarms, server_close)
