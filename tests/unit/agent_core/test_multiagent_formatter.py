"""The multi-agent formatter: named <history> for what speakers said, tool calls kept native."""

from __future__ import annotations

from typing import Any

from agent_core.formatter import FormatterBase, OpenAIChatFormatter, OpenAIMultiAgentFormatter
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)

PNG = Base64Source(data="iVBORw0KGgo=", media_type="image/png")
PNG_URL = "data:image/png;base64,iVBORw0KGgo="


async def fmt(*msgs: Msg) -> list[dict[str, Any]]:
    return await OpenAIMultiAgentFormatter().format(list(msgs))


async def test_debate_with_tool_calls() -> None:
    out = await fmt(
        SystemMsg("system", "You are bob, debating with alice and carol."),
        UserMsg("moderator", "Topic: tabs or spaces?"),
        AssistantMsg("alice", "Tabs.\nThey are one keystroke."),
        AssistantMsg(
            "bob",
            [
                ThinkingBlock(thinking="I should check."),
                TextBlock(text="Let me check the style guide."),
                ToolCallBlock(id="c1", name="read", input='{"path": "STYLE.md"}'),
                ToolCallBlock(id="c2", name="grep", input='{"pattern": "tab"}'),
                ToolResultBlock(id="c1", name="read", output="Indent with 4 spaces."),
                ToolResultBlock(id="c2", name="grep", output="no match"),
                ToolCallBlock(id="c3", name="read", input='{"path": "pyproject.toml"}'),
                ToolResultBlock(id="c3", name="read", output="line-length = 100"),
                TextBlock(text="Spaces, per the guide."),
            ],
        ),
        AssistantMsg("carol", [ThinkingBlock(thinking="agree"), TextBlock(text="Agreed.")]),
        UserMsg("moderator", "Final votes?"),
    )

    assert out == [
        {
            "role": "system",
            "name": "system",
            "content": "You are bob, debating with alice and carol.",
        },
        {
            "role": "user",
            "content": (
                "<history>\n"
                "moderator: Topic: tabs or spaces?\n"
                "alice: Tabs.\nThey are one keystroke.\n"
                "</history>"
            ),
        },
        {
            "role": "assistant",
            "name": "bob",
            "content": "Let me check the style guide.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "STYLE.md"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"pattern": "tab"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "read", "content": "Indent with 4 spaces."},
        {"role": "tool", "tool_call_id": "c2", "name": "grep", "content": "no match"},
        {
            "role": "assistant",
            "name": "bob",
            "content": None,
            "tool_calls": [
                {
                    "id": "c3",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "pyproject.toml"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "name": "read", "content": "line-length = 100"},
        {
            "role": "user",
            "content": (
                "<history>\n"
                "bob: Spaces, per the guide.\n"
                "carol: Agreed.\n"
                "moderator: Final votes?\n"
                "</history>"
            ),
        },
    ]


async def test_images_stay_in_the_history_beside_their_speaker() -> None:
    out = await fmt(
        UserMsg("alice", [TextBlock(text="Look:"), DataBlock(source=PNG)]),
        UserMsg("bob", [DataBlock(source=PNG)]),
        AssistantMsg("carol", "Nice."),
    )

    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<history>\nalice: Look:"},
                {"type": "image_url", "image_url": {"url": PNG_URL}},
                {"type": "text", "text": "bob:"},
                {"type": "image_url", "image_url": {"url": PNG_URL}},
                {"type": "text", "text": "carol: Nice.\n</history>"},
            ],
        }
    ]


async def test_hints_and_tool_images_stay_native_and_split_the_history() -> None:
    out = await fmt(
        UserMsg("user", "Draw it."),
        AssistantMsg(
            "bob",
            [
                ToolCallBlock(id="c1", name="draw", input="{}"),
                ToolResultBlock(
                    id="c1", name="draw", output=[TextBlock(text="ok"), DataBlock(source=PNG)]
                ),
                HintBlock(hint="alice: hurry up", source='{"kind": "team"}'),
                TextBlock(text="Done."),
            ],
        ),
    )

    assert out == [
        {"role": "user", "content": "<history>\nuser: Draw it.\n</history>"},
        {
            "role": "assistant",
            "name": "bob",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "draw", "arguments": "{}"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "draw",
            "content": "ok\n[image returned; shown in the next user message]",
        },
        {
            "role": "user",
            "name": "system-reminder",
            "content": [
                {
                    "type": "text",
                    "text": "The following images were returned by the tool call c1 (draw).",
                },
                {"type": "image_url", "image_url": {"url": PNG_URL}},
            ],
        },
        {"role": "user", "content": "alice: hurry up"},
        {"role": "user", "content": "<history>\nbob: Done.\n</history>"},
    ]


async def test_both_variants_share_the_formatter_interface() -> None:
    class Upper(FormatterBase):
        async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
            return [{"text": (m.get_text_content() or "").upper()} for m in msgs]

    formatters: list[FormatterBase] = [OpenAIChatFormatter(), OpenAIMultiAgentFormatter(), Upper()]
    msgs = [UserMsg("alice", "hi")]

    assert [await f.format(msgs) for f in formatters] == [
        [{"role": "user", "name": "alice", "content": "hi"}],
        [{"role": "user", "content": "<history>\nalice: hi\n</history>"}],
        [{"text": "HI"}],
    ]
