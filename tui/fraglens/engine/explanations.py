"""The diagnostics reference, in fraglens's own words: one entry per code of ``diagnostics.CODES``.

``fraglens explain CODE`` prints an entry, ``docs/diagnostics.md`` is generated
from this table (``scripts/diagnostics_doc.py``), and the app's Parse pane and
help point at the same text; a test holds the table, the code list and the
document together, so none of them can drift.

Each ``wire`` example is a small stream, one SSE event per line, built from
Python values so that its JSON is right by construction; a test feeds every
example to fraglens and checks that it raises the code it illustrates.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from typing import Any

from .diagnostics import CODES

__all__ = ["EXPLANATIONS", "Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class Explanation:
    #: what the code means, in a sentence or two
    means: str
    #: a short example of the wire shape that raises it: one SSE event per line
    wire: str
    #: what fraglens did about it
    did: str
    #: what the user should do
    todo: str
    #: the tools the example's request declared (OpenAI Chat shape), for the codes
    #: that hold calls to their tools; None for the others
    tools: Any = None


# -- building the wire examples ---------------------------------------------------


def _families_table() -> str:
    """The leaked-markup families, from their table (engine/leaks.py)."""
    from .leaks import FAMILIES

    rows = ["| family | how it is written | what makes the server parse it |", "|---|---|---|"]
    def cell(text: str) -> str:
        return text.replace("|", "\\|")  # a bar inside a cell, even in code, splits it

    rows += [f"| {cell(f.label)} (`{f.key}`) | {cell(f.shape)} | {cell(f.fix)} |"
             for f in FAMILIES]
    return "\n".join(rows)


def _data(payload: Any) -> str:
    return "data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _entry(
    args: Any = "", index: int | None = 0, id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """One Chat Completions ``tool_calls[]`` entry."""
    entry: dict[str, Any] = {} if index is None else {"index": index}
    if id is not None:
        entry["id"] = id
    function: dict[str, Any] = {} if name is None else {"name": name}
    function["arguments"] = args
    entry["function"] = function
    return entry


def _calls(*entries: dict[str, Any], choice: int = 0) -> str:
    return _data({"choices": [{"index": choice, "delta": {"tool_calls": list(entries)}}]})


def _text(text: str) -> str:
    return _data({"choices": [{"index": 0, "delta": {"content": text}}]})


def _finish(reason: str, **extra: Any) -> str:
    return _data({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}], **extra})


def _wire(*events: str) -> str:
    return "\n".join(events)


_USAGE = {"prompt_tokens": 52, "completion_tokens": 18, "total_tokens": 70}

#: what the fit examples' requests declared
_WEATHER_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "required": ["city"],
        "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}}}},
    {"type": "function", "function": {"name": "book_table", "strict": True, "parameters": {
        "type": "object", "required": ["restaurant", "party"], "additionalProperties": False,
        "properties": {"restaurant": {"type": "string"}, "party": {"type": "integer"}}}}},
]

# fmt: off
EXPLANATIONS: dict[str, Explanation] = {
    # -- which call a fragment belongs to --------------------------------------
    "index-missing": Explanation(
        means="The tool-call entries carry no `index` field, so the index cannot tell "
              "parallel calls apart; fraglens has to attribute each fragment from its id, "
              "its name, or which calls are still open.",
        wire=_wire(
            _calls(_entry("", index=None, id="call_1", name="get_weather")),
            _calls(_entry('{"city":"Paris"}', index=None)),
        ),
        did="Attributed each fragment by the first rule that applies: an id it has seen "
            "goes to that call; a new non-blank name opens a new call (unless it only "
            "repeats the name of the open call whose arguments are unfinished); a bare "
            "continuation goes to the only open call. Reported once per stream.",
        todo="The calls are right as long as one call streams at a time. If the backend "
             "streams parallel calls, have it (or the relay in front of it) send `index`, "
             "or turn parallel tool calls off.",
    ),
    "unattributed-fragment": Explanation(
        means="A piece of argument text with no index, no id and no name arrived while "
              "several calls were open: nothing on the wire says which call it belongs to.",
        wire=_wire(
            _calls(_entry('{"q":', index=None, id="call_1", name="search")),
            _calls(_entry('{"q":', index=None, id="call_2", name="lookup")),
            _calls(_entry('"tea"}', index=None)),
        ),
        did="Kept the text aside instead of gluing it to a guessed call: `check --json` "
            "lists it under `unattributed` with its event. The calls it should have "
            "completed are usually left truncated.",
        todo="Do not run these calls. Retry, or have the backend send `index` on every "
             "entry (or disable parallel tool calls).",
    ),
    "index-nonzero-start": Explanation(
        means="The first tool call of a choice has an index above 0, typically because a "
              "gateway copied a content-block position into `tool_calls[].index`. Not "
              "raised for formats whose index counts every block (Anthropic, Responses).",
        wire=_wire(
            _calls(_entry("{}", index=1, id="call_1", name="get_weather")),
        ),
        did="Keyed the call by the index value, not by list position, so no empty call 0 "
            "was invented; calls are numbered in the order they appeared.",
        todo="Nothing for the calls. A client that stores calls in a list by index gets a "
             "hole or an IndexError: key them by the index value.",
    ),
    "index-changed": Explanation(
        means="One call's fragments arrived under two indexes: fragments carrying its id "
              "under another index, or a call opened under one index (often the tool's "
              "position in the request) whose argument text came under another (the "
              "call's ordinal), or the reverse.",
        wire=_wire(
            _calls(_entry("", index=1, id="call_1", name="get_weather")),
            _calls(_entry('{"city":"Paris"}', index=0)),
            _calls(_entry("", index=0, id="call_2", name="get_time")),
            _calls(_entry('{"tz":"UTC"}', index=1)),
        ),
        did="Followed the id where one came. Without one, argument text that no call "
            "under its index could take (none there, or one whose arguments were already "
            "whole) went to the call opened last while it was still waiting for its first "
            "text; the index then leads there until a new id or name opens a call on it. "
            "Each call moved so is marked.",
        todo="Check each marked call's arguments against its name before running it: the "
             "index was no guide here. A client keyed only by index swaps the two calls' "
             "arguments; report the index jump to the backend's maintainers.",
    ),
    "index-collision": Explanation(
        means="A new call arrived on an index that already held a call whose arguments "
              "were one whole JSON value: a different id, or a name with a new value, on "
              "the same index.",
        wire=_wire(
            _calls(_entry('{"a":1}', index=0, id="call_1", name="add")),
            _calls(_entry('{"city":"Oslo"}', index=0, id="call_2", name="get_weather")),
        ),
        did="Started a new call on that index; the earlier call kept its id, name and "
            "arguments. This is only done when the earlier arguments were already "
            "complete, so no value is ever split in the middle.",
        todo="The calls are right. Clients that merge by index glue names and arguments "
             "together (`addget_weather`, `{..}{..}`): key by id as well.",
    ),
    "duplicate-index-in-chunk": Explanation(
        means="One chunk's `tool_calls` array holds two entries with the same index (seen "
              "with speculative decoding, where several tokens land in one chunk).",
        wire=_wire(
            _calls(
                _entry("", index=0, id="call_1", name="get_weather"),
                _entry('{"city":"Rome"}', index=0),
            ),
        ),
        did="Applied the entries in order, exactly as if they had come in separate chunks.",
        todo="Nothing. A client that keeps one entry per index per chunk loses text.",
    ),
    "id-repeated": Explanation(
        means="The call's id came again on later fragments of the same call.",
        wire=_wire(
            _calls(_entry('{"city":', index=0, id="call_1", name="get_weather")),
            _calls(_entry('"Lima"}', index=0, id="call_1")),
        ),
        did="Treated an id equal to the call's own as carrying nothing new.",
        todo="Nothing. Clients that append every id they see build `call_1call_1` and "
             "cannot match the tool result.",
    ),
    "id-changed": Explanation(
        means="A different id arrived for a call that was still open, with no name: the "
              "backend renamed the call mid-stream rather than starting another.",
        wire=_wire(
            _calls(_entry('{"city":', index=0, id="call_1", name="get_weather")),
            _calls(_entry('"Lima"}', index=0, id="call_9")),
        ),
        did="Kept the first id as the call's id and remembered the second as an alias, "
            "so later fragments with either id land on this call. When the format's "
            "closing event restates the call with another id (a Responses `call_id` that "
            "differs between `output_item.added` and `output_item.done`), that final id is "
            "what the server stored: it becomes the call's id and the first one the alias.",
        todo="Send the tool result with the id fraglens shows. If the backend expects the "
             "other, report it there.",
    ),
    "id-missing": Explanation(
        means="The call ended without ever getting an id.",
        wire=_wire(
            _calls(_entry("{}", index=0, name="get_time")),
            _finish("tool_calls"),
        ),
        did="Gave the call a stable made-up id, `call_fraglens_<choice>_<n>`, which "
            "`check` reports (`synthetic_id`) and the history builder uses.",
        todo="Tool results are matched to calls by id. If the backend checks the id in "
             "the tool message, this one will not do: fix the server or relay that drops it.",
    ),
    "id-duplicate": Explanation(
        means="Two calls of the same choice carry the same id.",
        wire=_wire(
            _calls(_entry("{}", index=0, id="call_1", name="get_time")),
            _calls(_entry("{}", index=1, id="call_1", name="get_date")),
        ),
        did="Kept the calls apart (each has its own index and name) and flagged the "
            "second one.",
        todo="Tool results cannot be told apart by id: the backend or relay that makes "
             "up ids needs fixing. Until then, match results by position.",
    ),
    "name-repeated": Explanation(
        means="The whole function name came again on later fragments of the same call.",
        wire=_wire(
            _calls(_entry('{"path":', index=0, id="call_1", name="read_file")),
            _calls(_entry('"a.txt"}', index=0, name="read_file")),
        ),
        did="Treated a name equal to the call's own as carrying nothing new.",
        todo="Nothing. Clients that append every name piece get `read_fileread_file`.",
    ),
    "name-split": Explanation(
        means="The function name arrived in pieces on several fragments of one call.",
        wire=_wire(
            _calls(_entry("", index=0, id="call_1", name="edit_")),
            _calls(_entry("{}", index=0, name="file")),
        ),
        did="Appended each name piece that differs from the name so far, while no "
            "argument text had come: the call is named `edit_file`. (A different name after "
            "argument text is `name-changed`; one after the arguments are one whole value "
            "starts a new call.)",
        todo="Check that the joined name is one of your tools. Clients that take the "
             "first name they see keep only `edit_`.",
    ),
    "name-changed": Explanation(
        means="A call that already had a name and argument text was sent a different "
              "name, or its name again as a blank spelling such as the string `\"null\"`.",
        wire=_wire(
            _calls(_entry('{"path":', index=0, id="call_1", name="read_file")),
            _calls(_entry('"a.txt"}', index=0, name="null")),
        ),
        did="Kept the name the call opened with and its arguments, and named the other "
            "value here; a name split in pieces comes before the arguments "
            "(`name-split`), so this is not one.",
        todo="Check which tool the model meant before running the call. Clients that "
             "append names get `read_filenull`; clients that overwrite run a tool "
             "called `null`.",
    ),
    "name-late": Explanation(
        means="The function name arrived after some argument text of its call (an empty "
              "name before it counts as no name).",
        wire=_wire(
            _calls(_entry('{"q":', index=0, id="call_1", name="")),
            _calls(_entry('"tea"}', index=0, name="search")),
        ),
        did="Gave the name to the call whose arguments were already streaming.",
        todo="Nothing. Clients that read the name from the first fragment only end up "
             "with an empty name.",
    ),
    "name-missing": Explanation(
        means="The stream ended and a call never got a function name.",
        wire=_wire(
            _calls(_entry('{"q":"tea"}', index=0, id="call_1")),
            _finish("tool_calls"),
        ),
        did="Kept the call and its arguments, unnamed; its status is still judged from "
            "the arguments.",
        todo="The call cannot be dispatched. Retry, or fix the backend's tool-call parser.",
    ),
    # -- the argument text --------------------------------------------------------
    "args-duplicated": Explanation(
        means="After its deltas, the complete arguments were sent once more as further "
              "text, so the call's text holds the same JSON value twice in a row.",
        wire=_wire(
            _calls(_entry('{"city":"Oslo"}', index=0, id="call_1", name="get_weather")),
            _calls(_entry('{"city":"Oslo"}', index=0)),
        ),
        did="Kept one copy and dropped the repeats; the status is `repaired` and the "
            "dropped copy is listed as a repair.",
        todo="The value is right. A strict parser in your client fails on this text and "
             "a lenient one may hide the problem: report it to the bridge or relay.",
    ),
    "args-multiple-values": Explanation(
        means="One call's text holds several different JSON values back to back, usually "
              "two calls glued together by a backend that reused an index with no id or "
              "name. Also raised when a format's closing copy of the arguments (Responses "
              "`.done`) is valid JSON with another value than the valid streamed deltas, "
              "and when Vertex gives one `partialArgs` path a second, different value.",
        wire=_wire(
            _calls(_entry('{"city":"Paris"}', index=0, id="call_1", name="get_weather")),
            _calls(_entry('{"city":"Rome"}', index=0)),
        ),
        did="Chose no value: the status is `invalid`, the raw text is kept and the "
            "separate values are listed (`values` in `check --json`). When a closing copy "
            "differs, the streamed text is kept and a note says so. A Vertex path given "
            "again keeps its later value, and the finding quotes the one replaced.",
        todo="Do not guess which value was meant. Retry, or have the backend send an id "
             "or a new index for each call.",
    ),
    "args-object": Explanation(
        means="`arguments` came as a JSON object rather than as a string of JSON text.",
        wire=_wire(
            _calls(_entry({"city": "Oslo"}, index=0, id="call_1", name="get_weather")),
        ),
        did="Took the object as the value (status `ok`); several object pieces for one "
            "call are merged key by key, and the buffer shows their JSON text.",
        todo="Nothing for the value. Clients that concatenate argument strings fail with a "
             "type error or drop the object.",
    ),
    "args-null": Explanation(
        means="A fragment carried `\"arguments\": null`.",
        wire=_wire(
            _calls(_entry(None, index=0, id="call_1", name="get_quote")),
            _calls(_entry('{"symbol":"AAPL"}', index=0)),
        ),
        did="Skipped the null: it adds no text to the call.",
        todo="Nothing. Clients that append `str(None)` get `None{\"symbol\":\"AAPL\"}`.",
    ),
    "args-empty": Explanation(
        means="The call finished with no argument text at all; it was read as `{}`.",
        wire=_wire(
            _calls(_entry("", index=0, id="call_1", name="get_time")),
            _finish("tool_calls"),
        ),
        did="Gave the call the value `{}` with status `empty`, which counts as good and is "
            "kept apart from a call that was cut off.",
        todo="Fine for a tool without parameters. If the tool has required parameters, "
             "the model sent none: look at the prompt or the tool schema.",
    ),
    "args-double-encoded": Explanation(
        means="The arguments were JSON-encoded twice: the whole text is a JSON string that "
              "holds the real object, or some values inside the object are strings that "
              "hold JSON.",
        wire=_wire(
            _calls(_entry(json.dumps('{"city":"Oslo"}'), index=0, id="call_1",
                          name="get_weather")),
        ),
        did="When the whole text is a string holding an object or array, decoded it once "
            "more (status `repaired`, listed as a repair). When only values inside are such "
            "strings, named their keys and left the value as sent.",
        todo="Make sure your tool gets an object, not a string. The backend or its "
             "template encodes twice: report it there.",
    ),
    "args-truncated": Explanation(
        means="The argument text stops inside an open string, object or array, or it is "
              "broken and the stream gave no normal finish: the call was cut off.",
        wire=_wire(
            _calls(_entry('{"path":"notes.txt","content":"Dear', index=0, id="call_1",
                          name="write_file")),
            _finish("length"),
        ),
        did="Set the status to `truncated`, never `repaired`. A best-effort value may be "
            "shown, always next to the list of what was added to close it; `check` exits 1.",
        todo="Do not run the tool with this value. If the finish was `length`, raise the "
             "output token limit or ask for less; if the stream just stopped, retry.",
    ),
    "finish-length": Explanation(
        means="The choice finished because the output token limit was reached (`length`, "
              "`max_tokens`, `max_output_tokens`).",
        wire=_wire(
            _text("Here is the"),
            _finish("length"),
        ),
        did="Recorded the finish and judged the open calls: one whose text stops inside a "
            "value is `truncated`.",
        todo="Raise the output token limit (`max_tokens` or the provider's equivalent), "
             "or ask for less in one turn.",
    ),
    "args-repaired": Explanation(
        means="The arguments were not valid JSON as sent (a trailing or missing comma, single "
              "quotes, Python literals, ...), but a lenient repair could read them without "
              "changing their shape, dropping anything written or making a value up.",
        wire=_wire(
            _calls(_entry('{"city":"Oslo",}', index=0, id="call_1", name="get_weather")),
            _finish("tool_calls"),
        ),
        did="A trailing comma was dropped, or a comma missing between two members put "
            "in, and the text parsed strictly; any other defect was repaired with "
            "json-repair and the result compared with the text as sent. Either way every "
            "change is listed with its offset. The status is `repaired`; `check` exits 1.",
        todo="Read the listed changes before trusting the value. A server-side tool "
             "parser or constrained decoding keeps small models from writing this.",
    ),
    "args-invalid": Explanation(
        means="The arguments are not JSON and no honest repair could read them: json-repair "
              "failed, or its result changes the top-level type, drops a key or more than a "
              "few characters, or puts an empty string where no value was written; or the "
              "text is too large to repair (256 KB), or nested too deeply for Python's JSON "
              "parser. `NaN` and `Infinity` outside strings make it invalid too: Python's json "
              "reads them as floats, but JSON has no such values and JSON.parse refuses them.",
        wire=_wire(
            _calls(_entry("get_weather(city='Oslo')", index=0, id="call_1",
                          name="get_weather")),
            _finish("tool_calls"),
        ),
        did="Set the status to `invalid` with no value and kept the raw text as received. "
            "When json-repair produced a guess, it is shown (`repaired_text`) with its "
            "changes listed, but never used as the value.",
        todo="Do not run the tool. The model wrote something other than JSON: check the "
             "server's tool-call parser and chat template.",
    ),
    "args-restated": Explanation(
        means="The argument pieces streamed for a call do not form JSON (a gateway that "
              "obfuscates or encrypts deltas, say), while the format restated the whole "
              "arguments (Responses `function_call_arguments.done` or `output_item.done`, "
              "the AI SDK's `tool-input-available`, Vertex's closing `args`, an "
              "Anthropic-compatible gateway's complete `input` in `content_block_start`) "
              "and that text is JSON. No pieces at all, or only empty ones, are no "
              "disagreement: the restatement is then the arguments, with no finding.",
        wire=_wire(
            _data({"type": "response.output_item.added", "output_index": 0, "item": {
                "id": "fc_1", "type": "function_call", "call_id": "call_1",
                "name": "get_weather", "arguments": ""}}),
            _data({"type": "response.function_call_arguments.delta", "output_index": 0,
                   "item_id": "fc_1", "delta": "qZ1x9Lk0"}),
            _data({"type": "response.function_call_arguments.done", "output_index": 0,
                   "item_id": "fc_1", "arguments": '{"city":"Oslo"}'}),
        ),
        did="Used the restatement as the arguments (the status follows from it, `ok` "
            "here) and kept both texts: `arguments_raw` is the restatement, "
            "`arguments_streamed` what the pieces said.",
        todo="Nothing for the value. If you read the deltas yourself, read the closing "
             "restatement instead, and ask the gateway why its deltas are not the text.",
    ),
    "args-surrogate-split": Explanation(
        means="A character outside the Basic Multilingual Plane (an emoji, say) arrived as "
              "a UTF-16 surrogate pair cut between two fragments, as two `\\uXXXX` escapes "
              "or as two lone surrogate characters.",
        wire=_wire(
            _calls(_entry('{"text":"Launch \\ud83d', index=0, id="call_1", name="post")),
            _calls(_entry('\\ude80"}', index=0)),
        ),
        did="Joined the two halves into the one character they encode; nothing else "
            "changed and the status stays `ok`.",
        todo="Nothing. Clients that decode each fragment on its own crash on the lone "
             "halves or show two garbage characters.",
    ),
    "args-over-limit": Explanation(
        means="One call's argument text grew past the size limit (`--max-arg-bytes`, "
              "16 MiB unless set). The example raises it with a limit of a few bytes.",
        wire=_wire(
            _calls(_entry('{"data":"0123456789abcdef', index=0, id="call_1", name="upload")),
        ),
        did="Kept the prefix that fits (never half a character), stopped buffering that "
            "call and counted what was dropped. The status is `truncated`; other calls "
            "are not affected.",
        todo="If such a call is expected, raise `--max-arg-bytes`; otherwise the model "
             "ran away, so do not run the tool.",
    ),
    # -- how the answer finished and what came with it -----------------------------
    "finish-reason-mismatch": Explanation(
        means="The finish reason disagrees with the calls: calls were made but the reason "
              "is `stop` (or something else), the reason is `tool_calls` but no call came, "
              "or calls came after the last finish.",
        wire=_wire(
            _calls(_entry("{}", index=0, id="call_1", name="get_time")),
            _finish("stop"),
        ),
        did="Trusted the calls, not the reason: the calls are judged as usual. Calls that "
            "the provider ran itself (hosted tools) do not count.",
        todo="Decide whether to run tools from the calls present, not from "
             "`finish_reason == \"tool_calls\"`, which skips these calls.",
    ),
    "multiple-finish": Explanation(
        means="One choice sent a finish reason more than once.",
        wire=_wire(
            _calls(_entry("{}", index=0, id="call_1", name="get_time")),
            _finish("tool_calls"),
            _finish("tool_calls", usage=_USAGE),
        ),
        did="Recorded every finish; the calls were closed at the first, and the last "
            "reason is the one reported.",
        todo="Run each tool once, not once per finish chunk.",
    ),
    "usage-only-chunk": Explanation(
        means="A chunk with an empty `choices` array carried only token usage.",
        wire=_wire(
            _data({"choices": [], "usage": _USAGE}),
        ),
        did="Showed the usage (the last usage seen is the stream's; running totals are "
            "never added up) and read nothing else from the chunk. Reported once.",
        todo="Nothing. Clients that read `choices[0]` from every chunk crash on it.",
    ),
    "no-done": Explanation(
        means="An SSE stream ended after its finish without `data: [DONE]` or the "
              "format's end event. Formats that end at the finish (Gemini) never raise it.",
        wire=_wire(
            _calls(_entry("{}", index=0, id="call_1", name="get_time")),
            _finish("tool_calls"),
        ),
        did="Judged the calls as usual (the answer is complete) and reported the ending "
            "as `eof-after-finish`.",
        todo="Nothing for the calls. Clients that wait for `[DONE]` hang until their read "
             "timeout: stop at the finish, or fix the server.",
    ),
    "eof-without-finish": Explanation(
        means="The stream stopped with no finish reason, no end event and no error: the "
              "connection dropped or the server died mid-answer.",
        wire=_wire(
            _calls(_entry('{"city":"Os', index=0, id="call_1", name="get_weather")),
        ),
        did="Closed every open call at the end: a call whose text stops inside a value is "
            "`truncated`, a whole one is kept. `no-done` is not added on top.",
        todo="Retry. If it happens often, look at timeouts in the proxies and load "
             "balancers between you and the backend.",
    ),
    "sse-comment": Explanation(
        means="The stream holds SSE comment lines (starting with `:`), usually keep-alives "
              "sent while the model warms up.",
        wire=_wire(
            ": OPENROUTER PROCESSING",
            _calls(_entry("{}", index=0, id="call_1", name="get_time")),
        ),
        did="Showed them in the stream view and ignored them for the calls. Reported once, "
            "however many there are.",
        todo="Nothing. Hand-written parsers that parse every line as JSON fail on them.",
    ),
    "error-event": Explanation(
        means="The stream reported an error: an `error` object, `finish_reason: \"error\"`, "
              "an Anthropic `error` event, a Responses `response.failed`, a Gemini "
              "`blockReason`, or a format reader that could not read an event.",
        wire=_wire(
            _calls(_entry('{"city":', index=0, id="call_1", name="get_weather")),
            _data({"error": {"message": "Internal server error", "type": "server_error"}}),
        ),
        did="Kept everything received and the error message. A call whose arguments were "
            "already one whole value stays as it is; a call still open is `aborted`.",
        todo="Read the message; usually retry. Do not run aborted calls.",
    ),
    "annotation-chunk": Explanation(
        means="A chunk carried annotations only (content-filter or prompt-filter results, "
              "as Azure OpenAI sends) and no delta.",
        wire=_wire(
            _data({"choices": [], "prompt_filter_results": [
                {"prompt_index": 0, "content_filter_results": {}}]}),
        ),
        did="Showed it in the stream view and read nothing from it. Reported once.",
        todo="Nothing. Clients that expect a delta in every chunk crash on it.",
    ),
    "choice-index-unstable": Explanation(
        means="One answer's pieces moved from one choice index to another: argument text "
              "with no id or name under a choice index nothing came under before (some "
              "servers count the choice up on every chunk), or the same call id under two "
              "choices. Choices that each keep their own index (a request with `n` > 1) "
              "are not this.",
        wire=_wire(
            _calls(_entry('{"tz":', index=0, id="call_1", name="get_time"), choice=0),
            _calls(_entry('"UTC"}', index=0), choice=1),
            _data({"choices": [{"index": 2, "delta": {}, "finish_reason": "tool_calls"}]}),
        ),
        did="Read argument text with no id or name on a new choice index as the "
            "continuation of the one choice with a call open, and from then on every new "
            "choice index (text, calls, finish) as the same answer: one call. A call id "
            "seen under two choices stays two calls, one per choice.",
        todo="The calls are what the model sent, but the server numbers choices wrongly: "
             "report it to the backend. Clients that key by choice index make one broken "
             "call per chunk.",
    ),
    "bytes-replaced": Explanation(
        means="An event held bytes that are not UTF-8 (a relay that re-encodes text as "
              "Latin-1, a multi-byte character cut by a faulty proxy), so they were read "
              "as U+FFFD, the replacement character.",
        wire=_wire(
            _calls(_entry('{"city":"Z<0xFC>rich"}', index=0, id="call_1", name="get_weather")),
            _finish("tool_calls"),
        ),
        did="Read the event with U+FFFD in place of the bad bytes, named them and their "
            "offset here; the raw bytes stay in the capture and the stream view. The "
            "status is decided on the text as read.",
        todo="The value differs from what the model wrote: check the relay's encoding "
             "before trusting text fields.",
    ),
    "chunk-unreadable": Explanation(
        means="A chunk is JSON, but a part that carries tool calls has a shape the format "
              "does not allow: `tool_calls` as an object or a string, an entry or a "
              "`function` that is not an object, an `index` that is not a whole number "
              "(`\"abc\"`, `1.5`, `true`, `[0]`), a Vertex `partialArgs` entry with no "
              "readable path or value; or an event type (a Gemini part key, an AI SDK "
              "part type) the format does not define carries tool data: an Anthropic "
              "`content_block_delta_v2` with a `partial_json`, a Responses event of an "
              "unknown type with a `delta` for a call item.",
        wire=_wire(
            _calls({"index": "abc", "id": "call_1",
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}),
            _finish("tool_calls"),
        ),
        did="Read what it could (an index it cannot read counts as no index), named what "
            "it ignored with the wire value, and kept the chunk as it came in the stream "
            "view. Each different part is named once (a snapshot that repeats one is "
            "not a new finding). Nothing of an unknown type is guessed into the "
            "arguments.",
        todo="The relay or server writes chunks the format does not allow: report it "
             "there; the call may be attributed differently than the model meant, or "
             "lack what the ignored part held.",
    ),
    "non-json-data": Explanation(
        means="A `data:` payload is not JSON (or is nested too deeply to read), or the "
              "body is not a stream at all, such as an HTML error page from a gateway.",
        wire=_wire(
            'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}',
        ),
        did="Kept the raw event in the stream view, labelled `non-json`, and read on.",
        todo="Look at the raw event: a proxy may have injected or cut something, or the "
             "capture itself was cut.",
    ),
    "stray-bytes": Explanation(
        means="A line had bytes before its field name: a second byte-order mark (two "
              "files concatenated, an editor that adds one), a NUL, another control "
              "character. Read by the letter of the SSE rules, the line names an unknown "
              "field and the whole event is dropped without a word.",
        wire=_wire(
            _text("Hi"),
            "\ufeff" + _text(" there"),
        ),
        did="Skipped the stray bytes, read the line as the field it names, and warned with "
            "the bytes and their offset; the capture itself is untouched.",
        todo="Find what adds the bytes (a proxy, a file concatenation, a logger) and fix it "
             "there: a strict client drops that event, and its data with it.",
    ),
    "frame-too-large": Explanation(
        means="One SSE line, or one event's `data:` lines together, grew past the reader's "
              "size limit (16 MiB): a server that never ends a line, or a gateway that "
              "glued a whole response into one event. Over a WebSocket: a message over "
              "`--max-line-bytes`, which the recorder kept only the size of.",
        wire=_wire(
            _text("Hi"),
            'data: {"choices":[{"index":0,"delta":{"content":"…16 MiB with no newline…',
        ),
        did="Stopped reading at the start of that line or event instead of buffering "
            "without end; every event before it is shown and checked, the bytes from there "
            "on stay in the capture or recording untouched. A WebSocket message over the "
            "limit is named on its own event with its size, and the messages after it are "
            "read (the proxy passed it on whole; live closed the connection with 1009). "
            "An error.",
        todo="Look at the capture from the byte offset the message names: an endless line "
             "is a server or proxy bug. If the line is genuine, split the capture there.",
    ),
    # -- text beside the calls -----------------------------------------------------
    "recording-damaged": Explanation(
        means="Lines of a fraglens recording could not be read: a line in the middle is "
              "not JSON (the file was edited or damaged), or the last line stops mid-write "
              "(the recorder was killed while writing it). In a recording of version 3, "
              "whose reads are written as they came and timed by a line after them, a "
              "killed recorder leaves its last reads without that line: their bytes are "
              "read, with no time.",
        wire=_wire(
            json.dumps({"fraglens": "recording", "version": 1, "request": {}},
                       separators=(",", ":")),
            json.dumps({"t": 0.1, "b": _data({"choices": [{"index": 0, "delta": {
                "content": "hi"}, "finish_reason": "stop"}]}) + "\n\n"},
                separators=(",", ":")),
            '{"t":0.2,"b":"data: [DO',
        ),
        did="Read every line it could, left the others out, and counted them here; the "
            "report covers only what was read, so `check` exits 1.",
        todo="Take the stream as incomplete. Record it again if you need all of it.",
    ),
    "recording-error": Explanation(
        means="The recording's end line says the response ended in an error (the "
              "connection was reset, the upstream timed out...).",
        wire=_wire(
            json.dumps({"fraglens": "recording", "version": 1, "request": {}},
                       separators=(",", ":")),
            json.dumps({"end": "error", "error": "connection reset by peer", "t": 1.5},
                       separators=(",", ":")),
        ),
        did="Read the body up to the error as usual and reported the error with it; "
            "`check` exits 1.",
        todo="Calls still open when the error came are cut off: retry the request.",
    ),
    "parallel-wrapper": Explanation(
        means="The model made one call named `multi_tool_use.parallel` whose arguments hold "
              "the calls it meant, as `tool_uses` entries with a `recipient_name` "
              "(`functions.NAME`) and `parameters`. OpenAI models sometimes do this instead "
              "of making several tool calls.",
        wire=_wire(
            _calls(_entry('{"tool_uses":[{"recipient_name":"functions.get_weather",'
                          '"parameters":{"city":"Oslo"}}]}', index=0, id="call_1",
                          name="multi_tool_use.parallel")),
            _finish("tool_calls"),
        ),
        did="Kept the call exactly as received and listed the calls inside it "
            "(`inner_calls` in `check --json`: name without `functions.`, arguments), so "
            "you see what the model meant.",
        todo="No tool of that name exists: either run the inner calls yourself and answer "
             "the wrapper's id, or tell the model to call the tools directly (turning "
             "parallel tool calls off stops it).",
    ),
    "text-with-tool-calls": Explanation(
        means="A choice wrote assistant text as well as making tool calls.",
        wire=_wire(
            _text("Let me check the time."),
            _calls(_entry("{}", index=0, id="call_1", name="get_time")),
        ),
        did="Showed the text of each choice; the calls are not affected.",
        todo="Nothing. Clients that assume text or calls, never both, drop one of them.",
    ),
    "tool-markup-in-content": Explanation(
        means="The text content holds a tool call in the markup the model's chat template "
              "taught it: the server did not turn the model's output into tool calls (its "
              "tool-call parser is off, or is another model's). The client sees text and "
              "never runs the tool. The families fraglens knows:\n\n" + _families_table(),
        wire=_wire(
            _text('<tool_call>{"name":"get_time","arguments":{}}</tool_call>'),
            _finish("stop"),
        ),
        did="Named the family and made no call out of the text. Each call the markup holds "
            "is read out of it and listed under `leaked` in `check --json` (name, arguments "
            "judged like a real call's: ok, repaired, truncated, invalid; the choice, the "
            "offset in its text and the event it began at), never counted as a call. A "
            "warning: the exit status is unchanged.",
        todo="Turn on the server's tool-call parser for this model, the one the message names "
             "(the last column above). With vLLM that is `--enable-auto-tool-choice` and "
             "`--tool-call-parser NAME`; with llama.cpp, `--jinja` (the model's own chat "
             "template); with Ollama, a model whose template declares tools.",
    ),
    "tool-call-rejected": Explanation(
        means="The provider refused the model's tool call and ended the stream with an "
              "error that carries what the model generated (Groq: code `tool_use_failed` "
              "with `failed_generation`): the model wrote a call the provider could not "
              "parse, or one to a tool the request did not declare.",
        wire=_wire(
            _data({"error": {
                "message": "Failed to call a function. Please adjust your prompt.",
                "type": "invalid_request_error", "code": "tool_use_failed",
                "failed_generation": '<function=get_time>{"tz": "UTC"}</function>'}}),
        ),
        did="Kept the error (`error-event`) and read the generation like leaked markup: "
            "each call in it is listed under `leaked` with `source: error` and the error's "
            "event; a generation no family reads is listed whole, without a name.",
        todo="Read the attempted call: a wrong tool name, arguments that are not JSON, or "
             "markup instead of a call. Retrying often works; fewer or simpler tools, a lower "
             "temperature, or a system prompt that asks for one call at a time make it rarer.",
    ),
    "frame-damaged": Explanation(
        means="Part of a binary event stream (AWS Bedrock) did not hold together: a "
              "message whose CRC32 does not match its bytes, or bytes where a message "
              "should start that are no valid prelude (lengths plus their own CRC).",
        wire=_wire(
            "[prelude: total 91, headers 75, CRC ok][headers][payload][CRC 3f0a9c12]",
            "  (the CRC32 of the bytes before it is another value: one bit flipped)",
        ),
        did="Skipped the damaged bytes and said how many, then read on from the next "
            "offset holding a prelude whose own CRC matches; the messages before and after "
            "are kept. Whatever the skipped message carried is missing from its call. An "
            "error.",
        todo="Suspect what sat between the server and the capture: a proxy that rewrote "
             "the body, a capture saved as text (line ends converted), bytes cut and "
             "pasted. Capture the body again as raw bytes (a HAR keeps them as base64).",
    ),
    "ws-binary-frame": Explanation(
        means="A WebSocket connection carried a binary message. The Responses and "
              "Realtime APIs send every event as a JSON text message; binary ones are "
              "audio or a gateway's own protocol, never a tool call fraglens could read.",
        wire=_wire(
            json.dumps({"fraglens": "recording", "version": 2, "transport": "websocket",
                        "request": {}}, separators=(",", ":")),
            json.dumps({"t": 0.2, "from": "server", "b64": "AAECAw=="}, separators=(",", ":")),
        ),
        did="Kept the message's bytes in the stream and the recording as they came (base64) "
            "and named it by its sender and size; nothing was decoded from it. Information.",
        todo="Nothing, if the binary messages are audio. If calls seem to be missing, the "
             "client or a gateway may be wrapping events in a binary protocol: capture "
             "where they are plain JSON.",
    ),
    "frame-truncated": Explanation(
        means="A binary event stream (AWS Bedrock) ended part-way through a message: its "
              "prelude announced more bytes than arrived.",
        wire=_wire("[prelude: total 176, headers 85, CRC ok][headers][88 of 176 bytes]"),
        did="Kept every complete message before it and reported the bytes left over; a "
            "call still open is judged on what arrived (truncated when cut inside a "
            "value). An error.",
        todo="The connection dropped or the capture stopped early: look at timeouts on "
             "the way (load balancer, proxy) and at how the capture was saved.",
    ),
    "args-cumulative": Explanation(
        means="Each argument fragment of a call was the whole text so far, not the new "
              "part: every piece begins with the one before it and is longer. A gateway "
              "that re-streams snapshots as deltas, a LangGraph model wrapper, an AG-UI "
              "bridge. Joined, the pieces are no JSON (they end inside a string, or hold "
              "several values), and a lenient parser makes a wrong value of them. Pieces "
              "that merely repeat one text are `args-duplicated`, not this.",
        wire=_wire(
            _calls(_entry('{"city":', id="call_1", name="get_weather")),
            _calls(_entry('{"city": "Oslo"}')),
            _finish("tool_calls"),
        ),
        did="Read the last piece as the arguments and judged it like any other call; "
            "`arguments_streamed` keeps the joined pieces as they came. A warning.",
        todo="Nothing for the value. Whoever sends the stream should send only the new "
             "text per fragment (or say the stream is cumulative, as DashScope's "
             "`incremental_output` does); a client that joins the pieces breaks on it.",
    ),
    "args-misrouted": Explanation(
        means="Argument text arrived under the id of another call: after that call had "
              "ended, or while a call started later stayed open and then ended with none "
              "of its own. An AG-UI adapter that kept the first call's `toolCallId` "
              "(ag-ui issue 1776) does this: the first call's arguments become two glued "
              "values and the second runs with none.",
        wire=_wire(
            _data({"type": "TOOL_CALL_START", "toolCallId": "call_A", "toolCallName": "f"}),
            _data({"type": "TOOL_CALL_START", "toolCallId": "call_B", "toolCallName": "f"}),
            _data({"type": "TOOL_CALL_ARGS", "toolCallId": "call_A", "delta": '{"x": 2}'}),
            _data({"type": "TOOL_CALL_END", "toolCallId": "call_B"}),
        ),
        did="Kept the text where the wire put it (as the client glues it), judged both "
            "calls, and named both in the finding. An error.",
        todo="Fix the layer that re-streams the calls: each call's deltas must carry its "
             "own id. Do not run either call from this stream.",
    ),
    "args-missing": Explanation(
        means="A call was started and ended with no argument events between "
              "(AG-UI `TOOL_CALL_START` then `TOOL_CALL_END`, ag-ui PR 2464). Its "
              "arguments are an empty string, which a client that parses them rejects, "
              "even for a tool that takes no arguments.",
        wire=_wire(
            _data({"type": "TOOL_CALL_START", "toolCallId": "call_1",
                   "toolCallName": "get_time"}),
            _data({"type": "TOOL_CALL_END", "toolCallId": "call_1"}),
        ),
        did="Read the arguments as `{}` with status `empty` (not `ok`). A warning.",
        todo="If the tool takes arguments, the layer that re-streams the call lost them. "
             "If it takes none, send `{}` as the one argument delta.",
    ),
    "result-orphan": Explanation(
        means="The stream carried a tool's result (AG-UI `TOOL_CALL_RESULT`, a LangGraph "
              "tool message) for a call id that no call of the stream has: the call was "
              "never started, or started under another id.",
        wire=_wire(
            _data({"type": "TOOL_CALL_RESULT", "messageId": "m1", "toolCallId": "call_9",
                   "content": "42"}),
        ),
        did="Showed the result in the stream view and named the id; no call was made up "
            "for it. A warning.",
        todo="Check the ids: a result that answers no call is dropped by most clients, "
             "and the model never sees it.",
    ),
    "index-null-chunk": Explanation(
        means="A LangChain `tool_call_chunks` entry (LangGraph's `messages` stream) had "
              "`index: null`. LangChain merges chunks by index, so this one stays apart: "
              "the client shows a phantom call holding a piece of another's arguments.",
        wire=_wire(
            _data([{"type": "AIMessageChunk", "id": "run-1", "content": "",
                    "tool_call_chunks": [{"name": "f", "args": '{"x": ', "id": "call_1",
                                          "index": 0}]}, {}]),
            _data([{"type": "AIMessageChunk", "id": "run-1", "content": "",
                    "tool_call_chunks": [{"name": None, "args": "1}", "id": None,
                                          "index": None}]}, {}]),
        ),
        did="Read the piece as more of the call its id names, else of the message's "
            "latest call, and said so. A warning.",
        todo="Fix the provider integration that drops the index; until then, merge such "
             "chunks by id or into the open call yourself.",
    ),
    "event-unknown": Explanation(
        means="An event whose type the format does not define (an AG-UI `type` outside "
              "the protocol, a LangGraph event that is no stream mode): a newer protocol "
              "version, or a framework's own extension.",
        wire=_wire(
            _data({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}),
            _data({"type": "TOOL_CALL_PROGRESS", "toolCallId": "call_1"}),
        ),
        did="Kept it in the stream view under its type and read nothing from it. Info.",
        todo="Nothing, unless it carries call data you expected to see: then tell us.",
    ),
    "tool-input-error": Explanation(
        means="A Vercel AI SDK UI stream sent a `tool-input-error` part: the backend could "
              "not parse the call's input, or it did not match the tool's schema, so the "
              "tool did not run.",
        wire=_wire(
            _data({"type": "tool-input-start", "toolCallId": "call_1", "toolName": "search"}),
            _data({"type": "tool-input-error", "toolCallId": "call_1", "toolName": "search",
                   "input": '{"q": "x",}', "errorText": "JSON parsing failed"}),
        ),
        did="Kept the input as the call's arguments when no deltas came (the deltas when "
            "they did), judged it like any other call, and repeated the SDK's error text "
            "with the tool's name and call id. A warning.",
        todo="Read the call's status: `truncated`, `repaired` or `invalid` arguments point "
             "at the model or the stream; `ok` arguments point at a schema the model did "
             "not follow (a missing field, a wrong type).",
    ),
    "args-schema": Explanation(
        means="The call's arguments parsed as JSON, but they do not satisfy the parameters "
              "schema its tool declared: a required field is absent, a value has the wrong "
              "type, a string is outside the enum. The message gives the JSON pointer into "
              "the arguments and the schema keyword that failed.",
        wire=_wire(
            _calls(_entry('{"city":"Lima","unit":"kelvin"}', id="call_1", name="get_weather")),
            _finish("tool_calls"),
        ),
        did="Validated the parsed value (the repaired one for a repaired call) with jsonschema "
            "against the declared tools (`--tools`, or the request a recording holds) and "
            "listed every failure, up to 50 per call; `check` exits 1.",
        todo="Do not run the tool with this value: answer with an error result or ask again. "
             "If it recurs, tighten the tool's description, or ask for strict schema "
             "adherence where the provider offers it.",
        tools=_WEATHER_TOOLS,
    ),
    "strict-broken": Explanation(
        means="The tool was declared with strict: true (or, on Gemini, the request asked "
              "for VALIDATED function calling): the provider promised arguments that match "
              "the schema. These do not, so the promise was broken, by the provider or by a "
              "server in between.",
        wire=_wire(
            _calls(_entry('{"restaurant":"Noma"}', id="call_1", name="book_table")),
            _finish("tool_calls"),
        ),
        did="Raised it once per call, beside that call's args-schema findings.",
        todo="Keep the capture: it is evidence for the provider. Check that every hop between "
             "you and the model passes strict through; some compatible servers drop it.",
        tools=_WEATHER_TOOLS,
    ),
    "tool-undeclared": Explanation(
        means="The model called a tool by a name that none of the request's tools carries: "
              "an invented tool, a typo, or a tool list that changed between requests.",
        wire=_wire(
            _calls(_entry('{"city":"Rome"}', id="call_1", name="get_forecast")),
            _finish("tool_calls"),
        ),
        did="Did not validate its arguments: there is no schema to hold them to.",
        todo="Answer the call with an error result that names the tools that exist, or drop "
             "it; never route it to the closest-sounding tool.",
        tools=_WEATHER_TOOLS,
    ),
    "tool-schema-invalid": Explanation(
        means="The schema a declared tool gives is not valid JSON Schema (a type name that "
              "does not exist, a required that is not a list), so its calls cannot be "
              "checked.",
        wire=_wire(
            _calls(_entry('{"q":"x"}', id="call_1", name="search")),
            _finish("tool_calls"),
        ),
        did="Left the call unchecked and said why.",
        todo="Fix the declaration: a provider may reject it, or read it otherwise than meant.",
        tools=[{"type": "function", "function": {"name": "search",
                                                 "parameters": {"type": "dict"}}}],
    ),
    "schema-ref-unresolved": Explanation(
        means="The tool's schema has a $ref that does not point inside that schema: a remote "
              "http(s):// or file:// address, another file's name, or a #/$defs/... entry "
              "that is not there. fraglens never fetches a reference (a recording's own "
              "tools could point anywhere, and what came back would decide the verdict), so "
              "the call cannot be checked.",
        wire=_wire(
            _calls(_entry('{"q":"x"}', id="call_1", name="search")),
            _finish("tool_calls"),
        ),
        did="Left the call unchecked (fit: not checked: reference ... not resolved) and "
            "fetched nothing.",
        todo="Inline the referenced schema under $defs and point at it with #/$defs/NAME: "
             "providers do not fetch references either.",
        tools=[{"type": "function", "function": {"name": "search", "parameters": {
            "$ref": "https://schemas.example.com/search.json"}}}],
    ),
    "schema-too-slow": Explanation(
        means="Holding the call's arguments to the tool's schema took longer than the time "
              "budget (--schema-timeout, 1 s by default). It is nearly always a pattern that "
              "backtracks: ^(a+)+$ against thirty a's and one other character takes Python's "
              "regular expressions minutes.",
        wire=_wire(
            _calls(_entry('{"code":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}', id="call_1",
                          name="lookup")),
            _finish("tool_calls"),
        ),
        did="Stopped the validation at the budget, left the call unchecked and named the "
            "keyword that was at work (pattern).",
        todo="Rewrite the pattern without nested repetition (^a+$ means the same as "
             "^(a+)+$); a validator on your side may hang on it too. Give a larger "
             "--schema-timeout for schemas that are slow by size, not by pattern.",
        tools=[{"type": "function", "function": {"name": "lookup", "parameters": {
            "type": "object", "properties": {"code": {"type": "string",
                                                      "pattern": "^(a+)+$"}}}}}],
    ),
    "schema-uncheckable": Explanation(
        means="The validator could not hold the arguments to the schema: a number JSON allows "
              "and the validator cannot compute with (1e999 is infinity to Python, and "
              "multipleOf cannot divide it), or references that loop back on themselves, or "
              "nesting deeper than it can follow.",
        wire=_wire(
            _calls(_entry('{"amount":1e999}', id="call_1", name="pay")),
            _finish("tool_calls"),
        ),
        did="Left the call unchecked and said which keyword failed and why.",
        todo="A number out of range is nearly always a model's mistake: answer with an error "
             "result rather than run the tool. A reference loop is the schema's to fix.",
        tools=[{"type": "function", "function": {"name": "pay", "parameters": {
            "type": "object", "properties": {"amount": {"type": "number",
                                                        "multipleOf": 0.5}}}}}],
    ),
}
# fmt: on


def explain(code: str, width: int = 78) -> str:
    """The entry for ``code`` as plain text, paragraphs wrapped at ``width`` and
    the wire example left whole, ending in a newline. KeyError for an unknown code."""
    severity, summary = CODES[code]
    entry = EXPLANATIONS[code]

    def para(text: str, indent: str = "") -> list[str]:
        out: list[str] = []
        for block in text.split("\n\n"):
            if out:
                out.append("")
            if block.startswith("|"):  # a table: its rows stay whole
                out += [indent + row.replace("\\|", "|") for row in block.splitlines()]
            else:
                out += textwrap.wrap(block, width, initial_indent=indent,
                                     subsequent_indent=indent)
        return out

    lines = [f"{code} ({severity}): {summary}", "", *para(entry.means), ""]
    if entry.tools is not None:
        names = ", ".join(tool["function"]["name"] for tool in entry.tools)
        declared = f"The request declared the tools {names} (check --tools, or a recording's)."
        lines += [*para(declared), ""]
    lines += ["On the wire (one event per line):", *("  " + w for w in entry.wire.splitlines())]
    lines += ["", "What fraglens did:", *para(entry.did, "  ")]
    lines += ["", "What to do:", *para(entry.todo, "  ")]
    return "\n".join(lines) + "\n"
