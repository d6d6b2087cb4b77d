"""What the client returns: the parts of the API's answers a program reads.

Responses are parsed leniently (`extra="ignore"`): a newer server adding fields must not break
an older client. What the client sends is built from `extra="forbid"` models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Health(_Answer):
    """`GET /health`: the service version and each component's status."""

    status: Literal["ok", "degraded"]
    version: str
    components: dict[str, str]


class ClusterNode(_Answer):
    """A Ray node of the deployment."""

    node_id: str
    address: str
    alive: bool
    role: str
    resources: dict[str, float]


class ClusterHost(_Answer):
    """An actor hosting sessions, and the sessions live in it."""

    name: str
    node_id: str
    sessions: list[str]
    reachable: bool = True


class InboxDepth(_Answer):
    """A session with items waiting in its inbox."""

    session_id: str
    depth: int


class ClusterStatus(_Answer):
    """`GET /admin/status`: nodes, session hosts and non-empty inboxes (admin keys only)."""

    nodes: list[ClusterNode]
    hosts: list[ClusterHost]
    live_sessions: int
    inboxes: list[InboxDepth]


class Agent(_Answer):
    """An agent: its id, name and system prompt."""

    id: str
    name: str
    system_prompt: str
    created_at: str


class Credential(_Answer):
    """A stored credential; secret fields come back masked."""

    id: str
    type: str
    name: str
    base_url: str | None
    created_at: str


class CredentialCheck(_Answer):
    """`POST /credential/{id}/check`: whether the provider accepted the credential.

    Attributes:
        ok: The provider answered with a success status.
        provider: The credential type that was checked.
        url: The URL that was called.
        status: The provider's HTTP status (None when it could not be reached).
        message: What the provider said, or why it could not be reached.
    """

    ok: bool
    provider: str
    url: str
    status: int | None
    message: str


class Session(_Answer):
    """A session: its id, agent, name and what it is doing."""

    id: str
    agent_id: str
    name: str
    status: str
    created_at: str


class SessionStatus(_Answer):
    """`GET /sessions/{id}/status`."""

    session_id: str
    status: Literal[
        "running", "idle", "awaiting_permission", "awaiting_external_result", "queued", "starting"
    ]


class Event(_Answer):
    """One event of a session's stream.

    Attributes:
        cursor: The stream position (the SSE `id`); pass it as `after` to resume behind it.
        type: The event type (`TEXT_BLOCK_DELTA`, `REPLY_END`, ...).
        data: The whole event as the server sent it.
    """

    cursor: str
    type: str
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def reply_id(self) -> str | None:
        """The reply the event belongs to, if any."""
        value = self.data.get("reply_id")
        return value if isinstance(value, str) else None


class Transcript(_Answer):
    """A page of a session's messages and the stream cursor right after them."""

    messages: list[dict[str, Any]]
    event_cursor: str | None
    is_running: bool


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelChoice(_Request):
    """Which model a session talks to, through which stored credential."""

    credential_id: str = Field(min_length=1)
    model: str = Field(min_length=1)
    type: str = Field(default="openai_credential", description="The credential's type.")
    parameters: dict[str, Any] = Field(default_factory=dict)
