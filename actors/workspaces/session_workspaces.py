"""What a session's agent takes from its workspace, wherever the workspace runs.

Sessions never open workspaces: they ask a `WorkspaceService` — the `WorkspaceActor` on a
sandbox node (`actors.workspaces.ray_service.RayWorkspaceService`), or a `WorkspaceHost` in the same
process for single-process servers (`shared_workspaces`). The session gets the workspace's
built-in tools bound to the service (they validate and answer permission checks locally, and
run in the workspace), proxies of its MCP tools, the `Skill` viewer, and an offloader.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from actors.settings import RuntimeSettings
from actors.storage.records import SessionRecord
from actors.workspaces.requests import (
    FileStream,
    SkillBundle,
    WorkspaceRequest,
    WorkspaceStatusView,
    WorkspaceView,
    mcp_tool_from_view,
)
from agent_core.mcp import MCPClientConfig
from agent_core.message import Msg, ToolCallBlock, ToolResultBlock
from agent_core.permission import PermissionContext
from agent_core.permission.types import AdditionalWorkingDirectory
from agent_core.tool import ToolBase, ToolChunk
from agent_core.tool.execution import ToolInvocation, ToolOutput
from workspaces import DirectoryListing, InstalledSkill, MCPStatus

# Keys of the working directories a session's workspace grants in its PermissionContext.
WORKSPACE_DIRECTORY = "workspace"
CWD_DIRECTORY = "cwd"


class WorkspaceService(Protocol):
    """Serves workspace requests: a `WorkspaceHost` in this process, or workspace actors."""

    async def open(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceView:
        """Open the workspace and describe it for a session working in `cwd`."""
        ...

    def execute(
        self, request: WorkspaceRequest, invocation: ToolInvocation
    ) -> AsyncGenerator[ToolOutput, None]:
        """Run a built-in tool call in the workspace (closing the stream stops it)."""
        ...

    def call_mcp(
        self, request: WorkspaceRequest, server: str, tool: str, arguments: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        """Call a tool of one of the workspace's MCP servers."""
        ...

    async def adopt(self, request: WorkspaceRequest, tool_call_id: str) -> bool:
        """Let the workspace own a running call the session moved to the background.

        Returns:
            Whether it took the call over (it then delivers the result to the session's
            inbox itself); False leaves the call to the session.
        """
        ...

    async def stop_background(self, request: WorkspaceRequest, tool_call_id: str) -> bool:
        """Stop a call the workspace adopted; it then delivers nothing."""
        ...

    async def status(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceStatusView:
        """The session's working directory and its git state."""
        ...

    async def offload_context(
        self, request: WorkspaceRequest, session_id: str, msgs: list[Msg]
    ) -> str:
        """Persist compressed messages; return the reference."""
        ...

    async def offload_tool_result(
        self, request: WorkspaceRequest, session_id: str, result: ToolResultBlock
    ) -> str:
        """Persist an oversized tool result; return the reference."""
        ...

    async def clear_session(self, request: WorkspaceRequest, session_id: str) -> None:
        """Delete what was offloaded for a session."""
        ...

    async def mcp_statuses(self, request: WorkspaceRequest) -> list[MCPStatus]:
        """The workspace's MCP servers with their tools and health."""
        ...

    async def add_mcp(self, request: WorkspaceRequest, config: MCPClientConfig) -> None:
        """Register an MCP server."""
        ...

    async def remove_mcp(self, request: WorkspaceRequest, name: str) -> None:
        """Unregister an MCP server."""
        ...

    async def installed_skills(self, request: WorkspaceRequest) -> list[InstalledSkill]:
        """The workspace's skills."""
        ...

    async def add_skill(self, request: WorkspaceRequest, bundle: SkillBundle) -> InstalledSkill:
        """Install a skill sent as a bundle."""
        ...

    async def remove_skill(self, request: WorkspaceRequest, name: str) -> None:
        """Uninstall a skill."""
        ...

    async def list_directory(self, request: WorkspaceRequest, path: str) -> DirectoryListing:
        """List one directory inside the workspace (never outside it, nor through a link).

        Raises:
            PathForbidden: `path` leaves the workspace or goes through a symbolic link.
            PathNotFound: nothing is there.
            WrongFileType: it is not a directory.
            TooLarge: it holds too many entries.
        """
        ...

    async def read_file(self, request: WorkspaceRequest, path: str) -> FileStream:
        """Open a regular file inside the workspace for streaming (see `FileStream`).

        Raises:
            PathForbidden: `path` leaves the workspace or goes through a symbolic link.
            PathNotFound: nothing is there.
            WrongFileType: it is a directory, or not a regular file.
            TooLarge: it is larger than the workspace serves.
        """
        ...

    async def aclose(self) -> None:
        """Release what this service holds in this process."""
        ...


def workspace_request(session: SessionRecord) -> WorkspaceRequest:
    """Which workspace serves a session."""
    return WorkspaceRequest(
        user_id=session.user_id,
        agent_id=session.agent_id,
        session_id=session.id,
        workspace_id=session.config.workspace_id or None,
    )


@dataclass(frozen=True)
class _Executor:
    """`ToolExecutor` of one workspace: built-in tool calls go to its service."""

    service: WorkspaceService
    request: WorkspaceRequest

    def execute(self, invocation: ToolInvocation) -> AsyncGenerator[ToolOutput, None]:
        return self.service.execute(self.request, invocation)


@dataclass(frozen=True)
class _MCPServer:
    """`MCPToolCaller` of one MCP server of one workspace."""

    service: WorkspaceService
    request: WorkspaceRequest
    name: str

    def call_tool(
        self, tool_name: str, arguments: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        return self.service.call_mcp(self.request, self.name, tool_name, arguments)


@dataclass(frozen=True)
class WorkspaceOffloader:
    """The `Offloader` of a session whose workspace runs elsewhere."""

    service: WorkspaceService
    request: WorkspaceRequest

    async def offload_context(self, session_id: str, msgs: list[Msg], **kwargs: Any) -> str:
        """Persist compressed messages in the workspace; return the file path."""
        return await self.service.offload_context(self.request, session_id, msgs)

    async def offload_tool_result(
        self, session_id: str, tool_result: ToolResultBlock, **kwargs: Any
    ) -> str:
        """Persist an oversized tool result in the workspace; return the file path."""
        return await self.service.offload_tool_result(self.request, session_id, tool_result)


@dataclass(frozen=True)
class SessionKit:
    """What a session's agent takes from its workspace for one reply."""

    view: WorkspaceView
    """The workspace as it was described for this reply."""
    offloader: WorkspaceOffloader
    """Where compressed context and oversized tool results go."""
    tools: list[ToolBase]
    """Built-in tools bound to `cwd`, the MCP servers' tools, the `Skill` viewer."""

    @property
    def workdir(self) -> Path:
        """The workspace root, as the tools see it."""
        return Path(self.view.workdir)

    @property
    def cwd(self) -> Path:
        """Where the agent's file and shell tools start."""
        return Path(self.view.cwd)

    @property
    def handle(self) -> WorkspaceHandle:
        """The workspace, to manage its MCP servers and skills."""
        return WorkspaceHandle(self.offloader.service, self.offloader.request, self.workdir)

    async def hand_over(self, call: ToolCallBlock) -> bool:
        """Ask the workspace to own a call moved to the background (see `WorkspaceService`)."""
        return await self.offloader.service.adopt(self.offloader.request, call.id)

    async def stop_background(self, tool_call_id: str) -> bool:
        """Stop a call handed over to the workspace."""
        return await self.offloader.service.stop_background(self.offloader.request, tool_call_id)

    def system_prompt(self, base: str) -> str:
        """`base` followed by the workspace's section."""
        fragment = self.view.prompt_fragment
        return f"{base}\n\n{fragment}" if fragment else base

    def grant(self, permissions: PermissionContext) -> None:
        """Make the workspace (and `cwd`, when outside it) working directories of `permissions`."""
        directories = permissions.working_directories
        directories[WORKSPACE_DIRECTORY] = AdditionalWorkingDirectory(
            path=str(self.workdir), source="workspace"
        )
        if self.cwd.is_relative_to(self.workdir):
            directories.pop(CWD_DIRECTORY, None)
        else:
            directories[CWD_DIRECTORY] = AdditionalWorkingDirectory(
                path=str(self.cwd), source="session"
            )


def session_kit(
    service: WorkspaceService, request: WorkspaceRequest, view: WorkspaceView
) -> SessionKit:
    """The tools and offloader a session gets from the workspace `view` describes."""
    # The built-in tools (and the shell analysis behind Bash's permission hooks) load with
    # the first session: a session host carries none of them until it hosts one.
    from agent_core.tool.builtin.runner import workspace_tools

    executor = _Executor(service, request)
    tools: list[ToolBase] = [tool.bind(executor) for tool in workspace_tools(view.cwd)]
    if view.mcp_tools:
        from agent_core.mcp import MCPTool  # loads the MCP SDK, only for sessions that use it

        tools.extend(
            MCPTool(_MCPServer(service, request, entry.server), mcp_tool_from_view(entry))
            for entry in view.mcp_tools
        )
    if view.skills:
        from agent_core.skill import SkillViewer

        tools.append(SkillViewer(view.skills))
    return SessionKit(view, WorkspaceOffloader(service, request), tools)


class SessionWorkspaces:
    """Sessions' workspaces, served by one `WorkspaceService`."""

    def __init__(self, service: WorkspaceService) -> None:
        self.service = service
        self.loop: asyncio.AbstractEventLoop | None = None

    async def open(self, session: SessionRecord) -> SessionKit:
        """The session's workspace resources for one reply.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        self.loop = self.loop or asyncio.get_running_loop()
        request = workspace_request(session)
        view = await self.service.open(request, session.config.cwd)
        return session_kit(self.service, request, view)

    @contextlib.asynccontextmanager
    async def kit(self, session: SessionRecord) -> AsyncIterator[SessionKit]:
        """`open` as a context (nothing is held open; a workspace is leased per call).

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        yield await self.open(session)

    async def aclose(self) -> None:
        """Release the service and forget this instance."""
        for key, shared in list(_SHARED.items()):
            if shared is self:
                del _SHARED[key]
        await self.service.aclose()


_SHARED: dict[tuple[str, float, str], SessionWorkspaces] = {}


def shared_workspaces(settings: RuntimeSettings) -> SessionWorkspaces:
    """This process's in-process `SessionWorkspaces` for `settings` (created on first call).

    An instance started on another event loop (one that a previous test ran, say) cannot be
    used from this one and is replaced.
    """
    key = (
        os.path.abspath(settings.workspace_root),
        settings.workspace_ttl,
        settings.workspace_backend,
    )
    shared = _SHARED.get(key)
    if shared is not None and shared.loop is not None:
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is not None and shared.loop is not current:
            shared = None
    if shared is None:
        # The host and its backends load only where workspaces run in this process: session
        # hosts reach theirs through workspace actors and never need them.
        from actors.workspaces.backends import workspace_manager
        from actors.workspaces.host import WorkspaceHost

        shared = _SHARED[key] = SessionWorkspaces(WorkspaceHost(workspace_manager(settings)))
    return shared


@dataclass(frozen=True)
class WorkspaceHandle:
    """One session's workspace as the REST API and agent factories manage it."""

    service: WorkspaceService
    request: WorkspaceRequest
    workdir: Path | None = None
    """The workspace root as its tools see it, when it was opened for a reply."""

    async def status(self, cwd: str | None) -> WorkspaceStatusView:
        """The working directory `cwd` names and its git state."""
        return await self.service.status(self.request, cwd)

    async def mcp_statuses(self) -> list[MCPStatus]:
        """The MCP servers with their tools and health."""
        return await self.service.mcp_statuses(self.request)

    async def add_mcp(self, config: MCPClientConfig) -> None:
        """Register an MCP server (connected first when stateful).

        Raises:
            MCPExists: the name is taken.
            MCPUnavailable: the server cannot be reached or the configuration is rejected.
        """
        await self.service.add_mcp(self.request, config)

    async def remove_mcp(self, name: str) -> None:
        """Unregister an MCP server.

        Raises:
            MCPNotFound: no such server.
        """
        await self.service.remove_mcp(self.request, name)

    async def installed_skills(self) -> list[InstalledSkill]:
        """The installed skills."""
        return await self.service.installed_skills(self.request)

    async def add_skill(self, skill_path: str | Path) -> InstalledSkill:
        """Install the skill directory at `skill_path` (read here, installed in the workspace).

        Raises:
            InvalidSkill: not a skill directory, or too large.
        """
        bundle = await asyncio.to_thread(SkillBundle.read, Path(skill_path))
        return await self.service.add_skill(self.request, bundle)

    async def add_skill_bundle(self, bundle: SkillBundle) -> InstalledSkill:
        """Install a skill sent as a bundle (an upload, a library copy).

        Raises:
            InvalidSkill: the bundle is not a valid skill.
        """
        return await self.service.add_skill(self.request, bundle)

    async def list_directory(self, path: str) -> DirectoryListing:
        """List one directory inside the workspace (see `WorkspaceService.list_directory`)."""
        return await self.service.list_directory(self.request, path)

    async def read_file(self, path: str) -> FileStream:
        """Open a file inside the workspace for streaming (see `WorkspaceService.read_file`)."""
        return await self.service.read_file(self.request, path)

    async def remove_skill(self, name: str) -> None:
        """Uninstall a skill.

        Raises:
            SkillNotFound: no such skill.
        """
        await self.service.remove_skill(self.request, name)
