"""`RuntimeClient`: the one door from the HTTP layer into the runtime.

It owns the Redis connection, exposes typed operations (records, chat delivery, transcript,
event log), and reaches session actors through a `SessionDispatcher` — Ray actors in production
(`ray_dispatcher`), or runtimes in this process (`InProcessDispatcher`) for a single-process host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from actors.bus.event_fanout import EventFanout
from actors.bus.items import ChatInput, ChatItem
from actors.bus.mailbox import SessionDispatcher
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.bus.redis_errors import storage_errors
from actors.bus.stream_ids import StreamId
from actors.errors import (
    NotAwaiting,
    NotFound,
    SessionBusy,
    SessionNotFound,
)
from actors.inprocess import InProcessDispatcher
from actors.ops.audit import SessionAudit, audit_session
from actors.ops.health import Probe, check_all
from actors.schedules.service import ScheduleService
from actors.sessions.chat_models import check_model_configs
from actors.sessions.lifecycle import delete_user_session
from actors.sessions.status import parked_status
from actors.settings import RuntimeSettings
from actors.storage.download_tokens import DownloadTokens
from actors.storage.records import (
    AgentData,
    AgentRecord,
    CredentialRecord,
    MCPRecord,
    SessionConfig,
    SessionRecord,
    SessionStatus,
    SkillRecord,
)
from actors.storage.redis_storage import RedisStorage
from actors.teams.store import NotInTeam, TeamNotFound, TeamRecord
from actors.wiring import wire
from actors.workspaces.backends import workspace_health
from actors.workspaces.host import FileStream
from actors.workspaces.library import AddResult, Library
from actors.workspaces.session_workspaces import (
    SessionWorkspaces,
    WorkspaceHandle,
    shared_workspaces,
    workspace_request,
)
from actors.workspaces.skill_upload import (
    MAX_UPLOAD_REQUEST_BYTES,
    UploadManifest,
    check_manifest,
    pack_upload,
)
from agent_core.agent import ResumeEvent
from agent_core.credential import Credential
from agent_core.event import CustomEvent, UserInterruptEvent
from agent_core.message import Msg
from agent_core.state import ToolContext
from workspaces import (
    DirectoryListing,
    InvalidSkill,
    MCPExists,
    MCPUnavailable,
    PathForbidden,
    TooLarge,
    WorkspaceClosed,
    WorkspaceError,
    WorkspaceItemNotFound,
    WrongFileType,
)

log = logging.getLogger(__name__)

MAX_CONCURRENT_UPLOADS = 4
"""Skill uploads one API process unpacks at once (each holds up to a bundle in memory)."""


@dataclass(frozen=True)
class SessionOverview:
    """A session as a session list shows it: its record (light state), status and team."""

    session: SessionRecord
    is_running: bool
    status: SessionStatus
    team: TeamRecord | None


@dataclass(frozen=True)
class MemberStatus:
    """A team member (the leader too) as a team view shows it live."""

    name: str
    session_id: str
    status: SessionStatus | None  # None: the member's session is gone
    inbox_depth: int


@dataclass(frozen=True)
class TeamStatus:
    """A team with what each of its sessions is doing now."""

    team: TeamRecord
    leader: MemberStatus
    members: list[MemberStatus]


@dataclass(frozen=True)
class MessagesPage:
    """One page of a session's transcript."""

    messages: list[Msg]
    has_more: bool
    is_running: bool
    event_cursor: str


@storage_errors
class RuntimeClient:
    """Typed access to Troupe's runtime for one deployment.

    Redis outages surface as `StorageUnavailable` from every public method.
    """

    def __init__(
        self,
        settings: RuntimeSettings,
        dispatcher: SessionDispatcher,
        workspaces: SessionWorkspaces | None = None,
    ) -> None:
        parts = wire(settings, lambda _redis: dispatcher)
        self.settings = settings
        self.redis: Redis = parts.redis
        self.storage = parts.storage
        self.bus = parts.bus
        self.dispatcher = dispatcher
        self.mailbox = parts.mailbox
        self.teams = parts.teams
        self.schedules = ScheduleService.build(parts)
        if isinstance(dispatcher, InProcessDispatcher) and dispatcher.schedules is None:
            dispatcher.schedules = self.schedules
        self._sweeper: asyncio.Task[None] | None = None
        self.workspaces = workspaces or shared_workspaces(settings)
        self.library = Library(self.redis, parts.keys, self.storage.secrets)
        self.download_tokens = DownloadTokens(self.storage.secrets)
        self.upload_slots = asyncio.Semaphore(MAX_CONCURRENT_UPLOADS)
        checks = {
            "redis": self._redis_health,
            "workspaces": self._workspace_health,
            "scheduler": self.schedules.health,
            **dispatcher.health_checks(),
        }
        self._probes = {name: Probe(check) for name, check in checks.items()}
        self._fanout: EventFanout | None = None

    def start_sweeper(self) -> None:
        """Keep session hosts warm and placed, and re-wake sessions with unread inbox items.

        Runs at once, then every `sweep_interval` seconds: it pre-warms hosts (on start and on
        agent nodes that join), moves sessions off nodes that left, and wakes inboxes left
        unread by crashes or lost wakes.
        """
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        while True:
            try:
                await self.dispatcher.maintain()
                await self.mailbox.sweep()
            except Exception:  # Redis outages and dead actors: try again next round
                log.warning("inbox sweep failed", exc_info=True)
            await asyncio.sleep(self.settings.sweep_interval)

    async def aclose(self) -> None:
        """Stop the sweeper, close the dispatcher, the workspaces and the Redis connection pool."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.schedules.aclose()
        await self.dispatcher.close()
        await self.workspaces.aclose()
        if self._fanout is not None:
            await self._fanout.aclose()
        await self.redis.aclose()

    async def health(self) -> dict[str, str]:
        """Return each component's status ("ok ..." or why not), within about a second.

        Components: `redis`, `workspaces`, `scheduler`, and what the dispatcher relies on
        (`ray`). A component that does not answer in time is reported unavailable.
        """
        return await check_all(self._probes)

    async def _redis_health(self) -> str:
        await self.redis.ping()
        return "ok"

    async def _workspace_health(self) -> str:
        # A thread: checking a Docker daemon is a blocking round trip.
        return await asyncio.to_thread(workspace_health, self.settings)

    # records
    async def create_agent(self, user_id: str, data: AgentData) -> AgentRecord:
        """Store a new agent."""
        return await self.storage.create_agent(user_id, data)

    async def list_agents(self, user_id: str) -> list[AgentRecord]:
        """Return the user's agents."""
        return await self.storage.list_agents(user_id)

    async def get_agent(self, user_id: str, agent_id: str) -> AgentRecord:
        """Return one of the user's agents.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        return await self.storage.get_agent(user_id, agent_id)

    async def update_agent(self, user_id: str, agent_id: str, data: AgentData) -> AgentRecord:
        """Replace an agent's data; its sessions see it from their next reply.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        return await self.storage.update_agent(user_id, agent_id, data)

    async def delete_agent(self, user_id: str, agent_id: str) -> None:
        """Delete an agent and every session of it, stopping their actors.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        await self.storage.get_agent(user_id, agent_id)
        await self._delete_sessions_of(user_id, agent_id)
        await self.storage.delete_agent(user_id, agent_id)
        # A session created while the first pass ran would otherwise outlive its agent.
        await self._delete_sessions_of(user_id, agent_id)

    async def _delete_sessions_of(self, user_id: str, agent_id: str) -> None:
        for session in await self.storage.list_sessions(user_id, agent_id):
            with contextlib.suppress(SessionNotFound):  # deleted concurrently
                await self.delete_session(user_id, session.id)

    async def create_credential(self, user_id: str, data: Credential) -> CredentialRecord:
        """Store a new credential."""
        return await self.storage.create_credential(user_id, data)

    async def list_credentials(self, user_id: str) -> list[CredentialRecord]:
        """Return the user's credentials."""
        return await self.storage.list_credentials(user_id)

    async def get_credential(self, user_id: str, credential_id: str) -> CredentialRecord:
        """Return one of the user's credentials (secrets in plaintext).

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        return await self.storage.get_credential(user_id, credential_id)

    async def update_credential(
        self, user_id: str, credential_id: str, data: Credential
    ) -> CredentialRecord:
        """Replace a credential's data.

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        return await self.storage.update_credential(user_id, credential_id, data)

    async def delete_credential(self, user_id: str, credential_id: str) -> None:
        """Delete a credential.

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        await self.storage.delete_credential(user_id, credential_id)

    async def create_session(
        self, user_id: str, agent_id: str, config: SessionConfig
    ) -> SessionRecord:
        """Store a new session after checking its agent and model credential.

        Raises:
            AgentNotFound: the agent is not the user's.
            CredentialNotFound: the model config names a credential the user does not have.
            InvalidRequest: the model config's type does not match its credential.
        """
        await self._check_model_configs(user_id, config)
        return await self.storage.create_session(user_id, agent_id, config)

    async def _check_model_configs(self, user_id: str, config: SessionConfig) -> None:
        await check_model_configs(self.storage, user_id, config)

    async def session_overviews(self, user_id: str, agent_id: str | None) -> list[SessionOverview]:
        """The user's sessions (of one agent when given) with status, team and light state.

        The state keeps its permission and task contexts; the context, summary and tool cache
        (the bulk of it) are left out: a transcript is read from the messages instead.

        Raises:
            AgentNotFound: `agent_id` is not one of the user's agents.
        """
        if agent_id is not None:
            await self.storage.get_agent(user_id, agent_id)
        overviews = []
        for session in await self.storage.list_sessions(user_id, agent_id):
            state = await self.storage.load_state(session.id)
            running = await self.bus.running(session.id) is not None
            status = await self._waiting_status(session.id, running, parked_status(state))
            light = state.model_copy(
                update={"context": [], "summary": "", "tool_context": ToolContext()}
            )
            team = None
            if session.team_id is not None:
                with contextlib.suppress(TeamNotFound):
                    team = await self.teams.get(session.team_id)
            overviews.append(
                SessionOverview(session.model_copy(update={"state": light}), running, status, team)
            )
        return overviews

    async def get_session(self, user_id: str, session_id: str) -> SessionRecord:
        """Return one of the user's sessions with its state.

        Raises:
            SessionNotFound: no such session for this user.
        """
        return await self.storage.load_session(user_id, session_id, with_state=True)

    async def update_session(
        self, user_id: str, session_id: str, changes: dict[str, Any]
    ) -> SessionRecord:
        """Apply `changes` (fields of SessionConfig) to an idle session.

        Raises:
            SessionNotFound: no such session for this user.
            SessionBusy: a reply is running.
            CredentialNotFound: a new model config names an unknown credential.
        """
        record = await self.storage.load_session(user_id, session_id)
        if await self.bus.running(session_id) is not None:
            raise SessionBusy(f"session {session_id} is running a reply; try again when idle")
        config = record.config.model_copy(update=changes)
        await self._check_model_configs(user_id, config)
        updated = await self.storage.update_session(record.model_copy(update={"config": config}))
        await self.bus.append_service_event(
            session_id, CustomEvent(name="session_updated", value={"fields": sorted(changes)})
        )
        return updated

    async def delete_session(self, user_id: str, session_id: str) -> None:
        """Stop the session's owner and delete everything the session owns.

        A team leader takes its team (and every worker session) with it; a worker leaves its
        team.

        Raises:
            SessionNotFound: no such session for this user.
        """
        await delete_user_session(self.storage, self.teams, self.dispatcher, user_id, session_id)

    async def status(self, user_id: str, session_id: str) -> SessionStatus:
        """What the session is doing now.

        Raises:
            SessionNotFound: no such session for this user.
        """
        await self.storage.load_session(user_id, session_id)
        return await self._status(session_id)

    async def _status(self, session_id: str) -> SessionStatus:
        if await self.bus.running(session_id) is not None:
            return SessionStatus.RUNNING
        parked = parked_status(await self.storage.load_state(session_id))
        return await self._waiting_status(session_id, False, parked)

    async def _waiting_status(
        self, session_id: str, running: bool, parked: SessionStatus
    ) -> SessionStatus:
        """RUNNING, else QUEUED/STARTING while inputs wait in the inbox, else `parked`.

        A client that sees `idle` may send its next turn as a turn of its own; while inputs
        still wait, the next one would join them in one reply.
        """
        if running:
            return SessionStatus.RUNNING
        if not await self.bus.inbox_depth(session_id):
            return parked
        if await self.bus.activated(session_id):
            return SessionStatus.QUEUED
        return SessionStatus.STARTING

    async def team_status(self, user_id: str, session_id: str) -> TeamStatus:
        """Return a session's team (it leads or is in it): each session's status, inbox depth.

        Raises:
            SessionNotFound: no such session for this user.
            NotInTeam: the session is in no team.
        """
        session = await self.storage.load_session(user_id, session_id)
        if session.team_id is None:
            raise NotInTeam(session_id)
        team = await self.teams.get(session.team_id)
        if team.user_id != user_id:
            raise TeamNotFound(team.id)
        leader = await self._member_status(user_id, team.leader_name, team.leader_session_id)
        members = [await self._member_status(user_id, m.name, m.session_id) for m in team.members]
        return TeamStatus(team, leader, members)

    async def _member_status(self, user_id: str, name: str, session_id: str) -> MemberStatus:
        try:
            await self.storage.load_session(user_id, session_id)
        except SessionNotFound:  # deleted while the team record still names it
            return MemberStatus(name, session_id, None, 0)
        status = await self._status(session_id)
        return MemberStatus(name, session_id, status, await self.bus.inbox_depth(session_id))

    async def audit(self, user_id: str, session_id: str) -> SessionAudit:
        """Check the session's durable invariants (`troupe doctor`).

        Raises:
            SessionNotFound: no such session for this user.
        """
        await self.storage.load_session(user_id, session_id)
        return await audit_session(self.storage, self.bus, session_id)

    async def interrupt(self, user_id: str, session_id: str) -> None:
        """Interrupt the running reply, or close a parked one (idempotent; idle: no-op).

        Raises:
            SessionNotFound: no such session for this user.
        """
        await self.storage.load_session(user_id, session_id)
        if await self.dispatcher.interrupt(session_id):
            return
        state = await self.storage.load_state(session_id)
        parked = state.current_reply()
        if parked is not None and parked_status(state) is not SessionStatus.IDLE:
            item = ChatItem(
                item_id=f"interrupt-{parked.id}", input=UserInterruptEvent(reply_id=parked.id)
            )
            await self.mailbox.deliver(session_id, item)

    async def _check_resume(self, session_id: str, event: ResumeEvent) -> None:
        """Refuse a resume event that does not answer the session's parked reply."""
        state = await self.storage.load_state(session_id)
        parked, status = state.current_reply(), parked_status(state)
        expected = {
            "USER_CONFIRM_RESULT": SessionStatus.AWAITING_PERMISSION,
            "EXTERNAL_EXECUTION_RESULT": SessionStatus.AWAITING_EXTERNAL_RESULT,
        }.get(event.type)
        if parked is None or status is SessionStatus.IDLE or (expected and status is not expected):
            raise NotAwaiting(
                f"session {session_id} is not awaiting a {event.type} (status: {status.value})"
            )
        if parked.id != event.reply_id:
            raise NotAwaiting(
                f"reply {event.reply_id!r} is not the parked reply of session {session_id}"
            )

    # chat
    async def chat(
        self, user_id: str, agent_id: str, session_id: str, chat_input: ChatInput
    ) -> None:
        """Deliver a chat input to the session's inbox and wake the session.

        Raises:
            SessionNotFound: no such session for this user.
            AgentNotFound: the session does not belong to `agent_id`.
            InvalidRequest: the input answers a pause the session is not in.
            InboxFull: the session's inbox is full.
        """
        session = await self.storage.load_session(user_id, session_id)
        if session.agent_id != agent_id:
            raise NotFound(agent_id) from None
        if chat_input is not None and not isinstance(chat_input, list):
            await self._check_resume(session_id, chat_input)
        await self.mailbox.deliver(session_id, ChatItem(input=chat_input))

    async def messages(
        self, user_id: str, session_id: str, before: str | None, limit: int, offset: int = 0
    ) -> MessagesPage:
        """Return a page of the transcript and the cursor to stream from without loss.

        The page ends `offset` messages before `before` (or before the newest message's end).

        Raises:
            SessionNotFound: no such session for this user.
            NotFound: `before` is not a message of this session.
        """
        await self.storage.load_session(user_id, session_id)
        is_running, cursor = await self.bus.cursor_snapshot(session_id)
        messages, has_more = await self.storage.list_messages(session_id, before, limit, offset)
        return MessagesPage(messages, has_more, is_running, cursor)

    async def live_cursor(self, session_id: str) -> str:
        """Where a new subscriber starts: the reply in progress, else the next event."""
        _, cursor = await self.bus.cursor_snapshot(session_id)
        return cursor

    async def check_session(
        self, user_id: str, session_id: str, agent_id: str | None = None
    ) -> None:
        """Raise SessionNotFound unless the session is the user's (and `agent_id`'s, if given)."""
        session = await self.storage.load_session(user_id, session_id)
        if agent_id is not None and session.agent_id != agent_id:
            raise SessionNotFound(session_id)

    async def session_workspace(
        self, user_id: str, agent_id: str, session_id: str
    ) -> WorkspaceHandle:
        """Return the workspace of one of the user's sessions, wherever it runs.

        Raises:
            SessionNotFound: no such session for this user.
            NotFound: the session does not belong to `agent_id`.
        """
        session = await self.storage.load_session(user_id, session_id)
        if session.agent_id != agent_id:
            raise NotFound(agent_id)
        return WorkspaceHandle(self.workspaces.service, workspace_request(session))

    async def events(self, session_id: str, after: StreamId) -> AsyncIterator[tuple[str, str]]:
        """Open the session's events after `after`: (id, event JSON), then the live tail.

        Where the stream starts is settled before this returns (a cursor past the newest event
        starts at the newest), so every event appended afterwards is delivered. Every
        subscriber of a session in this process shares one reader of its log (see
        `EventFanout`), on a connection pool apart from the one requests use. The iterator
        never ends by itself; it yields ("", "") on each idle period (send a keep-alive) and
        ("", JSON) for a `CUSTOM events_dropped` notice when `after` is older than what the
        log still holds. A Redis outage is ridden out for up to `stream_outage_grace`
        seconds, after which the iterator raises `StorageUnavailable`.

        Raises:
            StorageUnavailable: Redis stayed away longer than the grace period.
        """
        if self._fanout is None:
            self._fanout = EventFanout(
                connect(self.settings.redis_url, self.settings.stream_connections),
                self.bus.keys,
                block_ms=self.settings.stream_block_ms,
                outage_grace=self.settings.stream_outage_grace,
                log_maxlen=self.settings.event_log_maxlen,
            )
        return await self._fanout.subscribe(session_id, after)


def ray_workspaces(settings: RuntimeSettings) -> SessionWorkspaces:
    """Return the workspaces of a Ray deployment (served by workspace actors)."""
    from actors.workspaces.ray_service import RayWorkspaceService

    return SessionWorkspaces(RayWorkspaceService(settings))


def ray_dispatcher(settings: RuntimeSettings) -> SessionDispatcher:
    """Return a dispatcher that hosts sessions in named Ray actors (Ray must be initialised)."""
    from actors._remote.session_actor import RayDispatcher

    return RayDispatcher(settings)


__all__ = [
    "MAX_UPLOAD_REQUEST_BYTES",
    "AddResult",
    "DirectoryListing",
    "FileStream",
    "InProcessDispatcher",
    "InvalidSkill",
    "MCPExists",
    "MCPRecord",
    "MCPUnavailable",
    "MemberStatus",
    "MessagesPage",
    "PathForbidden",
    "RedisMessageBus",
    "RedisStorage",
    "RuntimeClient",
    "SessionAudit",
    "SessionDispatcher",
    "SkillRecord",
    "StreamId",
    "TeamStatus",
    "TooLarge",
    "UploadManifest",
    "WorkspaceClosed",
    "WorkspaceError",
    "WorkspaceHandle",
    "WorkspaceItemNotFound",
    "WrongFileType",
    "check_manifest",
    "pack_upload",
    "ray_dispatcher",
    "ray_workspaces",
]
