"""`GET /sessions/` items: AgentScope's `SessionView` (record, status, team detail).

A Troupe team is a leader session and worker sessions of the same agent, each worker known by
its member name; the team detail shows it in AgentScope's shape, each member as the agent under
its member name.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from actors.client import MemberStatus, SessionOverview, TeamStatus
from actors.storage.records import AgentRecord, SessionRecord, SessionStatus
from actors.teams.store import TeamRecord
from serve.schemas import AgentView


class TeamMemberEntry(BaseModel):
    """One member of a team's roster."""

    owner_id: str = Field(description="Owner of the member's agent.")
    agent_id: str = Field(description="The member's agent.")
    session_id: str = Field(description="The member's session in the team.")
    role: str = Field(default="created", description="How the member joined (Troupe: created).")


class TeamData(BaseModel):
    """What the team is and who is in it."""

    name: str = Field(description="Display name of the team.")
    description: str = Field(default="", description="What the team is for.")
    member_ids: list[str] = Field(
        default_factory=list,
        description="Deprecated: the members' agent ids; read `members`.",
        json_schema_extra={"deprecated": True},
    )
    members: list[TeamMemberEntry] = Field(default_factory=list, description="The roster.")


class TeamView(BaseModel):
    """A team record as AgentScope shows it."""

    id: str
    created_at: str
    updated_at: str
    user_id: str
    session_id: str = Field(description="The leader's session.")
    leader_agent_id: str | None = None
    data: TeamData


class TeamMemberView(BaseModel):
    """A member's agent and its session."""

    agent: AgentView
    session_id: str | None = None


class TeamDetailResponse(BaseModel):
    """A team resolved for display: the record, the leader's agent, the members."""

    team: TeamView
    leader_agent: AgentView | None = None
    members: list[TeamMemberView] = Field(default_factory=list)


class SessionView(BaseModel):
    """A session with what a session list renders without further requests."""

    session: SessionRecord = Field(
        description=(
            "The session record; its state keeps the permission and task contexts but not the "
            "context, summary and tool cache (read the messages instead)."
        )
    )
    is_running: bool = Field(
        description="Deprecated: use `status`. True only while a reply is running."
    )
    status: SessionStatus = Field(description="What the session is doing now.")
    team: TeamDetailResponse | None = Field(
        default=None, description="The team the session belongs to, if any."
    )


class ListSessionsResponse(BaseModel):
    """`GET /sessions/`."""

    sessions: list[SessionView]
    total: int


def session_view(overview: SessionOverview, agent: AgentRecord | None) -> SessionView:
    """The view of one session of `agent` (None: the agent is gone, so is the team detail)."""
    team = overview.team
    return SessionView(
        session=overview.session,
        is_running=overview.is_running,
        status=overview.status,
        team=None if team is None or agent is None else _team_detail(team, agent),
    )


def _team_detail(team: TeamRecord, agent: AgentRecord) -> TeamDetailResponse:
    def as_member(name: str) -> AgentView:
        data = agent.data.model_copy(update={"name": name})
        return AgentView(**agent.model_copy(update={"data": data}).model_dump())

    entries = [
        TeamMemberEntry(owner_id=team.user_id, agent_id=agent.id, session_id=m.session_id)
        for m in team.members
    ]
    view = TeamView(
        id=team.id,
        created_at=team.created_at,
        updated_at=team.created_at,
        user_id=team.user_id,
        session_id=team.leader_session_id,
        leader_agent_id=agent.id,
        data=TeamData(name=team.name, description=team.description, members=entries),
    )
    return TeamDetailResponse(
        team=view,
        leader_agent=as_member(team.leader_name),
        members=[
            TeamMemberView(agent=as_member(m.name), session_id=m.session_id) for m in team.members
        ],
    )


class TeamMemberStatus(BaseModel):
    """A team session (leader or worker) and what it is doing now."""

    name: str = Field(description="The name the team addresses it by.")
    session_id: str
    status: SessionStatus | None = Field(description="None: the session is gone.")
    inbox_depth: int = Field(description="Inputs waiting in its inbox (team messages included).")


class TeamStatusResponse(BaseModel):
    """`GET /sessions/{id}/team`: the session's team, live."""

    team_id: str
    name: str
    description: str
    leader: TeamMemberStatus
    members: list[TeamMemberStatus]


def team_status_view(team: TeamStatus) -> TeamStatusResponse:
    """The response body of a team's live status."""

    def member(status: MemberStatus) -> TeamMemberStatus:
        return TeamMemberStatus(
            name=status.name,
            session_id=status.session_id,
            status=status.status,
            inbox_depth=status.inbox_depth,
        )

    return TeamStatusResponse(
        team_id=team.team.id,
        name=team.team.name,
        description=team.team.description,
        leader=member(team.leader),
        members=[member(m) for m in team.members],
    )
