"""E2BWorkspaceManager: one sandbox per user's agent, paused when idle, found again after."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.e2b_server import LocalE2B
from workspaces.e2b import E2BWorkspace, E2BWorkspaceManager

pytestmark = [pytest.mark.e2b, pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_isolation_per_agent_and_ttl_teardown(
    local_e2b: LocalE2B, e2b_options: dict[str, Any]
) -> None:
    clock = Clock()
    manager = E2BWorkspaceManager(ttl=60, clock=clock, **e2b_options)
    async with manager:
        first = await manager.get_workspace("u1", "a1", "s1")
        assert isinstance(first, E2BWorkspace)
        assert await manager.get_workspace("u1", "a1", "s2") is first  # same agent, same sandbox
        other_agent = await manager.get_workspace("u1", "a2", "s1")
        other_user = await manager.get_workspace("u2", "a1", "s1")
        ids = {w.sandbox_id for w in (first, other_agent, other_user)}
        assert len(ids) == 3
        sandbox_id = first.sandbox_id
        assert sandbox_id is not None
        record = local_e2b.sandboxes[sandbox_id]
        assert record.metadata["agent_id"] == "a1"
        assert record.metadata["user_id"] == "u1"

        async with manager.lease("u1", "a1", "s1"):
            clock.now = 61
            evicted = await manager.evict_idle()
        assert {(k.user_id, k.workspace_id) for k in evicted} == {("u1", "a2"), ("u2", "a1")}
        assert first.is_open  # leased: kept
        clock.now = 200
        assert [(k.user_id, k.workspace_id) for k in await manager.evict_idle()] == [("u1", "a1")]
        assert record.state == "paused"
        assert not first.is_open

        again = await manager.get_workspace("u1", "a1", "s3")
        assert again is not first
        assert again.sandbox_id == sandbox_id  # resumed with its disk
        assert record.state == "running"
    assert record.state == "paused"  # leaving the manager closed it


async def test_kill_on_close_deletes_the_sandbox(
    local_e2b: LocalE2B, e2b_options: dict[str, Any]
) -> None:
    clock = Clock()
    async with E2BWorkspaceManager(ttl=1, on_close="kill", clock=clock, **e2b_options) as manager:
        workspace = await manager.get_workspace("u9", "a9", "s")
        sandbox_id = workspace.sandbox_id
        clock.now = 5
        await manager.evict_idle()
    assert sandbox_id not in local_e2b.sandboxes
