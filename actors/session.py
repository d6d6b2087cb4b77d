"""`SessionRuntime`: the single owner of one session — drains its inbox and runs its replies.

The runtime is a plain asyncio class; a Ray actor (`actors._remote.SessionActor`) hosts it, and
tests or a single-process server can host it directly.

Write order makes every reader consistent: the run marker is set before a reply's first event,
the reply's messages and state are committed before its `REPLY_END` is appended, and the inbox
items a reply consumed are dropped in that same commit (at-least-once delivery; a crash before
the commit re-runs the items, and message ids keep the transcript free of duplicates).
"""

from __future__ import annotations

import asyncio
import logging

from actors.bus import RedisMessageBus
from actors.items import ChatItem, InboxItem
from actors.models import build_chat_model
from actors.records import AgentRecord, ChatModelConfig, SessionRecord
from actors.storage import RedisStorage
from actors.toolbox import session_toolkit
from agent_core._ids import new_id
from agent_core.agent import Agent
from agent_core.event import (
    AgentEvent,
    ModelCallEndEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    ToolResultEndEvent,
)
from agent_core.message import AssistantMsg, ErrorInfo, ErrorType, Msg, ReplyFinishedReason
from agent_core.model.base import ChatModelBase

log = logging.getLogger(__name__)

_CHECKPOINT_EVENTS = (ModelCallEndEvent, ToolResultEndEvent)


class SessionRuntime:
    """Runs one session: wakes on deliveries, replies to inbox items, persists as it goes."""

    def __init__(self, session_id: str, storage: RedisStorage, bus: RedisMessageBus) -> None:
        self.session_id = session_id
        self._storage = storage
        self._bus = bus
        self._drain_task: asyncio.Task[None] | None = None
        self._woken_again = False
        self._model: ChatModelBase | None = None
        self._model_config: ChatModelConfig | None = None

    @property
    def busy(self) -> bool:
        """Whether the runtime is draining its inbox."""
        return self._drain_task is not None and not self._drain_task.done()

    async def wake(self) -> None:
        """Make sure the inbox gets drained (idempotent; cheap when already draining)."""
        if self.busy:
            self._woken_again = True
            return
        self._drain_task = asyncio.create_task(self._drain(), name=f"drain:{self.session_id}")

    async def wait_idle(self) -> None:
        """Wait until the current drain (if any) finishes."""
        while self._drain_task is not None and not self._drain_task.done():
            await asyncio.shield(self._drain_task)

    async def close(self) -> None:
        """Stop draining and release the model's connections."""
        if self._drain_task is not None:
            self._drain_task.cancel()
            await asyncio.gather(self._drain_task, return_exceptions=True)
        if self._model is not None:
            await self._model.aclose()

    async def _drain(self) -> None:
        try:
            while True:
                self._woken_again = False
                pending = await self._bus.pending(self.session_id)
                if not pending:
                    if self._woken_again:
                        continue
                    return
                await self._handle(_first_batch(pending))
        except Exception:
            # Items stay in the inbox; the next wake (or the sweeper) drives them again.
            log.exception("session %s: draining the inbox failed", self.session_id)

    async def _handle(self, batch: list[tuple[str, InboxItem]]) -> None:
        ids = [item_id for item_id, _ in batch]
        inputs: list[Msg] = []
        for _, item in batch:
            if isinstance(item.input, list):
                inputs.extend(item.input)
        session = await self._storage.get_session_any_user(self.session_id)
        agent_record = await self._storage.get_agent(session.user_id, session.agent_id)
        try:
            model = await self._chat_model(session)
        except Exception as exc:
            await self._fail_setup(agent_record, inputs, ids, exc)
            return
        agent = Agent(
            name=agent_record.data.name,
            system_prompt=agent_record.data.system_prompt,
            model=model,
            toolkit=session_toolkit(),
            state=await self._storage.load_state(self.session_id),
            context_config=agent_record.data.chat_config.context_config,
            react_config=agent_record.data.chat_config.react_config,
        )
        agent.state.session_id = self.session_id
        async for event in agent.reply_stream(inputs or None):
            await self._publish(agent, event, inputs, ids)

    async def _publish(
        self, agent: Agent, event: AgentEvent, inputs: list[Msg], consumed: list[str]
    ) -> None:
        sid = self.session_id
        if isinstance(event, ReplyStartEvent):
            await self._bus.mark_running(sid, event.reply_id)
            await self._storage.commit_turn(sid, agent.state, inputs, [])
        if isinstance(event, ReplyEndEvent):
            reply = next(m for m in reversed(agent.state.context) if m.id == event.reply_id)
            await self._storage.commit_turn(sid, agent.state, [reply], consumed)
            await self._bus.append_event(sid, event)
            await self._bus.clear_running(sid)
            return
        await self._bus.append_event(sid, event)
        if isinstance(event, _CHECKPOINT_EVENTS):
            await self._storage.commit_turn(sid, agent.state, [], [])

    async def _chat_model(self, session: SessionRecord) -> ChatModelBase:
        config = session.config.chat_model_config
        if config is None:
            raise ValueError("the session has no chat_model_config; PATCH one onto the session")
        if self._model is not None and config == self._model_config:
            return self._model
        credential = await self._storage.get_credential(session.user_id, config.credential_id)
        if self._model is not None:
            await self._model.aclose()
        self._model, self._model_config = build_chat_model(config, credential), config
        return self._model

    async def _fail_setup(
        self, agent: AgentRecord, inputs: list[Msg], consumed: list[str], exc: Exception
    ) -> None:
        """End the reply at once with a setup error the user can read and act on."""
        sid = self.session_id
        state = await self._storage.load_state(sid)
        state.context.extend(inputs)
        reply = AssistantMsg(agent.data.name, [], id=new_id())
        start = ReplyStartEvent(reply_id=reply.id, session_id=sid, name=agent.data.name)
        end = ReplyEndEvent(
            reply_id=reply.id,
            session_id=sid,
            finished_reason=ReplyFinishedReason.ERROR,
            error=ErrorInfo(type=ErrorType.SETUP, message=str(exc)),
        )
        reply.append_event(end)
        state.context.append(reply)
        await self._bus.mark_running(sid, reply.id)
        await self._bus.append_event(sid, start)
        await self._storage.commit_turn(sid, state, [*inputs, reply], consumed)
        await self._bus.append_event(sid, end)
        await self._bus.clear_running(sid)


def _first_batch(pending: list[tuple[str, InboxItem]]) -> list[tuple[str, InboxItem]]:
    """Take the oldest item, plus the message items right after it when it carries messages.

    Messages that queued up while the session was busy become one reply's input; a
    confirmation, an external result or a bare continue is a reply of its own.
    """
    first = pending[0]
    if not isinstance(first[1].input, list):
        return [first]
    batch = [first]
    for entry in pending[1:]:
        if not (isinstance(entry[1], ChatItem) and isinstance(entry[1].input, list)):
            break
        batch.append(entry)
    return batch
