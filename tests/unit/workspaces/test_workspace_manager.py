"""LocalWorkspaceManager: per-agent isolation, sharing, TTL eviction and shutdown."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

import workspaces
from tests.support.mcp_servers import collect, text_of
from tests.unit.workspaces._helpers import demo_mcp
from workspaces import (
    CorruptWorkspace,
    LocalWorkspace,
    LocalWorkspaceManager,
    WorkspaceClosed,
    WorkspaceKey,
)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def workdir_of(workspace: object) -> Path:
    assert isinstance(workspace, LocalWorkspace)
    return workspace.workdir


async def test_workspaces_are_per_agent_per_user_unless_a_session_names_one(
    tmp_path: Path,
) -> None:
    async with LocalWorkspaceManager(tmp_path) as manager:
        first = await manager.get_workspace("alice", "agent-1", "s-1")
        assert await manager.create_workspace("alice", "agent-1", "s-2") is first
        assert workdir_of(first) == tmp_path / "alice" / "agent-1"
        assert first.workspace_id == "agent-1"

        other_agent = await manager.get_workspace("alice", "agent-2", "s-3")
        named = await manager.get_workspace("alice", "agent-1", "s-4", "shared")
        bob = await manager.get_workspace("bob", "agent-9", "s-5", "agent-1")
        odd = await manager.get_workspace("../eve", "agent-1", "s-6")
        assert len({id(w) for w in (first, other_agent, named, bob, odd)}) == 5
        assert workdir_of(named) == tmp_path / "alice" / "shared"
        assert workdir_of(bob) == tmp_path / "bob" / "agent-1"
        assert workdir_of(odd) == tmp_path / "%2E.%2Feve" / "agent-1"
        assert WorkspaceKey("alice", "agent-1") in manager.open_keys


async def test_concurrent_requests_share_one_opening(tmp_path: Path) -> None:
    async with LocalWorkspaceManager(tmp_path) as manager:
        opened = await asyncio.gather(
            *(manager.get_workspace("alice", "agent-1", f"s-{i}") for i in range(5))
        )
        assert len({id(w) for w in opened}) == 1


@pytest.mark.integration
async def test_idle_workspaces_are_evicted_and_their_mcp_servers_stopped(
    tmp_path: Path,
) -> None:
    clock = Clock()
    manager = LocalWorkspaceManager(tmp_path, ttl=60, clock=clock)
    workspace = await manager.get_workspace("alice", "agent-1", "s-1")
    await workspace.add_mcp(demo_mcp())
    tools = {tool.name: tool for tool in await workspace.all_tools()}
    pid = int(text_of((await collect(tools["mcp__demo__pid"]()))[0]))

    clock.now += 59
    assert await manager.evict_idle() == []
    clock.now += 1
    assert await manager.evict_idle() == [WorkspaceKey("alice", "agent-1")]
    assert manager.open_keys == []
    with pytest.raises(WorkspaceClosed):
        await workspace.list_mcps()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)

    reopened = await manager.get_workspace("alice", "agent-1", "s-2")
    assert reopened is not workspace
    (client,) = await reopened.list_mcps()
    assert client.is_connected, "re-opened from disk, MCP servers reconnected"
    await manager.close_all()
    assert not client.is_connected


async def test_a_leased_workspace_is_never_evicted(tmp_path: Path) -> None:
    clock = Clock()
    manager = LocalWorkspaceManager(tmp_path, ttl=60, clock=clock)
    async with manager.lease("alice", "agent-1", "s-1") as workspace:
        clock.now += 3600
        assert await manager.evict_idle() == []
        assert await workspace.list_mcps() == []
    clock.now += 59
    assert await manager.evict_idle() == [], "idle time counts from the end of the lease"
    clock.now += 1
    assert await manager.evict_idle() == [WorkspaceKey("alice", "agent-1")]


async def test_the_background_reaper_evicts_idle_workspaces(tmp_path: Path) -> None:
    async with LocalWorkspaceManager(tmp_path, ttl=0.1) as manager:
        workspace = await manager.get_workspace("alice", "agent-1", "s-1")
        async with asyncio.timeout(10):
            while manager.open_keys:  # noqa: ASYNC110 - eviction signals nothing to wait on
                await asyncio.sleep(0.02)
        with pytest.raises(WorkspaceClosed):
            await workspace.list_skills()


async def test_a_workspace_that_fails_to_open_is_not_cached(tmp_path: Path) -> None:
    manager = LocalWorkspaceManager(tmp_path)
    broken = tmp_path / "alice" / "agent-1"
    broken.mkdir(parents=True)
    (broken / ".mcp").write_text("[unterminated")
    with pytest.raises(CorruptWorkspace):
        await manager.get_workspace("alice", "agent-1", "s-1")
    assert manager.open_keys == []
    (broken / ".mcp").write_text("[]")
    workspace = await manager.get_workspace("alice", "agent-1", "s-1")
    assert await workspace.list_mcps() == []
    await manager.close_all()
    with pytest.raises(WorkspaceClosed):
        await workspace.list_mcps()


def test_the_package_exports_its_public_names() -> None:
    assert sorted(workspaces.__all__) == workspaces.__all__
    assert all(getattr(workspaces, name) is not None for name in workspaces.__all__)
