"""Folding with a `BlockIndex` yields the message a plain fold yields, whatever happens to it."""

from __future__ import annotations

from agent_core._block_index import BlockIndex
from agent_core._fold import apply_event
from agent_core.event import (
    AgentEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
)
from agent_core.message import AssistantMsg, Msg


def _events(rid: str) -> list[AgentEvent]:
    return [
        TextBlockStartEvent(reply_id=rid, block_id="t1"),
        TextBlockDeltaEvent(reply_id=rid, block_id="t1", delta="Hel"),
        ToolCallStartEvent(reply_id=rid, tool_call_id="c1", tool_call_name="add"),
        TextBlockDeltaEvent(reply_id=rid, block_id="t1", delta="lo"),
        # A provider reusing a call id: deltas go to the first block of that id.
        ToolCallStartEvent(reply_id=rid, tool_call_id="c1", tool_call_name="add"),
        ToolCallDeltaEvent(reply_id=rid, tool_call_id="c1", delta='{"a": 1}'),
        TextBlockDeltaEvent(reply_id=rid, block_id="missing", delta="ignored"),
        TextBlockEndEvent(reply_id=rid, block_id="t1"),
    ]


def _pair() -> tuple[Msg, Msg]:
    plain = AssistantMsg("bot", [], id="r1", created_at="2026-01-01T00:00:00+00:00")
    return plain, plain.model_copy(deep=True)


def test_an_indexed_fold_equals_the_plain_fold() -> None:
    plain, indexed = _pair()
    index = BlockIndex()
    for event in _events("r1"):
        apply_event(plain, event)
        apply_event(indexed, event, index)
    assert indexed == plain
    assert indexed.content[1].input == '{"a": 1}'  # type: ignore[union-attr]


def test_a_message_changed_in_place_is_found_again() -> None:
    plain, indexed = _pair()
    index = BlockIndex()
    events = _events("r1")
    for event in events[:4]:
        apply_event(plain, event)
        apply_event(indexed, event, index)
    for msg in (plain, indexed):
        msg.content.insert(0, msg.content.pop(1))  # the call before the text
    for event in events[4:]:
        apply_event(plain, event)
        apply_event(indexed, event, index)
    assert indexed == plain
