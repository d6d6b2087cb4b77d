"""Agent teams: `TeamRecord` storage and the `SubAgentTemplate`s workers are created from.

Team members are ordinary sessions (so they are separate actors and spread over the cluster);
a team record names its leader session and its workers. Key: `{p}:team:{team_id}` (JSON).
"""

from __future__ import annotations

import functools

from pydantic import ConfigDict, Field, field_validator
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.errors import NotFound
from agent_core._ids import new_id, now_iso
from agent_core.agent import ContextConfig, ReActConfig
from agent_core.deferred_model import DeferredModel
from agent_core.permission import PermissionContext
from agent_core.state import TaskContext

DEFAULT_WORKER_PROMPT = """You are {member_name}, a member of the team '{team_name}' led by \
{leader_name}.

Team purpose: {team_description}

Your role: {member_description}

Work on the tasks {leader_name} gives you. When a task is done, or cannot be done, report the \
result to {leader_name} with the TeamSay tool: the leader only learns what you tell it."""


class TeamNotFound(NotFound):
    """No such team."""

    kind = "team"


class NotInTeam(NotFound):
    """The session belongs to no team."""

    kind = "team of session"


class SubAgentTemplate(DeferredModel):
    """A blueprint for workers: prompt, permissions and loop settings of one worker type."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, description="Template id; an AgentCreate subagent_type.")
    description: str = Field(description="Shown to the leader to choose the type.")
    system_prompt_template: str = Field(
        description="Format string with {team_name} {team_description} {member_name} "
        "{member_description} {leader_name}."
    )
    permission_context: PermissionContext = Field(default_factory=PermissionContext)
    context_config: ContextConfig = Field(default_factory=ContextConfig)
    react_config: ReActConfig = Field(default_factory=ReActConfig)
    tasks_context: TaskContext = Field(default_factory=TaskContext)

    def render(
        self,
        team_name: str,
        team_description: str,
        member_name: str,
        member_description: str,
        leader_name: str,
    ) -> str:
        """The worker's system prompt."""
        return self.system_prompt_template.format(
            team_name=team_name,
            team_description=team_description,
            member_name=member_name,
            member_description=member_description,
            leader_name=leader_name,
        )


@functools.cache
def _default_template() -> SubAgentTemplate:
    # Made when a registry first needs it: an instance at import would build the
    # template's validator (and its nested configs') in every process importing this.
    return SubAgentTemplate(
        type="default",
        description="A general-purpose worker.",
        system_prompt_template=DEFAULT_WORKER_PROMPT,
    )


def template_registry(templates: list[SubAgentTemplate]) -> dict[str, SubAgentTemplate]:
    """Templates by type, `default` included (a registered `default` replaces the built-in).

    Raises:
        ValueError: two templates share a type.
    """
    registry: dict[str, SubAgentTemplate] = {}
    for template in templates:
        if template.type in registry:
            raise ValueError(f"duplicate sub-agent template type {template.type!r}")
        registry[template.type] = template
    registry.setdefault("default", _default_template())
    return registry


class TeamMember(DeferredModel):
    """A worker of a team."""

    model_config = ConfigDict(extra="forbid")

    name: str
    session_id: str
    description: str = ""
    subagent_type: str = "default"
    invited_agent_id: str | None = Field(
        default=None, description="The borrowed agent, for a member joined with AgentInvite."
    )


class TeamRecord(DeferredModel):
    """A team: its leader session and its workers."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id)
    user_id: str
    name: str
    description: str = ""
    leader_session_id: str
    leader_name: str
    members: list[TeamMember] = Field(default_factory=list)
    created_at: str = Field(default_factory=now_iso)

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a team needs a name")
        return value

    def member(self, name: str) -> TeamMember | None:
        """The worker called `name`, if any."""
        return next((m for m in self.members if m.name == name), None)


class TeamStore:
    """Team records in Redis."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    def _key(self, team_id: str) -> str:
        return f"{self._keys.prefix}:team:{team_id}"

    async def save(self, team: TeamRecord) -> None:
        """Create or replace a team record."""
        await self._redis.set(self._key(team.id), team.model_dump_json())

    async def get(self, team_id: str) -> TeamRecord:
        """Return a team.

        Raises:
            TeamNotFound: no such team.
        """
        raw = await self._redis.get(self._key(team_id))
        if raw is None:
            raise TeamNotFound(team_id)
        return TeamRecord.model_validate_json(raw)

    async def delete(self, team_id: str) -> None:
        """Delete a team record."""
        await self._redis.delete(self._key(team_id))
