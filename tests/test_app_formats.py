"""The app reads the new formats through the engine, as it reads the others:
binary Bedrock events (a damaged one among them), NDJSON lines, AI SDK parts
with a tool output, AG-UI, LangGraph and Mistral Conversations events,
cumulative argument pieces."""

from __future__ import annotations

import pytest
from rich.console import Console

from fraglens.app.app import FraglensApp
from fraglens.app.widgets.parse import CallResult
from fraglens.app.widgets.stream_list import StreamList
from fraglens.reading.capture import load_stream

from .conftest import SAMPLES

SIZE = (120, 36)


@pytest.mark.parametrize(
    "name, label",
    [
        ("bedrock_converse_crc_damaged.eventstream", "damaged"),
        ("bedrock_invoke_claude_parallel.eventstream", "chunk"),
        ("ollama_native_parallel.ndjson", None),
        ("native_ai_sdk_tool_with_output.sse", None),
        ("native_ag_ui_args_misrouted.sse", "TOOL_CALL_ARGS"),
        ("native_langgraph_index_null.sse", "messages"),
        ("native_mistral_conversations.sse", "function.call"),
        ("quirk_cumulative_args_openai.sse", None),
    ],
)
async def test_every_step_of_a_new_format_renders(name, label):
    stream, _ = load_stream(str(SAMPLES / name))
    app = FraglensApp(stream, source=name)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("home")
        rows = set()
        for _ in stream.events:
            await pilot.press("n")
            stream_list = app.query_one(StreamList)
            rows.add(stream_list.render_line(app.step - int(stream_list.scroll_y)).text)
        assert app.step == len(stream.events) - 1
        if label is not None:
            assert any(label in row for row in rows)


async def test_a_tool_output_is_shown_with_its_call_from_its_event_on():
    stream, _ = load_stream(str(SAMPLES / "native_ai_sdk_tool_with_output.sse"))
    output_event = stream.reassembler.calls[0].outputs[0][0]
    app = FraglensApp(stream, source="ai-sdk")

    def result_text() -> str:
        widget = app.query(CallResult)[0]
        console = Console(width=60, color_system=None, record=True, file=None)
        with console.capture() as capture:
            console.print(widget.content(60))
        return capture.get()

    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("home")
        while app.step < output_event - 1:
            await pilot.press("n")
        assert "tool output" not in result_text()
        await pilot.press("n")
        text = result_text()
        assert f"tool output (e{output_event})" in text and '"conditions": "sunny"' in text
