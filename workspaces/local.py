"""`LocalWorkspace`: a workspace in a host directory, its tools running on the host.

Layout (`workdir` is the agent-visible root)::

    {workdir}/
    ├── .mcp        registered MCP client configs (JSON array)
    ├── data/       offloaded binary payloads, one file per SHA-256 of the content
    ├── skills/     one directory per skill, each with its SKILL.md
    │   └── .skills name/hash index (re-installing identical content copies nothing)
    └── sessions/   per session: context.jsonl and tool_result-<id>.txt files

The files are the truth, so several processes may open the same directory: each reconciles
its live MCP clients with `.mcp` whenever it lists them, and changes are made under a lock on
`workdir`. Restarting simply re-opens the directory.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_core.mcp import MCPClientConfig
from agent_core.message import Msg, ToolResultBlock
from agent_core.tool import ToolBase
from agent_core.tool.builtin.runner import WorkspaceToolRunner, workspace_tools
from agent_core.tool.execution import ToolExecutor
from workspaces._mcps import LocalArrayDocument, MCPRegistry
from workspaces._offload import OffloadStore
from workspaces._skills import SkillStore
from workspaces.base import InstalledSkill, WorkspaceBase
from workspaces.errors import WorkspaceClosed

if TYPE_CHECKING:
    from agent_core.mcp import MCPClient
    from agent_core.mcp.client import Launcher

log = logging.getLogger(__name__)

MCP_FILE = ".mcp"
DATA_DIR = "data"
SKILLS_DIR = "skills"
SESSIONS_DIR = "sessions"
BOOKKEEPING = (MCP_FILE, DATA_DIR, SKILLS_DIR, SESSIONS_DIR)
"""What the workspace itself keeps in `workdir`: isolating backends show it read-only to tools."""


class LocalWorkspace(WorkspaceBase):
    """A workspace persisted in a host directory; built-in tools run host-side.

    `default_mcps` and `skill_paths` seed a brand-new directory on its first `initialize()`
    (no `.mcp` file / no `skills/` yet); afterwards the persisted state wins.

    `host_workdir` is where the files are on this host; `workdir` is how the agent's tools
    name that directory. They are the same here; a container backend presents its own path
    (and overrides `_visible_path` / `_host_path` to translate).
    """

    def __init__(
        self,
        workdir: str | Path,
        workspace_id: str | None = None,
        *,
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Describe the workspace; nothing is touched until `initialize()`.

        Args:
            workdir: The workspace directory (created if missing).
            workspace_id: Its identifier (default: the directory's name).
            default_mcps: MCP servers registered in a brand-new workspace.
            skill_paths: Skill directories installed in a brand-new workspace.
            env: The whole environment of shell commands; None inherits this process's
                (fine for a library; a service passes a scrubbed one).
        """
        self.host_workdir = Path(os.path.abspath(Path(workdir).expanduser()))
        self.workdir = self.host_workdir
        self.workspace_id = workspace_id or self.host_workdir.name
        self.default_mcps = list(default_mcps)
        self.skill_paths = [Path(p) for p in skill_paths]
        self.env = None if env is None else dict(env)
        self._runner = WorkspaceToolRunner(env=self.env, tethered=True)
        root = self.host_workdir
        self._mcps = MCPRegistry(LocalArrayDocument(root / MCP_FILE, root), self._mcp_client)
        self._skills = SkillStore(root / SKILLS_DIR, root)
        self._offload = OffloadStore(root / SESSIONS_DIR, root / DATA_DIR, self._visible_path)
        self._open = False

    @property
    def is_open(self) -> bool:
        """Whether the workspace is initialized and not closed."""
        return self._open

    async def initialize(self) -> None:
        """Create the layout (seeding it when brand-new) and connect the MCP servers.

        Raises:
            CorruptWorkspace: `.mcp` is not a JSON array.
        """
        if self._open:
            return
        await asyncio.to_thread(self._prepare)
        await self._mcps.seed(self.default_mcps)
        await self._mcps.sync()
        self._open = True

    def _prepare(self) -> None:
        self.host_workdir.mkdir(parents=True, exist_ok=True)
        for name in (DATA_DIR, SESSIONS_DIR):
            (self.host_workdir / name).mkdir(exist_ok=True)
        self._skills.seed(self.skill_paths)

    def _unplant(self) -> None:
        """Remove symlinks standing in for the bookkeeping (planted while unsandboxed).

        Isolating backends bind the bookkeeping read-only into their sandbox, and a bind follows
        a symlink: one pointing elsewhere would show that place to the tools. Blocking.
        """
        for name in BOOKKEEPING:
            path = self.host_workdir / name
            if path.is_symlink():
                log.warning("workspace %s: removing planted symlink %s", self.workspace_id, path)
                path.unlink()

    async def close(self) -> None:
        """Disconnect every MCP server (stopping stdio server processes)."""
        self._open = False
        await self._mcps.close()

    @property
    def mcp_errors(self) -> dict[str, str]:
        """Why `.mcp` entries failed to load or connect at the last reconciliation."""
        return self._mcps.errors

    def _check_open(self) -> None:
        if not self._open:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")

    def working_directory(self, cwd: str | Path | None = None) -> Path:
        """`cwd` made absolute against `workdir` (a relative one is created if missing)."""
        self._check_open()
        if cwd is None or str(cwd) == "":
            return self.workdir
        path = Path(cwd).expanduser()
        if path.is_absolute():
            return Path(os.path.normpath(path))
        path = Path(os.path.normpath(self.workdir / path))
        host = self._host_path(path)
        if host is not None:
            host.mkdir(parents=True, exist_ok=True)
        return path

    def tool_executor(self) -> ToolExecutor:
        """Calls run in this process (shell commands get `env`)."""
        return self._runner

    def _visible_path(self, host_path: Path) -> Path:
        """How the agent's tools name a file of the workspace (here: as the host does)."""
        return host_path

    def _host_path(self, visible_path: Path) -> Path | None:
        """Where a file the agent's tools name lies on this host (None: not on this host).

        Here it is the same path.
        """
        return visible_path

    def _mcp_launcher(self) -> Launcher | None:
        """How stdio MCP servers are started (None: as configured, on the host)."""
        return None

    def _mcp_client(self, config: MCPClientConfig) -> MCPClient:
        """The client of a registered MCP server (not connected yet).

        Raises:
            MCPError: The configuration is invalid.
        """
        # Imported on first use: the MCP SDK is slow to import and most sessions never need it.
        from agent_core.mcp.client import MCPClient

        return MCPClient.from_config(config, launcher=self._mcp_launcher())

    def builtin_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """Bash, Read, Write, Edit, Glob and Grep, bound to `working_directory(cwd)`."""
        return list(workspace_tools(self.working_directory(cwd), env=self.env, tethered=True))

    async def list_mcps(self) -> list[MCPClient]:
        """The MCP clients registered in `.mcp` (re-read if it changed), in its order."""
        self._check_open()
        await self._mcps.sync()
        return self._mcps.clients

    async def add_mcp(self, config: MCPClientConfig) -> MCPClient:
        """Connect the server (when stateful) and append it to `.mcp`."""
        self._check_open()
        return await self._mcps.add(config)

    async def remove_mcp(self, name: str) -> None:
        """Drop the server from `.mcp` and disconnect it."""
        self._check_open()
        await self._mcps.remove(name)

    async def installed_skills(self) -> list[InstalledSkill]:
        """The skills under `skills/`, their directories named as the agent's tools see them."""
        self._check_open()
        installed = await asyncio.to_thread(self._skills.installed)
        return [self._shown(entry) for entry in installed]

    async def add_skill(self, skill_path: str | Path) -> InstalledSkill:
        """Copy the skill directory to `skills/<name>/` and index its hash."""
        self._check_open()
        return self._shown(await asyncio.to_thread(self._skills.add, Path(skill_path)))

    def _shown(self, installed: InstalledSkill) -> InstalledSkill:
        path = str(self._visible_path(Path(installed.skill.path)))
        if path == installed.skill.path:
            return installed
        skill = installed.skill.model_copy(update={"path": path})
        return installed.model_copy(update={"skill": skill})

    async def remove_skill(self, name: str) -> None:
        """Delete `skills/<name>/` and its index entry."""
        self._check_open()
        await asyncio.to_thread(self._skills.remove, name)

    async def offload_context(self, session_id: str, msgs: list[Msg], **kwargs: Any) -> str:
        """Append `msgs` to `sessions/<session_id>/context.jsonl`; return its path."""
        self._check_open()
        path = await asyncio.to_thread(self._offload.context, session_id, msgs)
        return str(self._visible_path(path))

    async def offload_tool_result(
        self, session_id: str, tool_result: ToolResultBlock, **kwargs: Any
    ) -> str:
        """Write `sessions/<session_id>/tool_result-<id>.txt`; return its path."""
        self._check_open()
        path = await asyncio.to_thread(self._offload.tool_result, session_id, tool_result)
        return str(self._visible_path(path))

    async def clear_session(self, session_id: str) -> None:
        """Delete `sessions/<session_id>/`."""
        self._check_open()
        folder = self._offload.session_dir(session_id)
        await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)

    def __repr__(self) -> str:
        return f"LocalWorkspace({str(self.workdir)!r}, workspace_id={self.workspace_id!r})"
