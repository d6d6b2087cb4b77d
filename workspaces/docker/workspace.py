"""`DockerWorkspace`: a workspace whose tools and MCP servers run in a Docker container.

The host directory `host_workdir` is bind-mounted at `/workspace`, the only writable place
besides a private `/tmp`: the container has a read-only root, no capabilities, no network
(by default), and cgroup limits on memory, processes and CPU. The agent sees container paths
only: `workdir`, working directories, offloaded files and skills are named under `/workspace`,
so that what the model reads, what the permission checks compare and what the tools open
agree (the host's layout never reaches the model). The bookkeeping (`.mcp`, skills, offloads)
stays host-side on the same files, as in `LocalWorkspace`, and the container sees it read-only
(bound over the writable directory), so that the agent cannot plant a file or symlink the
server then follows. The private `/dev` is read-only too, `/dev/shm` as small as `/tmp`, and a
disk quota is kept around the calls that write (see `workspaces._quota`).

Inside the container run two processes started with `docker exec`: the tool host (`python -m
workspaces.toolhost`, spoken to over the exec's attached stdio) running the built-in tools,
and the MCP gateway (`python -m workspaces.gateway.app`) owning the MCP servers. The gateway
listens on a unix socket in a private host directory bind-mounted at `/run/troupe`: with no
network there is no port to publish, and a socket costs one connection per request where
relaying through `docker exec` would cost a process per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import shutil
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiodocker
import aiohttp
from aiodocker.containers import DockerContainer
from aiodocker.exceptions import DockerError

from agent_core.mcp import MCPClient, MCPClientConfig
from agent_core.tool import ToolBase
from agent_core.tool.builtin.runner import workspace_tools
from agent_core.tool.execution import ToolExecutor
from workspaces._env import agent_environment
from workspaces._quota import DiskQuota
from workspaces._remote_tools import RemoteTools
from workspaces.docker._exec import ExecChannel
from workspaces.docker.image import ImageRecipe, ensure_image
from workspaces.docker.policy import DEFAULT_IMAGE, DockerPolicy, ReadOnlyMount
from workspaces.errors import DockerUnavailable, WorkspaceClosed, WorkspaceError
from workspaces.gateway.client import GatewayConnection
from workspaces.gateway.protocol import SOCKET_NAME
from workspaces.local import BOOKKEEPING, LocalWorkspace
from workspaces.toolhost import ToolHost, ToolHostChannel, toolhost_command

log = logging.getLogger(__name__)

CONTAINER_WORKDIR = Path("/workspace")
"""Where the workspace directory is mounted in the container, and how the agent names it."""

RUNTIME_DIR = "/run/troupe"
"""Where the gateway's socket directory is mounted in the container."""

# The status aiodocker gives a request that never reached the daemon.
_UNREACHABLE = 900
# Docker's default read-only paths, and the container's private /dev (its device nodes stay
# usable; /dev/shm is a mount of its own and stays writable).
_READONLY_PATHS = (
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/dev",
)


def container_config(
    *,
    image: str,
    workspace_id: str,
    host_workdir: Path,
    runtime_dir: Path,
    user: str,
    env: dict[str, str],
    policy: DockerPolicy,
    mounts: Sequence[ReadOnlyMount],
) -> dict[str, Any]:
    """The Docker API's container-create body for a workspace.

    Args:
        image: The image (Python >= 3.11 with Troupe installed).
        workspace_id: Labels the container.
        host_workdir: Mounted read-write at `/workspace`, its bookkeeping (`BOOKKEEPING`,
            which must exist and not be symlinks) read-only over it.
        runtime_dir: Mounted read-write at `/run/troupe` (the gateway's socket).
        user: `uid:gid` of every process in the container.
        env: The container's whole environment (over the image's).
        policy: Network and limits.
        mounts: Extra read-only mounts.
    """
    binds = [
        f"{host_workdir}:{CONTAINER_WORKDIR}:rw",
        *(f"{host_workdir / name}:{CONTAINER_WORKDIR / name}:ro" for name in BOOKKEEPING),
        f"{runtime_dir}:{RUNTIME_DIR}:rw",
        *(f"{m.source}:{m.target}:ro" for m in mounts),
    ]
    ulimits = [
        {"Name": "nofile", "Soft": policy.open_files, "Hard": policy.open_files},
        {"Name": "fsize", "Soft": policy.file_bytes, "Hard": policy.file_bytes},
    ]
    return {
        "Image": image,
        "Cmd": ["sleep", "infinity"],
        "WorkingDir": str(CONTAINER_WORKDIR),
        "User": user,
        "Env": [f"{key}={value}" for key, value in env.items()],
        "Labels": {"troupe.workspace": workspace_id},
        "HostConfig": {
            "Binds": binds,
            "NetworkMode": policy.network,
            "Memory": policy.memory_bytes,
            "MemorySwap": policy.memory_bytes,
            "PidsLimit": policy.max_processes,
            "NanoCpus": int(policy.cpus * 1e9),
            "Ulimits": ulimits,
            "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges"],
            "ReadonlyRootfs": True,
            "Tmpfs": {"/tmp": f"rw,nosuid,nodev,size={policy.tmp_bytes}"},
            "ShmSize": policy.tmp_bytes,
            "ReadonlyPaths": list(_READONLY_PATHS),
            "Init": True,
        },
    }


class DockerWorkspace(LocalWorkspace):
    """A workspace directory whose tools and MCP servers run in its own Docker container.

    Without a `workdir` the workspace is ephemeral: its files live in a private host
    directory that `close()` deletes with the container.
    """

    env: dict[str, str]
    """The environment of everything that runs in the container."""

    def __init__(
        self,
        workdir: str | Path | None = None,
        workspace_id: str | None = None,
        *,
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        policy: DockerPolicy | None = None,
        image: str = DEFAULT_IMAGE,
        python: str = "python3",
        mounts: Sequence[ReadOnlyMount] = (),
        docker_url: str | None = None,
        user: str | None = None,
        base_image: str | None = None,
        node_version: str | None = None,
        extra_pip: Sequence[str] = (),
        install_troupe: bool = True,
    ) -> None:
        """Describe the workspace; nothing is touched until `initialize()`.

        Args:
            workdir: The host directory mounted at `/workspace` (created if missing); None
                for an ephemeral workspace.
            workspace_id: Its identifier (default: the directory's name, or a fresh one).
            default_mcps: MCP servers registered in a brand-new workspace.
            skill_paths: Skill directories installed in a brand-new workspace.
            policy: Network and limits (default: `DockerPolicy()`).
            image: The container image: Python >= 3.11 with Troupe installed.
            python: The interpreter in the image that runs the tool host and the gateway.
            mounts: Extra host directories shown read-only in the container.
            docker_url: The Docker daemon (default: `DOCKER_HOST` or the local socket).
            user: `uid:gid` in the container (default: this process's, so that files in
                `workdir` stay owned by it).
            base_image: Build the image from this one instead (e.g. `python:3.11-slim`):
                at `initialize()`, Troupe, Node.js and `extra_pip` are added to it, and the
                result is kept under a tag hashing the recipe for the next workspace.
            node_version: Node.js major version to add (Debian-based images).
            extra_pip: Requirements to pip install in the image.
            install_troupe: Whether the built image installs Troupe (False when `base_image`
                already has it). Without `base_image`, node and pip extras are added to
                `image`, which has Troupe.

        Raises:
            ValueError: `base_image`, `node_version` or `extra_pip` is malformed.
        """
        self.ephemeral = workdir is None
        if workdir is None:
            workdir = Path(tempfile.gettempdir()) / f"troupe-workspace-{uuid.uuid4().hex}"
        super().__init__(workdir, workspace_id, default_mcps=default_mcps, skill_paths=skill_paths)
        self.workdir = CONTAINER_WORKDIR
        self.policy = policy or DockerPolicy()
        self.image = image
        self.python = python
        self.recipe: ImageRecipe | None = None
        """What to build at `initialize()` (None: run `image` as it is)."""
        if base_image is not None or node_version is not None or extra_pip:
            self.recipe = ImageRecipe(
                base_image=base_image or image,
                node_version=node_version,
                extra_pip=tuple(extra_pip),
                install_troupe=install_troupe and base_image is not None,
                python=python,
            )
        self.mounts = list(mounts)
        self.docker_url = docker_url
        self.user = user or f"{os.getuid()}:{os.getgid()}"
        self.env = agent_environment(str(CONTAINER_WORKDIR))
        self.isolation_notes: list[str] = []
        self.start_seconds: float | None = None
        """How long the last `initialize()` took (container and gateway up, MCPs synced)."""
        self._docker: aiodocker.Docker | None = None
        self._container: DockerContainer | None = None
        self._runtime_dir: Path | None = None
        self._remote = RemoteTools(self.workspace_id)

    @property
    def container_id(self) -> str | None:
        """The running container's id, while the workspace is open."""
        return None if self._container is None else self._container.id

    async def initialize(self) -> None:
        """Start the container and its gateway, then open the workspace as `LocalWorkspace` does.

        Raises:
            DockerUnavailable: The daemon cannot be reached, the image is missing, or the
                container or its gateway fails to start.
            CorruptWorkspace: `.mcp` is not a JSON array.
        """
        if self.is_open:
            return
        started = time.monotonic()
        try:
            await self._start_container()
            tool_host = self._remote.tool_host = ToolHost(self._open_tool_host)
            # Started now, it loads while the gateway does: the first tool call needs no wait.
            try:
                await tool_host.start()
            except WorkspaceError as exc:
                raise DockerUnavailable(f"cannot start the tool host: {exc}") from exc
            await self._start_gateway()
            await super().initialize()
        except BaseException:
            await self._teardown()
            raise
        self.start_seconds = time.monotonic() - started

    async def _start_container(self) -> None:
        self._runtime_dir = await asyncio.to_thread(self._make_dirs)
        # `.mcp` is bound read-only: it must be a file before the container starts (Docker
        # would make a missing source a directory). Seeding again in `initialize` is a no-op.
        await self._mcps.seed(self.default_mcps)
        config = container_config(
            image=self.image,
            workspace_id=self.workspace_id,
            host_workdir=self.host_workdir,
            runtime_dir=self._runtime_dir,
            user=self.user,
            env=self.env,
            policy=self.policy,
            mounts=self.mounts,
        )
        name = f"troupe-ws-{re.sub(r'[^A-Za-z0-9_.-]', '-', self.workspace_id)[:40]}-"
        name += uuid.uuid4().hex[:8]
        try:
            self._docker = aiodocker.Docker(url=self.docker_url)
            if self.recipe is not None:
                config["Image"] = self.image = await ensure_image(self._docker, self.recipe)
            self._container = await self._docker.containers.create(config, name=name)
            await self._container.start()
        except DockerError as exc:
            if exc.status == _UNREACHABLE:
                raise DockerUnavailable(f"cannot reach the Docker daemon: {exc.message}") from exc
            raise DockerUnavailable(
                f"cannot start a container from image {self.image!r}: {exc.message}"
            ) from exc
        # aiodocker asserts (ValueError under -O) when neither DOCKER_HOST nor a socket exists.
        except (aiohttp.ClientError, OSError, ValueError, AssertionError) as exc:
            raise DockerUnavailable(f"cannot reach the Docker daemon: {exc}") from exc

    def _make_dirs(self) -> Path:
        # The bookkeeping is bound read-only into the container: it must exist (Docker would
        # create a missing source as a directory) and be no symlink (a bind follows it).
        self._unplant()
        self._prepare()
        return Path(tempfile.mkdtemp(prefix="troupe-gw-"))

    async def _start_gateway(self) -> None:
        container, runtime_dir = self._container, self._runtime_dir
        assert container is not None
        assert runtime_dir is not None
        token = secrets.token_urlsafe(32)
        argv = [self.python, "-m", "workspaces.gateway.app", "--socket"]
        argv.append(f"{RUNTIME_DIR}/{SOCKET_NAME}")
        try:
            process = await ExecChannel.start(
                container, argv, workdir=str(CONTAINER_WORKDIR), user=self.user
            )
        except WorkspaceError as exc:
            raise DockerUnavailable(str(exc)) from exc
        drain = self._remote.watch_gateway(process)
        await process.write(token.encode() + b"\n")
        gateway = GatewayConnection(runtime_dir / SOCKET_NAME, token)
        await self._remote.wait_for_gateway(gateway, drain.done, 0.05, DockerUnavailable)

    async def _open_tool_host(self) -> ToolHostChannel:
        if self._container is None:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")
        argv = toolhost_command(
            self.python,
            agent_env=self.env,
            limits={"as": self.policy.memory_bytes},
            child_limits={"cpu": self.policy.cpu_seconds},
        )
        return await ExecChannel.start(
            self._container, argv, workdir=str(CONTAINER_WORKDIR), user=self.user
        )

    def _mcp_client(self, config: MCPClientConfig) -> MCPClient:
        """A client of the server as the workspace's gateway runs it."""
        return self._remote.mcp_client(config)

    def _visible_path(self, host_path: Path) -> Path:
        """The container path of a file under `host_workdir`."""
        try:
            return self.workdir / host_path.relative_to(self.host_workdir)
        except ValueError:
            return host_path

    def _host_path(self, visible_path: Path) -> Path | None:
        """The host path of a container path under `/workspace` (None elsewhere)."""
        try:
            return self.host_workdir / visible_path.relative_to(self.workdir)
        except ValueError:
            return None

    def tool_executor(self) -> ToolExecutor:
        """Calls run in the container's tool host.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """
        host = self._remote.tool_host
        if host is None:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")
        return host

    def builtin_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """The built-in tools bound to `working_directory(cwd)`, run inside the container.

        The calls that write are kept within `policy.disk_bytes` (measured host-side).
        """
        where = self.working_directory(cwd)
        quota = DiskQuota(self.tool_executor(), self.host_workdir, self.policy.disk_bytes)
        return [tool.bind(quota) for tool in workspace_tools(where)]

    async def close(self) -> None:
        """Disconnect the MCP servers, then remove the container (and an ephemeral directory)."""
        await super().close()
        await self._teardown()

    async def _teardown(self) -> None:
        """Release whatever `initialize()` started; never raises."""
        await self._remote.aclose()
        container, self._container = self._container, None
        if container is not None:
            with contextlib.suppress(DockerError, aiohttp.ClientError):
                await container.delete(force=True, v=True)
        docker, self._docker = self._docker, None
        if docker is not None:
            await docker.close()
        runtime_dir, self._runtime_dir = self._runtime_dir, None
        if runtime_dir is not None:
            await asyncio.to_thread(shutil.rmtree, runtime_dir, True)
        if self.ephemeral:
            await asyncio.to_thread(shutil.rmtree, self.host_workdir, True)

    def __repr__(self) -> str:
        where = "ephemeral" if self.ephemeral else repr(str(self.host_workdir))
        return f"DockerWorkspace({where}, workspace_id={self.workspace_id!r})"
