"""`DockerWorkspaceManager`: one `DockerWorkspace` (and container) per user's agent."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_core.mcp import MCPClientConfig
from workspaces.docker.policy import DEFAULT_IMAGE, DockerPolicy, ReadOnlyMount
from workspaces.docker.workspace import DockerWorkspace
from workspaces.manager import LocalWorkspaceManager, WorkspaceKey


class DockerWorkspaceManager(LocalWorkspaceManager):
    """`DockerWorkspace`s under `basedir`, isolating per `(user_id, agent_id)`.

    A workspace's files live in `{basedir}/{user_id}/{agent_id}` (or the workspace a session
    names), bind-mounted into its own container. An idle workspace (not leased for `ttl`
    seconds) is closed: its MCP servers stopped and its container removed; the next request
    starts a new container on the same files.
    """

    def __init__(
        self,
        basedir: str | Path,
        *,
        ttl: float = 3600.0,
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        policy: DockerPolicy | None = None,
        image: str = DEFAULT_IMAGE,
        python: str = "python3",
        mounts: Sequence[ReadOnlyMount] = (),
        docker_url: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Keep workspaces under `basedir`, each in a container made as described.

        Args:
            basedir: The host directory holding every workspace.
            ttl: Seconds an unused workspace (and its container) stays up.
            default_mcps: MCP servers registered in every brand-new workspace.
            skill_paths: Skills installed in every brand-new workspace.
            policy: Network and limits of each container.
            image: The container image (see `DockerWorkspace`).
            python: The image's interpreter.
            mounts: Extra read-only mounts of each container.
            docker_url: The Docker daemon (default: `DOCKER_HOST` or the local socket).
            clock: Monotonic seconds (replaceable in tests).
        """
        super().__init__(
            basedir, ttl=ttl, default_mcps=default_mcps, skill_paths=skill_paths, clock=clock
        )
        self.policy = policy or DockerPolicy()
        self.image = image
        self.python = python
        self.mounts = list(mounts)
        self.docker_url = docker_url

    def _new_workspace(self, key: WorkspaceKey) -> DockerWorkspace:
        return DockerWorkspace(
            self.workdir(key),
            key.workspace_id,
            default_mcps=self.default_mcps,
            skill_paths=self.skill_paths,
            policy=self.policy,
            image=self.image,
            python=self.python,
            mounts=self.mounts,
            docker_url=self.docker_url,
        )
