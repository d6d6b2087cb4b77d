"""The acting step: execute the model's tool calls and stream their results as events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agent_core.agent._reply import ReplyBuilder
from agent_core.event import (
    AgentEvent,
    ToolResultDataDeltaEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from agent_core.message import (
    Base64Source,
    DataBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultState,
)
from agent_core.tool import Toolkit


def _chunk_output_events(
    reply: ReplyBuilder, call: ToolCallBlock, blocks: list[TextBlock | DataBlock]
) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            if block.text:
                events.append(
                    ToolResultTextDeltaEvent(
                        reply_id=reply.reply_id, tool_call_id=call.id, delta=block.text
                    )
                )
            continue
        source = block.source
        events.append(
            ToolResultDataDeltaEvent(
                reply_id=reply.reply_id,
                tool_call_id=call.id,
                block_id=block.id,
                media_type=source.media_type,
                data=source.data if isinstance(source, Base64Source) else None,
                url=None if isinstance(source, Base64Source) else source.url,
            )
        )
    return events


async def _run_one(
    reply: ReplyBuilder, toolkit: Toolkit, call: ToolCallBlock
) -> AsyncIterator[AgentEvent]:
    yield ToolResultStartEvent(
        reply_id=reply.reply_id, tool_call_id=call.id, tool_call_name=call.name
    )
    state = ToolResultState.SUCCESS
    metadata: dict[str, object] = {}
    try:
        async for chunk in toolkit.call(call):
            for event in _chunk_output_events(reply, call, chunk.content):
                yield event
            metadata.update(chunk.metadata)
            if chunk.state is not ToolResultState.RUNNING:
                state = chunk.state
    except Exception as exc:  # a crashing tool is the model's problem to read, not the reply's
        yield ToolResultTextDeltaEvent(
            reply_id=reply.reply_id,
            tool_call_id=call.id,
            delta=f"Tool '{call.name}' crashed: {type(exc).__name__}: {exc}",
        )
        state = ToolResultState.ERROR
    yield ToolResultEndEvent(
        reply_id=reply.reply_id, tool_call_id=call.id, state=state, metadata=metadata
    )


async def _merge(streams: list[AsyncIterator[AgentEvent]]) -> AsyncIterator[AgentEvent]:
    """Interleave several event streams as their events arrive."""
    queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()

    async def pump(stream: AsyncIterator[AgentEvent]) -> None:
        try:
            async for event in stream:
                await queue.put(event)
        finally:
            await queue.put(None)

    async with asyncio.TaskGroup() as group:
        for stream in streams:
            group.create_task(pump(stream))
        remaining = len(streams)
        while remaining:
            event = await queue.get()
            if event is None:
                remaining -= 1
            else:
                yield event


def _batches(toolkit: Toolkit, calls: list[ToolCallBlock]) -> list[list[ToolCallBlock]]:
    """Group consecutive concurrency-safe calls; every other call is a batch of its own."""
    batches: list[list[ToolCallBlock]] = []
    for call in calls:
        tool = toolkit.get(call.name)
        safe = tool is not None and tool.is_concurrency_safe
        if safe and batches and _all_safe(toolkit, batches[-1]):
            batches[-1].append(call)
        else:
            batches.append([call])
    return batches


def _all_safe(toolkit: Toolkit, batch: list[ToolCallBlock]) -> bool:
    return all((t := toolkit.get(c.name)) is not None and t.is_concurrency_safe for c in batch)


async def act(
    reply: ReplyBuilder, toolkit: Toolkit, calls: list[ToolCallBlock]
) -> AsyncIterator[AgentEvent]:
    """Execute `calls` (concurrency-safe neighbours together, others in order), yielding events."""
    for batch in _batches(toolkit, calls):
        stream = (
            _run_one(reply, toolkit, batch[0])
            if len(batch) == 1
            else _merge([_run_one(reply, toolkit, call) for call in batch])
        )
        async for event in stream:
            yield reply.emit(event)
