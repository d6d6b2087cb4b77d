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
from agent_core.ports import BackgroundSink
from agent_core.tool import Toolkit
from agent_core.tool.base import ToolChunk


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


def background_placeholder(call: ToolCallBlock, after: float) -> str:
    """What the model reads in place of a result that moved to the background."""
    return (
        f"<system-reminder>Tool '{call.name}' is running in background (id={call.id}) for over "
        f"{after:.1f}s. You will be notified automatically when it finishes, so **DO NOT** poll, "
        "query, or wait for the result yourself. Continue with other independent work, or end "
        "your reply if nothing else can be done until it finishes.</system-reminder>"
    )


async def _chunks_with_deadline(
    call: ToolCallBlock,
    chunks: AsyncIterator[ToolChunk],
    foreground_limit: float | None,
    sink: BackgroundSink | None,
) -> AsyncIterator[ToolChunk | None]:
    """Yield the tool's chunks; at the deadline hand the rest to `sink` and yield None."""
    if sink is None or foreground_limit is None:
        async for chunk in chunks:
            yield chunk
        return
    # Not asyncio.timeout: expiry must hand the running call over, not cancel it.
    deadline = asyncio.get_running_loop().time() + foreground_limit
    while True:
        pending: asyncio.Future[ToolChunk] = asyncio.ensure_future(anext(chunks))
        remaining = deadline - asyncio.get_running_loop().time()
        done, _ = await asyncio.wait({pending}, timeout=max(remaining, 0))
        if not done:
            sink.adopt(call, pending, chunks)
            yield None
            return
        try:
            yield pending.result()
        except StopAsyncIteration:
            return


async def _run_one(
    reply: ReplyBuilder, toolkit: Toolkit, call: ToolCallBlock, background: _Background
) -> AsyncIterator[AgentEvent]:
    yield ToolResultStartEvent(
        reply_id=reply.reply_id, tool_call_id=call.id, tool_call_name=call.name
    )
    state = ToolResultState.SUCCESS
    metadata: dict[str, object] = {}
    tool = toolkit.get(call.name)
    timeout = tool.timeout if tool is not None and tool.timeout is not None else background.timeout
    try:
        chunks = _chunks_with_deadline(call, toolkit.call(call), timeout, background.sink)
        async for chunk in chunks:
            if chunk is None:
                metadata["background"] = True
                yield ToolResultTextDeltaEvent(
                    reply_id=reply.reply_id,
                    tool_call_id=call.id,
                    delta=background_placeholder(call, timeout or 0.0),
                )
                break
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


class _Background:
    """Where and after how long tool calls move to the background (no sink: never)."""

    def __init__(self, sink: BackgroundSink | None, timeout: float | None) -> None:
        self.sink = sink
        self.timeout = timeout


async def act(
    reply: ReplyBuilder,
    toolkit: Toolkit,
    calls: list[ToolCallBlock],
    sink: BackgroundSink | None = None,
    tool_timeout: float | None = None,
) -> AsyncIterator[AgentEvent]:
    """Execute `calls` (concurrency-safe neighbours together, others in order), yielding events.

    With a `sink`, a call still running after its timeout (the tool's own, else `tool_timeout`)
    gets a placeholder result and finishes in the background.
    """
    background = _Background(sink, tool_timeout)
    for batch in _batches(toolkit, calls):
        stream = (
            _run_one(reply, toolkit, batch[0], background)
            if len(batch) == 1
            else _merge([_run_one(reply, toolkit, call, background) for call in batch])
        )
        async for event in stream:
            yield reply.emit(event)
