"""A docker-backed `WorkspaceActor` over Ray: the service's workspace calls run in a container."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import ray
import redis

from actors._remote.workspace_actor import workspace_actor_name
from actors.bus.keys import Keys
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from actors.workspaces.ray_service import RayWorkspaceService, placement_key
from actors.workspaces.requests import WorkspaceRequest
from agent_core.tool.execution import ToolInvocation
from tests.integration.docker._helpers import containers, remove_containers
from tests.support.docker import DockerDaemon, image_mounts
from tests.support.tool_calls import text

pytestmark = [pytest.mark.docker, pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

NAMESPACE = "troupe-docker-test"


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, namespace=NAMESPACE)
    yield
    ray.shutdown()


@pytest.fixture
def settings(
    ray_cluster: None,
    redis_server: EmbeddedRedis,
    tmp_path: Path,
    docker_daemon: DockerDaemon,
    docker_image: str,
) -> RuntimeSettings:
    return RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace=NAMESPACE,
        workspace_root=str(tmp_path / "root"),
        workspace_backend="docker",
        docker_url=docker_daemon.url,
        docker_image=docker_image,
        docker_python=sys.executable,
        docker_mounts=image_mounts(),
    )


@pytest.fixture
async def service(settings: RuntimeSettings) -> AsyncIterator[RayWorkspaceService]:
    workspaces = RayWorkspaceService(settings)
    try:
        yield workspaces
    finally:
        await workspaces.aclose()


@pytest.fixture
async def workspace_request(settings: RuntimeSettings) -> AsyncIterator[WorkspaceRequest]:
    """A workspace request; its container goes at the end (the detached actor keeps it up)."""
    agent_id = f"agent-{uuid.uuid4().hex[:8]}"
    yield WorkspaceRequest(user_id="alice", agent_id=agent_id, session_id="s1")
    await remove_containers(settings.docker_url or "", agent_id)


def placed_on(settings: RuntimeSettings, request: WorkspaceRequest) -> str:
    client = redis.Redis.from_url(settings.redis_url)
    try:
        raw = client.hget(Keys(settings.key_prefix).workspace_placement(), placement_key(request))
    finally:
        client.close()
    assert raw is not None
    return str(json.loads(raw)["node"])


async def test_the_workspace_actor_runs_tools_in_the_workspaces_container(
    settings: RuntimeSettings, service: RayWorkspaceService, workspace_request: WorkspaceRequest
) -> None:
    request = workspace_request
    view = await service.open(request, None)
    invocation = ToolInvocation(
        tool="Bash", cwd=view.cwd, arguments={"command": "hostname; pwd; echo made > made.txt"}
    )
    outputs = [output async for output in service.execute(request, invocation)]

    chunks = [output.chunk for output in outputs if output.chunk is not None]
    [container] = await containers(settings.docker_url or "", request.agent_id)
    assert text(chunks).splitlines() == [str(container["Id"])[:12], "/workspace"]
    assert view.workdir == "/workspace"
    workdir = Path(settings.workspace_root) / "alice" / request.agent_id
    assert (workdir / "made.txt").read_text() == "made\n"
    # Served by the WorkspaceActor of the node its placement names (the only node here).
    node = placed_on(settings, request)
    assert node == ray.get_runtime_context().get_node_id()
    actor = ray.get_actor(workspace_actor_name(node), namespace=NAMESPACE)
    assert await actor.node_id.remote() == node
