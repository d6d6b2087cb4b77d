"""One reasoning step: stream a model call and translate its chunks into block events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agent_core._ids import new_id
from agent_core.agent._config import ModelConfig
from agent_core.agent._errors import is_retryable
from agent_core.event import (
    AgentEvent,
    ModelCallEndEvent,
    ModelCallStartEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agent_core.message import Msg, ToolCallBlock, Usage
from agent_core.middleware import ModelStreamHandler, call_model
from agent_core.model.base import (
    ChatModelBase,
    ModelChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallArgsChunk,
    ToolCallStartChunk,
    ToolSchema,
    UsageChunk,
)


class _OpenBlock:
    """Tracks which streamed block is open, so the right START/END events bracket deltas."""

    def __init__(self, reply_id: str) -> None:
        self._reply_id = reply_id
        self.kind: str | None = None
        self.block_id = ""

    def close(self) -> AgentEvent | None:
        kind, self.kind = self.kind, None
        rid = self._reply_id
        if kind == "text":
            return TextBlockEndEvent(reply_id=rid, block_id=self.block_id)
        if kind == "thinking":
            return ThinkingBlockEndEvent(reply_id=rid, block_id=self.block_id)
        if kind == "tool_call":
            return ToolCallEndEvent(reply_id=rid, tool_call_id=self.block_id)
        return None

    def switch(self, kind: str, block_id: str) -> list[AgentEvent]:
        """Close the open block unless it is `kind`/`block_id`; return the START event to emit."""
        if self.kind == kind and (kind != "tool_call" or self.block_id == block_id):
            return []
        events = [e for e in [self.close()] if e is not None]
        self.kind, self.block_id = kind, block_id
        rid = self._reply_id
        if kind == "text":
            events.append(TextBlockStartEvent(reply_id=rid, block_id=block_id))
        elif kind == "thinking":
            events.append(ThinkingBlockStartEvent(reply_id=rid, block_id=block_id))
        return events


def _chunk_events(chunk: ModelChunk, open_block: _OpenBlock, rid: str) -> list[AgentEvent]:
    match chunk:
        case TextChunk():
            events = open_block.switch("text", new_id())
            return [
                *events,
                TextBlockDeltaEvent(reply_id=rid, block_id=open_block.block_id, delta=chunk.text),
            ]
        case ThinkingChunk():
            events = open_block.switch("thinking", new_id())
            return [
                *events,
                ThinkingBlockDeltaEvent(
                    reply_id=rid, block_id=open_block.block_id, delta=chunk.text
                ),
            ]
        case ToolCallStartChunk():
            events = [e for e in [open_block.close()] if e is not None]
            open_block.kind, open_block.block_id = "tool_call", chunk.call_id
            start = ToolCallStartEvent(
                reply_id=rid, tool_call_id=chunk.call_id, tool_call_name=chunk.name
            )
            return [*events, start]
        case ToolCallArgsChunk():
            return [ToolCallDeltaEvent(reply_id=rid, tool_call_id=chunk.call_id, delta=chunk.delta)]
        case _:
            return []


async def reason(
    reply_id: str,
    model: ChatModelBase,
    messages: list[Msg],
    tools: list[ToolSchema],
    model_config: ModelConfig,
    tool_choice: str | None = None,
    call: ModelStreamHandler = call_model,
) -> AsyncIterator[AgentEvent]:
    """Run one model call (with retries and fallback) and yield its events, unfolded.

    `call` is the (middleware-wrapped) model-call handler. A failed call is retried only while
    it has emitted no block yet, so a retry never duplicates streamed content.

    Raises:
        ModelError: the call failed for good.
    """
    candidates = [model] + ([model_config.fallback_model] if model_config.fallback_model else [])
    for index, current in enumerate(candidates):
        attempt = 0
        while True:
            started = False
            try:
                async for event in _one_call(reply_id, current, messages, tools, tool_choice, call):
                    started = started or not isinstance(event, ModelCallStartEvent)
                    yield event
                return
            except Exception as exc:
                last_candidate = index == len(candidates) - 1
                if started or not is_retryable(exc):
                    raise
                if attempt >= model_config.max_retries:
                    if last_candidate:
                        raise
                    break
                await asyncio.sleep(model_config.retry_backoff * 2**attempt)
                attempt += 1


async def _one_call(
    reply_id: str,
    model: ChatModelBase,
    messages: list[Msg],
    tools: list[ToolSchema],
    tool_choice: str | None,
    call: ModelStreamHandler,
) -> AsyncIterator[AgentEvent]:
    yield ModelCallStartEvent(reply_id=reply_id, model_name=model.model_name)
    open_block = _OpenBlock(reply_id)
    usage = Usage()
    stream = await call(
        messages=messages, tools=tools, tool_choice=tool_choice, current_model=model
    )
    async for chunk in stream:
        if isinstance(chunk, UsageChunk):
            usage = chunk.usage
            continue
        for event in _chunk_events(chunk, open_block, reply_id):
            yield event
    if (closing := open_block.close()) is not None:
        yield closing
    yield ModelCallEndEvent(
        reply_id=reply_id,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_input_tokens=usage.cache_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
    )


def tool_calls_since(msg: Msg, start_index: int) -> list[ToolCallBlock]:
    """Tool calls added to `msg` from content index `start_index` on (this step's calls)."""
    return [b for b in msg.content[start_index:] if isinstance(b, ToolCallBlock)]
