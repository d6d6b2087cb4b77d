"""How the runtime gets a session's workspace, and what a session's agent takes from it.

Each process (an API replica, a session actor's worker, a single-process server) has one
`SessionWorkspaces`, from `shared_workspaces(settings)`: a `LocalWorkspaceManager` under
`settings.workspace_root`, isolating per agent unless a session names its workspace. Processes
opening the same workspace agree through its files (see `workspaces.local`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from actors.records import SessionRecord
from actors.settings import RuntimeSettings
from agent_core.permission import PermissionContext
from agent_core.permission.types import AdditionalWorkingDirectory
from agent_core.tool import ToolBase
from workspaces import LocalWorkspaceManager, WorkspaceBase, WorkspaceManagerBase

# Keys of the working directories a session's workspace grants in its PermissionContext.
WORKSPACE_DIRECTORY = "workspace"
CWD_DIRECTORY = "cwd"


@dataclass(frozen=True)
class SessionKit:
    """What a session's agent takes from its workspace for one reply."""

    workspace: WorkspaceBase
    """The open workspace; it is also the agent's offloader."""
    cwd: Path
    """Where the agent's file and shell tools start."""
    tools: list[ToolBase]
    """Built-in tools bound to `cwd`, the MCP servers' tools, the `Skill` viewer."""
    prompt_fragment: str
    """The workspace's section of the system prompt."""

    def system_prompt(self, base: str) -> str:
        """`base` followed by the workspace's section."""
        return f"{base}\n\n{self.prompt_fragment}" if self.prompt_fragment else base

    def grant(self, permissions: PermissionContext) -> None:
        """Make the workspace (and `cwd`, when outside it) working directories of `permissions`."""
        directories = permissions.working_directories
        root = self.workspace.workdir
        directories[WORKSPACE_DIRECTORY] = AdditionalWorkingDirectory(
            path=str(root), source="workspace"
        )
        if self.cwd.is_relative_to(root):
            directories.pop(CWD_DIRECTORY, None)
        else:
            directories[CWD_DIRECTORY] = AdditionalWorkingDirectory(
                path=str(self.cwd), source="session"
            )


class SessionWorkspaces:
    """Sessions' workspaces, from one workspace manager (entered on first use)."""

    def __init__(self, manager: WorkspaceManagerBase) -> None:
        self.manager = manager
        self._stack: contextlib.AsyncExitStack | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def _started(self) -> WorkspaceManagerBase:
        if self._stack is None:
            stack = contextlib.AsyncExitStack()
            await stack.enter_async_context(self.manager)
            self._stack, self.loop = stack, asyncio.get_running_loop()
        return self.manager

    async def get(self, session: SessionRecord) -> WorkspaceBase:
        """The session's open workspace.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        manager = await self._started()
        return await manager.get_workspace(*_request(session))

    @contextlib.asynccontextmanager
    async def kit(self, session: SessionRecord) -> AsyncIterator[SessionKit]:
        """The session's workspace resources, the workspace kept open until the block exits.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        manager = await self._started()
        async with manager.lease(*_request(session)) as workspace:
            cwd = workspace.working_directory(session.config.cwd)
            tools, fragment = await workspace.toolset(cwd)
            yield SessionKit(workspace, cwd, tools, fragment)

    async def aclose(self) -> None:
        """Close every workspace (stopping their MCP servers) and forget this instance."""
        for key, shared in list(_SHARED.items()):
            if shared is self:
                del _SHARED[key]
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()


def _request(session: SessionRecord) -> tuple[str, str, str, str | None]:
    return session.user_id, session.agent_id, session.id, session.config.workspace_id or None


_SHARED: dict[tuple[str, float], SessionWorkspaces] = {}


def shared_workspaces(settings: RuntimeSettings) -> SessionWorkspaces:
    """This process's `SessionWorkspaces` for `settings` (created on first call).

    An instance started on another event loop (one that a previous test ran, say) cannot be
    used from this one and is replaced.
    """
    key = (os.path.abspath(settings.workspace_root), settings.workspace_ttl)
    shared = _SHARED.get(key)
    if shared is not None and shared.loop is not None:
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is not None and shared.loop is not current:
            shared = None
    if shared is None:
        manager = LocalWorkspaceManager(settings.workspace_root, ttl=settings.workspace_ttl)
        shared = _SHARED[key] = SessionWorkspaces(manager)
    return shared
