"""`SessionsClient`: a user's sessions — records, what they are doing, their teams and audits."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from actors.bus.mailbox import SessionDispatcher
from actors.bus.redis_errors import storage_errors
from actors.errors import NotFound, SessionBusy, SessionNotFound
from actors.ops.audit import SessionAudit, audit_session
from actors.sessions.chat_models import check_model_configs
from actors.sessions.lifecycle import delete_user_session
from actors.sessions.status import parked_states
from actors.storage.records import SessionConfig, SessionRecord, SessionStatus
from actors.teams.store import NotInTeam, TeamNotFound, TeamRecord
from actors.wiring import RuntimeParts
from actors.workspaces.session_workspaces import (
    SessionWorkspaces,
    WorkspaceHandle,
    workspace_request,
)
from agent_core.event import CustomEvent
from agent_core.state import AgentState, ToolContext


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


@storage_errors
class SessionsClient:
    """The user's sessions. Redis outages surface as `StorageUnavailable`."""

    def __init__(
        self, parts: RuntimeParts[SessionDispatcher], workspaces: SessionWorkspaces
    ) -> None:
        self._parts = parts
        self._storage = parts.storage
        self._bus = parts.bus
        self._teams = parts.teams
        self._workspaces = workspaces

    async def create(self, user_id: str, agent_id: str, config: SessionConfig) -> SessionRecord:
        """Store a new session after checking its agent and model credential.

        Raises:
            AgentNotFound: the agent is not the user's.
            CredentialNotFound: the model config names a credential the user does not have.
            InvalidRequest: the model config's type does not match its credential.
        """
        await check_model_configs(self._storage, user_id, config)
        return await self._storage.create_session(user_id, agent_id, config)

    async def overviews(self, user_id: str, agent_id: str | None) -> list[SessionOverview]:
        """The user's sessions (of one agent when given) with status, team and light state.

        The state keeps its permission and task contexts; the context, summary and tool cache
        (the bulk of it) are left out: a transcript is read from the messages instead.

        Raises:
            AgentNotFound: `agent_id` is not one of the user's agents.
        """
        if agent_id is not None:
            await self._storage.get_agent(user_id, agent_id)
        sessions = await self._storage.list_sessions(user_id, agent_id)
        states = await parked_states(self._storage, [session.id for session in sessions])
        return list(await asyncio.gather(*map(self._overview, sessions, states)))

    async def _overview(
        self, session: SessionRecord, parked: tuple[AgentState, SessionStatus]
    ) -> SessionOverview:
        state, parked_as = parked
        running = await self._bus.running(session.id) is not None
        status = await self._waiting_status(session.id, running, parked_as)
        light = state.model_copy(
            update={"context": [], "summary": "", "tool_context": ToolContext()}
        )
        team = None
        if session.team_id is not None:
            with contextlib.suppress(TeamNotFound):
                team = await self._teams.get(session.team_id)
        return SessionOverview(session.model_copy(update={"state": light}), running, status, team)

    async def get(self, user_id: str, session_id: str) -> SessionRecord:
        """Return one of the user's sessions with its state.

        Raises:
            SessionNotFound: no such session for this user.
        """
        return await self._storage.load_session(user_id, session_id, with_state=True)

    async def update(self, user_id: str, session_id: str, changes: dict[str, Any]) -> SessionRecord:
        """Apply `changes` (fields of SessionConfig) to an idle session.

        Raises:
            SessionNotFound: no such session for this user.
            SessionBusy: a reply is running.
            CredentialNotFound: a new model config names an unknown credential.
        """
        record = await self._storage.load_session(user_id, session_id)
        if await self._bus.running(session_id) is not None:
            raise SessionBusy(f"session {session_id} is running a reply; try again when idle")
        config = record.config.model_copy(update=changes)
        await check_model_configs(self._storage, user_id, config)
        updated = await self._storage.update_session(record.model_copy(update={"config": config}))
        await self._bus.append_service_event(
            session_id, CustomEvent(name="session_updated", value={"fields": sorted(changes)})
        )
        return updated

    async def delete(self, user_id: str, session_id: str) -> None:
        """Stop the session's owner and delete everything the session owns.

        A team leader takes its team (and every worker session) with it; a worker leaves its
        team.

        Raises:
            SessionNotFound: no such session for this user.
        """
        parts = self._parts
        await delete_user_session(parts.storage, parts.teams, parts.dispatcher, user_id, session_id)

    async def check(self, user_id: str, session_id: str, agent_id: str | None = None) -> None:
        """Raise SessionNotFound unless the session is the user's (and `agent_id`'s, if given)."""
        session = await self._storage.load_session(user_id, session_id)
        if agent_id is not None and session.agent_id != agent_id:
            raise SessionNotFound(session_id)

    async def workspace(self, user_id: str, agent_id: str, session_id: str) -> WorkspaceHandle:
        """Return the workspace of one of the user's sessions, wherever it runs.

        Raises:
            SessionNotFound: no such session for this user.
            NotFound: the session does not belong to `agent_id`.
        """
        session = await self._storage.load_session(user_id, session_id)
        if session.agent_id != agent_id:
            raise NotFound(agent_id)
        return WorkspaceHandle(self._workspaces.service, workspace_request(session))

    async def status(self, user_id: str, session_id: str) -> SessionStatus:
        """What the session is doing now.

        Raises:
            SessionNotFound: no such session for this user.
        """
        await self._storage.load_session(user_id, session_id)
        return await self._status(session_id)

    async def _status(self, session_id: str) -> SessionStatus:
        if await self._bus.running(session_id) is not None:
            return SessionStatus.RUNNING
        [(_, parked)] = await parked_states(self._storage, [session_id])
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
        if not await self._bus.inbox_depth(session_id):
            return parked
        if await self._bus.activated(session_id):
            return SessionStatus.QUEUED
        return SessionStatus.STARTING

    async def team_status(self, user_id: str, session_id: str) -> TeamStatus:
        """Return a session's team (it leads or is in it): each session's status, inbox depth.

        Raises:
            SessionNotFound: no such session for this user.
            NotInTeam: the session is in no team.
        """
        session = await self._storage.load_session(user_id, session_id)
        if session.team_id is None:
            raise NotInTeam(session_id)
        team = await self._teams.get(session.team_id)
        if team.user_id != user_id:
            raise TeamNotFound(team.id)
        leader = await self._member_status(user_id, team.leader_name, team.leader_session_id)
        members = [await self._member_status(user_id, m.name, m.session_id) for m in team.members]
        return TeamStatus(team, leader, members)

    async def _member_status(self, user_id: str, name: str, session_id: str) -> MemberStatus:
        try:
            await self._storage.load_session(user_id, session_id)
        except SessionNotFound:  # deleted while the team record still names it
            return MemberStatus(name, session_id, None, 0)
        status = await self._status(session_id)
        return MemberStatus(name, session_id, status, await self._bus.inbox_depth(session_id))

    async def audit(self, user_id: str, session_id: str) -> SessionAudit:
        """Check the session's durable invariants (`troupe doctor`).

        Raises:
            SessionNotFound: no such session for this user.
        """
        await self._storage.load_session(user_id, session_id)
        return await audit_session(self._storage, self._bus, session_id)
