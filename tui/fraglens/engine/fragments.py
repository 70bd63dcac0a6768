"""The normalized fragment model: what every wire-format adapter hands the engine.

An adapter knows one wire format and turns one decoded chunk into a short list
of these operations. Nothing below the adapters knows which format a stream
came from: the engine only ever sees these frozen records.

Like wsproto's ``TextMessage`` partial frames, a ``ToolDelta`` is explicitly a
piece of something larger; the engine decides which call it belongs to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord, Record

if TYPE_CHECKING:
    from typing import Final

#: Marker for "this delta carried no object arguments" (``None`` is a real value).
NO_OBJECT: Any = object()


# ToolDelta and TextDelta are made once per fragment, so they may change: a
# record that stopped it would cost more to make. Nothing mutates them after
# the adapter returns them.
class ToolDelta(Record):
    """A piece of one tool call, exactly as the wire spelled it.

    ``index`` is the wire index (``None`` when the entry had none); ``id`` and
    ``name`` are raw (blank values are normalized by the engine, not here);
    ``args`` is argument text or ``None`` when the entry carried none (or
    ``null``: then ``args_null`` is set). ``args_obj`` holds arguments that
    came as a JSON object instead of a string (``args-object``).
    """

    __slots__ = ("choice", "index", "id", "name", "args", "args_null", "args_obj", "item",
                 "native_index", "hosted", "args_value")
    choice: int
    index: int | None
    id: str | None
    name: str | None
    args: str | None
    args_null: bool
    args_obj: Any
    #: A stable native key other than the wire index (Responses item_id), or None.
    item: str | None
    #: The index is the format's own block/item position (an Anthropic content
    #: block, a Responses output item), not a Chat Completions tool-call index:
    #: it starts wherever the blocks before it left off, so ``index-nonzero-start`` does not apply.
    native_index: bool
    #: The provider runs this tool itself (Anthropic ``server_tool_use``,
    #: ``mcp_tool_use``): the client neither answers it nor expects
    #: ``finish_reason: tool_calls`` for it.
    hosted: bool
    #: The value ``args`` is the JSON text of, where the adapter wrote that text
    #: from a value that holds no float (Ollama's arguments objects, with
    #: ``Stream._PLAIN_AT``): what ``json.loads(args)`` gives, so that finalize
    #: need not read the text again when it is the call's whole text.
    #: ``NO_OBJECT`` otherwise.
    args_value: Any

    def __init__(
        self, choice: int = 0, index: int | None = None, id: str | None = None,
        name: str | None = None, args: str | None = None, args_null: bool = False,
        args_obj: Any = NO_OBJECT, item: str | None = None, native_index: bool = False,
        hosted: bool = False, args_value: Any = NO_OBJECT,
    ) -> None:
        self.choice = choice
        self.index = index
        self.id = id
        self.name = name
        self.args = args
        self.args_null = args_null
        self.args_obj = args_obj
        self.item = item
        self.native_index = native_index
        self.hosted = hosted
        self.args_value = args_value


class ArgsFinal(FrozenRecord):
    """The complete argument text of a call as the format restates it at its end
    (Responses ``function_call_arguments.done``, Anthropic ``content_block_start``
    input when no delta followed). The engine cross-checks it with the deltas.

    ``replaces``: the deltas before it were the adapter's own rendering of the
    arguments, which it could not complete (Vertex ``partialArgs`` that left
    document order); this text is the arguments, not a second opinion."""

    __slots__ = ("choice", "index", "text", "id", "item", "replaces")
    choice: Final[int]
    index: Final[int | None]
    text: Final[str]
    id: Final[str | None]
    item: Final[str | None]
    replaces: Final[bool]

    def __init__(
        self, choice: int, index: int | None, text: str, id: str | None = None,
        item: str | None = None, replaces: bool = False,
    ) -> None:
        self.choice = choice
        self.index = index
        self.text = text
        self.id = id
        self.item = item
        self.replaces = replaces


class ArgsParsed(FrozenRecord):
    """What ``json.loads`` made of a call's streamed argument ``text``, and
    whether it holds no float (``plain_json.strict_loads``), which the adapter
    read to weigh the format's restatement against it by value (the AI SDK's
    ``tool-input-available``): the engine keeps it for the call's verdict
    while the call's text is still this text (``Call.text_value``), rather
    than parse the same text again. It says nothing of the call otherwise."""

    __slots__ = ("choice", "index", "text", "value", "no_floats")
    choice: Final[int]
    index: Final[int]
    text: Final[str]
    value: Final[Any]
    no_floats: Final[bool]

    def __init__(self, choice: int, index: int, text: str, value: Any,
                 no_floats: bool = False) -> None:
        self.choice = choice
        self.index = index
        self.text = text
        self.value = value
        self.no_floats = no_floats


class TextDelta(Record):
    """Assistant text (``channel="content"``) or reasoning (``"reasoning"``)."""

    __slots__ = ("choice", "text", "channel")
    choice: int
    text: str
    channel: str

    def __init__(self, choice: int, text: str, channel: str = "content") -> None:
        self.choice = choice
        self.text = text
        self.channel = channel


class Finish(FrozenRecord):
    """A finish signal for one choice. ``reason`` is normalized to
    ``stop`` | ``tool_calls`` | ``length`` | ``error`` | ``content_filter`` or
    kept as the wire value; ``raw`` is what the wire said."""

    __slots__ = ("choice", "reason", "raw")
    choice: Final[int]
    reason: Final[str]
    raw: Final[str]

    def __init__(self, choice: int, reason: str, raw: str) -> None:
        self.choice = choice
        self.reason = reason
        self.raw = raw


class Usage(FrozenRecord):
    """Token usage as the stream reported it (last one wins, never summed)."""

    __slots__ = ("data",)
    data: Final[dict[str, Any]]

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data


class StreamError(FrozenRecord):
    """An error reported inside the stream (``error-event``)."""

    __slots__ = ("message", "generation")
    message: Final[str]
    #: the model's output the provider refused to turn into a call (Groq's
    #: ``failed_generation`` with ``tool_use_failed``), kept to be read
    generation: Final[str | None]

    def __init__(self, message: str, generation: str | None = None) -> None:
        self.message = message
        self.generation = generation


class Terminal(FrozenRecord):
    """A format's explicit end-of-stream event (``message_stop``,
    ``response.completed``, ``message-end``)."""

    __slots__ = ("name",)
    name: Final[str]

    def __init__(self, name: str) -> None:
        self.name = name


class Notice(FrozenRecord):
    """An adapter-level diagnostic (a code of ``diagnostics.CODES``) about this event."""

    __slots__ = ("code", "message")
    code: Final[str]
    message: Final[str]

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message


class ToolOutput(FrozenRecord):
    """What a call's tool returned, when the stream itself carries it (the AI
    SDK UI stream runs server-side tools and streams their results). Shown
    with its call; ``error`` is the tool's error text instead of an output."""

    __slots__ = ("choice", "index", "output", "error")
    choice: Final[int]
    index: Final[int]
    output: Final[Any]
    error: Final[str | None]

    def __init__(self, choice: int, index: int, output: Any = None,
                 error: str | None = None) -> None:
        self.choice = choice
        self.index = index
        self.output = output
        self.error = error


Op = (
    ToolDelta | ArgsFinal | ArgsParsed | TextDelta | Finish | Usage | StreamError | Terminal
    | Notice | ToolOutput
)


def normalize_finish(raw: str) -> str:
    """Map every format's spelling of a finish reason onto one vocabulary."""
    low = raw.lower()
    if low in ("length", "max_tokens", "max_output_tokens", "model_length"):
        return "length"
    if low in ("tool_calls", "tool_use", "function_call", "tool_call"):
        return "tool_calls"
    if low in ("stop", "end_turn", "stop_sequence", "complete", "eos", "pause_turn"):
        return "stop"
    if low in ("error", "failed"):
        return "error"
    if low in ("content_filter", "safety", "refusal", "blocklist", "prohibited_content"):
        return "content_filter"
    return low
