"""Tool calls that leaked into the text: the markup families, and the calls read out of them.

When a server's tool-call parser is off, or the wrong one, the model's call
arrives as ordinary content, in the markup its chat template taught it. Each
family is one row of ``FAMILIES``: the literal that opens it, how its name and
arguments are delimited, and the server-side setting that turns it into real
tool calls. A family's reader takes the text from its opener and hands back
the calls it holds, where they start and whether their markup was closed.

The scan is one pass: a single expression finds the next opener, its reader
reads forward from there (every search bounded by the block it reads), and the
search goes on after the block. A block whose closer never comes runs to the
end of the text, so no character is read by more than a few searches.

Arguments written as JSON keep their exact text, judged by the same
``finalize`` as a real call's; arguments written as XML pairs (GLM, Qwen3-Coder)
are built into an object, and a value that reads as JSON keeps that type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..records import FrozenRecord
from .finalize import Result, finalize
from .scanner import Scanner, ScanState

if TYPE_CHECKING:
    from typing import Final

#: leaked calls (and markup openers) read out of one text at most: the scan
#: stops there, so what it keeps is bounded whatever the text holds
MAX_LEAKED = 64
#: arguments read out of one call written as XML pairs
MAX_PAIRS = 1024
#: a name longer than this is no tool name
_NAME = r"[^\s<>\[\]{}()\"'`,;:=|｜]{1,256}"
_decoder = json.JSONDecoder()


class Piece(FrozenRecord):
    """One call a reader found: offsets are into the text that was scanned."""

    __slots__ = ("family", "name", "raw", "start", "closed", "built")
    #: the key of its row in ``FAMILIES``; None: a rejected generation no row reads
    family: Final[str | None]
    name: Final[str | None]
    #: the arguments' text as written (for XML pairs: the pairs)
    raw: Final[str]
    start: Final[int]
    #: the markup around the call was closed (False: the text ended inside it)
    closed: Final[bool]
    #: the arguments as JSON text, when built from pairs rather than written
    built: Final[str | None]

    def __init__(
        self, family: str | None, name: str | None, raw: str, start: int, closed: bool,
        built: str | None = None,
    ) -> None:
        self.family = family
        self.name = name
        self.raw = raw
        self.start = start
        self.closed = closed
        self.built = built


#: a reader: (text, where the opener starts, where it ends) -> (calls, where to go on)
Reader = Callable[[str, int, int], tuple[list[Piece], int]]


class Family(FrozenRecord):
    __slots__ = ("key", "label", "opens", "shape", "fix", "read", "follows", "at_start")
    key: Final[str]
    label: Final[str]
    #: the literals that open it, as they appear in the text
    opens: Final[tuple[str, ...]]
    #: how the name and the arguments are written (for people)
    shape: Final[str]
    #: what makes the server turn this markup into tool calls
    fix: Final[str]
    read: Final[Reader]
    #: what must follow the opener for the text to be this family (a regular
    #: expression matched right after it; several families share ``<tool_call>``)
    follows: Final[str]
    #: the family is recognized only at the very start of the text
    at_start: Final[bool]

    def __init__(
        self, key: str, label: str, opens: tuple[str, ...], shape: str, fix: str, read: Reader,
        follows: str = "", at_start: bool = False,
    ) -> None:
        self.key = key
        self.label = label
        self.opens = opens
        self.shape = shape
        self.fix = fix
        self.read = read
        self.follows = follows
        self.at_start = at_start


# -- shared helpers ------------------------------------------------------------


def _lazy(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """``re.compile(pattern, flags)`` on the first call, the same pattern on
    the next: a family's reader's expressions are compiled when its markup is
    first found, not for every capture with text (most hold none, and the
    readers' thirty expressions took 1.5 ms to compile)."""
    compiled: list[re.Pattern[str]] = []

    def pattern_() -> re.Pattern[str]:
        if not compiled:
            compiled.append(re.compile(pattern, flags))
        return compiled[0]

    return pattern_


def _until(text: str, closers: re.Pattern[str], start: int, end: int) -> tuple[int, int, bool]:
    """Where the nearest closer starts and ends, or ``(end, end, False)``."""
    m = closers.search(text, start, end)
    return (m.start(), m.end(), True) if m else (end, end, False)


def _value_end(text: str, start: int, end: int) -> int | None:
    """The end of the one JSON value at ``start`` (whitespace skipped) if it
    ends before ``end``, or None. Only ``text[start:end]`` is read: blocks do
    not overlap, so the scan stays linear."""
    block = text[start:end]
    lead = len(block) - len(block.lstrip())
    try:
        _, stop = _decoder.raw_decode(block, lead)
    except (ValueError, RecursionError):
        return None
    return start + int(stop)


_NAME_KEY = _lazy(r'"name"\s*:\s*"((?:[^"\\]|\\.){0,256})"')
_ARGS_KEY = _lazy(r'"(?:arguments|parameters)"\s*:\s*')


def _json_call(family: str, text: str, start: int, end: int, closed: bool) -> Piece | None:
    """``{"name": ..., "arguments"|"parameters": ...}`` in ``text[start:end]``.
    The arguments keep their exact text; an object cut short keeps what came."""
    block = text[start:end]
    lead = len(block) - len(block.lstrip())
    try:
        whole, stop = _decoder.raw_decode(block, lead)
    except (ValueError, RecursionError):
        whole, stop = None, None
    if isinstance(whole, dict) and stop is not None:
        name = whole.get("name")
        if not isinstance(name, str) and not ({"arguments", "parameters"} & whole.keys()):
            return None  # an object, but no call
        value = whole.get("arguments", whole.get("parameters"))
        m = _ARGS_KEY().search(block, lead, stop)
        raw = ""
        if m is not None:
            at = _value_end(block, m.end(), stop)
            raw = block[m.end():at] if at is not None else ""
            if json.loads(raw or "null") != value:
                # the first such key was another's (nested, or in a string):
                # the value the object holds, written out
                raw = json.dumps(value, ensure_ascii=False)
        return Piece(family, name if isinstance(name, str) else None, raw.strip(),
                     start + lead, closed)
    m_name = _NAME_KEY().search(block)
    m_args = _ARGS_KEY().search(block)
    if m_name is None and m_args is None:
        return None
    try:
        name = json.loads(f'"{m_name.group(1)}"') if m_name else None
    except ValueError:
        name = m_name.group(1) if m_name else None
    raw = ""
    if m_args is not None:
        at = _value_end(block, m_args.end(), len(block))
        raw = block[m_args.end():at] if at is not None else block[m_args.end():].rstrip()
        if at is None and raw.endswith("}"):
            # the wrapper's own closing brace: the model finished the call (and
            # arguments still open inside it are truncated all the same)
            raw, closed = raw[:-1], True
    return Piece(family, name, raw.strip(), start + lead, closed)


def _pairs_value(value: str) -> Any:
    """A value written between tags: JSON when it reads as JSON, else the text."""
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _tagged_pairs(
    text: str, pos: int, stop: int, tags: tuple[str, str, str, str]
) -> list[tuple[str, str]]:
    """``key_open K key_close value_open V value_close`` pairs up to ``stop``;
    a pair the text ends inside is left out. Each search starts where the last
    one ended, so a missing closer costs one search, not one per pair."""
    key_open, key_close, value_open, value_close = tags
    pairs: list[tuple[str, str]] = []
    while len(pairs) < MAX_PAIRS:
        k = text.find(key_open, pos, stop)
        if k < 0:
            break
        k += len(key_open)
        k_end = text.find(key_close, k, stop)
        if k_end < 0:
            break
        v = text.find(value_open, k_end + len(key_close), stop) if value_open else k_end
        if v < 0:
            break
        v += len(value_open) if value_open else len(key_close)
        v_end = text.find(value_close, v, stop)
        if v_end < 0:
            break
        pairs.append((text[k:k_end].strip(), text[v:v_end]))
        pos = v_end + len(value_close)
    return pairs


def _built(pairs: list[tuple[str, str]]) -> str:
    return json.dumps({k: _pairs_value(v) for k, v in pairs}, ensure_ascii=False)


# -- the readers -----------------------------------------------------------------

_TOOL_CALL_END = _lazy(r"</tool_call>")


def _read_hermes(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, resume, closed = _until(text, _TOOL_CALL_END(), after, len(text))
    piece = _json_call("hermes", text, after, stop, closed)
    return ([piece.replace(start=at)] if piece else []), resume


_GLM_TAGS = ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
_GLM_NAME = _lazy(r"\s*([^\n<]{1,256})")


def _read_glm(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, resume, closed = _until(text, _TOOL_CALL_END(), after, len(text))
    m = _GLM_NAME().match(text, after, stop)
    name = m.group(1).strip() if m else None
    body_at = m.end() if m else after
    pairs = [(k, v.strip()) for k, v in _tagged_pairs(text, body_at, stop, _GLM_TAGS)]
    return [Piece("glm45", name, text[body_at:stop].strip(), at, closed, _built(pairs))], resume


_QWEN_FUNCTION = _lazy(r"\s*<function=([^>\n]{1,256})>")
_QWEN_TAGS = ("<parameter=", ">", "", "</parameter>")


def _read_qwen3_coder(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, resume, closed = _until(text, _TOOL_CALL_END(), after, len(text))
    m = _QWEN_FUNCTION().match(text, after, stop)
    name = m.group(1).strip() if m else None
    body_at = m.end() if m else after
    # the template puts each value on its own lines
    pairs = [(k, v.removeprefix("\n").removesuffix("\n"))
             for k, v in _tagged_pairs(text, body_at, stop, _QWEN_TAGS)]
    body = text[body_at:stop].strip().removesuffix("</function>").rstrip()
    return [Piece("qwen3_coder", name, body, at, closed, _built(pairs))], resume


_MISTRAL_NEXT = _lazy(r"\[TOOL_CALLS\]|</s>")
_MISTRAL_NAMED = _lazy(rf"\s*({_NAME})(?:\[CALL_ID\]([^\[]{{0,256}}))?\[ARGS\]")


def _read_mistral(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, _, _ = _until(text, _MISTRAL_NEXT(), after, len(text))
    m = _MISTRAL_NAMED().match(text, after, stop)
    if m is not None:  # [TOOL_CALLS]name[ARGS]{...}, the newer tokenizers' form
        end = _value_end(text, m.end(), stop)
        raw = text[m.end():end if end is not None else stop]
        return [Piece("mistral", m.group(1), raw.strip(), at, end is not None)], (
            end if end is not None else stop)
    # [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...], the older form
    lead = after
    while lead < stop and text[lead] in " \t\r\n":
        lead += 1
    end = _value_end(text, lead, stop)
    if end is None:
        piece = _json_call("mistral", text, lead + 1 if text.startswith("[", lead) else lead,
                           stop, False)
        return ([piece] if piece else []), stop
    value = json.loads(text[lead:end])
    pieces = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, dict):
            continue
        args = item.get("arguments", item.get("parameters"))
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        name = item.get("name")
        pieces.append(Piece("mistral", name if isinstance(name, str) else None, raw, at, True))
    return pieces, end


_KIMI_SECTION_END = _lazy(r"<\|tool_calls_section_end\|>")
_KIMI_CALL = _lazy(
    r"<\|tool_call_begin\|>\s*([^<]{1,300}?)\s*<\|tool_call_argument_begin\|>"
)
_KIMI_CALL_END = _lazy(r"<\|tool_call_end\|>|<\|tool_call_begin\|>")


def _kimi_name(call_id: str) -> str:
    """``functions.get_weather:0`` -> ``get_weather``."""
    return call_id.rsplit(":", 1)[0].removeprefix("functions.")


def _read_kimi(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    if text.startswith("<|tool_call_begin|>", at):
        after = at  # a call without its section: read from its own opener
    stop, resume, closed = _until(text, _KIMI_SECTION_END(), after, len(text))
    pieces: list[Piece] = []
    pos = after
    while len(pieces) < MAX_LEAKED:
        m = _KIMI_CALL().search(text, pos, stop)
        if m is None:
            break
        end, pos, ended = _until(text, _KIMI_CALL_END(), m.end(), stop)
        if ended and text.startswith("<|tool_call_begin|>", end):
            pos, ended = end, False  # the next call began before this one ended
        pieces.append(Piece("kimi_k2", _kimi_name(m.group(1).strip()),
                            text[m.end():end].strip(), m.start(), ended and (closed or pos < stop)))
    return pieces, resume


_DEEPSEEK_FENCED = _lazy(r"([^\n]{1,256})\n```(?:json)?\n(.*?)\n?```\s*$", re.DOTALL)


@lru_cache(maxsize=2)
def _deepseek_tokens(bar: str) -> tuple[re.Pattern[str], re.Pattern[str], str, re.Pattern[str]]:
    """The closers and separators of one spelling of DeepSeek's markup (its
    full-width bar or the ASCII one), compiled when first met."""
    b = re.escape(bar)
    return (
        re.compile(rf"<{b}tool▁calls▁end{b}>"),
        re.compile(rf"<{b}tool▁call▁begin{b}>"),
        f"<{bar}tool▁sep{bar}>",
        re.compile(rf"<{b}tool▁call▁end{b}>|<{b}tool▁call▁begin{b}>"),
    )


def _read_deepseek(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    bar = text[at + 1]
    section_end, call_begin, sep, call_end = _deepseek_tokens(bar)
    if text.startswith(f"<{bar}tool▁call▁begin{bar}>", at):
        after = at
    stop, resume, closed = _until(text, section_end, after, len(text))
    pieces: list[Piece] = []
    pos = after
    while len(pieces) < MAX_LEAKED:
        m = call_begin.search(text, pos, stop)
        if m is None:
            break
        end, pos, ended = _until(text, call_end, m.end(), stop)
        if ended and text.startswith(f"<{bar}tool▁call▁begin{bar}>", end):
            pos, ended = end, False
        ended = ended and (closed or pos < stop)
        split = text.find(sep, m.end(), end)
        if split < 0:
            pieces.append(Piece("deepseek_v31", None, text[m.end():end].strip(), m.start(), ended))
            continue
        head, body = text[m.end():split], text[split + len(sep):end]
        fenced = _DEEPSEEK_FENCED().match(body)
        if fenced is not None:  # V3: type<sep>name, then the arguments in a json fence
            pieces.append(Piece("deepseek_v3", fenced.group(1).strip(), fenced.group(2).strip(),
                                m.start(), ended))
        elif head.strip() == "function" and "\n```" in body:
            # V3 cut inside its fence: the name is the first line
            name, _, rest = body.partition("\n")
            rest = rest.removeprefix("```json").removeprefix("```").strip()
            pieces.append(Piece("deepseek_v3", name.strip(), rest, m.start(), False))
        else:  # V3.1 and later: name<sep>arguments
            pieces.append(Piece("deepseek_v31", head.strip() or None, body.strip(), m.start(),
                                ended))
    return pieces, resume


_HARMONY_HEAD = _lazy(rf"to=functions\.({_NAME})(.{{0,200}}?)<\|message\|>", re.DOTALL)
_HARMONY_END = _lazy(r"<\|(?:call|end|return|start)\|>")


def _read_harmony(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    m = _HARMONY_HEAD().match(text, at)
    if m is None:
        return [], after
    end, resume, closed = _until(text, _HARMONY_END(), m.end(), len(text))
    return [Piece("harmony", m.group(1), text[m.end():end].strip(), at, closed)], resume


_PYTHON_TAG_END = _lazy(r"<\|eom_id\|>|<\|eot_id\|>|<\|python_tag\|>")
_PYTHON_CALL = _lazy(rf"\s*({_NAME})\.call\((.*)\)\s*$", re.DOTALL)


def _read_python_tag(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, resume, closed = _until(text, _PYTHON_TAG_END(), after, len(text))
    if text.startswith("<|python_tag|>", stop):
        resume = stop  # the next call's own tag
        closed = True
    builtin = _PYTHON_CALL().match(text[after:stop])
    if builtin is not None:  # a built-in tool: brave_search.call(query="...")
        return [Piece("llama3", builtin.group(1), builtin.group(2).strip(), at, True)], resume
    pieces: list[Piece] = []
    pos = after
    while pos < stop and len(pieces) < MAX_LEAKED:
        # several calls are separated by ";"
        end = _value_end(text, pos, stop)
        piece = _json_call("llama3", text, pos, end if end is not None else stop,
                           closed or end is not None)
        if piece is None:
            break
        pieces.append(piece if pieces else piece.replace(start=at))
        if end is None:
            break
        pos = end
        while pos < stop and text[pos] in " \t\r\n;":
            pos += 1
    return pieces, resume


def _read_llama3_json(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    end = _value_end(text, at, len(text))
    if _ARGS_KEY().search(text, at, end if end is not None else len(text)) is None:
        return [], at  # an answer that has a "name", not a call
    piece = _json_call("llama3_json", text, at, end if end is not None else len(text),
                       end is not None)
    return ([piece] if piece else []), end if end is not None else len(text)


_FUNCTION_TAG = _lazy(rf"({_NAME})\s*>?")
_FUNCTION_END = _lazy(r"</function>")


def _read_function_tag(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, resume, closed = _until(text, _FUNCTION_END(), after, len(text))
    m = _FUNCTION_TAG().match(text, after, stop)
    if m is None:
        return [], resume
    return [Piece("llama_function", m.group(1), text[m.end():stop].strip(), at, closed)], resume


_MINIMAX_END = _lazy(r"</tool_calls>")


def _read_minimax(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, resume, closed = _until(text, _MINIMAX_END(), after, len(text))
    pieces: list[Piece] = []
    pos = after
    for line in text[after:stop].split("\n"):
        if line.strip() and len(pieces) < MAX_LEAKED:
            piece = _json_call("minimax", text, pos, pos + len(line), closed)
            if piece is not None:
                pieces.append(piece)
        pos += len(line) + 1
    return pieces, resume


_QWEN_AGENT = _lazy(r"\s*:?\s*([^\n]{1,256})\n✿ARGS✿\s*:?\s*")
_QWEN_AGENT_END = _lazy(r"✿RESULT✿|✿RETURN✿|✿FUNCTION✿")


def _read_qwen_agent(text: str, at: int, after: int) -> tuple[list[Piece], int]:
    stop, _, closed = _until(text, _QWEN_AGENT_END(), after, len(text))
    m = _QWEN_AGENT().match(text, after, stop)
    if m is None:
        return [], stop
    return [Piece("qwen_agent", m.group(1).strip(), text[m.end():stop].strip(), at, closed)], stop


_VLLM = "vLLM `--enable-auto-tool-choice --tool-call-parser"

FAMILIES: tuple[Family, ...] = (
    Family(
        "hermes", "Hermes / Qwen2.5 `<tool_call>` JSON", ("<tool_call>",),
        '`<tool_call>{"name": N, "arguments": {...}}</tool_call>`',
        f"{_VLLM} hermes`; SGLang `--tool-call-parser qwen25`; llama.cpp `--jinja`; "
        "Ollama: a model template that declares tools",
        _read_hermes, follows=r"\s*\{",
    ),
    Family(
        "qwen3_coder", "Qwen3-Coder XML", ("<tool_call>",),
        "`<tool_call><function=N><parameter=K>V</parameter></function></tool_call>`",
        f"{_VLLM} qwen3_coder`; SGLang `--tool-call-parser qwen3_coder`; llama.cpp `--jinja`",
        _read_qwen3_coder, follows=r"\s*<function=",
    ),
    Family(
        "glm45", "GLM-4.5 / 4.6 `<arg_key>` pairs", ("<tool_call>",),
        "`<tool_call>N\\n<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`",
        f"{_VLLM} glm45`; SGLang `--tool-call-parser glm45`; llama.cpp `--jinja`",
        _read_glm, follows=r"\s*[^\s<>{}\[\]\"']{1,256}[ \t]*(?:\n|<arg_key>|</tool_call>)",
    ),
    Family(
        "mistral", "Mistral `[TOOL_CALLS]`", ("[TOOL_CALLS]",),
        '`[TOOL_CALLS][{"name": N, "arguments": {...}}]`, or `[TOOL_CALLS]N[ARGS]{...}` '
        "(tokenizer v11 and later)",
        f"{_VLLM} mistral` (with `--tokenizer-mode mistral`); SGLang `--tool-call-parser "
        "mistral`; llama.cpp `--jinja`",
        _read_mistral,
    ),
    Family(
        "kimi_k2", "Kimi K2 tool-call section",
        ("<|tool_calls_section_begin|>", "<|tool_call_begin|>"),
        "`<|tool_calls_section_begin|><|tool_call_begin|>functions.N:0"
        "<|tool_call_argument_begin|>{...}<|tool_call_end|><|tool_calls_section_end|>`",
        f"{_VLLM} kimi_k2`; SGLang `--tool-call-parser kimi_k2`",
        _read_kimi,
    ),
    Family(
        "deepseek_v3", "DeepSeek V3 / R1 (fenced JSON)",
        ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<|tool▁calls▁begin|>",
         "<|tool▁call▁begin|>"),
        "`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N\\n```json\\n{...}"
        "\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`",
        f"{_VLLM} deepseek_v3` (with its `tool_chat_template_deepseekv3.jinja`); SGLang "
        "`--tool-call-parser deepseekv3`; llama.cpp `--jinja`",
        _read_deepseek,
    ),
    Family(
        "deepseek_v31", "DeepSeek V3.1 and later", (),
        "`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>N<｜tool▁sep｜>{...}<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜>`",
        f"{_VLLM} deepseek_v31`; SGLang `--tool-call-parser deepseekv31`; llama.cpp `--jinja`",
        _read_deepseek,
    ),
    Family(
        "harmony", "gpt-oss harmony", ("to=functions.",),
        "`<|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json"
        "<|message|>{...}<|call|>` (or `to=functions.N` right after the role)",
        f"{_VLLM} openai`; SGLang `--tool-call-parser gpt-oss`; llama.cpp `--jinja`; "
        "Ollama 0.11 or later",
        _read_harmony, follows=r"(?s)[^\s<>]{1,256}.{0,200}?<\|message\|>",
    ),
    Family(
        "llama3", "Llama 3.x `<|python_tag|>`", ("<|python_tag|>",),
        '`<|python_tag|>{"name": N, "parameters": {...}}` (several joined by `;`), or a '
        'built-in tool `<|python_tag|>brave_search.call(query="...")`',
        f"{_VLLM} llama3_json` (with `tool_chat_template_llama3.1_json.jinja`); SGLang "
        "`--tool-call-parser llama3`; llama.cpp `--jinja`; Ollama: a model template that "
        "declares tools",
        _read_python_tag,
    ),
    Family(
        "llama3_json", "a JSON call object as the whole text (Llama 3.x JSON tool calling)", ("{",),
        '`{"name": N, "parameters": {...}}` as the whole text',
        f"{_VLLM} llama3_json`; SGLang `--tool-call-parser llama3`; llama.cpp `--jinja`; "
        "Ollama: a model template that declares tools",
        _read_llama3_json, follows=r'\s*"name"\s*:', at_start=True,
    ),
    Family(
        "llama_function", "Llama 3.1 `<function=...>` custom tool", ("<function=",),
        "`<function=N>{...}</function>`",
        "llama.cpp `--jinja`; for vLLM, `--tool-call-parser llama3_json` with its JSON chat "
        "template, so the model writes JSON calls",
        _read_function_tag,
    ),
    Family(
        "minimax", "MiniMax-M1 `<tool_calls>`", ("<tool_calls>",),
        '`<tool_calls>` then one `{"name": N, "arguments": {...}}` per line, `</tool_calls>`',
        f"{_VLLM} minimax`",
        _read_minimax,
    ),
    Family(
        "qwen_agent", "Qwen-Agent `✿FUNCTION✿`", ("✿FUNCTION✿",),
        "`✿FUNCTION✿: N` then `✿ARGS✿: {...}`",
        "a server-side tool-call parser (vLLM `--tool-call-parser hermes` for Qwen models) "
        "instead of Qwen-Agent's prompt format, or Qwen-Agent reading the reply",
        _read_qwen_agent,
    ),
)

BY_KEY = {f.key: f for f in FAMILIES}
#: each opener and the families it may open, in table order
_OPENERS: dict[str, list[Family]] = {}
for _family in FAMILIES:
    for _opener in _family.opens:
        _OPENERS.setdefault(_opener, []).append(_family)
_FOLLOWS = {f.key: _lazy(f.follows) for f in FAMILIES if f.follows}
_RUNNING = {o for f in FAMILIES if not f.at_start for o in f.opens}
#: the openers found in running text, longest first
_SCAN = re.compile("|".join(re.escape(o) for o in sorted(_RUNNING, key=len, reverse=True)))
#: a character of each of them, one that prose rarely holds where it can: a
#: text with none of these holds no opener, and is not searched for one (most
#: text: a search of the expression costs 4 ms a megabyte, a test for a
#: character a tenth of that)
OPENER_CHARS = "".join(sorted({next((c for c in "<[✿=" if c in o), o[0]) for o in _RUNNING}))
#: the families only a text's very start can hold
_AT_START = [f for f in FAMILIES if f.at_start]


def _family_at(text: str, at: int, opener: str) -> Family | None:
    for family in _OPENERS[opener]:
        follows = _FOLLOWS.get(family.key)
        if follows is None or follows().match(text, at + len(opener)):
            return family
    return None


class Markup(FrozenRecord):
    """Where one family's opener was seen in a text."""

    __slots__ = ("family", "opener", "start", "end")
    family: Final[str]
    opener: Final[str]
    start: Final[int]
    end: Final[int]

    def __init__(self, family: str, opener: str, start: int, end: int) -> None:
        self.family = family
        self.opener = opener
        self.start = start
        self.end = end


def scan(text: str) -> tuple[list[Markup], list[Piece]]:
    """The openers of known families in ``text`` (the first per block) and the
    calls read out of them, up to ``MAX_LEAKED`` of either."""
    marks: list[Markup] = []
    pieces: list[Piece] = []
    start = len(text) - len(text.lstrip())
    for family in _AT_START:
        opener = next((o for o in family.opens if text.startswith(o, start)), None)
        follows = _FOLLOWS.get(family.key)
        if opener is None or (follows and not follows().match(text, start + len(opener))):
            continue
        found, _ = family.read(text, start, start + len(opener))
        if found:
            marks.append(Markup(family.key, opener, start, start + len(opener)))
            pieces.extend(found[:MAX_LEAKED])
            return marks, pieces
    if not any(c in text for c in OPENER_CHARS):
        return marks, pieces
    pos = 0
    for m in _SCAN.finditer(text):
        if m.start() < pos:
            continue  # inside a block already read
        opened = _family_at(text, m.start(), m.group(0))
        if opened is None:
            continue
        marks.append(Markup(opened.key, m.group(0), m.start(), m.end()))
        found, pos = opened.read(text, m.start(), m.end())
        pieces.extend(found[: MAX_LEAKED - len(pieces)])
        if len(pieces) >= MAX_LEAKED or len(marks) >= MAX_LEAKED:
            break
    return marks, pieces


class Leaked(FrozenRecord):
    """A call the model meant that never became a tool call, and where it was:
    in a choice's text (``source`` "text", ``offset`` into that text) or in the
    generation a provider's error carried (``source`` "error")."""

    __slots__ = ("piece", "result", "source", "choice", "event")
    piece: Final[Piece]
    result: Final[Result]
    source: Final[str]
    choice: Final[int | None]
    event: Final[int]

    def __init__(
        self, piece: Piece, result: Result, source: str, choice: int | None, event: int,
    ) -> None:
        self.piece = piece
        self.result = result
        self.source = source
        self.choice = choice
        self.event = event

    @property
    def arguments_text(self) -> str:
        return self.piece.built if self.piece.built is not None else self.piece.raw


def judge(piece: Piece, source: str, choice: int | None, event: int) -> Leaked:
    """The leaked call's arguments through the engine's own verdicts: a text
    whose markup was closed is whole (damage is damage); one the text ended
    inside is cut off when its JSON is open (servers often drop the closing
    token, so a missing closer alone proves nothing)."""
    text = piece.built if piece.built is not None else piece.raw

    def state() -> ScanState:
        scanner = Scanner()
        scanner.feed(text)
        return scanner.state()

    if piece.built is not None and not piece.closed:
        # the pairs read so far make a whole object; the call itself was cut off
        result = finalize(text, state, finish="stop")
        result = Result("truncated", result.arguments, result.has_value, result.repairs,
                        (("args-truncated", "the text ended inside the call's markup"),))
    else:
        result = finalize(text, state, finish="stop" if piece.closed else None)
    return Leaked(piece, result, source, choice, event)


def rejected(generation: str, event: int) -> list[Leaked]:
    """The calls a provider's rejected generation holds (Groq's
    ``failed_generation``); a generation no family reads is kept whole, nameless."""
    _, pieces = scan(generation)
    if not pieces:
        pieces = [Piece(None, None, generation, 0, True)]
    return [judge(p, "error", None, event) for p in pieces]
