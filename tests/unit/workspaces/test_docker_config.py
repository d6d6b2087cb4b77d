"""What a DockerWorkspace asks Docker for, checked without a daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from workspaces._env import agent_environment
from workspaces.docker import DockerPolicy, DockerWorkspace, ReadOnlyMount, container_config
from workspaces.errors import DockerUnavailable, WorkspaceClosed


def test_the_container_is_locked_down() -> None:
    policy = DockerPolicy(memory_bytes=512 * 2**20, max_processes=64, cpus=0.5)
    config = container_config(
        image="img",
        workspace_id="w",
        host_workdir=Path("/data/u/a"),
        runtime_dir=Path("/tmp/gw"),
        user="1000:1000",
        env=agent_environment("/workspace"),
        policy=policy,
        mounts=[ReadOnlyMount(source="/opt/tools", target="/opt/tools")],
    )
    host = config["HostConfig"]
    assert host["Binds"] == [
        "/data/u/a:/workspace:rw",
        # The bookkeeping the server reads and writes, read-only over the workspace.
        "/data/u/a/.mcp:/workspace/.mcp:ro",
        "/data/u/a/data:/workspace/data:ro",
        "/data/u/a/skills:/workspace/skills:ro",
        "/data/u/a/sessions:/workspace/sessions:ro",
        "/tmp/gw:/run/troupe:rw",
        "/opt/tools:/opt/tools:ro",
    ]
    assert "/dev" in host["ReadonlyPaths"]
    assert "/proc/sys" in host["ReadonlyPaths"]  # Docker's defaults are kept
    assert host["ShmSize"] == policy.tmp_bytes
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"]
    assert host["ReadonlyRootfs"] is True
    assert (host["Memory"], host["MemorySwap"]) == (512 * 2**20, 512 * 2**20)
    assert (host["PidsLimit"], host["NanoCpus"]) == (64, 500_000_000)
    assert "no-new-privileges" in host["SecurityOpt"]
    assert config["User"] == "1000:1000"
    assert "HOME=/workspace" in config["Env"]
    assert not any(entry.startswith(("TROUPE_", "RAY_")) for entry in config["Env"])


@pytest.mark.parametrize("network", ["host", "container:other"])
def test_shared_namespaces_are_refused(network: str) -> None:
    with pytest.raises(ValidationError, match="would share another namespace"):
        DockerPolicy(network=network)


def test_mounts_must_be_absolute() -> None:
    with pytest.raises(ValidationError):
        ReadOnlyMount(source="relative", target="/x")


def test_nothing_happens_before_initialize(tmp_path: Path) -> None:
    workspace = DockerWorkspace(tmp_path / "ws", docker_url="unix:///nonexistent.sock")
    assert workspace.workdir == Path("/workspace")
    assert workspace.host_workdir == tmp_path / "ws"
    assert not workspace.host_workdir.exists()
    with pytest.raises(WorkspaceClosed):
        workspace.builtin_tools()
    ephemeral = DockerWorkspace()
    assert ephemeral.ephemeral
    assert not ephemeral.host_workdir.exists()


async def test_an_unreachable_daemon_is_a_clear_error(tmp_path: Path) -> None:
    workspace = DockerWorkspace(tmp_path / "ws", docker_url=f"unix://{tmp_path}/none.sock")
    with pytest.raises(DockerUnavailable, match="cannot reach the Docker daemon"):
        await workspace.initialize()
    assert not workspace.is_open
