"""DockerWorkspaceManager: one container per user's agent, removed when idle for `ttl`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.docker._helpers import container_exists
from tests.support.tool_calls import Agent
from workspaces.docker import DockerWorkspace, DockerWorkspaceManager

pytestmark = [pytest.mark.docker, pytest.mark.integration]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_ttl_teardown_removes_the_container(
    tmp_path: Path, docker_options: dict[str, Any]
) -> None:
    clock = Clock()
    manager = DockerWorkspaceManager(tmp_path, ttl=60, clock=clock, **docker_options)
    async with manager:
        workspace = await manager.create_workspace("alice", "coder", "s1")
        assert isinstance(workspace, DockerWorkspace)
        assert workspace.host_workdir == tmp_path / "alice" / "coder"
        assert await manager.get_workspace("alice", "coder", "s2") is workspace
        ok, out = await Agent(workspace.builtin_tools())("Write", file_path="kept.txt", content="x")
        assert ok, out
        container = workspace.container_id
        assert container is not None
        url = docker_options["docker_url"]

        clock.now = 59
        assert await manager.evict_idle() == []
        assert await container_exists(url, container)

        clock.now = 61
        assert [key.workspace_id for key in await manager.evict_idle()] == ["coder"]
        assert not await container_exists(url, container)
        assert (tmp_path / "alice" / "coder" / "kept.txt").read_text() == "x"

        again = await manager.get_workspace("alice", "coder", "s3")
        assert again is not workspace
        assert again.container_id not in (None, container)
        ok, out = await Agent(again.builtin_tools())("Bash", command="cat kept.txt")
        assert (ok, out.strip()) == (True, "x")
        other = await manager.get_workspace("bob", "coder", "s4")
        assert other.host_workdir == tmp_path / "bob" / "coder"
        containers = [again.container_id, other.container_id]
    for container in containers:
        assert container is not None
        assert not await container_exists(url, container)
