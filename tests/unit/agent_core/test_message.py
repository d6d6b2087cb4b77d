from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_core.event import (
    EventType,
    ReplyEndEvent,
    TextBlockDeltaEvent,
    TextBlockStartEvent,
    ToolResultDataDeltaEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
    parse_event,
)
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
    ToolResultState,
    UserMsg,
)


def test_string_content_becomes_one_text_block() -> None:
    msg = UserMsg("user", "hello")
    assert msg.role == "user"
    assert msg.content == [
        TextBlock(text="hello", id=msg.content[0].id, created_at=msg.content[0].created_at)
    ]
    assert msg.get_text_content() == "hello"


@pytest.mark.parametrize(
    ("factory", "block"),
    [
        (UserMsg, ThinkingBlock(thinking="hmm")),
        (UserMsg, ToolCallBlock(id="c", name="t", input="{}")),
        (SystemMsg, DataBlock(source=Base64Source(data="", media_type="image/png"))),
        (SystemMsg, HintBlock(hint="x")),
    ],
)
def test_role_constraints_are_enforced(factory: object, block: object) -> None:
    with pytest.raises(ValidationError, match="cannot contain"):
        factory("n", [block])  # type: ignore[operator]


def test_assistant_accepts_every_block_and_helpers_filter_by_type() -> None:
    msg = AssistantMsg(
        "bot",
        [
            TextBlock(text="a"),
            ThinkingBlock(thinking="t"),
            ToolCallBlock(id="c1", name="x", input="{}"),
            TextBlock(text="b"),
        ],
    )
    assert msg.get_text_content() == "a\nb"
    assert msg.get_text_content(separator="") == "ab"
    assert [b.id for b in msg.get_content_blocks("tool_call")] == ["c1"]
    assert msg.has_content_blocks("thinking")
    assert not msg.has_content_blocks("tool_result")
    assert [b.type for b in msg.get_content_blocks(["tool_call", "thinking"])] == [
        "thinking",
        "tool_call",
    ]
    assert msg.has_content_blocks(["hint", "tool_call"])
    assert not msg.has_content_blocks(["hint", "data"])
    assert AssistantMsg("bot", []).get_text_content() is None


def test_msg_round_trips_json() -> None:
    msg = AssistantMsg("bot", [TextBlock(text="hi"), HintBlock(hint=[TextBlock(text="h")])])
    assert Msg.model_validate_json(msg.model_dump_json()) == msg


def test_event_json_has_screaming_type_and_common_fields() -> None:
    event = TextBlockDeltaEvent(reply_id="r", block_id="b", delta="x")
    data = event.model_dump(mode="json")
    assert data["type"] == "TEXT_BLOCK_DELTA"
    assert {"id", "created_at", "metadata", "reply_id", "block_id", "delta"} <= set(data)
    assert parse_event(event.model_dump_json()) == event
    assert {e.value for e in EventType} >= {"MODEL_CALL_START", "HINT_BLOCK", "CUSTOM"}


def test_fold_builds_text_and_tool_results_including_data() -> None:
    msg = AssistantMsg("bot", [], id="r")
    for event in [
        TextBlockStartEvent(reply_id="r", block_id="b1"),
        TextBlockDeltaEvent(reply_id="r", block_id="b1", delta="Hel"),
        TextBlockDeltaEvent(reply_id="r", block_id="b1", delta="lo"),
        ToolResultStartEvent(reply_id="r", tool_call_id="c", tool_call_name="Read"),
        ToolResultTextDeltaEvent(reply_id="r", tool_call_id="c", delta="part1 "),
        ToolResultTextDeltaEvent(reply_id="r", tool_call_id="c", delta="part2"),
        ToolResultDataDeltaEvent(
            reply_id="r", tool_call_id="c", media_type="image/png", data="AAA"
        ),
        ToolResultEndEvent(
            reply_id="r", tool_call_id="c", state=ToolResultState.SUCCESS, metadata={"k": 1}
        ),
        ReplyEndEvent(reply_id="r"),
    ]:
        msg.append_event(event)
    assert msg.get_text_content() == "Hello"
    result = msg.get_content_blocks("tool_result")[0]
    assert result.output_text() == "part1 part2"
    assert isinstance(result.output[-1], DataBlock)  # type: ignore[index]
    assert result.state is ToolResultState.SUCCESS
    assert result.metadata == {"k": 1}
    assert msg.finished_at is not None
    assert msg.finished_reason == "completed"
