"""Folding events into a Msg, case by case, as AgentScope 2.0.11's `Msg.append_event` does."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from agent_core.errors import FoldError
from agent_core.event import (
    AgentEvent,
    ConfirmResult,
    CustomEvent,
    DataBlockDeltaEvent,
    DataBlockEndEvent,
    DataBlockStartEvent,
    ExternalExecutionResultEvent,
    HintBlockEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
    ToolResultDataDeltaEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
    UserConfirmResultEvent,
)
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    URLSource,
)
from agent_core.permission.types import PermissionBehavior, PermissionRule

R = "reply-1"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def fold(*events: AgentEvent, msg: Msg | None = None) -> Msg:
    msg = msg if msg is not None else AssistantMsg("bot", [], id=R)
    for event in events:
        msg.append_event(event)
    return msg


def call(call_id: str = "c1", name: str = "Bash") -> ToolCallStartEvent:
    return ToolCallStartEvent(reply_id=R, tool_call_id=call_id, tool_call_name=name)


def ask(call_id: str = "c1") -> RequireUserConfirmEvent:
    block = ToolCallBlock(id=call_id, name="Bash", input="{}")
    return RequireUserConfirmEvent(reply_id=R, tool_calls=[block])


def verdict(confirmed: bool, call_id: str = "c1", input: str = "{}") -> UserConfirmResultEvent:
    block = ToolCallBlock(id=call_id, name="Bash", input=input)
    result = ConfirmResult(confirmed=confirmed, tool_call=block)
    return UserConfirmResultEvent(reply_id=R, confirm_results=[result])


def state_of(msg: Msg, call_id: str = "c1") -> ToolCallState:
    block = msg.find_block(call_id, ToolCallBlock)
    assert block is not None
    return block.state


# Data blocks --------------------------------------------------------------------------------


def test_data_block_start_carries_a_name() -> None:
    msg = fold(
        DataBlockStartEvent(reply_id=R, block_id="d", media_type="image/png", name="cat.png")
    )
    block = msg.content[0]
    assert isinstance(block, DataBlock)
    assert block.name == "cat.png"
    assert block.source == Base64Source(data="", media_type="image/png")


def test_data_block_delta_url_replaces_the_source() -> None:
    msg = fold(
        DataBlockStartEvent(reply_id=R, block_id="d", media_type="image/png"),
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="image/png", data=b64(b"ab")),
        DataBlockDeltaEvent(
            reply_id=R, block_id="d", media_type="image/jpeg", url="https://x.test"
        ),
        DataBlockEndEvent(reply_id=R, block_id="d", created_at="2026-01-01T00:00:00"),
    )
    block = msg.content[0]
    assert isinstance(block, DataBlock)
    # Stored in the normal form of a URL, as AgentScope stores it.
    assert block.source == URLSource(url="https://x.test/", media_type="image/jpeg")
    assert block.finished_at == "2026-01-01T00:00:00"


def test_data_block_base64_chunks_are_decoded_and_joined() -> None:
    msg = fold(
        DataBlockStartEvent(reply_id=R, block_id="d", media_type="audio/wav"),
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="audio/wav", data=b64(b"a")),
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="audio/wav", data=b64(b"bc")),
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="audio/wav", data=""),
    )
    block = msg.content[0]
    assert isinstance(block, DataBlock)
    assert isinstance(block.source, Base64Source)
    # Naive concatenation ("YQ==YmM=") would corrupt the byte stream.
    assert block.source.data == b64(b"abc")


@pytest.mark.parametrize(
    "second",
    [
        {"data": "YQ"},  # bad padding
        {"data": "é"},  # not ASCII
    ],
)
def test_undecodable_data_chunk_is_a_fold_error(second: dict[str, str]) -> None:
    msg = fold(
        DataBlockStartEvent(reply_id=R, block_id="d", media_type="audio/wav"),
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="audio/wav", data="YQ=="),
    )
    event = DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="audio/wav", **second)
    with pytest.raises(FoldError, match="not valid base64"):
        msg.append_event(event)


def test_base64_chunk_for_a_url_block_and_a_bad_url_are_fold_errors() -> None:
    msg = fold(
        DataBlockStartEvent(reply_id=R, block_id="d", media_type="image/png"),
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="image/png", url="https://x.t/a"),
    )
    with pytest.raises(FoldError, match="holds a URL"):
        msg.append_event(
            DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="image/png", data="YQ==")
        )
    with pytest.raises(FoldError, match="not a valid URL"):
        msg.append_event(
            DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="image/png", url="nope")
        )
    assert isinstance(FoldError("x"), ValueError)


@pytest.mark.parametrize("fields", [{}, {"data": "YQ==", "url": "https://x.test/"}])
def test_data_events_need_exactly_one_of_data_and_url(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        DataBlockDeltaEvent(reply_id=R, block_id="d", media_type="image/png", **fields)
    with pytest.raises(ValidationError, match="exactly one"):
        ToolResultDataDeltaEvent(reply_id=R, tool_call_id="c", media_type="image/png", **fields)


# Tool results -------------------------------------------------------------------------------


def test_tool_result_base64_chunks_of_one_block_id_merge_into_the_first() -> None:
    def chunk(block_id: str, raw: bytes, media_type: str = "image/png") -> AgentEvent:
        return ToolResultDataDeltaEvent(
            reply_id=R, tool_call_id="c1", block_id=block_id, media_type=media_type, data=b64(raw)
        )

    msg = fold(
        ToolResultStartEvent(reply_id=R, tool_call_id="c1", tool_call_name="Read"),
        chunk("img", b"he"),
        ToolResultTextDeltaEvent(reply_id=R, tool_call_id="c1", delta="caption"),
        chunk("img", b"llo", media_type="image/webp"),
        chunk("other", b"x"),
    )
    result = msg.content[0]
    assert isinstance(result, ToolResultBlock)
    assert isinstance(result.output, list)
    assert [b.type for b in result.output] == ["data", "text", "data"]
    first = result.output[0]
    assert isinstance(first, DataBlock)
    assert first.source == Base64Source(data=b64(b"hello"), media_type="image/webp")


def test_tool_result_url_output_is_its_own_block() -> None:
    msg = fold(
        ToolResultStartEvent(reply_id=R, tool_call_id="c1", tool_call_name="Read"),
        ToolResultDataDeltaEvent(
            reply_id=R, tool_call_id="c1", block_id="u", media_type="image/png", url="https://a.b"
        ),
        ToolResultDataDeltaEvent(
            reply_id=R, tool_call_id="c1", block_id="u", media_type="image/png", data="YQ=="
        ),
    )
    result = msg.content[0]
    assert isinstance(result, ToolResultBlock)
    assert isinstance(result.output, list)
    assert [b.source.type for b in result.output if isinstance(b, DataBlock)] == ["url", "base64"]
    with pytest.raises(FoldError):
        msg.append_event(
            ToolResultDataDeltaEvent(
                reply_id=R, tool_call_id="c1", block_id="u", media_type="image/png", data="Y"
            )
        )


def test_text_delta_on_a_plain_text_output_turns_it_into_blocks() -> None:
    external = ToolResultBlock(id="c1", name="Deploy", output="v2", state=ToolResultState.SUCCESS)
    msg = fold(
        ExternalExecutionResultEvent(reply_id=R, execution_results=[external]),
        ToolResultTextDeltaEvent(reply_id=R, tool_call_id="c1", delta=" live"),
    )
    result = msg.content[0]
    assert isinstance(result, ToolResultBlock)
    assert isinstance(result.output, list)
    assert [b.text for b in result.output if isinstance(b, TextBlock)] == ["v2 live"]


def test_tool_result_end_replaces_metadata_and_finishes_the_call() -> None:
    external = ToolResultBlock(
        id="c1", name="Bash", output="", metadata={"old": 1}, state=ToolResultState.RUNNING
    )
    msg = fold(
        call(),
        ExternalExecutionResultEvent(reply_id=R, execution_results=[external]),
        ToolResultEndEvent(
            reply_id=R, tool_call_id="c1", state=ToolResultState.ERROR, metadata={"new": 2}
        ),
    )
    result = msg.content[1]
    assert isinstance(result, ToolResultBlock)
    assert result.metadata == {"new": 2}
    assert result.state is ToolResultState.ERROR
    assert state_of(msg) is ToolCallState.FINISHED


# Confirmations and external execution -------------------------------------------------------


def test_rejected_confirmation_finishes_the_call() -> None:
    assert state_of(fold(call(), ask(), verdict(False))) is ToolCallState.FINISHED
    assert state_of(fold(call(), ask(), verdict(True))) is ToolCallState.ALLOWED


def test_confirm_result_moves_only_asking_calls() -> None:
    # Not asking: a stale verdict changes nothing; an unknown id is ignored.
    assert state_of(fold(call(), verdict(True))) is ToolCallState.PENDING
    assert state_of(fold(call(), ask(), verdict(False), verdict(True))) is ToolCallState.FINISHED
    assert state_of(fold(call(), ask(), verdict(True, call_id="ghost"))) is ToolCallState.ASKING


def test_confirm_result_keeps_the_recorded_input() -> None:
    msg = fold(call(), ToolCallDeltaEvent(reply_id=R, tool_call_id="c1", delta='{"a":1}'), ask())
    msg.append_event(verdict(True, input='{"a":2}'))
    block = msg.find_block("c1", ToolCallBlock)
    assert block is not None
    assert block.input == '{"a":1}'


def test_require_confirm_records_the_suggested_rules() -> None:
    rule = PermissionRule(tool_name="Bash", rule_content="ls", behavior=PermissionBehavior.ALLOW)
    asked = ToolCallBlock(id="c1", name="Bash", input="{}", suggested_rules=[rule])
    msg = fold(call(), RequireUserConfirmEvent(reply_id=R, tool_calls=[asked]))
    block = msg.find_block("c1", ToolCallBlock)
    assert block is not None
    assert block.suggested_rules == [rule]
    assert block.state is ToolCallState.ASKING


def test_external_execution_marks_the_call_submitted_until_its_result_ends() -> None:
    asked = ToolCallBlock(id="c1", name="Deploy", input="{}")
    msg = fold(call(name="Deploy"), RequireExternalExecutionEvent(reply_id=R, tool_calls=[asked]))
    assert state_of(msg) is ToolCallState.SUBMITTED
    result = ToolResultBlock(id="c1", name="Deploy", output="ok", state=ToolResultState.SUCCESS)
    msg.append_event(
        ExternalExecutionResultEvent(
            reply_id=R, execution_results=[result], created_at="2026-01-01T00:00:00"
        )
    )
    assert state_of(msg) is ToolCallState.SUBMITTED
    appended = msg.content[1]
    assert isinstance(appended, ToolResultBlock)
    assert appended.finished_at == "2026-01-01T00:00:00"


def test_external_result_for_a_call_that_has_a_result_is_dropped() -> None:
    external = ToolResultBlock(id="c1", name="Deploy", output="done")
    msg = fold(
        ToolResultStartEvent(reply_id=R, tool_call_id="c1", tool_call_name="Deploy"),
        ToolResultTextDeltaEvent(reply_id=R, tool_call_id="c1", delta="running"),
        ExternalExecutionResultEvent(reply_id=R, execution_results=[external]),
    )
    results = msg.get_content_blocks("tool_result")
    assert len(results) == 1
    assert results[0].output_text() == "running"
    # Within one event, the check is against results present before it.
    twice = ExternalExecutionResultEvent(reply_id=R, execution_results=[external, external])
    assert len(fold(twice).get_content_blocks("tool_result")) == 2


# Identity -----------------------------------------------------------------------------------


def test_events_of_another_reply_and_custom_events_are_skipped() -> None:
    msg = fold(
        TextBlockStartEvent(reply_id="other", block_id="t"),
        CustomEvent(name="session_updated"),
        TextBlockStartEvent(reply_id=R, block_id="t"),
        TextBlockDeltaEvent(reply_id="other", block_id="t", delta="foreign"),
    )
    assert msg.get_text_content() == ""
    assert len(msg.content) == 1


def test_append_event_returns_the_message_for_chaining() -> None:
    msg = AssistantMsg("bot", [], id=R)
    start = TextBlockStartEvent(reply_id=R, block_id="t")
    assert (
        msg.append_event(start).append_event(
            TextBlockDeltaEvent(reply_id=R, block_id="t", delta="x")
        )
        is msg
    )
    assert msg.get_text_content() == "x"


def test_second_start_of_a_block_id_is_appended_and_deltas_go_to_the_first() -> None:
    msg = fold(
        TextBlockStartEvent(reply_id=R, block_id="t"),
        TextBlockDeltaEvent(reply_id=R, block_id="t", delta="a"),
        TextBlockStartEvent(reply_id=R, block_id="t"),
        TextBlockDeltaEvent(reply_id=R, block_id="t", delta="b"),
    )
    assert [b.text for b in msg.get_content_blocks("text")] == ["ab", ""]


def test_hint_block_is_finished_when_it_arrives() -> None:
    msg = fold(
        HintBlockEvent(
            reply_id=R, block_id="h", hint="team update", source="alice", created_at="2026-01-02"
        )
    )
    hint = msg.content[0]
    assert isinstance(hint, HintBlock)
    assert (hint.created_at, hint.finished_at, hint.source) == ("2026-01-02", "2026-01-02", "alice")
