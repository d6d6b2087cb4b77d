"""Folding events into the assistant `Msg` they describe (`Msg.append_event`)."""

from __future__ import annotations

from agent_core.event import (
    AgentEvent,
    DataBlockDeltaEvent,
    DataBlockEndEvent,
    DataBlockStartEvent,
    ExternalExecutionResultEvent,
    HintBlockEvent,
    ModelCallEndEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultDataDeltaEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
    UserConfirmResultEvent,
)
from agent_core.message import (
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    URLSource,
    Usage,
)


def _tool_call(msg: Msg, call_id: str) -> ToolCallBlock | None:
    return msg.find_block(call_id, ToolCallBlock)


def _tool_result(msg: Msg, call_id: str) -> ToolResultBlock | None:
    return msg.find_block(call_id, ToolResultBlock)


def _append_result_text(result: ToolResultBlock, text: str, created_at: str) -> None:
    if isinstance(result.output, str):
        result.output += text
        return
    if result.output and isinstance(result.output[-1], TextBlock):
        result.output[-1].text += text
    else:
        # Ids derive from the event stream so that every fold of it yields the same Msg.
        block_id = f"{result.id}-{len(result.output)}"
        result.output.append(TextBlock(id=block_id, text=text, created_at=created_at))


def _add_usage(msg: Msg, event: ModelCallEndEvent) -> None:
    usage = msg.usage or Usage()
    usage.input_tokens += event.input_tokens
    usage.output_tokens += event.output_tokens
    usage.cache_input_tokens += event.cache_input_tokens
    usage.cache_creation_input_tokens += event.cache_creation_input_tokens
    msg.usage = usage


def apply_event(msg: Msg, event: AgentEvent) -> None:
    """Apply `event` to `msg` in place; events that do not change a message are ignored."""
    match event:
        case TextBlockStartEvent():
            msg.content.append(TextBlock(id=event.block_id, text="", created_at=event.created_at))
        case TextBlockDeltaEvent():
            if (text := msg.find_block(event.block_id, TextBlock)) is not None:
                text.text += event.delta
        case TextBlockEndEvent():
            if (text := msg.find_block(event.block_id, TextBlock)) is not None:
                if event.text is not None:
                    text.text = event.text
                text.finished_at = event.created_at
        case ThinkingBlockStartEvent():
            msg.content.append(
                ThinkingBlock(id=event.block_id, thinking="", created_at=event.created_at)
            )
        case ThinkingBlockDeltaEvent():
            if (think := msg.find_block(event.block_id, ThinkingBlock)) is not None:
                think.thinking += event.delta
        case ThinkingBlockEndEvent():
            if (think := msg.find_block(event.block_id, ThinkingBlock)) is not None:
                think.finished_at = event.created_at
        case DataBlockStartEvent():
            source = Base64Source(data="", media_type=event.media_type)
            msg.content.append(
                DataBlock(id=event.block_id, source=source, created_at=event.created_at)
            )
        case DataBlockDeltaEvent():
            data = msg.find_block(event.block_id, DataBlock)
            if data is not None and isinstance(data.source, Base64Source):
                data.source.data += event.data
        case DataBlockEndEvent():
            if (data := msg.find_block(event.block_id, DataBlock)) is not None:
                data.finished_at = event.created_at
        case ToolCallStartEvent():
            msg.content.append(
                ToolCallBlock(
                    id=event.tool_call_id,
                    name=event.tool_call_name,
                    input="",
                    created_at=event.created_at,
                )
            )
        case ToolCallDeltaEvent():
            if (call := _tool_call(msg, event.tool_call_id)) is not None:
                call.input += event.delta
        case ToolCallEndEvent():
            if (call := _tool_call(msg, event.tool_call_id)) is not None:
                call.finished_at = event.created_at
        case ToolResultStartEvent():
            msg.content.append(
                ToolResultBlock(
                    id=event.tool_call_id,
                    name=event.tool_call_name,
                    output=[],
                    created_at=event.created_at,
                )
            )
        case ToolResultTextDeltaEvent():
            if (result := _tool_result(msg, event.tool_call_id)) is not None:
                _append_result_text(result, event.delta, event.created_at)
        case ToolResultDataDeltaEvent():
            result = _tool_result(msg, event.tool_call_id)
            if result is not None:
                src: Base64Source | URLSource = (
                    URLSource(url=event.url, media_type=event.media_type)
                    if event.url
                    else Base64Source(data=event.data or "", media_type=event.media_type)
                )
                if isinstance(result.output, str):
                    earlier_text = result.output
                    result.output = []
                    if earlier_text:
                        _append_result_text(result, earlier_text, event.created_at)
                result.output.append(
                    DataBlock(id=event.block_id, source=src, created_at=event.created_at)
                )
        case ToolResultEndEvent():
            if (result := _tool_result(msg, event.tool_call_id)) is not None:
                result.state = event.state
                result.metadata.update(event.metadata)
                result.finished_at = event.created_at
            if (call := _tool_call(msg, event.tool_call_id)) is not None:
                call.state = ToolCallState.FINISHED
        case RequireUserConfirmEvent():
            for asked in event.tool_calls:
                if (call := _tool_call(msg, asked.id)) is not None:
                    call.state = ToolCallState.ASKING
                    call.suggested_rules = list(asked.suggested_rules)
        case RequireExternalExecutionEvent():
            for asked in event.tool_calls:
                if (call := _tool_call(msg, asked.id)) is not None:
                    call.state = ToolCallState.SUBMITTED
        case UserConfirmResultEvent():
            for verdict in event.confirm_results:
                if (call := _tool_call(msg, verdict.tool_call.id)) is not None:
                    call.input = verdict.tool_call.input
                    call.state = ToolCallState.ALLOWED if verdict.confirmed else call.state
        case ExternalExecutionResultEvent():
            for result in event.execution_results:
                msg.content.append(result.model_copy(deep=True))
                if (call := _tool_call(msg, result.id)) is not None:
                    call.state = ToolCallState.FINISHED
        case HintBlockEvent():
            msg.content.append(
                HintBlock(
                    id=event.block_id,
                    hint=event.hint,
                    source=event.source,
                    created_at=event.created_at,
                )
            )
        case ModelCallEndEvent():
            _add_usage(msg, event)
        case ReplyEndEvent():
            msg.finished_at = event.created_at
            msg.finished_reason = event.finished_reason
            msg.error = event.error
        case _:
            pass


__all__ = ["apply_event"]
