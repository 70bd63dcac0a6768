"""The diagnostics reference, in fraglens's own words: one entry per code of ``diagnostics.CODES``.

``fraglens explain CODE`` prints an entry, ``docs/diagnostics.md`` is generated
from this table (``scripts/diagnostics_doc.py``), and the app's Parse pane and
help point at the same text; a test holds the table, the code list and the
document together, so none of them can drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import CODES

__all__ = ["EXPLANATIONS", "Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class Explanation:
    #: what the code means, in a sentence or two
    means: str
    #: a short example of the wire shape that raises it
    wire: str
    #: what fraglens did about it
    did: str
    #: what the user should do
    todo: str


EXPLANATIONS: dict[str, Explanation] = {
    "args-schema": Explanation(
        means="The call's arguments parsed as JSON, but they do not satisfy the parameters "
        "schema its tool declared: a required field is absent, a value has the wrong type, "
        "a string is outside the enum, and so on. The message gives the JSON pointer into "
        "the arguments and the schema keyword that failed.",
        wire='declared  "unit": {"enum": ["c", "f"]}\n'
        'streamed  {"city": "Paris", "unit": "kelvin"}',
        did="Validated the parsed value (the repaired one for a repaired call) with jsonschema "
        "and listed every failure, up to 50 per call.",
        todo="Reject or re-ask rather than running the tool; if it recurs, tighten the tool's "
        "description, or ask for strict schema adherence where the provider offers it.",
    ),
    "strict-broken": Explanation(
        means="The tool was declared with strict: true, a promise by the provider that the "
        "arguments always match the schema. They did not, so the promise was broken, "
        "either by the provider or by a gateway in between.",
        wire='{"type": "function", "function": {"name": "f", "strict": true, ...}}\n'
        "and then arguments that fail the schema",
        did="Raised it once per call, next to that call's args-schema findings.",
        todo="Keep the capture: it is evidence for the provider. Check that every hop between "
        "you and the model passes strict through; some compatible servers ignore it.",
    ),
    "tool-undeclared": Explanation(
        means="The model called a tool by a name that none of the request's tools carries: "
        "a hallucinated tool, a typo, or a tool list that changed between requests.",
        wire='tools: [{"name": "get_weather", ...}]\n'
        'streamed  {"name": "get_forecast", "arguments": "..."}',
        did="Did not validate its arguments (there is no schema to hold them to).",
        todo="Answer the call with an error result naming the tools that exist, or drop it; "
        "never route it to the closest-sounding tool.",
    ),
    "tool-schema-invalid": Explanation(
        means="The schema a tool declared is not valid JSON Schema (a type name that does not "
        "exist, a required that is not a list...), so its calls could not be checked.",
        wire='"parameters": {"type": "dict", "required": "city"}',
        did="Left the call unchecked and said why.",
        todo="Fix the declaration: the provider may reject it or silently read it otherwise.",
    ),
}


def explain(code: str) -> str:
    """The entry for ``code`` as plain text, ending in a newline. KeyError for an unknown code."""
    severity, summary, _ = CODES[code]
    entry = EXPLANATIONS.get(code)
    lines = [f"{code} ({severity}): {summary}", ""]
    if entry is not None:
        lines += [entry.means, "", "On the wire:", *("  " + w for w in entry.wire.splitlines())]
        lines += ["", f"What fraglens did: {entry.did}", "", f"What to do: {entry.todo}"]
    return "\n".join(lines) + "\n"
