"""Folding events into the assistant `Msg` they describe (`Msg.append_event`).

The fold follows AgentScope 2.0.11's `Msg.append_event` rule for rule; where AgentScope stamps
a fresh id or timestamp on a block it creates, Troupe derives it from the event instead, so that
every fold of a stream yields the same `Msg` (a client's fold equals the agent's own message).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agent_core._trusted import trusted_maker, trusted_set
from agent_core.errors import FoldError
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

B = TypeVar("B", bound=BaseModel)

# Blocks built from a validated event's values: without validation (`agent_core._trusted`).
_text_block = trusted_maker(TextBlock, "id", "text", "created_at")
_thinking_block = trusted_maker(ThinkingBlock, "id", "thinking", "created_at")
_hint_block = trusted_maker(HintBlock, "id", "hint", "source", "created_at", "finished_at")
_call_block = trusted_maker(ToolCallBlock, "id", "name", "input", "created_at")
_result_block = trusted_maker(ToolResultBlock, "id", "name", "output", "created_at")
_usage = trusted_maker(
    Usage, "input_tokens", "output_tokens", "cache_input_tokens", "cache_creation_input_tokens"
)


class Finder(Protocol):
    """Finds the first block of class `kind` with id `block_id` in `msg` (None if none)."""

    def __call__(self, msg: Msg, block_id: str, kind: type[B]) -> B | None: ...


def _scan(msg: Msg, block_id: str, kind: type[B]) -> B | None:
    return msg.find_block(block_id, kind)


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


def _add_usage(msg: Msg, event: ModelCallEndEvent, find: Finder) -> None:
    usage = msg.usage
    if usage is None:  # the first call's usage: made whole at once
        usage = _usage(
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            cache_input_tokens=event.cache_input_tokens,
            cache_creation_input_tokens=event.cache_creation_input_tokens,
        )
        trusted_set(msg, "usage", usage)
        return
    trusted_set(usage, "input_tokens", usage.input_tokens + event.input_tokens)
    trusted_set(usage, "output_tokens", usage.output_tokens + event.output_tokens)
    trusted_set(usage, "cache_input_tokens", usage.cache_input_tokens + event.cache_input_tokens)
    trusted_set(
        usage,
        "cache_creation_input_tokens",
        usage.cache_creation_input_tokens + event.cache_creation_input_tokens,
    )
    trusted_set(msg, "usage", usage)


def _data_delta(msg: Msg, event: DataBlockDeltaEvent, find: Finder) -> None:
    data = find(msg, event.block_id, DataBlock)
    if data is None:
        return
    if event.url:
        # A URL is the whole content: it replaces what the block held so far.
        data.source = _url_source(event.block_id, event.url, event.media_type)
    elif event.data:
        if not isinstance(data.source, Base64Source):
            raise FoldError(f"data block {event.block_id!r} holds a URL, not base64 data")
        data.source.data = _concat_base64(event.block_id, data.source.data, event.data)


def _result_text_delta(msg: Msg, event: ToolResultTextDeltaEvent, find: Finder) -> None:
    if (result := find(msg, event.tool_call_id, ToolResultBlock)) is None:
        return
    output = _output_list(result, event.created_at)
    if output and isinstance(output[-1], TextBlock):
        output[-1].text += event.delta
    else:
        output.append(_result_text_block(result, event.delta, event.created_at))


def _result_data_delta(msg: Msg, event: ToolResultDataDeltaEvent, find: Finder) -> None:
    if (result := find(msg, event.tool_call_id, ToolResultBlock)) is None:
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


def _result_end(msg: Msg, event: ToolResultEndEvent, find: Finder) -> None:
    if (result := find(msg, event.tool_call_id, ToolResultBlock)) is None:
        return
    result.state = event.state
    result.metadata = dict(event.metadata)
    result.finished_at = event.created_at
    # A call's lifecycle ends with its result.
    if (call := find(msg, event.tool_call_id, ToolCallBlock)) is not None:
        call.state = ToolCallState.FINISHED


def _confirm_result(msg: Msg, event: UserConfirmResultEvent, find: Finder) -> None:
    for verdict in event.confirm_results:
        call = find(msg, verdict.tool_call.id, ToolCallBlock)
        # Only an asking call takes a verdict: a stale one (say, after an interrupt) is ignored.
        if call is not None and call.state is ToolCallState.ASKING:
            call.state = ToolCallState.ALLOWED if verdict.confirmed else ToolCallState.FINISHED


def _external_results(msg: Msg, event: ExternalExecutionResultEvent, find: Finder) -> None:
    # A call that already has a result (say, a late answer after an interrupt) keeps it.
    answered = {b.id for b in msg.content if isinstance(b, ToolResultBlock)}
    for result in event.execution_results:
        if result.id in answered:
            continue
        block = result.model_copy(deep=True)
        if block.finished_at is None:
            block.finished_at = event.created_at
        msg.content.append(block)


def _text_start(msg: Msg, event: TextBlockStartEvent, find: Finder) -> None:
    msg.content.append(_text_block(id=event.block_id, text="", created_at=event.created_at))


def _text_delta(msg: Msg, event: TextBlockDeltaEvent, find: Finder) -> None:
    if (text := find(msg, event.block_id, TextBlock)) is not None:
        trusted_set(text, "text", text.text + event.delta)


def _text_end(msg: Msg, event: TextBlockEndEvent, find: Finder) -> None:
    if (text := find(msg, event.block_id, TextBlock)) is not None:
        if event.text is not None:
            text.text = event.text
        trusted_set(text, "finished_at", event.created_at)


def _thinking_start(msg: Msg, event: ThinkingBlockStartEvent, find: Finder) -> None:
    msg.content.append(_thinking_block(id=event.block_id, thinking="", created_at=event.created_at))


def _thinking_delta(msg: Msg, event: ThinkingBlockDeltaEvent, find: Finder) -> None:
    if (think := find(msg, event.block_id, ThinkingBlock)) is not None:
        trusted_set(think, "thinking", think.thinking + event.delta)


def _thinking_end(msg: Msg, event: ThinkingBlockEndEvent, find: Finder) -> None:
    if (think := find(msg, event.block_id, ThinkingBlock)) is not None:
        trusted_set(think, "finished_at", event.created_at)
        if event.signature is not None:
            think.signature = event.signature
        if event.redacted_thinking_data is not None:
            think.redacted_thinking_data = event.redacted_thinking_data


def _data_start(msg: Msg, event: DataBlockStartEvent, find: Finder) -> None:
    source = Base64Source(data="", media_type=event.media_type)
    msg.content.append(
        DataBlock(id=event.block_id, source=source, name=event.name, created_at=event.created_at)
    )


def _data_end(msg: Msg, event: DataBlockEndEvent, find: Finder) -> None:
    if (data := find(msg, event.block_id, DataBlock)) is not None:
        data.finished_at = event.created_at


def _hint(msg: Msg, event: HintBlockEvent, find: Finder) -> None:
    hint = (
        event.hint if isinstance(event.hint, str) else [b.model_copy(deep=True) for b in event.hint]
    )
    msg.content.append(
        _hint_block(
            id=event.block_id,
            hint=hint,
            source=event.source,
            created_at=event.created_at,
            finished_at=event.created_at,
        )
    )


def _call_start(msg: Msg, event: ToolCallStartEvent, find: Finder) -> None:
    msg.content.append(
        _call_block(
            id=event.tool_call_id,
            name=event.tool_call_name,
            input="",
            created_at=event.created_at,
        )
    )


def _call_delta(msg: Msg, event: ToolCallDeltaEvent, find: Finder) -> None:
    if (call := find(msg, event.tool_call_id, ToolCallBlock)) is not None:
        trusted_set(call, "input", call.input + event.delta)


def _call_end(msg: Msg, event: ToolCallEndEvent, find: Finder) -> None:
    if (call := find(msg, event.tool_call_id, ToolCallBlock)) is not None:
        trusted_set(call, "finished_at", event.created_at)


def _result_start(msg: Msg, event: ToolResultStartEvent, find: Finder) -> None:
    msg.content.append(
        _result_block(
            id=event.tool_call_id,
            name=event.tool_call_name,
            output=[],
            created_at=event.created_at,
        )
    )


def _require_confirm(msg: Msg, event: RequireUserConfirmEvent, find: Finder) -> None:
    for asked in event.tool_calls:
        if (call := find(msg, asked.id, ToolCallBlock)) is not None:
            call.state = ToolCallState.ASKING
            call.suggested_rules = [r.model_copy() for r in asked.suggested_rules]


def _require_external(msg: Msg, event: RequireExternalExecutionEvent, find: Finder) -> None:
    for asked in event.tool_calls:
        if (call := find(msg, asked.id, ToolCallBlock)) is not None:
            call.state = ToolCallState.SUBMITTED


def _reply_end(msg: Msg, event: ReplyEndEvent, find: Finder) -> None:
    trusted_set(msg, "finished_at", event.created_at)
    trusted_set(msg, "finished_reason", event.finished_reason)
    trusted_set(msg, "error", event.error)


_Fold = Callable[[Msg, Any, "Finder"], None]

_FOLDS: dict[type, _Fold] = {
    TextBlockStartEvent: _text_start,
    TextBlockDeltaEvent: _text_delta,
    TextBlockEndEvent: _text_end,
    ThinkingBlockStartEvent: _thinking_start,
    ThinkingBlockDeltaEvent: _thinking_delta,
    ThinkingBlockEndEvent: _thinking_end,
    DataBlockStartEvent: _data_start,
    DataBlockDeltaEvent: _data_delta,
    DataBlockEndEvent: _data_end,
    HintBlockEvent: _hint,
    ToolCallStartEvent: _call_start,
    ToolCallDeltaEvent: _call_delta,
    ToolCallEndEvent: _call_end,
    ToolResultStartEvent: _result_start,
    ToolResultTextDeltaEvent: _result_text_delta,
    ToolResultDataDeltaEvent: _result_data_delta,
    ToolResultEndEvent: _result_end,
    RequireUserConfirmEvent: _require_confirm,
    RequireExternalExecutionEvent: _require_external,
    UserConfirmResultEvent: _confirm_result,
    ExternalExecutionResultEvent: _external_results,
    ModelCallEndEvent: _add_usage,
    ReplyEndEvent: _reply_end,
}
"""The fold of each event type that changes a message; every other event leaves it as it is."""


def _unchanged(msg: Msg, event: Any, find: Finder) -> None:
    """The fold of events that do not change a message (REPLY_START, CUSTOM, ...)."""


def _fold_of(kind: type) -> _Fold:
    # A subclass of an event folds as its nearest listed base; found once, then remembered.
    fold = next((_FOLDS[base] for base in kind.__mro__ if base in _FOLDS), _unchanged)
    _FOLDS[kind] = fold
    return fold


def apply_event(msg: Msg, event: AgentEvent, find: Finder | None = None) -> None:
    """Apply `event` to `msg` in place.

    Events of another reply (`reply_id` other than `msg.id`), events for a block the message
    does not hold, and events that do not change a message are ignored. A block id that occurs
    twice names its first block.

    `find` looks blocks up (`Msg.find_block` by default; `agent_core._block_index.BlockIndex` for
    the folds of one long reply).

    Raises:
        FoldError: the event carries data that cannot be applied (see `FoldError`).
    """
    kind = type(event)
    fold = _FOLDS.get(kind) or _fold_of(kind)
    if fold is not _unchanged and event.reply_id == msg.id:  # type: ignore[union-attr]
        fold(msg, event, find or _scan)


__all__ = ["Finder", "apply_event"]
