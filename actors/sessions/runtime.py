"""`SessionRuntime`: the single owner of one session — drains its inbox and runs its replies.

The runtime is a plain asyncio class; a Ray actor (`SessionActor` in `actors._remote`) hosts it, and
tests or a single-process server can host it directly.

Ownership: activation takes a new lease generation (fencing token); every write carries it,
so a replaced owner cannot write. The owner keeps the session's `AgentState` in memory and
persists it at checkpoints (after each model call and tool result) and at the end of a reply.

The write order (begin, append, checkpoint, park, end, acknowledge inputs) is the
`ReplyWriter`'s. A reply cut short by a crash continues on the next activation from its last
checkpoint, with the same reply id. A drain that fails (say, Redis stayed down beyond the
outage grace) drops the in-memory state: the retry reloads the session from Redis and
recovers, so a reply never runs again from memory that may not match what was saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from actors.bus.items import ChatItem, InboxItem
from actors.bus.mailbox import Mailbox
from actors.bus.outage import OUTAGE_ERRORS, ride_out
from actors.errors import SessionFenced, SessionNotFound
from actors.ops.metrics import inbox_read
from actors.ops.tracing import continued
from actors.sessions.background_calls import BackgroundCalls, settle_orphans
from actors.sessions.chat_models import ModelSlot
from actors.sessions.dead_letters import DeadLetters
from actors.sessions.extensions import AgentExtensions
from actors.sessions.hints import InboxBackgroundSink, InboxHints
from actors.sessions.inbox_batches import first_batch, resume_input
from actors.sessions.reply_agent import ReplySetup, SessionServices, reply_agent
from actors.sessions.reply_writer import Recovered, ReplyWriter
from actors.sessions.titles import opening_text, session_title
from actors.sessions.user_agents import UserAgents
from actors.storage.records import AgentRecord, SessionNaming, SessionRecord
from actors.storage.redis_storage import RedisStorage
from actors.teams.invite import invitable
from actors.teams.store import SubAgentTemplate, TeamStore, template_registry
from actors.workspaces.session_workspaces import SessionKit, SessionWorkspaces, workspace_request
from agent_core._ids import new_id
from agent_core.agent import ModelConfig, Restarted
from agent_core.event import AgentEvent, CustomEvent, HintBlockEvent, ReplyEndEvent, ReplyStartEvent
from agent_core.message import AssistantMsg, ErrorInfo, ErrorType, Msg, ReplyFinishedReason
from agent_core.model.base import ChatModelBase
from agent_core.state import AgentState

if TYPE_CHECKING:
    from actors.schedules.service import ScheduleService

log = logging.getLogger(__name__)

_MAX_RETRY_DELAY = 5.0
_T = TypeVar("_T")


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
        outage_grace: Seconds the session's writes ride out a Redis outage.
        user_agents: The users' agents, shared by the sessions of one host (default: own).
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
        outage_grace: float = 60.0,
        user_agents: UserAgents | None = None,
    ) -> None:
        self.session_id = session_id
        self._storage = storage
        self._user_agents = user_agents or UserAgents(storage)
        self._bus = mailbox.bus
        self._mailbox = mailbox
        self._workspaces = workspaces
        self._extensions = extensions or AgentExtensions()
        self._calls = BackgroundCalls(
            storage.redis, mailbox.bus.keys, session_id, mailbox.bus.generation
        )
        self._sink = InboxBackgroundSink(
            lambda item: mailbox.deliver(session_id, item), self._calls
        )
        self._services = SessionServices(
            session_id=session_id,
            storage=storage,
            teams=TeamStore(storage.redis, storage.keys),
            mailbox=mailbox,
            templates=template_registry(templates or []),
            schedules=schedules,
            sink=self._sink,
            tool_timeout=tool_timeout,
        )
        self._dead_letters = DeadLetters(storage, mailbox.bus, session_id)
        self._outage_grace = outage_grace
        self._fence: int | None = None
        self._state: AgentState | None = None
        self._writer: ReplyWriter | None = None
        self._recovered: Recovered | None = None
        self._failures = 0
        self._retry: asyncio.TimerHandle | None = None
        self._drain_task: asyncio.Task[None] | None = None
        self._reply_task: asyncio.Task[None] | None = None
        self._woken_again = False
        self._model = ModelSlot()
        self._fallback_model = ModelSlot()
        self._owner: tuple[str, str] | None = None  # the session's user and agent, once read
        self._last_session: SessionRecord | None = None  # as the last reply read it

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
        """Take ownership (new lease), load the state, and recover a reply a crash cut short."""
        if self._writer is not None:
            return
        sid, grace = self.session_id, self._outage_grace
        fence = await ride_out(lambda: self._bus.acquire_lease(sid), grace)
        writer = ReplyWriter(self._storage, self._bus, sid, fence, grace)
        state = await writer.load()
        state.session_id = sid
        self._recovered = await writer.recover(state)
        self._state, self._fence, self._writer = state, fence, writer

    def _owned(self) -> tuple[AgentState, int]:
        if self._state is None or self._fence is None:
            raise RuntimeError(f"session {self.session_id} is used before activate()")
        return self._state, self._fence

    def _owned_writer(self) -> ReplyWriter:
        if self._writer is None:
            raise RuntimeError(f"session {self.session_id} is used before activate()")
        return self._writer

    def _forget(self) -> None:
        """Drop the in-memory session: the next activation reloads it from Redis."""
        self._writer, self._state, self._fence, self._recovered = None, None, None, None

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
        if self._retry is not None:
            self._retry.cancel()
        for task in (self._reply_task, self._drain_task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self._sink.aclose()
        await self._model.aclose()
        await self._fallback_model.aclose()

    async def _drain(self) -> None:
        taken: list[str] = []
        try:
            if self._writer is None:  # a new owner: settle what the previous one left
                await self.activate()
                await self._settle_background()
            if self._recovered is not None:
                recovered, self._recovered = self._recovered, None
                self._reply_task = asyncio.create_task(self._reply([], recovered))
                await self._reply_task
            woken = True
            while True:
                self._woken_again = False
                taken = []
                # A wake is for items delivered: read the records their reply starts with along
                # with the inbox (later rounds find it empty more often than not).
                records = _started(self._records()) if woken else None
                woken = False
                pending = await self._dead_letters.screen(self._owned()[0], self._owned_writer())
                if not pending:
                    await self._bus.forget_inbox_if_empty(self.session_id)
                    if self._woken_again:
                        continue
                    return
                batch = first_batch(pending)
                # A reply to leading hints takes the first of them.
                taken = [stream_id for stream_id, _ in batch or pending[:1]]
                inbox_read(len(pending))
                # The reply continues the trace of the delivery that started it.
                with continued(pending[0][1]):
                    self._reply_task = asyncio.create_task(
                        self._reply(batch, inbox=pending, records=records)
                    )
                await self._reply_task
                self._failures = 0
        except SessionFenced:
            log.warning("session %s: a newer owner took over; this one stops", self.session_id)
            self._forget()
        except SessionNotFound:
            # Deleted before a late delivery (a team message, a fire, a tool's completion)
            # reached it: nobody is left to answer, and what the delivery wrote must go too.
            log.info("session %s is deleted: dropping what reached it since", self.session_id)
            self._forget()
            await self._storage.purge_session(self.session_id)
        except Exception as exc:
            # What was saved is the truth: reload it and retry (a cut reply then resumes). Items
            # that keep failing are set aside as dead letters.
            log.exception("session %s: draining the inbox failed; retrying", self.session_id)
            self._forget()
            await self._dead_letters.count_failure(taken, exc)
            self._retry_later()
        except asyncio.CancelledError:
            if self._writer is not None and self._writer.running is not None:
                self._forget()  # cut mid-write: only Redis knows where the reply stands
            raise

    async def _settle_background(self) -> None:
        """Resolve the background calls whose runner died (`background_calls`)."""
        running = self._sink.running
        records = [r for r in await self._calls.open() if r.call_id not in running]
        if not records:
            return
        session = await self._storage.get_session_any_user(self.session_id)
        async with contextlib.AsyncExitStack() as stack:
            kit: SessionKit | None
            try:
                kit = await stack.enter_async_context(self._workspaces.kit(session))
            except OUTAGE_ERRORS:
                raise
            except Exception:  # its calls are then checked on a later activation
                log.warning("session %s: workspace unavailable", self.session_id, exc_info=True)
                kit = None
            orphans = [r for r in records if await self._calls.runner_gone(r, kit)]
            tools = kit.tools if kit is not None else []
            await settle_orphans(orphans, tools, self._sink, self._owned()[0], self._bus)

    def _retry_later(self) -> None:
        delay = min(0.25 * 2**self._failures, _MAX_RETRY_DELAY)
        self._failures += 1

        def retry() -> None:
            self._retry = None
            if not self._draining:
                self._drain_task = asyncio.create_task(
                    self._drain(), name=f"drain:{self.session_id}"
                )

        self._retry = asyncio.get_running_loop().call_later(delay, retry)

    async def _reply(
        self,
        batch: list[tuple[str, InboxItem]],
        recovered: Recovered | None = None,
        inbox: list[tuple[str, InboxItem]] | None = None,
        records: Awaitable[tuple[SessionRecord, AgentRecord]] | None = None,
    ) -> None:
        """Run one reply to `batch` (or continue `recovered`).

        `inbox` is the inbox just read, `records` the session's records read with it.
        """
        state, _ = self._owned()
        writer = self._owned_writer()
        inputs = [
            m
            for _, item in batch
            if isinstance(item, ChatItem) and isinstance(item.input, list)
            for m in item.input
        ]
        hints = InboxHints(self._bus, self.session_id, inbox)
        if recovered is not None:
            hints.take(recovered.hint_ids)
        writer.expect_inputs(inputs, [stream_id for stream_id, _ in batch])
        # The user's agents (the team tools' pool) and the workspace the last reply used (a
        # session's rarely changes) do not wait for the records: they are read along.
        owner, last = self._owner, self._last_session
        early = None if owner is None else _started(self._user_agents.of(owner[0]))
        opened = None if last is None else _started(self._workspaces.open(last))
        session, agent_record = await (records or self._records())
        self._last_session = session
        if session.config.permission_mode is not None:
            state.permission_context.mode = session.config.permission_mode
        try:
            model = await self._chat_model(session)
            fallback = await self._fallback_model.get(
                self._storage, session.user_id, session.config.fallback_chat_model_config
            )
            if early is None or owner != self._owner:
                early = _started(self._user_agents.of(session.user_id))
            if opened is None or last is None or not _same_workspace(last, session):
                opened = _started(self._workspaces.open(session))
            kit, agents = await asyncio.gather(opened, early)
            extra = await self._extensions.build(
                session.user_id, session.agent_id, self.session_id, kit.handle
            )
            pool = [a for a in agents if invitable(a)]
            models = ModelConfig(fallback_model=fallback)
            setup = ReplySetup(session, agent_record, model, models, kit, hints, pool, extra)
            agent = reply_agent(self._services, state, setup)
        except OUTAGE_ERRORS:
            raise  # not the user's problem: the drain retries once Redis is back
        except Exception as exc:
            if recovered is not None:
                raise
            await self._fail_setup(agent_record.data.name, inputs, exc)
            return
        resume = resume_input(batch)
        start = Restarted(recovered.reply_id) if recovered else resume or inputs or None
        # A reply opens with the hints of the inbox just read: REPLY_START waits for them, so
        # they are the one commit that begins the run (the agent yields them without waiting).
        opening, held = hints.opening, list[AgentEvent]()
        async with contextlib.aclosing(agent.reply_stream(start)) as events:
            async for event in events:
                held.append(event)
                if _opens(held, opening):
                    continue
                writer.acknowledge(hints.consumed)
                await writer.write_many(held, state)
                opening, held = 0, []
        if held:  # the stream ended while opening (an end always follows in practice)
            writer.acknowledge(hints.consumed)
            await writer.write_many(held, state)
        if recovered is None and resume is None and session.config.naming.auto:
            await self._title(model, opening_text(inputs))

    async def _records(self) -> tuple[SessionRecord, AgentRecord]:
        """The session's record and its agent's, read together once the owner is known."""
        owner = self._owner
        if owner is None:
            session = await self._storage.get_session_any_user(self.session_id)
            agent = None
        else:
            session, agent = await asyncio.gather(
                self._storage.get_session_any_user(self.session_id),
                self._storage.get_agent(*owner),
            )
        self._owner = (session.user_id, session.agent_id)
        if agent is None or self._owner != owner:
            agent = await self._storage.get_agent(session.user_id, session.agent_id)
        return session, agent

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
        model = await self._model.get(self._storage, session.user_id, config)
        assert model is not None
        return model

    async def _fail_setup(self, agent_name: str, inputs: list[Msg], exc: Exception) -> None:
        """End the reply at once with a setup error the user can read and act on."""
        state, _ = self._owned()
        writer = self._owned_writer()
        sid = self.session_id
        state.context.extend(inputs)
        start = ReplyStartEvent(reply_id=new_id(), session_id=sid, name=agent_name)
        reply = AssistantMsg(agent_name, [], id=start.reply_id, created_at=start.created_at)
        state.context.append(reply)
        await writer.write(start, state)
        end = ReplyEndEvent(
            reply_id=reply.id,
            session_id=sid,
            finished_reason=ReplyFinishedReason.ERROR,
            error=ErrorInfo(type=ErrorType.SETUP, message=str(exc)),
        )
        reply.append_event(end)
        await writer.write(end, state)


def _started(read: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
    """`read` running in a task whose failure is consumed by whoever awaits it, if anyone."""
    task = asyncio.ensure_future(read)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    return task


def _same_workspace(one: SessionRecord, other: SessionRecord) -> bool:
    """Whether the two records of a session open the same workspace view."""
    return one.config.cwd == other.config.cwd and workspace_request(one) == workspace_request(other)


def _opens(held: list[AgentEvent], hints: int) -> bool:
    """Whether `held` is a reply's REPLY_START and fewer than `hints` of its opening hints."""
    return (
        len(held) <= hints
        and isinstance(held[0], ReplyStartEvent)
        and all(isinstance(event, HintBlockEvent) for event in held[1:])
    )
