"""What a Docker workspace's container may use, and what it shows read-only.

Kept apart from the workspace itself so that configuration (`RuntimeSettings`) can name it
without importing the Docker client.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from agent_core.deferred_model import DeferredModel
from workspaces.limits import WorkspaceLimits

DEFAULT_IMAGE = "troupe-workspace:latest"
"""The image built from `workspaces/docker/Dockerfile`."""


class ReadOnlyMount(DeferredModel):
    """A host directory shown read-only in the container."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="The absolute host path.")
    target: str = Field(description="The absolute path in the container.")

    @field_validator("source", "target")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/") or ":" in value:
            raise ValueError("must be an absolute path without ':'")
        return value


class DockerPolicy(WorkspaceLimits):
    """What a Docker workspace's container may use."""

    network: str = Field(
        default="none",
        description="The container's network: `none`, or a Docker network to join (e.g. "
        "`bridge`); the host's network and other containers' are refused.",
    )
    cpus: float = Field(default=1.0, gt=0, description="CPU cores the container may use.")

    @field_validator("network")
    @classmethod
    def _own_network(cls, value: str) -> str:
        if value == "host" or value.startswith("container:"):
            raise ValueError(f"network {value!r} would share another namespace")
        return value
