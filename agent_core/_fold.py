"""Folding events into the assistant `Msg` they describe (`Msg.append_event`).

The fold follows AgentScope 2.0.11's `Msg.append_event` rule for rule; where AgentScope stamps
a fresh id or timestamp on a block it creates, Troupe derives it from the event instead, so that
every fold of a stream yields the same `Msg` (a client's fold equals the agent's own message).
"""

from __future__ import annotations

import base64

from pydantic import ValidationError

from agent_core.errors import FoldError
from agent_core.event import (
    AgentEvent,
    CustomEvent,
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


def _concat_base64(block_id: str, existing: str, incoming: str) -> str:
    """Join two independently encoded chunks (each padded on its own) into one encoding."""
    try:
        joined = base64.b64decode(existing) + base64.b64decode(incoming)
    except ValueError as exc:
        raise FoldError(f"data block {block_id!r}: a chunk is not valid base64 ({exc})") from exc
    return base64.b64encode(joined).decode("ascii")


def _url_source(block_id: str, url: str, media_type: str) -> URLSource:
    try:
        return URLSource(url=url, media_type=media_type)
    except ValidationError as exc:
        raise FoldError(f"data block {block_id!r}: {url!r} is not a valid URL") from exc


def _result_text_block(result: ToolResultBlock, text: str, created_at: str) -> TextBlock:
    # Ids derive from the event stream so that every fold of it yields the same Msg.
    return TextBlock(id=f"{result.id}-{len(result.output)}", text=text, created_at=created_at)


def _output_list(result: ToolResultBlock, created_at: str) -> list[TextBlock | DataBlock]:
    """The result's output as a block list (a plain-text output becomes one text block)."""
    if isinstance(result.output, str):
        text = result.output
        result.output = []
        result.output.append(_result_text_block(result, text, created_at))
    return result.output


def _add_usage(msg: Msg, event: ModelCallEndEvent) -> None:
    usage = msg.usage or Usage()
    usage.input_tokens += event.input_tokens
    usage.output_tokens += event.output_tokens
    usage.cache_input_tokens += event.cache_input_tokens
    usage.cache_creation_input_tokens += event.cache_creation_input_tokens
    msg.usage = usage


def _data_delta(msg: Msg, event: DataBlockDeltaEvent) -> None:
    data = msg.find_block(event.block_id, DataBlock)
    if data is None:
        return
    if event.url:
        # A URL is the whole content: it replaces what the block held so far.
        data.source = _url_source(event.block_id, event.url, event.media_type)
    elif event.data:
        if not isinstance(data.source, Base64Source):
            raise FoldError(f"data block {event.block_id!r} holds a URL, not base64 data")
        data.source.data = _concat_base64(event.block_id, data.source.data, event.data)


def _result_text_delta(msg: Msg, event: ToolResultTextDeltaEvent) -> None:
    if (result := msg.find_block(event.tool_call_id, ToolResultBlock)) is None:
        return
    output = _output_list(result, event.created_at)
    if output and isinstance(output[-1], TextBlock):
        output[-1].text += event.delta
    else:
        output.append(_result_text_block(result, event.delta, event.created_at))


def _result_data_delta(msg: Msg, event: ToolResultDataDeltaEvent) -> None:
    if (result := msg.find_block(event.tool_call_id, ToolResultBlock)) is None:
        return
    output = _output_list(result, event.created_at)
    if event.data is None:
        url = _url_source(event.block_id, str(event.url), event.media_type)
        output.append(DataBlock(id=event.block_id, source=url, created_at=event.created_at))
        return
    # Base64 chunks of one block id make up one block, as ToolChunks do.
    target = next(
        (
            block.source
            for block in output
            if isinstance(block, DataBlock)
            and block.id == event.block_id
            and isinstance(block.source, Base64Source)
        ),
        None,
    )
    if target is None:
        source = Base64Source(data=event.data, media_type=event.media_type)
        output.append(DataBlock(id=event.block_id, source=source, created_at=event.created_at))
        return
    target.data = _concat_base64(event.block_id, target.data, event.data)
    target.media_type = event.media_type or target.media_type


def _result_end(msg: Msg, event: ToolResultEndEvent) -> None:
    if (result := msg.find_block(event.tool_call_id, ToolResultBlock)) is None:
        return
    result.state = event.state
    result.metadata = dict(event.metadata)
    result.finished_at = event.created_at
    # A call's lifecycle ends with its result.
    if (call := msg.find_block(event.tool_call_id, ToolCallBlock)) is not None:
        call.state = ToolCallState.FINISHED


def _confirm_result(msg: Msg, event: UserConfirmResultEvent) -> None:
    for verdict in event.confirm_results:
        call = msg.find_block(verdict.tool_call.id, ToolCallBlock)
        # Only an asking call takes a verdict: a stale one (say, after an interrupt) is ignored.
        if call is not None and call.state is ToolCallState.ASKING:
            call.state = ToolCallState.ALLOWED if verdict.confirmed else ToolCallState.FINISHED


def _external_results(msg: Msg, event: ExternalExecutionResultEvent) -> None:
    # A call that already has a result (say, a late answer after an interrupt) keeps it.
    answered = {b.id for b in msg.content if isinstance(b, ToolResultBlock)}
    for result in event.execution_results:
        if result.id in answered:
            continue
        block = result.model_copy(deep=True)
        if block.finished_at is None:
            block.finished_at = event.created_at
        msg.content.append(block)


def apply_event(msg: Msg, event: AgentEvent) -> None:
    """Apply `event` to `msg` in place.

    Events of another reply (`reply_id` other than `msg.id`), events for a block the message
    does not hold, and events that do not change a message are ignored. A block id that occurs
    twice names its first block.

    Raises:
        FoldError: the event carries data that cannot be applied (see `FoldError`).
    """
    if isinstance(event, CustomEvent) or event.reply_id != msg.id:
        return
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
                if event.signature is not None:
                    think.signature = event.signature
                if event.redacted_thinking_data is not None:
                    think.redacted_thinking_data = event.redacted_thinking_data
        case DataBlockStartEvent():
            source = Base64Source(data="", media_type=event.media_type)
            msg.content.append(
                DataBlock(
                    id=event.block_id, source=source, name=event.name, created_at=event.created_at
                )
            )
        case DataBlockDeltaEvent():
            _data_delta(msg, event)
        case DataBlockEndEvent():
            if (data := msg.find_block(event.block_id, DataBlock)) is not None:
                data.finished_at = event.created_at
        case HintBlockEvent():
            hint = (
                event.hint
                if isinstance(event.hint, str)
                else [b.model_copy(deep=True) for b in event.hint]
            )
            msg.content.append(
                HintBlock(
                    id=event.block_id,
                    hint=hint,
                    source=event.source,
                    created_at=event.created_at,
                    finished_at=event.created_at,
                )
            )
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
            if (call := msg.find_block(event.tool_call_id, ToolCallBlock)) is not None:
                call.input += event.delta
        case ToolCallEndEvent():
            if (call := msg.find_block(event.tool_call_id, ToolCallBlock)) is not None:
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
            _result_text_delta(msg, event)
        case ToolResultDataDeltaEvent():
            _result_data_delta(msg, event)
        case ToolResultEndEvent():
            _result_end(msg, event)
        case RequireUserConfirmEvent():
            for asked in event.tool_calls:
                if (call := msg.find_block(asked.id, ToolCallBlock)) is not None:
                    call.state = ToolCallState.ASKING
                    call.suggested_rules = [r.model_copy() for r in asked.suggested_rules]
        case RequireExternalExecutionEvent():
            for asked in event.tool_calls:
                if (call := msg.find_block(asked.id, ToolCallBlock)) is not None:
                    call.state = ToolCallState.SUBMITTED
        case UserConfirmResultEvent():
            _confirm_result(msg, event)
        case ExternalExecutionResultEvent():
            _external_results(msg, event)
        case ModelCallEndEvent():
            _add_usage(msg, event)
        case ReplyEndEvent():
            msg.finished_at = event.created_at
            msg.finished_reason = event.finished_reason
            msg.error = event.error
        case _:
            pass


__all__ = ["apply_event"]
