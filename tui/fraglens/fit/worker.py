"""The validation worker: a child process that holds calls' arguments to their
tools' schemas, one request at a time, each under the caller's time budget.

Why a process: a ``pattern`` such as ``^(a+)+$`` sends Python's ``re`` into
exponential backtracking inside C code that holds the interpreter's lock, so
no thread, timer or signal handler of the same process can stop it (and the
process ignores Ctrl-C until it returns). Here the budget is kept by
``faulthandler``'s watchdog, a C thread that needs no lock: past the budget it
writes this process's stack to stderr (where the parent reads which keyword
was at work) and exits. A worker whose parent is gone ends the same way
instead of running on. The parent starts another worker for the next call.

The protocol is length-prefixed pickles over stdin and stdout, both ends
ours: a request ``(budget in seconds or None, [call, ...])``, each call a
pickle of ``(key, schema or None, value)`` (a key: an int, or a process's
pid and an int when several share the worker), and an answer per call, in order,
as it is found: a ``validation.Outcome`` (``("unknown",)`` when the worker no
longer holds ``key``'s validator and needs its schema again).
"""

from __future__ import annotations

import faulthandler
import pickle
import signal
import struct
import sys
import time
import warnings
from collections import OrderedDict
from collections.abc import Hashable
from typing import IO, Any

from .validation import Outcome, compile_schema, validate

__all__ = ["HEADER", "main", "read_message", "write_message"]

#: each message's length, before it
HEADER = struct.Struct("<Q")
#: validators kept, the least recently used dropped first (a proxy sees many requests' tools)
KEPT = 64
#: the watchdog is armed for this much more than the budget, and armed again
#: only once a call could otherwise be stopped short of its budget: a call is
#: stopped between its budget and 1.1 times it
SLACK = 1.1


def read_message(stream: IO[bytes]) -> Any:
    """The next message, or None at the end of the stream."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (length,) = HEADER.unpack(head)
    body = stream.read(length)
    return None if len(body) < length else pickle.loads(body)


def write_message(stream: IO[bytes], message: Any) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(body)) + body)
    stream.flush()


def answer(cache: OrderedDict[Hashable, Any], key: Hashable, schema: Any, value: Any) -> Outcome:
    """One request's outcome; ``cache`` holds each key's validator (or why there is none)."""
    if key in cache:
        cache.move_to_end(key)
    elif schema is None:
        return ("unknown",)
    else:
        cache[key] = compile_schema(schema)
        while len(cache) > KEPT:
            cache.popitem(last=False)
    validator = cache[key]
    return validator if isinstance(validator, tuple) else validate(validator, value)


def _warm() -> None:
    """jsonschema's import and first use, before any budget runs: no call pays for them."""
    validate(compile_schema({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object"}}}), {})


def main(warm: bool = True) -> None:
    """Answer requests until the parent closes stdin; ``warm``: load jsonschema
    now, else when the first request comes (a worker started in case calls
    come, which may never come)."""
    # Ctrl-C reaches the whole process group: it is the parent's to handle (it ends this one)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore")  # stderr carries only the watchdog's stack
    if warm:
        _warm()
    cache: OrderedDict[Hashable, Any] = OrderedDict()
    while True:
        request = read_message(sys.stdin.buffer)
        if request is None:
            return
        if not warm:
            _warm()
            warm = True
        budget, calls = request
        armed_until = 0.0
        for call in calls:
            key, schema, value = pickle.loads(call)
            if budget is not None and armed_until < time.monotonic() + budget:
                # each call is given at least its budget: re-arming for every
                # call was a third of the cost of a capture of many small calls
                faulthandler.dump_traceback_later(budget * SLACK, exit=True, file=sys.stderr)
                armed_until = time.monotonic() + budget * SLACK
            write_message(sys.stdout.buffer, answer(cache, key, schema, value))
        faulthandler.cancel_dump_traceback_later()  # idle, waiting for the next request
