"""`SandboxWorkspace`: a local workspace whose tools and MCP servers run under bubblewrap.

The built-in tools run in a tool host process inside the sandbox (see `workspaces._bwrap` for
what it can see) and stdio MCP servers are started inside it too; the workspace's own
bookkeeping (skills, offloads, the `.mcp` file) stays host-side, as in `LocalWorkspace`.
Limits: per process (`setrlimit`: address space, file size, open files, CPU seconds per
command), for the workspace's disk (a watched quota on the calls that write) and, where cgroups
can be created, for the whole workspace (memory, processes).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from agent_core.mcp import MCPClientConfig
from agent_core.mcp.config import StdioMCPConfig
from agent_core.tool import ToolBase
from agent_core.tool.builtin.runner import workspace_tools
from agent_core.tool.execution import ToolExecutor
from workspaces._bwrap import bwrap_argv, bwrap_path, python_dirs
from workspaces._cgroups import CgroupBudget
from workspaces._env import agent_environment
from workspaces._quota import DiskQuota

if TYPE_CHECKING:
    from agent_core.mcp.client import Launcher
from workspaces.errors import SandboxUnavailable
from workspaces.limits import WorkspaceLimits
from workspaces.local import BOOKKEEPING, LocalWorkspace
from workspaces.toolhost import ToolHostProcess, toolhost_command

log = logging.getLogger(__name__)


class SandboxPolicy(WorkspaceLimits):
    """What a sandboxed workspace may use."""

    network: bool = Field(default=False, description="Give tools the host's network.")


def sandbox_available() -> str | None:
    """Why the bubblewrap sandbox cannot be used here, or None when it can."""
    if bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed"
    return None


class SandboxWorkspace(LocalWorkspace):
    """A workspace directory whose tools and stdio MCP servers run under bubblewrap.

    Only the workspace directory is writable (and visible among the host's data); the server's
    environment, files, other workspaces, Redis and the network are out of reach.
    """

    def __init__(
        self,
        workdir: str | Path,
        workspace_id: str | None = None,
        *,
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        policy: SandboxPolicy | None = None,
    ) -> None:
        """Describe the workspace; nothing is touched until `initialize()`.

        Args:
            workdir: The workspace directory (created if missing).
            workspace_id: Its identifier (default: the directory's name).
            default_mcps: MCP servers registered in a brand-new workspace.
            skill_paths: Skill directories installed in a brand-new workspace.
            policy: Limits and network access (default: `SandboxPolicy()`).

        Raises:
            SandboxUnavailable: bubblewrap is not installed.
        """
        self.policy = policy or SandboxPolicy()
        why = sandbox_available()
        if why is not None:
            raise SandboxUnavailable(why)
        super().__init__(workdir, workspace_id, default_mcps=default_mcps, skill_paths=skill_paths)
        self.env = agent_environment(str(self.workdir))
        self._budget: CgroupBudget | None = None
        self.isolation_notes: list[str] = []
        self._host = self._tool_host()

    def _tool_host(self) -> ToolHostProcess:
        return ToolHostProcess(
            self._argv(self._tool_host_command(), str(self.workdir)),
            env=agent_environment(str(self.workdir)),
        )

    def _tool_host_command(self) -> list[str]:
        policy = self.policy
        limits = {
            "as": policy.memory_bytes,
            "fsize": policy.file_bytes,
            "nofile": policy.open_files,
        }
        if self._budget is None:
            limits["nproc"] = policy.max_processes
        return toolhost_command(
            sys.executable,
            agent_env=agent_environment(str(self.workdir)),
            limits=limits,
            child_limits={"cpu": policy.cpu_seconds},
        )

    def _argv(
        self, command: Sequence[str], cwd: str, extra_env: dict[str, str] | None = None
    ) -> list[str]:
        env = agent_environment(str(self.workdir), extra_env)
        code = [d for d in python_dirs() if Path(d).name in ("agent_core", "workspaces")]
        if code:
            env["PYTHONPATH"] = str(Path(code[0]).parent)
        argv = bwrap_argv(
            command,
            workdir=str(self.workdir),
            cwd=cwd,
            env=env,
            network=self.policy.network,
            tmp_bytes=self.policy.tmp_bytes,
            readonly=python_dirs(),
            protected=[str(self.workdir / name) for name in BOOKKEEPING],
        )
        return argv if self._budget is None else self._budget.wrap(argv)

    def _mcp_launcher(self) -> Launcher:
        def launch(config: StdioMCPConfig) -> StdioMCPConfig:
            cwd = config.cwd or str(self.workdir)
            argv = self._argv([config.command, *config.args], cwd, config.env)
            return StdioMCPConfig(command=argv[0], args=argv[1:], env={}, cwd=None)

        return launch

    async def initialize(self) -> None:
        """Create the layout, the workspace's cgroups (when possible) and connect MCP servers."""
        if self.is_open:
            return
        try:
            self._budget = await asyncio.to_thread(
                CgroupBudget.create,
                self.workspace_id,
                memory_bytes=self.policy.memory_bytes,
                max_processes=self.policy.max_processes,
            )
        except OSError as exc:
            note = f"no per-workspace cgroup ({exc}); per-process limits only"
            self.isolation_notes = [note]
            log.warning("workspace %s: %s", self.workspace_id, note)
        self._host = self._tool_host()
        await asyncio.to_thread(self._unplant)
        await super().initialize()

    def tool_executor(self) -> ToolExecutor:
        """Calls run in the sandbox's tool host."""
        return self._host

    def builtin_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """The built-in tools bound to `working_directory(cwd)`, run inside the sandbox."""
        where = self.working_directory(cwd)
        quota = DiskQuota(self._host, self.workdir, self.policy.disk_bytes)
        return [tool.bind(quota) for tool in workspace_tools(where)]

    async def close(self) -> None:
        """Disconnect MCP servers, stop the tool host and release the cgroups."""
        await super().close()
        await self._host.restart()
        if self._budget is not None:
            await asyncio.to_thread(self._budget.remove)

    def __repr__(self) -> str:
        return f"SandboxWorkspace({str(self.workdir)!r}, workspace_id={self.workspace_id!r})"
