"""Runtime configuration, read from the environment (`TROUPE_*`)."""

from __future__ import annotations

import json
import os
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, field_validator

from actors.bus.keys import DEFAULT_KEY_PREFIX
from actors.bus.message_bus import DEFAULT_EVENT_LOG_MAXLEN, DEFAULT_INBOX_MAXLEN
from actors.teams.store import SubAgentTemplate
from agent_core.deferred_model import DeferredModel
from workspaces.docker import DEFAULT_IMAGE, DockerPolicy, ReadOnlyMount

_IMPORT_PATH = r"^[\w.]+:[\w.]+$"


def parse_mounts(text: str) -> list[ReadOnlyMount]:
    """Read-only mounts written `source[:target],...` (target default: the same path).

    Raises:
        ValidationError: A path is not absolute.
    """
    mounts = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        source, _, target = entry.partition(":")
        mounts.append(ReadOnlyMount(source=source, target=target or source))
    return mounts


class RuntimeSettings(DeferredModel):
    """Where the runtime keeps its data and how it names its actors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    redis_url: str = Field(description="Redis holding inboxes, event logs and records.")
    key_prefix: str = Field(default=DEFAULT_KEY_PREFIX, description="Prefix of every Redis key.")
    namespace: str = Field(default="troupe", description="Ray namespace of Troupe's actors.")
    event_log_maxlen: int = Field(
        default=DEFAULT_EVENT_LOG_MAXLEN,
        gt=0,
        description="Approximate cap of each session's event log.",
    )
    inbox_maxlen: int = Field(
        default=DEFAULT_INBOX_MAXLEN,
        gt=0,
        description="Maximum unconsumed items in one session's inbox.",
    )
    tool_timeout: float = Field(
        default=10.0, gt=0, description="Seconds before a tool call moves to the background."
    )
    idle_ttl: float = Field(
        default=300.0, gt=0, description="Seconds an idle session stays loaded in its host."
    )
    max_live_sessions: int = Field(
        default=1_000,
        gt=0,
        description="Live dedicated session actors before the LRU one hibernates.",
    )
    sweep_interval: float = Field(
        default=5.0, gt=0, description="Seconds between sweeps for inboxes with unread items."
    )
    session_host_capacity: int = Field(
        default=256,
        gt=0,
        description="Sessions one session host actor runs at most; more hosts start on demand.",
    )
    session_resources: dict[str, float] = Field(
        default_factory=dict,
        description="Ray resources that mark agent nodes (default: nodes offering "
        "`troupe_agent`, else every non-sandbox node); dedicated session actors request them.",
    )
    sub_agent_templates: list[SubAgentTemplate] = Field(
        default_factory=list, description="Worker types leaders may create (AgentCreate)."
    )
    agent_middlewares: str | None = Field(
        default=None,
        pattern=_IMPORT_PATH,
        description="Import path ('module:qualname') of an async factory of extra agent "
        "middlewares, called per reply with (user_id, agent_id, session_id[, workspace]).",
    )
    agent_tools: str | None = Field(
        default=None,
        pattern=_IMPORT_PATH,
        description="Import path ('module:qualname') of an async factory of extra agent tools, "
        "called per reply with (user_id, agent_id, session_id).",
    )
    credential_types: list[Annotated[str, Field(pattern=_IMPORT_PATH)]] = Field(
        default_factory=list,
        description="Import paths ('module:qualname') of custom CredentialBase subclasses, "
        "registered in every process that reads credentials.",
    )
    stream_outage_grace: float = Field(
        default=60.0,
        ge=0,
        description="Seconds SSE streams and session writes ride out a Redis outage.",
    )
    stream_block_ms: int = Field(
        default=15_000, gt=0, description="Longest blocking read of an event log (ms)."
    )
    stream_connections: int = Field(
        default=1_000,
        gt=0,
        description="Redis connections one API process gives SSE streams (one per watched "
        "session), a pool apart from the one requests use.",
    )
    workspace_root: str = Field(
        default_factory=lambda: os.environ.get("TROUPE_WORKSPACE_ROOT", "./.troupe/workspaces"),
        validate_default=True,
        description="Directory holding the local workspaces (made absolute where the settings "
        "are built, so every process agrees).",
    )
    workspace_backend: Literal["auto", "sandbox", "docker", "e2b", "local"] = Field(
        default_factory=lambda: os.environ.get("TROUPE_WORKSPACE_BACKEND", "auto"),
        validate_default=True,
        description="Where tools run: `sandbox` (bubblewrap), `docker`, `e2b`, `local` (no "
        "isolation, development only) or `auto` (`sandbox` where bwrap exists, else `local`).",
    )
    workspace_network: bool = Field(
        default=False, description="Give sandboxed tools the network (default: none)."
    )
    docker_url: str | None = Field(
        default_factory=lambda: os.environ.get("TROUPE_DOCKER_URL") or None,
        description="The Docker daemon of the `docker` backend (default: `DOCKER_HOST` or the "
        "local socket of the node hosting the workspace).",
    )
    docker_image: str = Field(
        default_factory=lambda: os.environ.get("TROUPE_DOCKER_IMAGE") or DEFAULT_IMAGE,
        min_length=1,
        description="The `docker` backend's image (built from workspaces/docker/Dockerfile).",
    )
    docker_python: str = Field(
        default_factory=lambda: os.environ.get("TROUPE_DOCKER_PYTHON") or "python3",
        min_length=1,
        description="The image's interpreter running the tool host and the MCP gateway.",
    )
    docker_network: str | None = Field(
        default_factory=lambda: os.environ.get("TROUPE_DOCKER_NETWORK") or None,
        description="The Docker network workspace containers join (default: `none`, or "
        "`bridge` with `workspace_network`); the host's and other containers' are refused.",
    )
    docker_mounts: list[ReadOnlyMount] = Field(
        default_factory=lambda: parse_mounts(os.environ.get("TROUPE_DOCKER_MOUNTS", "")),
        description="Host directories shown read-only in every workspace container; in the "
        "environment comma-separated `source[:target]` (target default: the same path).",
    )
    e2b_api_key: str | None = Field(
        default_factory=lambda: (
            os.environ.get("TROUPE_E2B_API_KEY") or os.environ.get("E2B_API_KEY") or None
        ),
        repr=False,
        description="The `e2b` backend's API key (default: `E2B_API_KEY`).",
    )
    e2b_domain: str | None = Field(
        default_factory=lambda: os.environ.get("TROUPE_E2B_DOMAIN") or None,
        description="The E2B domain (default: the SDK's, or `E2B_DOMAIN`).",
    )
    e2b_template: str = Field(
        default_factory=lambda: os.environ.get("TROUPE_E2B_TEMPLATE") or "base",
        min_length=1,
        description="The E2B template of new sandboxes: it must provide Python 3.11+ with "
        "Troupe installed (the tool host and the MCP gateway run inside).",
    )
    workspace_ttl: float = Field(
        default=3600.0, gt=0, description="Seconds an unused workspace stays open."
    )
    generation: int = Field(
        default=0,
        ge=0,
        description="The cluster generation of the deployment (`actors.bus.generation`): writes of "
        "an older one are refused; 0: unfenced (no deployment claimed one).",
    )
    secret_key: str | None = Field(
        default=None,
        repr=False,
        description="Fernet key(s) encrypting stored secrets, comma-separated, the first one "
        "encrypting (rotation); unset: a key generated once and kept in Redis (dev only).",
    )

    @classmethod
    def from_env(cls, redis_url: str | None = None) -> RuntimeSettings:
        """Build settings from `TROUPE_*` environment variables, `redis_url` taking precedence."""
        url = redis_url or os.environ.get("TROUPE_REDIS_URL")
        if not url:
            raise ValueError("no Redis URL: pass one or set TROUPE_REDIS_URL")
        return cls(
            redis_url=url,
            key_prefix=os.environ.get("TROUPE_KEY_PREFIX", DEFAULT_KEY_PREFIX),
            namespace=os.environ.get("TROUPE_NAMESPACE", "troupe"),
            secret_key=os.environ.get("TROUPE_SECRET_KEY") or None,
            workspace_root=os.environ.get("TROUPE_WORKSPACE_ROOT", "./.troupe/workspaces"),
            workspace_backend=os.environ.get("TROUPE_WORKSPACE_BACKEND", "auto"),
            session_resources=json.loads(os.environ.get("TROUPE_SESSION_RESOURCES") or "{}"),
        )

    @field_validator("workspace_root")
    @classmethod
    def _absolute(cls, value: str) -> str:
        return os.path.abspath(os.path.expanduser(value))

    @field_validator("docker_network")
    @classmethod
    def _own_network(cls, value: str | None) -> str | None:
        if value is not None:
            DockerPolicy(network=value)  # refuses the host's and other containers' namespaces
        return value

    @field_validator("docker_mounts", mode="before")
    @classmethod
    def _mounts(cls, value: object) -> object:
        return parse_mounts(value) if isinstance(value, str) else value
