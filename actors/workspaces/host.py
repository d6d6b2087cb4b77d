"""`WorkspaceHost`: the workspaces one process serves, operated by request.

A workspace host owns workspaces (through a workspace manager, so per the isolation policy)
and runs everything that touches their files: built-in tool calls, MCP servers, skills,
offloads. Sessions and API replicas never open a workspace themselves; they send it requests,
over Ray to the `WorkspaceActor` on a sandbox node (`actors.workspaces.ray_service`), or directly
to a host in the same process (single-process servers and tests). Everything that crosses the
boundary is JSON (the requests and views are in `actors.workspaces.requests`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actors.workspaces.requests import (
    FileStream,
    MCPToolView,
    SkillBundle,
    WorkspaceRequest,
    WorkspaceStatusView,
    WorkspaceView,
)
from agent_core.mcp import MCPClientConfig
from agent_core.message import Msg, TextBlock, ToolCallBlock, ToolResultBlock, ToolResultState
from agent_core.tool import ToolBase, ToolChunk
from agent_core.tool.execution import ToolInvocation, ToolOutput, final_error
from workspaces import (
    DirectoryListing,
    FileInfo,
    InstalledSkill,
    MCPStatus,
    WorkspaceBase,
    WorkspaceManagerBase,
)
from workspaces.browse import CHUNK_BYTES, list_directory, open_file
from workspaces.errors import FileChanged
from workspaces.git import read_git_status, run_in_workspace

log = logging.getLogger(__name__)

CompletionDelivery = Callable[[str, ToolCallBlock, str, ToolResultState], Awaitable[None]]
"""Delivers (session id, call, result text, final state) of a finished background call."""


@dataclass
class _Call:
    """A built-in tool call running in the host, and what it produced so far."""

    session_id: str
    invocation: ToolInvocation
    outputs: asyncio.Queue[ToolOutput | None] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    adopted: bool = False
    stopped: bool = False
    text: list[str] = field(default_factory=list)
    state: ToolResultState = ToolResultState.SUCCESS

    def record(self, output: ToolOutput) -> None:
        chunk = output.chunk
        if chunk is None:
            return
        self.text.extend(block.text for block in chunk.content if isinstance(block, TextBlock))
        if chunk.state is not ToolResultState.RUNNING:
            self.state = chunk.state


class WorkspaceHost:
    """Serves workspace requests from the workspaces of one manager, in this process."""

    def __init__(
        self, manager: WorkspaceManagerBase, deliver: CompletionDelivery | None = None
    ) -> None:
        """Serve the workspaces of `manager` (entered on first use, closed by `aclose`).

        Args:
            manager: Owns the workspaces.
            deliver: Delivers an adopted background call's result to its session; None
                means this host cannot own background calls (sessions finish them).
        """
        self.manager = manager
        self._deliver = deliver
        self._stack: contextlib.AsyncExitStack | None = None
        self._calls: dict[str, _Call] = {}
        self._changes = 0
        self._changed = asyncio.Event()

    async def changed(self, seen: int) -> int:
        """Return how many changes this host counted, once that differs from `seen`.

        A change is anything after which `open` may describe a workspace differently: a tool
        call ran in it (it may have edited its skills or MCP list), or MCP servers or skills
        were added or removed. Pass -1 to learn the count at once.
        """
        while self._changes == seen:
            await self._changed.wait()
        return self._changes

    def _count_change(self) -> None:
        self._changes += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _manager(self) -> WorkspaceManagerBase:
        if self._stack is None:
            stack = contextlib.AsyncExitStack()
            await stack.enter_async_context(self.manager)
            self._stack = stack
        return self.manager

    @contextlib.asynccontextmanager
    async def _workspace(self, request: WorkspaceRequest) -> AsyncIterator[WorkspaceBase]:
        manager = await self._manager()
        async with manager.lease(
            request.user_id, request.agent_id, request.session_id, request.workspace_id
        ) as workspace:
            yield workspace

    async def open(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceView:
        """Open the workspace; describe its tools, skills and prompt section for `cwd`.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        async with self._workspace(request) as workspace:
            where = workspace.working_directory(cwd)
            tools, fragment = await workspace.toolset(where)
            return WorkspaceView(
                workspace_id=workspace.workspace_id,
                workdir=str(workspace.workdir),
                cwd=str(where),
                prompt_fragment=fragment,
                mcp_tools=_mcp_views(tools),
                skills=await workspace.list_skills(),
            )

    async def execute(
        self, request: WorkspaceRequest, invocation: ToolInvocation
    ) -> AsyncGenerator[ToolOutput, None]:
        """Run a built-in tool call in the workspace, streaming its output.

        The call runs in a task of its own: leaving the stream early cancels it, unless the
        session handed it over to the background first (`adopt`).
        """
        call = _Call(request.session_id, invocation)
        self._calls[invocation.call_id] = call
        call.task = asyncio.get_running_loop().create_task(self._drive(request, call))
        try:
            while (output := await call.outputs.get()) is not None:
                yield output
        finally:
            if not call.adopted:
                self._calls.pop(invocation.call_id, None)
                if not call.task.done():
                    call.task.cancel()

    async def _drive(self, request: WorkspaceRequest, call: _Call) -> None:
        try:
            async with self._workspace(request) as workspace:
                outputs = workspace.tool_executor().execute(call.invocation)
                async with contextlib.aclosing(outputs):
                    async for output in outputs:
                        call.record(output)
                        call.outputs.put_nowait(output)
        except Exception as exc:  # the session must hear why, not lose the call
            failure = final_error(f"The workspace could not run the call: {exc}")
            call.record(failure)
            call.outputs.put_nowait(failure)
        finally:
            self._count_change()
            call.outputs.put_nowait(None)
            if call.adopted:
                # Listed until delivered: `adopt` answers for the call until its result is in.
                try:
                    if not call.stopped:
                        await self._deliver_completion(call)
                finally:
                    self._calls.pop(call.invocation.call_id, None)

    async def adopt(self, request: WorkspaceRequest, tool_call_id: str) -> bool:
        """Take over a running call the session moved to the background.

        The call then runs to its end here even if the session goes away, and its result is
        delivered to the session's inbox. False when no such call runs here (or this host
        cannot deliver).
        """
        if self._deliver is None:
            return False
        for call in self._calls.values():
            if (
                call.session_id == request.session_id
                and call.invocation.tool_call_id == tool_call_id
                and call.task is not None
                and not call.task.done()
            ):
                call.adopted = True
                return True
        return False

    async def stop_background(self, request: WorkspaceRequest, tool_call_id: str) -> bool:
        """Stop an adopted call (killing what it started); it then delivers nothing."""
        for call in self._calls.values():
            if (
                call.adopted
                and call.session_id == request.session_id
                and call.invocation.tool_call_id == tool_call_id
                and call.task is not None
            ):
                call.stopped = True
                call.task.cancel()
                return True
        return False

    async def _deliver_completion(self, call: _Call) -> None:
        assert self._deliver is not None
        tool_call = ToolCallBlock(
            id=call.invocation.tool_call_id or call.invocation.call_id,
            name=call.invocation.tool,
            input="",
        )
        try:
            await self._deliver(call.session_id, tool_call, "".join(call.text), call.state)
        except Exception:
            log.exception("could not deliver the background result of %s", tool_call.id)

    async def call_mcp(
        self, request: WorkspaceRequest, server: str, tool: str, arguments: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        """Call one tool of one of the workspace's MCP servers, streaming its chunks."""
        async with self._workspace(request) as workspace:
            clients = {client.name: client for client in await workspace.list_mcps()}
            client = clients.get(server)
            if client is None:
                chunk = final_error(f"MCP server {server!r} is no longer in the workspace.").chunk
                assert chunk is not None
                yield chunk
                return
            try:
                async with contextlib.aclosing(client.call_tool(tool, arguments)) as chunks:
                    async for chunk in chunks:
                        yield chunk
            finally:
                self._count_change()

    def cancel(self, call_id: str) -> bool:
        """Stop a running call (killing what it started) unless it was adopted; whether it was."""
        call = self._calls.get(call_id)
        if call is None or call.adopted or call.task is None:
            return False
        call.task.cancel()
        return True

    async def status(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceStatusView:
        """The session's working directory and its git state (git runs inside the workspace)."""
        async with self._workspace(request) as workspace:
            where = workspace.working_directory(cwd)
            git = await read_git_status(where, run_in_workspace(workspace.tool_executor()))
            return WorkspaceStatusView(workdir=str(workspace.workdir), cwd=str(where), git=git)

    async def offload_context(
        self, request: WorkspaceRequest, session_id: str, msgs: list[Msg]
    ) -> str:
        """Persist compressed messages of a session; return the reference."""
        async with self._workspace(request) as workspace:
            return await workspace.offload_context(session_id, msgs)

    async def offload_tool_result(
        self, request: WorkspaceRequest, session_id: str, result: ToolResultBlock
    ) -> str:
        """Persist an oversized tool result; return the reference."""
        async with self._workspace(request) as workspace:
            return await workspace.offload_tool_result(session_id, result)

    async def clear_session(self, request: WorkspaceRequest, session_id: str) -> None:
        """Delete what was offloaded for a session."""
        async with self._workspace(request) as workspace:
            await workspace.clear_session(session_id)

    async def mcp_statuses(self, request: WorkspaceRequest) -> list[MCPStatus]:
        """The workspace's MCP servers with their tools and health."""
        async with self._workspace(request) as workspace:
            return await workspace.mcp_statuses()

    async def add_mcp(self, request: WorkspaceRequest, config: MCPClientConfig) -> None:
        """Register an MCP server (see `WorkspaceBase.add_mcp`)."""
        try:
            async with self._workspace(request) as workspace:
                await workspace.add_mcp(config)
        finally:
            self._count_change()

    async def remove_mcp(self, request: WorkspaceRequest, name: str) -> None:
        """Unregister an MCP server (see `WorkspaceBase.remove_mcp`)."""
        try:
            async with self._workspace(request) as workspace:
                await workspace.remove_mcp(name)
        finally:
            self._count_change()

    async def installed_skills(self, request: WorkspaceRequest) -> list[InstalledSkill]:
        """The workspace's skills."""
        async with self._workspace(request) as workspace:
            return await workspace.installed_skills()

    async def add_skill(self, request: WorkspaceRequest, bundle: SkillBundle) -> InstalledSkill:
        """Install a skill sent as a bundle (see `WorkspaceBase.add_skill`)."""
        staging = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="troupe-skill-"))
        try:
            await asyncio.to_thread(bundle.write, staging)
            async with self._workspace(request) as workspace:
                return await workspace.add_skill(staging)
        finally:
            self._count_change()
            await asyncio.to_thread(shutil.rmtree, staging, True)

    async def remove_skill(self, request: WorkspaceRequest, name: str) -> None:
        """Uninstall a skill (see `WorkspaceBase.remove_skill`)."""
        try:
            async with self._workspace(request) as workspace:
                await workspace.remove_skill(name)
        finally:
            self._count_change()

    async def _workdir(self, request: WorkspaceRequest) -> Path:
        async with self._workspace(request) as workspace:
            return workspace.workdir

    async def list_directory(self, request: WorkspaceRequest, path: str) -> DirectoryListing:
        """List one directory of the workspace (see `workspaces.browse.list_directory`).

        Raises:
            PathForbidden, PathNotFound, WrongFileType, TooLarge: see `list_directory`.
        """
        return await asyncio.to_thread(list_directory, await self._workdir(request), path)

    async def file_info(self, request: WorkspaceRequest, path: str) -> FileInfo:
        """Describe a regular file of the workspace, confined to it (see `open_file`).

        Raises:
            PathForbidden, PathNotFound, WrongFileType, TooLarge: see `open_file`.
        """
        handle, info = await asyncio.to_thread(open_file, await self._workdir(request), path)
        handle.close()
        return info

    async def file_chunks(
        self, request: WorkspaceRequest, path: str, size: int
    ) -> AsyncGenerator[bytes, None]:
        """The first `size` bytes of a file of the workspace, a chunk at a time.

        Raises:
            PathForbidden, PathNotFound, WrongFileType, TooLarge: see `open_file`.
            FileChanged: The file now holds fewer than `size` bytes.
        """
        handle, _ = await asyncio.to_thread(open_file, await self._workdir(request), path)
        with handle:
            remaining = size
            while remaining:
                chunk = await asyncio.to_thread(handle.read, min(CHUNK_BYTES, remaining))
                if not chunk:
                    raise FileChanged(f"{path!r} shrank while it was being read")
                remaining -= len(chunk)
                yield chunk

    async def read_file(self, request: WorkspaceRequest, path: str) -> FileStream:
        """A regular file of the workspace, to be streamed (see `FileStream`).

        Raises:
            PathForbidden, PathNotFound, WrongFileType, TooLarge: see `open_file`.
        """
        info = await self.file_info(request, path)
        return FileStream(info, self.file_chunks(request, path, info.size_bytes))

    async def aclose(self) -> None:
        """Close every workspace (stopping tool hosts and MCP servers)."""
        for call in list(self._calls.values()):
            if call.task is not None:
                call.task.cancel()
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()


def _mcp_views(tools: Sequence[ToolBase]) -> list[MCPToolView]:
    if not any(tool.is_mcp for tool in tools):
        return []  # without MCP tools the MCP SDK (slow to import) stays unloaded
    from agent_core.mcp import MCPTool

    return [
        MCPToolView(
            server=tool.client.name,
            tool=tool.mcp_tool.model_dump(mode="json", by_alias=True, exclude_none=True),
        )
        for tool in tools
        if isinstance(tool, MCPTool)
    ]
