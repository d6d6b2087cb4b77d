"""The service with `workspace_backend="docker"`: a chat turn's tools run in a container."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app
from tests.integration.docker._helpers import containers
from tests.support.api import USER, chat_and_collect, make_session, tool_results
from tests.support.asgi_server import served
from tests.support.docker import DockerDaemon, image_mounts
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

pytestmark = [pytest.mark.docker, pytest.mark.integration, pytest.mark.redis]


def docker_settings(
    redis_url: str, root: Path, daemon: DockerDaemon, image: str
) -> RuntimeSettings:
    return RuntimeSettings(
        redis_url=redis_url,
        workspace_root=str(root),
        workspace_backend="docker",
        docker_url=daemon.url,
        docker_image=image,
        docker_python=sys.executable,
        docker_mounts=image_mounts(),
    )


async def service(settings: RuntimeSettings) -> AsyncIterator[httpx.AsyncClient]:
    """The API of `settings` with sessions in-process, over real HTTP (its streams stream)."""
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
    async with served(app) as base_url, httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        yield client


@pytest.fixture
def settings(
    redis_url: str, tmp_path: Path, docker_daemon: DockerDaemon, docker_image: str
) -> RuntimeSettings:
    return docker_settings(redis_url, tmp_path / "root", docker_daemon, docker_image)


@pytest.fixture
async def api(settings: RuntimeSettings) -> AsyncIterator[httpx.AsyncClient]:
    async for client in service(settings):
        yield client


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(default_text="done") as server:
        yield server


async def test_a_chat_turns_bash_call_runs_in_the_workspace_container(
    api: httpx.AsyncClient, settings: RuntimeSettings, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    # BYPASS: nothing asks (`hostname` is not auto-allowed), the container alone confines.
    patched = await api.patch(
        f"/sessions/{session_id}", json={"permission_mode": "bypass"}, headers=USER
    )
    assert patched.status_code == 200, patched.text
    model.push(ScriptedReply(tool_calls=[("c1", "Bash", {"command": "hostname; pwd"})]))

    frames = (await chat_and_collect(api, agent_id, session_id, "go"))[0]

    [result] = tool_results(frames)
    [container] = await containers(settings.docker_url or "", agent_id)
    # Docker names the host after the container.
    assert result.splitlines() == [str(container["Id"])[:12], "/workspace"]
    # The container serves the workspace the service places: the user's, named by the agent.
    [mounted] = [m for m in container["Mounts"] if m["Destination"] == "/workspace"]
    assert mounted["Source"] == str(Path(settings.workspace_root) / "alice" / agent_id)
    assert "/workspace" in json.dumps(model.requests[0].body["messages"][0])


async def test_health_reports_the_docker_backend(
    api: httpx.AsyncClient,
    redis_url: str,
    tmp_path: Path,
    docker_daemon: DockerDaemon,
) -> None:
    body = (await api.get("/health")).json()
    assert body["status"] == "ok"
    assert body["components"]["redis"] == "ok"
    assert body["components"]["workspaces"] == "ok (docker)"

    missing = docker_settings(redis_url, tmp_path / "other", docker_daemon, "no-such-image:1")
    async for other in service(missing):
        body = (await other.get("/health")).json()
    assert body["status"] == "degraded"
    assert body["components"]["workspaces"].startswith("unavailable: workspace backend 'docker'")
    assert "'no-such-image:1' is not on the Docker daemon" in body["components"]["workspaces"]
