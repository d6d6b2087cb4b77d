"""Workspace views over Ray: reused between replies, opened again after a change or a crash."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import ray

from actors._remote.workspace_actor import workspace_actor_name
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from actors.workspaces.ray_service import RayWorkspaceService
from actors.workspaces.requests import SkillBundle, WorkspaceRequest, WorkspaceView
from agent_core.tool.execution import ToolInvocation
from tests.support.tool_calls import eventually

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

NAMESPACE = "troupe-test"


@pytest.fixture
def settings(ray_local: None, redis_server: EmbeddedRedis, tmp_path: Path) -> RuntimeSettings:
    return RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace=NAMESPACE,
        workspace_root=str(tmp_path / "root"),
        workspace_backend="local",
    )


@pytest.fixture
async def service(settings: RuntimeSettings) -> AsyncIterator[RayWorkspaceService]:
    workspaces = RayWorkspaceService(settings)
    yield workspaces
    await workspaces.aclose()


@pytest.fixture
def request_() -> WorkspaceRequest:
    return WorkspaceRequest(user_id="alice", agent_id=f"a-{uuid.uuid4().hex[:8]}", session_id="s1")


def skill_text(name: str) -> str:
    return f"---\nname: {name}\ndescription: a skill\n---\n\n# {name}\n"


def skills(view: WorkspaceView) -> set[str]:
    return {skill.name for skill in view.skills}


def write_by_hand(view: WorkspaceView, name: str) -> None:
    """A skill made on the node's disk, behind the workspace host's back."""
    directory = Path(view.workdir) / "skills" / name
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(skill_text(name))


async def cached_without(service: RayWorkspaceService, request: WorkspaceRequest) -> str:
    """Open until a view comes from the cache: it misses a skill made by hand before it.

    Returns the name of that skill.
    """
    for attempt in range(5):
        view = await service.open(request, None)
        name = f"by-hand-{attempt}"
        write_by_hand(view, name)
        if name not in skills(await service.open(request, None)):
            return name
    raise AssertionError("views were never reused")


async def test_a_view_is_opened_again_once_its_workspace_actor_died(
    service: RayWorkspaceService, request_: WorkspaceRequest
) -> None:
    made = await cached_without(service, request_)
    actor = ray.get_actor(
        workspace_actor_name(ray.get_runtime_context().get_node_id()), namespace=NAMESPACE
    )
    pid = await actor.pid.remote()
    os.kill(pid, signal.SIGKILL)

    async def restarted() -> bool:
        try:
            return bool(await actor.pid.remote() != pid)
        except ray.exceptions.RayActorError:
            return False

    assert await eventually(restarted)
    view = await service.open(request_, None)
    assert made in skills(view)


async def test_changes_through_the_service_show_in_the_next_view(
    settings: RuntimeSettings, service: RayWorkspaceService, request_: WorkspaceRequest
) -> None:
    await cached_without(service, request_)
    bundle = SkillBundle.pack({"SKILL.md": skill_text("added").encode()})
    await service.add_skill(request_, bundle)
    assert "added" in skills(await service.open(request_, None))

    view = await service.open(request_, None)
    command = f"mkdir -p skills/ran && printf -- '{skill_text('ran')}' > skills/ran/SKILL.md"
    invocation = ToolInvocation(tool="Bash", cwd=view.cwd, arguments={"command": command})
    [output async for output in service.execute(request_, invocation)]
    assert "ran" in skills(await service.open(request_, None))


async def test_a_change_made_from_another_process_reaches_the_views(
    settings: RuntimeSettings, service: RayWorkspaceService, request_: WorkspaceRequest
) -> None:
    await service.add_skill(request_, SkillBundle.pack({"SKILL.md": skill_text("old").encode()}))
    await cached_without(service, request_)
    assert "old" in skills(await service.open(request_, None))
    other = RayWorkspaceService(settings)  # as an API replica would
    try:
        await other.remove_skill(request_, "old")
    finally:
        await other.aclose()

    async def removed() -> bool:
        return "old" not in skills(await service.open(request_, None))

    assert await eventually(removed, within=10.0)
