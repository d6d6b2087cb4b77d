"""Stored records: agents, credentials, sessions, the MCP/skill library (AgentScope's shapes)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from agent_core._ids import new_id, now_iso
from agent_core.agent import ContextConfig, ReActConfig
from agent_core.credential import Credential
from agent_core.deferred_model import DeferredModel
from agent_core.mcp import MCPClientConfig
from agent_core.permission import PermissionMode
from agent_core.state import AgentState


class _Record(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id, description="Record id.")
    created_at: str = Field(default_factory=now_iso, description="ISO 8601 creation time.")
    updated_at: str = Field(default_factory=now_iso, description="ISO 8601 last update time.")


class InviteConfig(DeferredModel):
    """Whether other agents' teams may borrow this agent, and what they are told about it."""

    model_config = ConfigDict(extra="forbid")

    invitable: bool = Field(
        default=False,
        title="Invitable",
        description=(
            "Whether this agent may be borrowed into another agent's team. Requires a non-empty "
            "invite_description."
        ),
    )
    invite_description: str | None = Field(
        default=None,
        title="Invite Description",
        description="What a team leader is told about this agent when deciding to borrow it.",
        json_schema_extra={"format": "textarea"},
    )

    @model_validator(mode="after")
    def _described_when_invitable(self) -> Self:
        if self.invitable and not (self.invite_description or "").strip():
            raise ValueError("invite_description must be non-empty when invitable=True")
        return self


class AgentChatConfig(DeferredModel):
    """How the agent runs in text chat."""

    model_config = ConfigDict(extra="forbid")

    context_config: ContextConfig = Field(
        default_factory=ContextConfig,
        title="Context Config",
        description="The context config for the agent.",
    )
    react_config: ReActConfig = Field(
        default_factory=ReActConfig,
        title="React Config",
        description="The react config for the agent.",
    )
    invite_config: InviteConfig = Field(
        default_factory=InviteConfig,
        title="Invite Config",
        description="The invite config for the agent.",
    )


class AgentData(DeferredModel):
    """What a user defines about an agent."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, description="Agent name.")
    system_prompt: str = Field(
        default="You're a helpful assistant.", description="The agent's base system prompt."
    )
    chat_config: AgentChatConfig = Field(default_factory=AgentChatConfig)
    dedicated_process: bool = Field(
        default=False,
        description="Run each session of this agent in a process of its own (isolation) "
        "instead of packing it onto a shared session host.",
    )


class AgentRecord(_Record):
    """A stored agent."""

    user_id: str
    source: str = "user"
    data: AgentData


class CredentialRecord(_Record):
    """A stored credential."""

    user_id: str
    data: Credential


class _LibraryItem(_Record):
    """What the library keeps about an MCP or a skill besides its substance.

    The display fields are a hub card's in AgentScope, snapshotted at install time; Troupe has
    no hubs, so items are added by hand and the hub fields stay null.
    """

    user_id: str
    display_name: str | None = Field(default=None, description="The user-facing name.")
    description: str = Field(default="", description="What it does.")
    tags: list[str] = Field(default_factory=list, description="Its tags.")
    author: str | None = Field(default=None, description="Who published it.")
    icon_url: str | None = Field(default=None, description="Its icon.")
    url: str | None = Field(default=None, description="Its page on the hub's website.")
    hub_id: str | None = Field(
        default=None, description="The hub it came from, or null when added by hand."
    )
    card_id: str | None = Field(default=None, description="The card's id on that hub.")
    version: str | None = Field(default=None, description="The card version installed.")
    enabled: bool = Field(default=True, description="Whether the user has it turned on.")


class MCPRecord(_LibraryItem):
    """An MCP server in a user's library, ready to put into any of their workspaces.

    Its configuration may hold secrets (headers, environment), so it is stored encrypted and
    never shown by the library routes.
    """

    config: MCPClientConfig

    @property
    def name(self) -> str:
        """The MCP's name, unique in the user's library (workspaces know it by this name)."""
        return self.config.name


class SkillRecord(_LibraryItem):
    """A skill in a user's library; its files are stored beside the record."""

    name: str = Field(description="The skill name, unique in the user's library.")
    markdown: str = Field(default="", description="Its SKILL.md.")


class ChatModelConfig(DeferredModel):
    """Which model a session talks to, through which credential."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="The credential type, e.g. openai_credential.")
    credential_id: str = Field(min_length=1, description="Id of the credential to use.")
    model: str = Field(min_length=1, description="Provider model name, e.g. gpt-4o-mini.")
    model_class: str = Field(default="", description="Model implementation (optional).")
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="Provider parameters (temperature, max_tokens, ...)."
    )


class SessionNaming(DeferredModel):
    """Who owns a session's display name."""

    model_config = ConfigDict(extra="forbid")

    auto: bool = Field(
        default=False,
        description=(
            "Whether the server may still replace the session name with a title derived from "
            "the conversation."
        ),
    )


def _creation_stamp() -> str:
    # Local wall-clock time, as AgentScope names a session until its title is known.
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")  # noqa: DTZ005


class SessionConfig(DeferredModel):
    """Session settings, set at creation."""

    model_config = ConfigDict(extra="forbid")

    workspace_id: str = Field(default="", description="Workspace the session works in.")
    name: str = Field(default_factory=_creation_stamp, description="Display name.")
    naming: SessionNaming = Field(default_factory=SessionNaming)
    cwd: str | None = Field(default=None, description="Focused directory in the workspace.")
    chat_model_config: ChatModelConfig | None = None
    fallback_chat_model_config: ChatModelConfig | None = None
    permission_mode: PermissionMode | None = Field(
        default=None, description="Permission mode applied at the start of every reply."
    )
    system_prompt: str | None = Field(
        default=None, description="Replaces the agent's system prompt (team workers)."
    )
    context_config: ContextConfig | None = Field(
        default=None, description="Replaces the agent's context config (team workers)."
    )
    react_config: ReActConfig | None = Field(
        default=None, description="Replaces the agent's ReAct config (team workers)."
    )


class SessionStatus(StrEnum):
    """What a session is doing: exactly one applies at any moment."""

    RUNNING = "running"
    IDLE = "idle"
    AWAITING_PERMISSION = "awaiting_permission"
    AWAITING_EXTERNAL_RESULT = "awaiting_external_result"
    QUEUED = "queued"
    """Inputs wait in the inbox for the session's owner to take them."""
    STARTING = "starting"
    """Inputs wait in the inbox of a session whose owner has never been activated yet."""


class UserOrigin(DeferredModel):
    """A session a person opened themselves."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["user"] = "user"


class ScheduleOrigin(DeferredModel):
    """A session a schedule opened on its due date."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["schedule"] = "schedule"
    schedule_id: str


class TeamRole(StrEnum):
    """A session's place in its team."""

    LEADER = "leader"
    WORKER = "worker"


class TeamMembership(DeferredModel):
    """How a session belongs to a team."""

    model_config = ConfigDict(extra="forbid")

    team_id: str
    role: TeamRole
    member_name: str = Field(description="Name other members address it by.")
    leader_session_id: str
    subagent_type: str = "default"


class SessionRecord(_Record):
    """A stored session; its `state` is kept under its own key and attached on read."""

    user_id: str
    agent_id: str
    origin: UserOrigin | ScheduleOrigin = Field(default_factory=UserOrigin, discriminator="type")
    team_id: str | None = None
    membership: TeamMembership | None = Field(
        default=None, description="The session's team role, when it is in a team."
    )
    config: SessionConfig
    state: AgentState | None = None
