"""`WorkspaceBase`: the agent's execution environment — tools, MCP servers, skills, offloading."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from agent_core.errors import MCPError
from agent_core.mcp import MCPClientConfig
from agent_core.message import Msg, ToolResultBlock
from agent_core.skill import Skill, skills_prompt_fragment
from agent_core.tool import ToolBase
from agent_core.tool.execution import ToolExecutor

if TYPE_CHECKING:
    from agent_core.mcp import MCPClient, MCPTool

log = logging.getLogger(__name__)


class MCPToolInfo(DeferredModel):
    """One tool an MCP server exposes, as its server names it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The tool's name on the server.")
    description: str | None = Field(default=None, description="What the tool does.")


class MCPStatus(DeferredModel):
    """An MCP server of the workspace, with the tools it lists right now."""

    model_config = ConfigDict(extra="forbid")

    config: MCPClientConfig = Field(description="The registered configuration.")
    is_healthy: bool = Field(description="Whether the server answered a tool listing.")
    tools: list[MCPToolInfo] = Field(default_factory=list, description="The exposed tools.")
    error: str | None = Field(default=None, description="Why listing its tools failed.")


class InstalledSkill(DeferredModel):
    """A skill installed in the workspace."""

    model_config = ConfigDict(extra="forbid")

    skill: Skill = Field(description="The parsed skill.")
    updated_at: float = Field(description="When it was installed or last replaced (epoch s).")


class WorkspaceBase(ABC):
    """An agent's execution environment; every backend implements this interface.

    It supplies tools (built-ins bound to the workspace, MCP servers' tools, the `Skill`
    viewer), skills, a system-prompt fragment, and offloading (it is an `Offloader`); MCP
    servers and skills added at runtime are persisted so that they survive restarts.

    It is a resource owner: `initialize()` (or `async with`) opens it, `close()` releases what
    it holds (MCP server processes and connections). Every other method requires it open and
    raises `WorkspaceClosed` otherwise.
    """

    workspace_id: str
    """The workspace's identifier."""

    workdir: Path
    """The agent-visible root directory."""

    async def __aenter__(self) -> Self:
        await self.initialize()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # lifecycle
    @abstractmethod
    async def initialize(self) -> None:
        """Provision the layout, seed a brand-new workspace, connect its MCP servers.

        An MCP server that cannot be connected is logged and reported in `mcp_errors`; it
        does not fail initialization. Calling it on an open workspace is a no-op.

        Raises:
            CorruptWorkspace: A layout file cannot be read back.
        """

    @abstractmethod
    async def close(self) -> None:
        """Disconnect every MCP server; persisted state stays. Idempotent."""

    @property
    @abstractmethod
    def mcp_errors(self) -> dict[str, str]:
        """Why registered MCP servers failed to load or connect when last (re)loaded, by name."""

    @abstractmethod
    async def clear_session(self, session_id: str) -> None:
        """Delete what was offloaded for one session (its directory under `sessions/`).

        Raises:
            WorkspaceClosed: The workspace is not open.
        """

    # resources
    @abstractmethod
    def working_directory(self, cwd: str | Path | None = None) -> Path:
        """The absolute directory `cwd` names, where tools bound to it start.

        Args:
            cwd: Absolute, or relative to `workdir` (then created if missing); None means
                `workdir`.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """

    @abstractmethod
    def tool_executor(self) -> ToolExecutor:
        """Where the workspace runs built-in tool calls (in-process, a sandbox, a container).

        A runtime that keeps the agent elsewhere sends `ToolInvocation`s here.
        """

    @abstractmethod
    def builtin_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """The built-in file and shell tools, bound to `working_directory(cwd)`.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """

    @abstractmethod
    async def list_mcps(self) -> list[MCPClient]:
        """The registered MCP clients, in registration order (stateful ones connected).

        Raises:
            WorkspaceClosed: The workspace is not open.
            CorruptWorkspace: The persisted MCP list cannot be read back.
        """

    @abstractmethod
    async def installed_skills(self) -> list[InstalledSkill]:
        """The installed skills, by name.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """

    # changes, persisted
    @abstractmethod
    async def add_mcp(self, config: MCPClientConfig) -> MCPClient:
        """Register an MCP server, connecting it first when stateful, and persist it.

        Returns:
            The live client.

        Raises:
            WorkspaceClosed: The workspace is not open.
            MCPExists: An MCP server of that name is registered.
            MCPUnavailable: The configuration is rejected or the server cannot be connected
                (nothing is persisted).
        """

    @abstractmethod
    async def remove_mcp(self, name: str) -> None:
        """Disconnect and unregister an MCP server.

        Raises:
            WorkspaceClosed: The workspace is not open.
            MCPNotFound: No MCP server of that name is registered.
        """

    @abstractmethod
    async def add_skill(self, skill_path: str | Path) -> InstalledSkill:
        """Install (copy in) the skill directory at `skill_path`.

        Installing content identical to an installed skill of the same name changes nothing;
        different content under the same name replaces it.

        Raises:
            WorkspaceClosed: The workspace is not open.
            InvalidSkill: The directory or its SKILL.md is missing or invalid.
        """

    @abstractmethod
    async def remove_skill(self, name: str) -> None:
        """Uninstall a skill.

        Raises:
            WorkspaceClosed: The workspace is not open.
            SkillNotFound: No skill of that name is installed.
        """

    # offloading (the Offloader protocol)
    @abstractmethod
    async def offload_context(self, session_id: str, msgs: list[Msg], **kwargs: Any) -> str:
        """Append compressed messages to the session's `context.jsonl`; return its path.

        Inline binary payloads are stored once under `data/` and referenced by URL.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """

    @abstractmethod
    async def offload_tool_result(
        self, session_id: str, tool_result: ToolResultBlock, **kwargs: Any
    ) -> str:
        """Store a tool result's full output as a text file of the session; return its path.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """

    # derived
    async def list_skills(self) -> list[Skill]:
        """The installed skills.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """
        return [installed.skill for installed in await self.installed_skills()]

    async def list_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """The built-in tools, bound to `working_directory(cwd)` (the spec's `list_tools`).

        MCP servers come from `list_mcps()` and skills from `list_skills()`, so that a
        `Toolkit` can place each in the group it belongs to; `all_tools` flattens the three.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """
        return self.builtin_tools(cwd)

    async def all_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """Every tool the workspace supplies: built-ins bound to `cwd`, MCP tools, the viewer.

        An MCP server whose tools cannot be listed is left out (and logged); the `Skill`
        viewer is included when skills are installed.

        Raises:
            WorkspaceClosed: The workspace is not open.
            CorruptWorkspace: The persisted MCP list cannot be read back.
        """
        return self._tools(cwd, await self._list_mcp_tools(), await self.list_skills())

    async def mcp_statuses(self) -> list[MCPStatus]:
        """Each registered MCP server with its current tools and health.

        Raises:
            WorkspaceClosed: The workspace is not open.
            CorruptWorkspace: The persisted MCP list cannot be read back.
        """
        return [status for status, _ in await self._list_mcp_tools()]

    async def system_prompt_fragment(self, cwd: str | Path | None = None) -> str:
        """What the agent should know about its workspace, for its system prompt.

        Names the workspace and working directories, where offloaded content goes, each MCP
        server (its tool count, or why it is unavailable), and the installed skills.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """
        return self._fragment(cwd, await self.mcp_statuses(), await self.list_skills())

    async def toolset(self, cwd: str | Path | None = None) -> tuple[list[ToolBase], str]:
        """`all_tools(cwd)` and `system_prompt_fragment(cwd)` together, probing MCP servers once.

        Raises:
            WorkspaceClosed: The workspace is not open.
            CorruptWorkspace: The persisted MCP list cannot be read back.
        """
        probes, skills = await self._list_mcp_tools(), await self.list_skills()
        statuses = [status for status, _ in probes]
        return self._tools(cwd, probes, skills), self._fragment(cwd, statuses, skills)

    def _tools(
        self,
        cwd: str | Path | None,
        probes: list[tuple[MCPStatus, list[MCPTool]]],
        skills: list[Skill],
    ) -> list[ToolBase]:
        tools = self.builtin_tools(cwd)
        for status, mcp_tools in probes:
            if status.error is not None:
                log.warning("MCP server %r left out: %s", status.config.name, status.error)
            tools.extend(mcp_tools)
        if skills:
            # The viewer is a tool: processes reading this module's result models never load it.
            from agent_core.skill import SkillViewer

            tools.append(SkillViewer(skills))
        return tools

    def _fragment(
        self, cwd: str | Path | None, statuses: list[MCPStatus], skills: list[Skill]
    ) -> str:
        where = self.working_directory(cwd)
        sections = [
            "# Workspace\n\n"
            f"Your workspace directory is {self.workdir}. File and shell tools start in {where}; "
            "relative paths resolve against it. When earlier conversation or an oversized tool "
            f"result is moved out of your context, it is saved under {self.workdir / 'sessions'} "
            "and its file path is left in its place: read that file when you need the content."
        ]
        if statuses:
            lines = [_mcp_line(status) for status in statuses]
            sections.append(
                "# MCP servers\n\nTools named mcp__<server>__<tool> come from these MCP "
                "servers:\n" + "\n".join(lines)
            )
        listing = skills_prompt_fragment(skills)
        if listing:
            sections.append(listing)
        return "\n\n".join(sections)

    async def _list_mcp_tools(self) -> list[tuple[MCPStatus, list[MCPTool]]]:
        clients = await self.list_mcps()
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_probe(client)) for client in clients]
        return [task.result() for task in tasks]


async def _probe(client: MCPClient) -> tuple[MCPStatus, list[MCPTool]]:
    try:
        tools = await client.list_tools()
    except MCPError as exc:
        return MCPStatus(config=client.config, is_healthy=False, error=str(exc)), []
    infos = [MCPToolInfo(name=t.mcp_tool.name, description=t.mcp_tool.description) for t in tools]
    return MCPStatus(config=client.config, is_healthy=True, tools=infos), tools


def _mcp_line(status: MCPStatus) -> str:
    name = status.config.name
    if status.error is not None:
        return f"- {name}: unavailable right now ({status.error})"
    count = len(status.tools)
    return f"- {name}: {count} tool{'s' if count != 1 else ''}"
