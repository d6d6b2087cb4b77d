"""Docker workspaces: each workspace's tools and MCP servers in its own container.

`DockerWorkspace` (see its module for the isolation), `DockerWorkspaceManager` (one per
user's agent, torn down when idle). The image is built from `Dockerfile` beside this file.
"""

from workspaces.docker.availability import docker_unavailable
from workspaces.docker.image import ImageRecipe
from workspaces.docker.manager import DockerWorkspaceManager
from workspaces.docker.workspace import (
    CONTAINER_WORKDIR,
    DEFAULT_IMAGE,
    DockerPolicy,
    DockerWorkspace,
    ReadOnlyMount,
    container_config,
)

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
