"""The validation worker: a child process that holds calls' arguments to their
tools' schemas, one request at a time, each under the caller's time budget.

Why a process: a ``pattern`` such as ``^(a+)+$`` sends Python's ``re`` into
exponential backtracking inside C code that holds the interpreter's lock, so
no thread, timer or signal handler of the same process can stop it (and the
process ignores Ctrl-C until it returns). Here the budget is kept by
``faulthandler``'s watchdog, a C thread that needs no lock: past the budget it
writes this process's stack to stderr (where the parent reads which keyword
was at work) and exits. The parent starts another worker for the next call.

The protocol is length-prefixed pickles over stdin and stdout, both ends
ours: a request ``(key, schema or None, value, budget in seconds or None)``,
an answer ``validation.Outcome`` (``("unknown",)`` when the worker no longer
holds ``key``'s validator and needs its schema again).
"""

from __future__ import annotations

import faulthandler
import pickle
import signal
import struct
import sys
import warnings
from collections import OrderedDict
from typing import IO, Any

from .validation import Outcome, compile_schema, validate

__all__ = ["HEADER", "read_message", "write_message"]

#: each message's length, before it
HEADER = struct.Struct("<Q")
#: validators kept, the least recently used dropped first (a proxy sees many requests' tools)
KEPT = 64


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


def answer(cache: OrderedDict[int, Any], key: int, schema: Any, value: Any) -> Outcome:
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


def main() -> None:
    # Ctrl-C reaches the whole process group: it is the parent's to handle (it ends this one)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.simplefilter("ignore")  # stderr carries only the watchdog's stack
    cache: OrderedDict[int, Any] = OrderedDict()
    while True:
        request = read_message(sys.stdin.buffer)
        if request is None:
            return
        key, schema, value, budget = request
        if budget is not None:
            faulthandler.dump_traceback_later(budget, exit=True, file=sys.stderr)
        try:
            outcome = answer(cache, key, schema, value)
        finally:
            faulthandler.cancel_dump_traceback_later()
        write_message(sys.stdout.buffer, outcome)


if __name__ == "__main__":
    main()
