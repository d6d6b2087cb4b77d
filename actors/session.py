"""`SessionRuntime`: the single owner of one session — drains its inbox and runs its replies.

The runtime is a plain asyncio class; a Ray actor (`actors._remote.SessionActor`) hosts it, and
tests or a single-process server can host it directly.

Ownership: activation takes a new lease generation (fencing token); every write carries it,
so a replaced owner cannot write. The owner keeps the session's `AgentState` in memory and
persists it at checkpoints (after each model call and tool result) and at the end of a reply.

Write order makes every reader consistent: the run marker is set before a reply's first event;
the reply's messages and state are committed before its `REPLY_END` is appended; the inbox items
a reply consumed are dropped in that same commit (at-least-once delivery). A reply cut short by
a crash is closed on the next activation (`actors.recovery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from actors.announcements import AnnounceChangesMiddleware
from actors.dispatch import Mailbox
from actors.extensions import AgentExtensions
from actors.items import ChatItem, HintItem, InboxItem
from actors.mailbox import InboxBackgroundSink, InboxHints
from actors.metrics import MetricsMiddleware, inbox_read
from actors.models import build_chat_model
from actors.naming import opening_text, session_title
from actors.records import AgentRecord, ChatModelConfig, SessionNaming, SessionRecord
from actors.recovery import close_interrupted_reply
from actors.schedule_tools import ScheduleContext
from actors.storage import RedisStorage
from actors.team import SubAgentTemplate, TeamStore, template_registry
from actors.team_invite import invitable
from actors.team_tools import TeamContext
from actors.toolbox import SessionTools, session_toolkit
from actors.tracing import continued
from actors.workspaces import SessionKit, SessionWorkspaces
from agent_core._ids import new_id
from agent_core.agent import Agent, ResumeEvent
from agent_core.event import (
    AgentEvent,
    CustomEvent,
    ModelCallEndEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
)
from agent_core.message import AssistantMsg, ErrorInfo, ErrorType, Msg, ReplyFinishedReason
from agent_core.middleware import MiddlewareBase, TracingMiddleware
from agent_core.model.base import ChatModelBase
from agent_core.state import AgentState
from agent_core.tool import ToolBase

if TYPE_CHECKING:
    from actors.schedule_service import ScheduleService

log = logging.getLogger(__name__)

_CHECKPOINT_EVENTS = (ModelCallEndEvent, ToolResultEndEvent)
_PARKING_EVENTS = (RequireUserConfirmEvent, RequireExternalExecutionEvent)


class SessionRuntime:
    """Runs one session: wakes on deliveries, replies to inbox items, persists as it goes.

    Args:
        session_id: The session owned.
        storage: Records, state and transcript.
        bus: Inbox and event log.
        deliver: The mailbox path (append + wake) used for background-tool completions.
        tool_timeout: Seconds before a tool call moves to the background.
        schedules: Where the session's schedule tools keep schedules (None: no such tools).
        extensions: Extra middlewares and tools for every reply's agent.
    """

    def __init__(
        self,
        session_id: str,
        storage: RedisStorage,
        mailbox: Mailbox,
        workspaces: SessionWorkspaces,
        templates: list[SubAgentTemplate] | None = None,
        tool_timeout: float = 10.0,
        schedules: ScheduleService | None = None,
        extensions: AgentExtensions | None = None,
    ) -> None:
        self.session_id = session_id
        self._storage = storage
        self._bus = mailbox.bus
        self._mailbox = mailbox
        self._workspaces = workspaces
        self._teams = TeamStore(storage.redis, storage.keys)
        self._templates = template_registry(templates or [])
        self._tool_timeout = tool_timeout
        self._schedules = schedules
        self._extensions = extensions or AgentExtensions()
        self._sink = InboxBackgroundSink(lambda item: mailbox.deliver(session_id, item))
        self._fence: int | None = None
        self._state: AgentState | None = None
        self._drain_task: asyncio.Task[None] | None = None
        self._reply_task: asyncio.Task[None] | None = None
        self._woken_again = False
        self._model: ChatModelBase | None = None
        self._model_config: ChatModelConfig | None = None

    @property
    def busy(self) -> bool:
        """Whether the runtime is draining its inbox or finishing tool calls in the background.

        A busy runtime must not hibernate: that would drop its background calls' results.
        """
        return self._draining or self._sink.active

    @property
    def _draining(self) -> bool:
        return self._drain_task is not None and not self._drain_task.done()

    async def activate(self) -> None:
        """Take ownership (new lease), load the state, and close a reply a crash cut short."""
        if self._fence is not None:
            return
        self._fence = await self._bus.acquire_lease(self.session_id)
        self._state = await self._storage.load_state(self.session_id)
        self._state.session_id = self.session_id
        marker = await self._bus.running(self.session_id)
        if marker is not None:
            await close_interrupted_reply(
                self._storage, self._bus, self.session_id, self._state, marker, self._fence
            )

    def _owned(self) -> tuple[AgentState, int]:
        if self._state is None or self._fence is None:
            raise RuntimeError(f"session {self.session_id} is used before activate()")
        return self._state, self._fence

    async def wake(self) -> None:
        """Make sure the inbox gets drained (idempotent; cheap when already draining)."""
        if self._draining:
            self._woken_again = True
            return
        self._drain_task = asyncio.create_task(self._drain(), name=f"drain:{self.session_id}")

    async def has_pending(self) -> bool:
        """Whether the inbox holds unconsumed items."""
        return bool(await self._bus.pending(self.session_id))

    async def interrupt(self) -> bool:
        """Interrupt the running reply; return whether one was running."""
        task = self._reply_task
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def wait_idle(self) -> None:
        """Wait until the current drain (if any) finishes."""
        while self._drain_task is not None and not self._drain_task.done():
            await asyncio.shield(self._drain_task)

    async def close(self) -> None:
        """Stop draining, cancel background calls and release the model's connections."""
        for task in (self._reply_task, self._drain_task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self._sink.aclose()
        if self._model is not None:
            await self._model.aclose()

    async def _drain(self) -> None:
        try:
            await self.activate()
            while True:
                self._woken_again = False
                pending = await self._bus.pending(self.session_id)
                if not pending:
                    await self._bus.forget_inbox_if_empty(self.session_id)
                    if self._woken_again:
                        continue
                    return
                batch = _first_batch(pending)
                inbox_read(len(pending))
                # The reply continues the trace of the delivery that started it.
                with continued(pending[0][1]):
                    self._reply_task = asyncio.create_task(self._reply(batch))
                await self._reply_task
        except Exception:
            # Items stay in the inbox; the next wake (or the sweeper) drives them again.
            log.exception("session %s: draining the inbox failed", self.session_id)

    async def _reply(self, batch: list[tuple[str, InboxItem]]) -> None:
        state, fence = self._owned()
        inputs = [
            m
            for _, item in batch
            if isinstance(item, ChatItem) and isinstance(item.input, list)
            for m in item.input
        ]
        hints = InboxHints(self._bus, self.session_id)
        hints.take([stream_id for stream_id, _ in batch])
        session = await self._storage.get_session_any_user(self.session_id)
        agent_record = await self._storage.get_agent(session.user_id, session.agent_id)
        if session.config.permission_mode is not None:
            state.permission_context.mode = session.config.permission_mode
        # The workspace stays leased (never evicted) for the whole reply.
        async with contextlib.AsyncExitStack() as stack:
            try:
                model = await self._chat_model(session)
                kit = await stack.enter_async_context(self._workspaces.kit(session))
                extra = await self._extensions.build(
                    session.user_id, session.agent_id, self.session_id, kit.handle
                )
                pool = [a for a in await self._storage.list_agents(session.user_id) if invitable(a)]
                agent = self._agent(session, agent_record, model, kit, hints, pool, extra)
            except Exception as exc:
                await self._fail_setup(agent_record.data.name, inputs, hints.consumed, exc)
                return
            resume = _resume_input(batch)
            running: str | None = None
            async for event in agent.reply_stream(resume or inputs or None):
                reply_id = getattr(event, "reply_id", None)
                if reply_id is not None and reply_id != running:
                    # The run marker precedes a reply's first event (a resume echo included).
                    await self._bus.mark_running(self.session_id, reply_id, hints.consumed, fence)
                    running = reply_id
                    if isinstance(event, ReplyStartEvent) and resume is None:
                        await self._storage.commit_turn(self.session_id, state, inputs, [], fence)
                if await self._publish(event, hints):
                    running = None
            if resume is None and session.config.naming.auto:
                await self._title(model, opening_text(inputs))

    def _agent(
        self,
        session: SessionRecord,
        agent_record: AgentRecord,
        model: ChatModelBase,
        kit: SessionKit,
        hints: InboxHints,
        invitable_agents: list[AgentRecord],
        extra: tuple[list[MiddlewareBase], list[ToolBase]],
    ) -> Agent:
        """The session's agent for one reply: workspace, team and extra tools, prompt, limits.

        Raises:
            ToolError: an extra tool's name is taken.
        """
        state, _ = self._owned()
        team = TeamContext(
            session_id=self.session_id,
            agent_name=agent_record.data.name,
            storage=self._storage,
            teams=self._teams,
            mailbox=self._mailbox,
            templates=self._templates,
        )
        schedules = None
        if self._schedules is not None and session.config.chat_model_config is not None:
            schedules = ScheduleContext(
                service=self._schedules,
                user_id=session.user_id,
                agent_id=session.agent_id,
                session_id=session.id,
                chat_model_config=session.config.chat_model_config,
            )
        kit.grant(state.permission_context)
        self._sink.hand_over = kit.hand_over
        self._sink.stop_handed = kit.stop_background
        extra_middlewares, extra_tools = extra
        toolkit = session_toolkit(
            kit.tools,
            SessionTools(session, team, self._sink, schedules, invitable_agents),
        )
        for tool in extra_tools:
            toolkit.register(tool)
        chat = agent_record.data.chat_config
        membership = session.membership
        return Agent(
            name=membership.member_name if membership else agent_record.data.name,
            system_prompt=kit.system_prompt(
                session.config.system_prompt or agent_record.data.system_prompt
            ),
            model=model,
            toolkit=toolkit,
            state=state,
            offloader=kit.offloader,
            middlewares=[
                TracingMiddleware(),
                MetricsMiddleware(),
                AnnounceChangesMiddleware(),
                *extra_middlewares,
            ],
            context_config=session.config.context_config or chat.context_config,
            react_config=session.config.react_config or chat.react_config,
            hint_source=hints,
            background_sink=self._sink,
            tool_timeout=self._tool_timeout,
            # Agents are untrusted: reading outside the workspace is never silently allowed.
            confine_reads=True,
        )

    async def _publish(self, event: AgentEvent, hints: InboxHints) -> bool:
        """Append `event`, committing at checkpoints; return True when the reply stopped."""
        state, fence = self._owned()
        sid = self.session_id
        if isinstance(event, ReplyEndEvent):
            reply = next(m for m in reversed(state.context) if m.id == event.reply_id)
            await self._storage.commit_turn(sid, state, [reply], hints.consumed, fence)
            await self._bus.append_event(sid, event, fence)
            await self._bus.clear_running(sid, fence)
            await self._bus.append_event(sid, CustomEvent(name="session_updated"), fence)
            return True
        if isinstance(event, _PARKING_EVENTS):
            # Saved before it is announced: a client answering the request at once must find
            # the reply parked.
            reply = next(m for m in reversed(state.context) if m.id == event.reply_id)
            await self._storage.commit_turn(sid, state, [reply], hints.consumed, fence)
            await self._bus.append_event(sid, event, fence)
            await self._bus.clear_running(sid, fence)
            return True
        await self._bus.append_event(sid, event, fence)
        if isinstance(event, _CHECKPOINT_EVENTS):
            await self._storage.commit_turn(sid, state, [], [], fence)
        return False

    async def _title(self, model: ChatModelBase, text: str) -> None:
        """Replace the session's placeholder name with a title of its opening message."""
        if not text:  # no text to title (e.g. an image alone): a later turn will do
            return
        name = await session_title(model, text)
        _, fence = self._owned()
        session = await self._storage.get_session_any_user(self.session_id)
        if not session.config.naming.auto:  # renamed meanwhile: the user's name stands
            return
        config = session.config.model_copy(update={"name": name, "naming": SessionNaming()})
        await self._storage.update_session(session.model_copy(update={"config": config}))
        await self._bus.append_event(self.session_id, CustomEvent(name="session_updated"), fence)

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
        self, agent_name: str, inputs: list[Msg], consumed: list[str], exc: Exception
    ) -> None:
        """End the reply at once with a setup error the user can read and act on."""
        state, fence = self._owned()
        sid = self.session_id
        state.context.extend(inputs)
        reply = AssistantMsg(agent_name, [], id=new_id())
        start = ReplyStartEvent(reply_id=reply.id, session_id=sid, name=agent_name)
        end = ReplyEndEvent(
            reply_id=reply.id,
            session_id=sid,
            finished_reason=ReplyFinishedReason.ERROR,
            error=ErrorInfo(type=ErrorType.SETUP, message=str(exc)),
        )
        reply.append_event(end)
        state.context.append(reply)
        await self._bus.mark_running(sid, reply.id, consumed, fence)
        await self._bus.append_event(sid, start, fence)
        await self._storage.commit_turn(sid, state, [*inputs, reply], consumed, fence)
        await self._bus.append_event(sid, end, fence)
        await self._bus.clear_running(sid, fence)


def _resume_input(batch: list[tuple[str, InboxItem]]) -> ResumeEvent | None:
    """The confirmation, external result or interrupt a batch carries, if any."""
    if len(batch) == 1 and isinstance(batch[0][1], ChatItem):
        value = batch[0][1].input
        if isinstance(value, ResumeEvent):
            return value
    return None


def _first_batch(pending: list[tuple[str, InboxItem]]) -> list[tuple[str, InboxItem]]:
    """The items one reply consumes.

    Messages that queued up become one reply's input. A confirmation, an external result or a
    bare continue is a reply of its own. Hints that precede the first chat item start a reply
    of their own (injected by the hint source), and are not part of the batch.
    """
    first_id, first = pending[0]
    if isinstance(first, HintItem):
        return []
    if not isinstance(first.input, list):
        return [(first_id, first)]
    batch: list[tuple[str, InboxItem]] = [(first_id, first)]
    for entry in pending[1:]:
        item = entry[1]
        if isinstance(item, HintItem):
            continue
        if not isinstance(item.input, list):
            break
        batch.append(entry)
    return batch
