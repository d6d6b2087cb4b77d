"""The `docker` and `e2b` workspace backends as the service configures them (no daemon needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from actors.settings import RuntimeSettings
from actors.workspaces.backends import resolve_backend, workspace_health, workspace_manager
from actors.workspaces.ray_service import placement_key
from actors.workspaces.requests import WorkspaceRequest
from serve.cli import main
from workspaces.docker import DockerWorkspace, DockerWorkspaceManager, ReadOnlyMount
from workspaces.e2b import E2BWorkspaceManager
from workspaces.errors import DockerUnavailable, E2BUnavailable


def docker(tmp_path: Path, **overrides: Any) -> RuntimeSettings:
    return RuntimeSettings(
        redis_url="redis://unused",
        workspace_root=str(tmp_path / "root"),
        workspace_backend="docker",
        **overrides,
    )


def test_the_docker_backend_gets_a_docker_manager_from_the_settings(tmp_path: Path) -> None:
    settings = docker(
        tmp_path,
        docker_url="unix:///run/other.sock",
        docker_image="img:1",
        docker_python="/usr/bin/python3.12",
        docker_mounts=[ReadOnlyMount(source="/opt/tools", target="/tools")],
        workspace_ttl=60,
    )

    manager = workspace_manager(settings)  # no daemon is asked: it may come later

    assert isinstance(manager, DockerWorkspaceManager)
    assert manager.docker_url == "unix:///run/other.sock"
    assert manager.image == "img:1"
    assert manager.python == "/usr/bin/python3.12"
    assert manager.mounts == [ReadOnlyMount(source="/opt/tools", target="/tools")]
    assert (manager.basedir, manager.ttl) == (Path(settings.workspace_root), 60)
    assert manager.policy.network == "none"
    workspace = manager._new_workspace(manager.key("alice", "agent-1", "s1"))
    assert isinstance(workspace, DockerWorkspace)
    assert workspace.host_workdir == Path(settings.workspace_root) / "alice" / "agent-1"


@pytest.mark.parametrize(
    ("overrides", "network"),
    [
        ({}, "none"),
        ({"workspace_network": True}, "bridge"),
        ({"workspace_network": True, "docker_network": "agents"}, "agents"),
    ],
)
def test_the_containers_network(tmp_path: Path, overrides: dict[str, Any], network: str) -> None:
    manager = workspace_manager(docker(tmp_path, **overrides))
    assert isinstance(manager, DockerWorkspaceManager)
    assert manager.policy.network == network


@pytest.mark.parametrize("network", ["host", "container:redis"])
def test_a_shared_network_namespace_is_refused(tmp_path: Path, network: str) -> None:
    with pytest.raises(ValidationError, match="would share another namespace"):
        docker(tmp_path, docker_network=network)


@pytest.mark.parametrize("workspace_id", [None, "shared", "../other"])
def test_the_managers_key_is_the_services_placement_key(
    tmp_path: Path, workspace_id: str | None
) -> None:
    manager = workspace_manager(docker(tmp_path))
    request = WorkspaceRequest(
        user_id="alice", agent_id="agent-1", session_id="s1", workspace_id=workspace_id
    )

    key = manager.key(request.user_id, request.agent_id, request.session_id, workspace_id)

    # One placement, one container: the node the placement names serves exactly this key.
    assert json.loads(placement_key(request)) == [key.user_id, key.workspace_id]
    other_session = manager.key("alice", "agent-1", "s2", workspace_id)
    assert other_session == key
    assert manager.key("bob", "agent-1", "s1", workspace_id) != key


def test_the_settings_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TROUPE_WORKSPACE_BACKEND", "docker")
    monkeypatch.setenv("TROUPE_DOCKER_URL", "tcp://docker.internal:2375")
    monkeypatch.setenv("TROUPE_DOCKER_IMAGE", "registry/troupe-ws:2")
    monkeypatch.setenv("TROUPE_DOCKER_PYTHON", "python3.12")
    monkeypatch.setenv("TROUPE_DOCKER_NETWORK", "agents")
    monkeypatch.setenv("TROUPE_DOCKER_MOUNTS", "/opt/tools, /srv/ref:/ref")

    settings = RuntimeSettings.from_env("redis://unused")

    assert settings.workspace_backend == "docker"
    assert settings.docker_url == "tcp://docker.internal:2375"
    assert settings.docker_image == "registry/troupe-ws:2"
    assert settings.docker_python == "python3.12"
    assert settings.docker_network == "agents"
    assert settings.docker_mounts == [
        ReadOnlyMount(source="/opt/tools", target="/opt/tools"),
        ReadOnlyMount(source="/srv/ref", target="/ref"),
    ]
    # Shipped to the workspace actors as JSON: they rebuild the same settings.
    assert RuntimeSettings.model_validate_json(settings.model_dump_json()) == settings


def test_the_defaults_ask_the_local_daemon_for_the_dockerfiles_image(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("URL", "IMAGE", "PYTHON", "NETWORK", "MOUNTS"):
        monkeypatch.delenv(f"TROUPE_DOCKER_{name}", raising=False)
    settings = docker(tmp_path)
    assert settings.docker_url is None  # DOCKER_HOST or the local socket, where it runs
    assert (settings.docker_image, settings.docker_python) == ("troupe-workspace:latest", "python3")
    assert (settings.docker_network, settings.docker_mounts) == (None, [])


def test_an_unreachable_daemon_is_a_start_up_error_and_unhealthy(tmp_path: Path) -> None:
    socket = tmp_path / "docker.sock"
    settings = docker(tmp_path, docker_url=f"unix://{socket}")

    with pytest.raises(DockerUnavailable) as raised:
        resolve_backend(settings)

    message = str(raised.value)
    assert message.startswith("workspace backend 'docker': cannot reach the Docker daemon at ")
    assert str(socket) in message
    assert workspace_health(settings) == f"unavailable: {message}"


def test_troupe_serve_refuses_to_start_without_a_daemon(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TROUPE_DOCKER_URL", f"unix://{tmp_path}/docker.sock")
    monkeypatch.setenv("TROUPE_WORKSPACE_ROOT", str(tmp_path / "root"))

    with pytest.raises(SystemExit) as exited:
        main(["serve", "--workspace-backend", "docker", "--redis-url", "redis://unused"])

    assert exited.value.code == 2
    assert "troupe: workspace backend 'docker': cannot reach the Docker daemon" in (
        capsys.readouterr().err
    )


def test_the_e2b_backend_gets_an_e2b_manager_from_the_settings(tmp_path: Path) -> None:
    settings = RuntimeSettings(
        redis_url="redis://unused",
        workspace_root=str(tmp_path),
        workspace_backend="e2b",
        e2b_api_key="e2b-key",
        e2b_domain="e2b.example.test",
        e2b_template="troupe-tools",
        workspace_ttl=120.0,
    )
    assert resolve_backend(settings) == ("e2b", None)
    assert workspace_health(settings) == "ok (e2b)"
    manager = workspace_manager(settings)
    assert isinstance(manager, E2BWorkspaceManager)
    assert (manager.template, manager.ttl) == ("troupe-tools", 120.0)
    assert "e2b-key" not in repr(settings)


def test_the_e2b_backend_without_a_key_is_a_start_up_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("E2B_API_KEY", "TROUPE_E2B_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    settings = RuntimeSettings(
        redis_url="redis://unused", workspace_root=str(tmp_path), workspace_backend="e2b"
    )
    with pytest.raises(E2BUnavailable, match="E2B_API_KEY"):
        resolve_backend(settings)
    assert workspace_health(settings).startswith("unavailable: ")
