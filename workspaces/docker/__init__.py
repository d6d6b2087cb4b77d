"""Docker workspaces: each workspace's tools and MCP servers in its own container.

`DockerWorkspace` (see its module for the isolation), `DockerWorkspaceManager` (one per
user's agent, torn down when idle). The image is built from `Dockerfile` beside this file.

The policy loads eagerly; the rest loads the Docker client (slow to import) on first use, so a
process that only reads the configuration does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from workspaces.docker.policy import DEFAULT_IMAGE, DockerPolicy, ReadOnlyMount

if TYPE_CHECKING:
    from workspaces.docker.availability import docker_unavailable
    from workspaces.docker.image import ImageRecipe
    from workspaces.docker.manager import DockerWorkspaceManager
    from workspaces.docker.workspace import CONTAINER_WORKDIR, DockerWorkspace, container_config

_LAZY = {
    "CONTAINER_WORKDIR": "workspaces.docker.workspace",
    "DockerWorkspace": "workspaces.docker.workspace",
    "DockerWorkspaceManager": "workspaces.docker.manager",
    "ImageRecipe": "workspaces.docker.image",
    "container_config": "workspaces.docker.workspace",
    "docker_unavailable": "workspaces.docker.availability",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "CONTAINER_WORKDIR",
    "DEFAULT_IMAGE",
    "DockerPolicy",
    "DockerWorkspace",
    "DockerWorkspaceManager",
    "ImageRecipe",
    "ReadOnlyMount",
    "container_config",
    "docker_unavailable",
]
