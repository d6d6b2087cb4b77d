"""The acting step: execute the model's tool calls and stream their results as events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from agent_core._trusted import trusted
from agent_core.agent._context import OFFLOADED_TRUNCATION_MARKER, TRUNCATION_MARKER
from agent_core.agent._tokens import DEFAULT_COUNTER, TokenCounter
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
    ToolResultBlock,
    ToolResultState,
)
from agent_core.ports import BackgroundSink, Offloader
from agent_core.state import AgentState
from agent_core.tool import Toolkit
from agent_core.tool.base import ToolChunk

CallHandler = Callable[..., AsyncIterator[AgentEvent]]


@dataclass
class ActingSetup:
    """How tool calls run: state injection, background hand-over and output limits."""

    toolkit: Toolkit
    state: AgentState | None = None
    sink: BackgroundSink | None = None
    tool_timeout: float | None = None
    result_limit: int | None = None
    offloader: Offloader | None = None
    counter: TokenCounter = field(default=DEFAULT_COUNTER)


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
    foreground_limit: float,
    sink: BackgroundSink,
) -> AsyncIterator[ToolChunk | None]:
    """Yield the tool's chunks; at the deadline hand the rest to `sink` and yield None."""
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


class _TextBudget:
    """Streams tool text until `limit` tokens, then keeps the rest for offloading only."""

    def __init__(self, limit: int | None, counter: TokenCounter) -> None:
        self._left = limit
        self._counter = counter
        self.truncated = False
        self.full: list[str] = []

    def admit(self, text: str) -> str:
        """Return the part of `text` the model may see."""
        self.full.append(text)
        if self._left is None:
            return text
        if self.truncated:
            return ""
        cost = self._counter.count_text(text)
        if cost <= self._left:
            self._left -= cost
            return text
        self.truncated = True
        kept = text.encode()[: max(self._left, 0) * 4].decode(errors="ignore")
        self._left = 0
        return kept


def _data_event(reply_id: str, call: ToolCallBlock, block: DataBlock) -> AgentEvent:
    source = block.source
    return ToolResultDataDeltaEvent(
        reply_id=reply_id,
        tool_call_id=call.id,
        block_id=block.id,
        media_type=source.media_type,
        data=source.data if isinstance(source, Base64Source) else None,
        url=None if isinstance(source, Base64Source) else source.url,
    )


async def run_tool(
    reply_id: str, session_id: str, setup: ActingSetup, tool_call: ToolCallBlock
) -> AsyncIterator[AgentEvent]:
    """Execute one tool call and yield its unfolded `ToolResult*` events."""
    call = tool_call
    yield trusted(
        ToolResultStartEvent, reply_id=reply_id, tool_call_id=call.id, tool_call_name=call.name
    )
    state = ToolResultState.SUCCESS
    metadata: dict[str, object] = {}
    budget = _TextBudget(setup.result_limit, setup.counter)
    tool = setup.toolkit.get(call.name)
    timeout = tool.timeout if tool is not None and tool.timeout is not None else setup.tool_timeout

    def text(delta: str) -> AgentEvent:
        return trusted(
            ToolResultTextDeltaEvent, reply_id=reply_id, tool_call_id=call.id, delta=delta
        )

    try:
        stream = setup.toolkit.call(call, setup.state)
        chunks: AsyncIterator[ToolChunk | None] = stream
        if setup.sink is not None and timeout is not None:
            chunks = _chunks_with_deadline(call, stream, timeout, setup.sink)
        async for chunk in chunks:
            if chunk is None:
                metadata["background"] = True
                yield text(background_placeholder(call, timeout or 0.0))
                break
            for block in chunk.content:
                if isinstance(block, TextBlock):
                    if visible := budget.admit(block.text):
                        yield text(visible)
                elif not budget.truncated:
                    yield _data_event(reply_id, call, block)
            metadata.update(chunk.metadata)
            if chunk.state is not ToolResultState.RUNNING:
                state = chunk.state
    except Exception as exc:  # a crashing tool is the model's problem to read, not the reply's
        yield text(f"Tool '{call.name}' crashed: {type(exc).__name__}: {exc}")
        state = ToolResultState.ERROR
    if budget.truncated:
        marker = TRUNCATION_MARKER
        if setup.offloader is not None:
            full = ToolResultBlock(id=call.id, name=call.name, output="".join(budget.full))
            path = await setup.offloader.offload_tool_result(session_id, full)
            marker = OFFLOADED_TRUNCATION_MARKER.format(path=path)
        yield text("\n" + marker)
    yield trusted(
        ToolResultEndEvent, reply_id=reply_id, tool_call_id=call.id, state=state, metadata=metadata
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


def _is_safe(toolkit: Toolkit, call: ToolCallBlock) -> bool:
    tool = toolkit.get(call.name)
    return tool is not None and tool.is_concurrency_safe


def _batches(toolkit: Toolkit, calls: list[ToolCallBlock]) -> list[list[ToolCallBlock]]:
    """Group consecutive concurrency-safe calls; every other call is a batch of its own."""
    batches: list[list[ToolCallBlock]] = []
    for call in calls:
        if _is_safe(toolkit, call) and batches and all(_is_safe(toolkit, c) for c in batches[-1]):
            batches[-1].append(call)
        else:
            batches.append([call])
    return batches


async def act(
    toolkit: Toolkit, calls: list[ToolCallBlock], run_call: CallHandler
) -> AsyncIterator[AgentEvent]:
    """Execute `calls` (concurrency-safe neighbours together, others in order), yielding events.

    `run_call(tool_call=...)` is the (middleware-wrapped) handler of one call.
    """
    for batch in _batches(toolkit, calls):
        if len(batch) == 1:
            stream = run_call(tool_call=batch[0])
        else:
            stream = _merge([run_call(tool_call=call) for call in batch])
        async for event in stream:
            yield event
