"""fraglens against the official openai SDK's ChatCompletionStreamState.

On every openai-chat sample where the SDK does not crash, both must give the
same calls — except on the quirks where QUIRKS.md says the SDK is wrong; there
this test asserts that the SDK's answer differs, and says which quirk.
"""

from __future__ import annotations

import json

import pytest

from fraglens.reading.capture import load_stream
from fraglens.report.document import build_report

from .conftest import SAMPLES

openai = pytest.importorskip("openai")
from openai._models import construct_type  # noqa: E402
from openai.lib.streaming.chat._completions import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402

#: codes whose quirk the SDK gets wrong, and how (QUIRKS.md)
SDK_WRONG = {
    "id-repeated": "Q06: the SDK appends a re-sent id (call_1call_1)",
    "name-repeated": "Q10: the SDK appends a re-sent name",
    "index-nonzero-start": "Q02: the SDK keys by list position",
    "index-collision": "Q04: the SDK glues calls that share an index",
    "index-changed": "Q03: the SDK keeps fragments under the index they came with",
    "id-changed": "Q08: the SDK appends the second id",
    "args-object": "Q15: the SDK cannot add objects as text",
    "name-missing": "Q12: the SDK reports a call that never got a name with the name ''",
    "name-changed": "Q11b: the SDK appends a name re-sent mid-call (read_filenull)",
    "choice-index-unstable": "Q30b: the SDK keeps one choice per choice index it saw",
    "args-cumulative": "cumulative pieces: the SDK joins every restatement into one text",
}
#: quirks with no code of their own, pinned by the sample that shows them
SDK_WRONG_SAMPLES = {
    "quirk_q07_blank_ids.sse": "Q07: the SDK appends blank ids ('null', ' ') to the real one",
}


def sdk_calls(stream) -> list[tuple[str | None, str | None, str]] | None:
    state = ChatCompletionStreamState()
    try:
        for ev in stream.events:
            if ev.kind != "data":
                continue
            payload = json.loads(ev.data)
            if not isinstance(payload, dict) or "choices" not in payload:
                continue
            chunk = construct_type(type_=ChatCompletionChunk, value=payload)
            for _ in state.handle_chunk(chunk):
                pass
        snapshot = state.current_completion_snapshot
    except Exception:  # the SDK crashing is the finding: nothing to compare
        return None
    out = []
    for choice in sorted(snapshot.choices, key=lambda c: c.index):
        for tc in choice.message.tool_calls or []:
            out.append((tc.id, tc.function.name, tc.function.arguments or ""))
    return out


def chat_samples():
    out = []
    for path in sorted(SAMPLES.glob("*.sse")):
        stream, _ = load_stream(str(path))
        if stream.format == "openai-chat":
            out.append(path)
    return out


@pytest.mark.parametrize("path", chat_samples(), ids=lambda p: p.name)
def test_same_calls_as_the_openai_sdk_unless_quirks_says_it_is_wrong(path):
    stream, _ = load_stream(str(path))
    doc = build_report(stream)
    theirs = sdk_calls(stream)
    if theirs is None:
        pytest.skip("the openai SDK crashes on this stream; fraglens reads it")
    ours = [(c["id"], c["name"], c["arguments_raw"]) for c in doc["calls"]]
    wrong = sorted({d["code"] for d in doc["diagnostics"]} & SDK_WRONG.keys())
    if path.name in SDK_WRONG_SAMPLES:
        assert theirs != ours, SDK_WRONG_SAMPLES[path.name]
    elif wrong:
        assert theirs != ours, f"expected the SDK to differ: {[SDK_WRONG[w] for w in wrong]}"
    else:
        assert theirs == ours


def test_the_seed_stream_matches_the_sdk():
    """Interleaved calls keyed by index: the SDK gets this right, and so must we."""
    path = SAMPLES / "seed_interleaved_two_calls.sse"
    if not path.exists():
        pytest.skip("seed sample missing")
    stream, _ = load_stream(str(path))
    assert sdk_calls(stream) == [
        ("call_a1", "get_weather", '{"city":"深圳"}'),
        ("call_b2", "get_weather", '{"city":"上海","unit":"\\"u\\""}'),
    ]
