"""Check that a conversation's tool calls and tool results pair up the way the
provider will insist on, before the provider says 400.

Theory of operation. Each message (or Responses input item) is read into one
of four kinds, whatever its shape:

- ``calls``:   an assistant turn that declares tool calls (OpenAI ``tool_calls``,
  Anthropic ``tool_use`` blocks, a Responses ``function_call`` item);
- ``results``: tool results (a ``tool`` message, a user message of
  ``tool_result`` blocks, a ``function_call_output`` item);
- ``turn``:    any other message (user, assistant or system text);
- ``neutral``: other Responses items (``reasoning``, server tool calls...).

A ``calls`` message opens a *region*: the run of ``results`` messages right
after it. Chat Completions and Anthropic accept results only there; the region
closes at the first message of another kind, and a call with no result in its
region is missing. The Responses API pairs ``call_id`` wherever the output
comes, so its calls stay answerable after their region closes; an item in
between is only a warning, because strict providers (DeepSeek, Gemini bridges)
reject what OpenAI accepts. Consecutive ``function_call`` items form one turn.

The codes below are a public interface, like the engine's diagnostic codes:
never renamed, never reused with another meaning.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..fit.schema import DEFAULT_BUDGET
from .conversation_fit import conversation_calls, declared_checker, strict_loads
from .errors import HistoryError

Severity = Literal["warning", "error"]

#: code -> (severity, what it means)
PROBLEM_CODES: dict[str, tuple[Severity, str]] = {
    "orphan-tool-result": (
        "error",
        "a tool result that does not follow an assistant turn with tool calls",
    ),
    "unknown-tool-call-id": (
        "error",
        "a tool result whose id is not a call of the assistant turn it follows",
    ),
    "missing-tool-result": (
        "error",
        "a tool call with no result before the conversation moves on",
    ),
    "pending-tool-results": (
        "warning",
        "the conversation ends with tool calls still waiting for their results",
    ),
    "duplicate-tool-result": ("error", "a second result for one tool call"),
    "duplicate-tool-call-id": ("error", "two tool calls declared with the same id"),
    "tool-results-out-of-order": (
        "warning",
        "the results are not in the order the calls were declared",
    ),
    "tool-calls-not-followed-by-results": (
        "error",
        "something other than the results comes right after the tool calls",
    ),
    "tool-result-not-adjacent": (
        "warning",
        "Responses: an item sits between a function_call and its output",
    ),
    "arguments-not-string": ("error", "OpenAI arguments that are not a string"),
    "input-not-object": ("error", "Anthropic tool_use input that is not an object"),
    "arguments-invalid-json": ("error", "OpenAI arguments that are not valid JSON"),
    "undeclared-tool": ("error", "a call to a tool the request's tools do not declare"),
    "arguments-schema": ("error", "arguments that break the declared tool's JSON Schema"),
    "arguments-unchecked": (
        "warning",
        "arguments that could not be held to the tool's schema (a $ref not followed, "
        "too slow, a value the validator cannot handle, an invalid schema)",
    ),
}

#: Exit status for ``fraglens history check`` when ``HistoryError`` is raised.
EXIT_UNREADABLE = 2

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding. ``position`` is the index in the messages (or input) array;
    the message text starts with the exact path, like ``messages[3].tool_calls[1]``."""

    code: str
    severity: Severity
    position: int
    message: str


def _problem(code: str, position: int, message: str) -> Problem:
    return Problem(code, PROBLEM_CODES[code][0], position, message)


def load_conversation(text: str | bytes) -> Any:
    """Parse a conversation file's text, raising ``HistoryError`` if it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise HistoryError(f"not JSON: {exc}") from None


def check_conversation(doc: Any, budget: float | None = DEFAULT_BUDGET) -> list[Problem]:
    """Every pairing problem of the conversation, sorted by position.

    ``doc`` is a messages array, or a request body with ``messages`` (OpenAI
    chat, Anthropic; a separate ``system`` is fine) or ``input`` (Responses).
    Raises ``HistoryError`` when it is none of these. ``budget``: the seconds
    each call's check against its tool's schema may take (None: no limit).
    """
    items, array = _items(doc)
    problems: list[Problem] = []
    msgs = [_read(i, m, array, problems) for i, m in enumerate(items)]
    _Pairing(msgs, array, problems).run()
    problems += _fit_problems(doc, items, array, budget)
    problems.sort(key=lambda p: p.position)
    return problems


def _fit_problems(
    doc: Any, items: list[Any], array: str, budget: float | None
) -> list[Problem]:
    """The calls against the conversation's own ``tools``, when it declares some."""
    checker = declared_checker(doc, budget)
    if checker is None:
        return []
    problems = []
    # no name: nothing to match, and the provider says so itself
    named = [call for call in conversation_calls(items, array) if call[2] is not None]
    verdicts = checker.check_many([(name, value) for _, _, name, value in named])
    for (i, path, name, _), verdict in zip(named, verdicts, strict=True):
        if verdict.undeclared:
            problems.append(
                _problem("undeclared-tool", i, f"{path} calls {name!r}, which no tool declares")
            )
        for e in verdict.errors:
            where = e.pointer or "(the whole value)"
            problems.append(
                _problem(
                    "arguments-schema", i, f"{path} ({name}) at {where}: {e.message} ({e.rule})"
                )
            )
        if verdict.more_errors:
            problems.append(
                _problem("arguments-schema", i, f"{path} ({name}): {verdict.more_errors} more")
            )
        if verdict.code is not None:  # not checked, for a reason the user can act on
            problems.append(
                _problem("arguments-unchecked", i, f"{path} ({name}): {verdict.reason}")
            )
    return problems


def format_problems(problems: list[Problem]) -> str:
    """A readable list for people, one problem a line, then a count."""
    if not problems:
        return "no problems: every tool call has its result"
    lines = [f"{p.severity:<7}  {p.code:<34}  {p.message}" for p in problems]
    lines.append(_count(problems))
    return "\n".join(lines)


def problems_json(problems: list[Problem]) -> dict[str, Any]:
    """The ``--json`` form: ``ok``, counts per severity and the problems."""
    return {
        "ok": not problems,
        "errors": sum(p.severity == "error" for p in problems),
        "warnings": sum(p.severity == "warning" for p in problems),
        "problems": [asdict(p) for p in problems],
    }


def exit_code(problems: list[Problem]) -> int:
    """0 when clean, 1 for any problem. (2, unreadable, is ``HistoryError``.)"""
    return 1 if problems else 0


def _count(problems: list[Problem]) -> str:
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


# -- reading -----------------------------------------------------------------


def _items(doc: Any) -> tuple[list[Any], str]:
    if isinstance(doc, list):
        responses = any(isinstance(m, dict) and isinstance(m.get("type"), str) for m in doc)
        return doc, "input" if responses else "messages"
    if not isinstance(doc, dict):
        raise HistoryError(
            f"a conversation is a messages array or a request body, not {_kind(doc)}"
        )
    if "messages" in doc:
        if not isinstance(doc["messages"], list):
            raise HistoryError(f"'messages' is {_kind(doc['messages'])}, not an array")
        return doc["messages"], "messages"
    if "input" in doc:
        if isinstance(doc["input"], str):
            return [], "input"  # a plain prompt: no calls, nothing to pair
        if not isinstance(doc["input"], list):
            raise HistoryError(f"'input' is {_kind(doc['input'])}, not an array or a string")
        return doc["input"], "input"
    raise HistoryError("a request body needs 'messages' (chat, Anthropic) or 'input' (Responses)")


# slots, and no list for a message that holds no calls or results: a
# conversation of 50,000 calls makes hundreds of thousands of these, and
# their size is what makes ten times the calls cost more than ten times
# the time (bench/verdicts.py)


@dataclass(eq=False, slots=True)
class _Call:
    id: Any
    name: str
    position: int
    path: str
    turn: _Turn | None = None
    #: the path and position of its result, and the order it was answered in
    answered_at: str | None = None
    answered_pos: int = -1
    answer_seq: int = -1

    @property
    def label(self) -> str:
        return f"{self.path} ({self.name or 'no name'}, {_show_id(self.id)})"


@dataclass(frozen=True, slots=True)
class _Result:
    id: Any
    path: str


@dataclass(slots=True)
class _Msg:
    kind: Literal["calls", "results", "turn", "neutral"]
    label: str
    #: Responses: pair by call_id wherever the output comes
    lenient: bool = False
    calls: Sequence[_Call] = ()
    results: Sequence[_Result] = ()
    #: Anthropic: other blocks come before the first tool_result
    text_first: bool = False
    #: Anthropic: other blocks come after the first tool_result (a user turn too)
    text_after: bool = False


@dataclass(eq=False, slots=True)
class _Turn:
    position: int
    lenient: bool
    calls: list[_Call] = field(default_factory=list)
    #: the position of the message that closed its region (None: the end)
    closer: int | None = None
    answered_in_region: bool = False
    #: its calls by id, so that pairing a result is a lookup, not a scan
    by_id: dict[Any, list[_Call]] = field(default_factory=dict)


def _read(i: int, m: Any, array: str, problems: list[Problem]) -> _Msg:
    where = f"{array}[{i}]"
    if not isinstance(m, dict):
        raise HistoryError(f"{where} is {_kind(m)}, not a message object")
    type_ = m.get("type")
    if isinstance(type_, str) and type_ != "message":
        if type_ == "function_call":
            call = _Call(m.get("call_id"), _name(m.get("name")), i, where)
            _check_arguments(m.get("arguments", _MISSING), f"{where}.arguments", i, problems)
            return _Msg("calls", type_, lenient=True, calls=[call])
        if type_ == "function_call_output":
            return _Msg("results", type_, lenient=True, results=[_Result(m.get("call_id"), where)])
        return _Msg("neutral", type_)

    role = m.get("role")
    if role not in _ROLES:
        raise HistoryError(
            f"{where} has role {role!r}: not an OpenAI, Anthropic or Responses message"
        )
    if role == "tool":
        return _Msg("results", role, results=[_Result(m.get("tool_call_id"), where)])
    content = m.get("content")
    if role == "assistant" and m.get("tool_calls") is not None:
        return _read_tool_calls(i, m["tool_calls"], where, problems)
    if role == "assistant" and isinstance(content, list):
        calls = []
        for j, block in enumerate(_blocks(content, where)):
            if block.get("type") == "tool_use":
                path = f"{where}.content[{j}]"
                calls.append(_Call(block.get("id"), _name(block.get("name")), i, path))
                if not isinstance(block.get("input", _MISSING), dict):
                    problems.append(_input_problem(block.get("input", _MISSING), path, i))
        if calls:
            return _Msg("calls", role, calls=calls)
    if role == "user" and isinstance(content, list):
        blocks = _blocks(content, where)
        result_at = [j for j, b in enumerate(blocks) if b.get("type") == "tool_result"]
        if result_at:
            results = [
                _Result(blocks[j].get("tool_use_id"), f"{where}.content[{j}]") for j in result_at
            ]
            others = [j for j, b in enumerate(blocks) if b.get("type") != "tool_result"]
            return _Msg(
                "results",
                role,
                results=results,
                text_first=bool(others) and others[0] < result_at[0],
                text_after=bool(others) and others[-1] > result_at[0],
            )
    return _Msg("turn", role)


def _read_tool_calls(i: int, tool_calls: Any, where: str, problems: list[Problem]) -> _Msg:
    if not isinstance(tool_calls, list):
        raise HistoryError(f"{where}.tool_calls is {_kind(tool_calls)}, not an array")
    calls = []
    for j, tc in enumerate(tool_calls):
        path = f"{where}.tool_calls[{j}]"
        if not isinstance(tc, dict):
            raise HistoryError(f"{path} is {_kind(tc)}, not an object")
        fn = tc.get("function")
        if tc.get("type", "function") == "function":
            if not isinstance(fn, dict):
                raise HistoryError(f"{path}.function is {_kind(fn)}, not an object")
            _check_arguments(
                fn.get("arguments", _MISSING), f"{path}.function.arguments", i, problems
            )
        name = fn.get("name") if isinstance(fn, dict) else None
        calls.append(_Call(tc.get("id"), _name(name), i, path))
    return _Msg("calls", "assistant", calls=calls) if calls else _Msg("turn", "assistant")


def _blocks(content: list[Any], where: str) -> list[dict[str, Any]]:
    for j, block in enumerate(content):
        if not isinstance(block, dict):
            raise HistoryError(f"{where}.content[{j}] is {_kind(block)}, not a content block")
    return content


def _check_arguments(args: Any, path: str, i: int, problems: list[Problem]) -> None:
    if not isinstance(args, str):
        hint = " (Anthropic input? OpenAI wants the JSON as text)" if isinstance(args, dict) else ""
        problems.append(
            _problem("arguments-not-string", i, f"{path} is {_kind(args)}, not a string{hint}")
        )
        return
    if not args.strip():
        problems.append(
            _problem(
                "arguments-invalid-json",
                i,
                f'{path} is empty; a call without arguments sends "{{}}"',
            )
        )
        return
    try:
        strict_loads(args)
    except ValueError as exc:
        problems.append(
            _problem(
                "arguments-invalid-json", i, f"{path} is not valid JSON: {exc}: {_preview(args)}"
            )
        )


def _input_problem(value: Any, path: str, i: int) -> Problem:
    hint = ""
    if isinstance(value, str):
        try:
            if isinstance(json.loads(value), dict):
                hint = " (it holds JSON text: Anthropic wants the object itself)"
        except ValueError:
            pass
    return _problem("input-not-object", i, f"{path}.input is {_kind(value)}, not an object{hint}")


# -- pairing -----------------------------------------------------------------


class _Pairing:
    """One pass over the read messages, then a verdict per turn."""

    def __init__(self, msgs: list[_Msg], array: str, problems: list[Problem]) -> None:
        self.msgs = msgs
        self.array = array
        self.problems = problems
        self.turns: list[_Turn] = []
        self.open: _Turn | None = None
        self.declared: dict[Any, list[_Call]] = {}
        self.seq = 0
        #: the last message before the current one that is not tool results
        self.last_other: int | None = None
        # for each position, the first message at or after it that stands
        # between a Responses call and its output (not an output, not a call),
        # and the last position of a turn: both looked up, never rescanned
        n = len(msgs)
        self.next_odd = [n] * (n + 1)
        for k in range(n - 1, -1, -1):
            b = msgs[k]
            odd = not (b.kind == "results" or (b.kind == "calls" and b.lenient))
            self.next_odd[k] = k if odd else self.next_odd[k + 1]
        self.last_turn = max((k for k, b in enumerate(msgs) if b.kind == "turn"), default=-1)

    def run(self) -> None:
        for i, m in enumerate(self.msgs):
            self._message(i, m)
            if m.kind != "results":
                self.last_other = i
        self._close(None)
        for turn in self.turns:
            self._judge(turn)

    def _message(self, i: int, m: _Msg) -> None:
        if m.kind == "calls":
            self._declare(i, m)
        elif m.kind == "results":
            if m.text_first and self.open is not None:
                self._add(
                    "tool-calls-not-followed-by-results",
                    i,
                    f"{self._at(i)} puts other content before its tool_result blocks; "
                    "they must come first, right after the tool_use blocks of "
                    f"{self._at(self.open.position)}",
                )
            for r in m.results:
                self._answer(i, r)
            if m.text_after:
                self._close(i)
        else:
            self._close(i)

    # building turns

    def _declare(self, i: int, m: _Msg) -> None:
        prev = self.msgs[i - 1] if i else None
        same_turn = (
            self.open is not None
            and m.lenient
            and self.open.lenient
            and prev is not None
            and prev.kind == "calls"
        )
        if not same_turn:
            self._close(i)
            self.open = _Turn(i, m.lenient)
            self.turns.append(self.open)
        assert self.open is not None
        for call in m.calls:
            call.turn = self.open
            self.open.calls.append(call)
            if call.id in (None, "") or not _hashable(call.id):
                continue
            self.open.by_id.setdefault(call.id, []).append(call)
            earlier = self.declared.setdefault(call.id, [])
            if earlier:
                self._add(
                    "duplicate-tool-call-id",
                    i,
                    f"{call.label} repeats the id of {earlier[0].label}; "
                    "its results cannot be told apart",
                )
            earlier.append(call)

    def _close(self, closer: int | None) -> None:
        if self.open is not None:
            self.open.closer = closer
            self.open = None

    def _answer(self, i: int, r: _Result) -> None:
        turn = self.open
        if turn is not None:
            if _hashable(r.id):
                mine = turn.by_id.get(r.id, [])
            else:  # an object for an id: compared by value, as rare as it is odd
                mine = [c for c in turn.calls if _same(c.id, r.id)]
            free = [c for c in mine if c.answered_at is None]
            if free:
                self._mark(free[0], r, i)
                turn.answered_in_region = True
                return
            if mine:
                self._duplicate(i, r, mine[0])
                return
        if r.id in (None, "") or not _hashable(r.id):
            code = "orphan-tool-result" if turn is None else "unknown-tool-call-id"
            self._add(code, i, f"{r.path} has no id, so it answers no call")
            return
        earlier = self.declared.get(r.id, [])
        # Responses pairs by call_id wherever the output comes
        for call in earlier:
            if call.turn is not None and call.turn.lenient and call.answered_at is None:
                self._mark(call, r, i)
                odd = self.next_odd[call.position + 1]
                if odd < i:
                    self._add(
                        "tool-result-not-adjacent",
                        i,
                        f"{r.path} answers {call.label}, but {self._at(odd)} comes between; "
                        "OpenAI accepts this, strict providers (DeepSeek, Gemini bridges) do not",
                    )
                return
        if earlier and all(c.answered_at is not None for c in earlier):
            self._duplicate(i, r, earlier[0])
        elif turn is None:
            before = self._before(i)
            if earlier:
                why = f" of {earlier[0].label}, but {before} comes between"
            elif before is None:
                why = ", but nothing comes before it"
            else:
                why = f", but {before} before it is not an assistant turn with tool calls"
            self._add(
                "orphan-tool-result", i, f"{r.path} is a tool result for {_show_id(r.id)}{why}"
            )
        else:
            where = f"; it is a call of {earlier[0].label}" if earlier else ""
            self._add(
                "unknown-tool-call-id",
                i,
                f"{r.path} answers {_show_id(r.id)}, which {self._at(turn.position)} "
                f"did not declare{where}",
            )

    def _mark(self, call: _Call, r: _Result, i: int) -> None:
        call.answered_at = r.path
        call.answered_pos = i
        call.answer_seq = self.seq
        self.seq += 1

    def _duplicate(self, i: int, r: _Result, call: _Call) -> None:
        self._add(
            "duplicate-tool-result",
            i,
            f"{r.path} answers {call.label} again; {call.answered_at} already did",
        )

    # verdicts

    def _judge(self, turn: _Turn) -> None:
        waiting = [c for c in turn.calls if c.answered_at is None]
        ids = ", ".join(_show_id(c.id) for c in waiting)
        if waiting and self._ends_here(turn):
            self._add(
                "pending-tool-results",
                turn.position,
                f"{self._at(turn.position)} ends the conversation with calls waiting for "
                f"results: {ids}; every provider rejects the request until they are added",
            )
        elif waiting and not turn.lenient and not turn.answered_in_region:
            assert turn.closer is not None
            self._add(
                "tool-calls-not-followed-by-results",
                turn.closer,
                f"{self._at(turn.closer)} follows the tool calls of {self._at(turn.position)} "
                f"instead of their results ({ids})",
            )
        else:
            for c in waiting:
                if turn.lenient:
                    after = " anywhere after it"
                else:
                    assert turn.closer is not None
                    after = f" before {self._at(turn.closer)}"
                no_id = " (the call has no id to answer)" if c.id in (None, "") else ""
                self._add(
                    "missing-tool-result", c.position, f"{c.label} has no result{after}{no_id}"
                )
        self._check_order(turn)

    def _ends_here(self, turn: _Turn) -> bool:
        if not turn.lenient:
            return turn.closer is None
        # Responses: nothing but calls, outputs and other items after the turn
        return self.last_turn <= turn.position

    def _check_order(self, turn: _Turn) -> None:
        answered = sorted(
            (c for c in turn.calls if c.answered_at is not None), key=lambda c: c.answer_seq
        )
        place = {id(c): k for k, c in enumerate(turn.calls)}
        declared = [place[id(c)] for c in answered]
        latest = -1
        for k in range(len(declared)):
            if declared[k] < latest:
                late = answered[k]
                order = ", ".join(_show_id(c.id) for c in answered)
                self._add(
                    "tool-results-out-of-order",
                    late.answered_pos,
                    f"{late.answered_at} answers {late.label} after a later call's result; "
                    f"results come {order}, calls were declared "
                    + ", ".join(_show_id(c.id) for c in turn.calls),
                )
                return
            latest = max(latest, declared[k])

    # helpers

    def _add(self, code: str, position: int, message: str) -> None:
        self.problems.append(_problem(code, position, message))

    def _at(self, i: int) -> str:
        return f"{self.array}[{i}] ({self.msgs[i].label})"

    def _before(self, i: int) -> str | None:
        return None if self.last_other is None else self._at(self.last_other)


_MISSING: Any = object()


def _kind(value: Any) -> str:
    if value is _MISSING:
        return "missing"
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _name(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _show_id(value: Any) -> str:
    if value is None or value == "":
        return "no id"
    return repr(value) if isinstance(value, str) else json.dumps(value)


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _same(a: Any, b: Any) -> bool:
    return a not in (None, "") and a == b


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
