"""The agent's ports onto the session's inbox: hints in, background-tool completions out."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from actors.bus.items import HintItem, InboxItem
from actors.bus.message_bus import RedisMessageBus
from actors.bus.outage import OUTAGE_ERRORS
from agent_core.message import HintBlock, ToolCallBlock, ToolResultState
from agent_core.tool.base import ToolChunk

if TYPE_CHECKING:
    from actors.sessions.background_calls import BackgroundCall, BackgroundCalls

log = logging.getLogger(__name__)


class InboxHints:
    """`HintSource` over a session's inbox: hint items not yet injected into the reply.

    Chat items stay in the inbox for the next reply. The ids of injected items are collected
    in `consumed`, so the reply's commit acknowledges them.
    """

    def __init__(
        self,
        bus: RedisMessageBus,
        session_id: str,
        read: list[tuple[str, InboxItem]] | None = None,
    ) -> None:
        """Take hints from the session's inbox.

        Args:
            bus: The inbox.
            session_id: Whose inbox.
            read: The inbox as its owner just read it to start the reply: the first `drain`
                takes its hints from there rather than reading again (later ones read).
        """
        self._bus = bus
        self._session_id = session_id
        self._read = read
        self.consumed: list[str] = []

    @property
    def opening(self) -> int:
        """How many hints the first `drain` injects from the inbox read with the reply."""
        read = self._read or []
        return sum(
            1 for sid, item in read if isinstance(item, HintItem) and sid not in self.consumed
        )

    def take(self, item_ids: list[str]) -> None:
        """Count items consumed by the reply's input as consumed."""
        self.consumed.extend(item_ids)

    async def drain(self) -> list[HintBlock]:
        """Return the hint items that arrived since the last call (none while Redis is down)."""
        hints: list[HintBlock] = []
        pending, self._read = self._read, None
        if pending is None:
            try:
                pending = await self._bus.pending(self._session_id)
            except OUTAGE_ERRORS:
                return hints  # they stay in the inbox: a later step takes them
        for stream_id, item in pending:
            if isinstance(item, HintItem) and stream_id not in self.consumed:
                self.consumed.append(stream_id)
                hints.append(item.block())
        return hints


def background_item_id(call_id: str) -> str:
    """The inbox item id of the result of background call `call_id` (one result per call)."""
    return f"bg-{call_id}"


def completion_hint(call: ToolCallBlock, text: str, state: ToolResultState) -> HintItem:
    """The hint that tells the agent a background tool call finished."""
    verb = "has completed" if state is ToolResultState.SUCCESS else f"ended ({state.value})"
    return HintItem(
        item_id=background_item_id(call.id),
        hint=(
            f"<system-notification>Tool '{call.name}' running in background (id={call.id}) "
            f"{verb}.\n\nResult:\n\n{text}\n</system-notification>"
        ),
        source=json.dumps({"label": "tool_output", "sublabel": f"{call.name} · {call.id}"}),
    )


class InboxBackgroundSink:
    """`BackgroundSink` that finishes adopted tool calls and delivers their results as hints.

    Delivery goes through `deliver` (the runtime's mailbox path), so the completion wakes the
    session if it is idle. A call is known by its tool call id (the id the model reads in the
    placeholder result), by which `stop` cancels it; a stopped call delivers nothing.
    """

    def __init__(
        self,
        deliver: Callable[[HintItem], Awaitable[None]],
        calls: BackgroundCalls | None = None,
    ) -> None:
        """Deliver results through `deliver`; record running calls in `calls` (None: nowhere)."""
        self._deliver = deliver
        self._calls = calls
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.hand_over: Callable[[ToolCallBlock], Awaitable[bool]] | None = None
        """Offers an adopted call to whoever runs it (its workspace) before finishing it here."""
        self.stop_handed: Callable[[str], Coroutine[Any, Any, bool]] | None = None
        """Stops a call that was handed over (it then delivers nothing)."""
        self._handed: set[str] = set()
        self._stopping: set[asyncio.Task[bool]] = set()

    def adopt(
        self,
        call: ToolCallBlock,
        next_chunk: asyncio.Future[ToolChunk],
        rest: AsyncIterator[ToolChunk],
    ) -> None:
        """Finish `call` in a task owned by the sink."""
        task = asyncio.get_running_loop().create_task(self._finish(call, next_chunk, rest))
        self._tasks[call.id] = task
        task.add_done_callback(lambda _: self._tasks.pop(call.id, None))

    def stop(self, call_id: str) -> bool:
        """Cancel the background call `call_id`; False when no such call is running."""
        if call_id in self._handed and self.stop_handed is not None:
            self._handed.discard(call_id)
            stopping = asyncio.get_running_loop().create_task(self.stop_handed(call_id))
            self._stopping.add(stopping)
            stopping.add_done_callback(self._stopping.discard)
            return True
        task = self._tasks.pop(call_id, None)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    @property
    def running(self) -> list[str]:
        """The ids of the calls running in the background (here or handed over)."""
        return [*self._tasks, *sorted(self._handed)]

    async def _finish(
        self,
        call: ToolCallBlock,
        next_chunk: asyncio.Future[ToolChunk],
        rest: AsyncIterator[ToolChunk],
    ) -> None:
        record = await self._record(call)
        if self.hand_over is not None:
            try:
                taken = await self.hand_over(call)
            except Exception:
                log.warning("handing %s over to its workspace failed", call.id, exc_info=True)
                taken = False
            if taken:
                # The workspace delivers the result; stop reading (this does not cancel it).
                self._handed.add(call.id)
                await self._note_handed(record)
                next_chunk.cancel()
                await asyncio.gather(next_chunk, return_exceptions=True)
                return
        parts: list[str] = []
        state = ToolResultState.SUCCESS
        try:
            chunks = [await next_chunk]
            chunks += [chunk async for chunk in rest]
            for chunk in chunks:
                parts += [b.text for b in chunk.content if b.type == "text"]
                if chunk.state is not ToolResultState.RUNNING:
                    state = chunk.state
        except StopAsyncIteration:
            pass
        except Exception as exc:  # the failure is the result the agent must hear about
            parts.append(f"{type(exc).__name__}: {exc}")
            state = ToolResultState.ERROR
        try:
            await self._deliver(completion_hint(call, "".join(parts), state))
        except Exception:
            log.exception("could not deliver the background result of %s", call.id)

    async def _record(self, call: ToolCallBlock) -> BackgroundCall | None:
        if self._calls is None:
            return None
        try:
            return await self._calls.record(call)
        except OUTAGE_ERRORS:  # the call still runs; only a crash now would lose its result
            log.warning("could not record background call %s", call.id, exc_info=True)
            return None

    async def _note_handed(self, record: BackgroundCall | None) -> None:
        if self._calls is None or record is None:
            return
        try:
            await self._calls.handed(record)
        except OUTAGE_ERRORS:
            log.warning("could not note the hand-over of %s", record.call_id, exc_info=True)

    @property
    def active(self) -> bool:
        """Whether a tool call is still running in the background."""
        return bool(self._tasks)

    async def aclose(self) -> None:
        """Cancel calls still running in the background."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
