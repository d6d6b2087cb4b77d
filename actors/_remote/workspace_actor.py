"""`WorkspaceActor`: the workspace host of one sandbox node, as a Ray actor."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import AsyncGenerator
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors._remote.session_actor import RayDispatcher
from actors.sessions.hints import completion_hint
from actors.settings import RuntimeSettings
from actors.wiring import wire
from actors.workspaces.backends import workspace_manager
from actors.workspaces.host import WorkspaceHost
from actors.workspaces.requests import SkillBundle, WorkspaceRequest
from agent_core.mcp import MCPClientConfig
from agent_core.message import Msg, ToolCallBlock, ToolResultBlock, ToolResultState
from agent_core.tool.execution import ToolInvocation

_FILE_CHUNKS_AHEAD = 8


def workspace_actor_name(node_id: str) -> str:
    """Ray actor name of the workspace host on a node."""
    return f"workspace-host:{node_id}"


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=0)
class WorkspaceActor:
    """Hosts the workspaces assigned to one node and runs everything that touches them.

    Pinned to its node (workspace files live there). Ray restarts it if its process dies;
    calls that were running end with an error result and the workspaces re-open on demand.
    Tool calls are never retried automatically: they are not idempotent.
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        parsed = RuntimeSettings.model_validate(settings)
        mailbox = wire(parsed, functools.partial(RayDispatcher, parsed)).mailbox

        async def deliver(
            session_id: str, call: ToolCallBlock, text: str, state: ToolResultState
        ) -> None:
            await mailbox.deliver(session_id, completion_hint(call, text, state))

        self._host = WorkspaceHost(workspace_manager(parsed), deliver)

    async def open(self, request: str, cwd: str | None) -> str:
        """Open a workspace; its `WorkspaceView` as JSON."""
        view = await self._host.open(WorkspaceRequest.model_validate_json(request), cwd)
        return view.model_dump_json()

    async def execute(self, request: str, invocation: str) -> AsyncGenerator[str, None]:
        """Stream a built-in tool call's `ToolOutput`s as JSON."""
        outputs = self._host.execute(
            WorkspaceRequest.model_validate_json(request),
            ToolInvocation.model_validate_json(invocation),
        )
        async with contextlib.aclosing(outputs):
            async for output in outputs:
                yield output.model_dump_json()

    async def call_mcp(
        self, request: str, server: str, tool: str, arguments: str
    ) -> AsyncGenerator[str, None]:
        """Stream an MCP tool call's `ToolChunk`s as JSON."""
        chunks = self._host.call_mcp(
            WorkspaceRequest.model_validate_json(request), server, tool, json.loads(arguments)
        )
        async with contextlib.aclosing(chunks):
            async for chunk in chunks:
                yield chunk.model_dump_json()

    async def changed(self, seen: int) -> int:
        """Return the host's change count once it differs from `seen` (see `WorkspaceHost`).

        A caller keeps one such call pending to learn of changes, and of this actor's death
        (the call then fails).
        """
        return await self._host.changed(seen)

    def cancel(self, call_id: str) -> bool:
        """Stop a running tool call (killing what it started) unless it was adopted."""
        return self._host.cancel(call_id)

    async def adopt(self, request: str, tool_call_id: str) -> bool:
        """Own a call its session moved to the background; deliver its result when done."""
        return await self._host.adopt(WorkspaceRequest.model_validate_json(request), tool_call_id)

    async def status(self, request: str, cwd: str | None) -> str:
        """The session's working directory and git state, as JSON."""
        view = await self._host.status(WorkspaceRequest.model_validate_json(request), cwd)
        return view.model_dump_json()

    async def stop_background(self, request: str, tool_call_id: str) -> bool:
        """Stop an adopted call; it then delivers nothing."""
        req = WorkspaceRequest.model_validate_json(request)
        return await self._host.stop_background(req, tool_call_id)

    async def offload_context(self, request: str, session_id: str, msgs: str) -> str:
        """Persist compressed messages; the reference."""
        parsed = [Msg.model_validate(item) for item in json.loads(msgs)]
        req = WorkspaceRequest.model_validate_json(request)
        return await self._host.offload_context(req, session_id, parsed)

    async def offload_tool_result(self, request: str, session_id: str, result: str) -> str:
        """Persist an oversized tool result; the reference."""
        req = WorkspaceRequest.model_validate_json(request)
        block = ToolResultBlock.model_validate_json(result)
        return await self._host.offload_tool_result(req, session_id, block)

    async def clear_session(self, request: str, session_id: str) -> None:
        """Delete what was offloaded for a session."""
        await self._host.clear_session(WorkspaceRequest.model_validate_json(request), session_id)

    async def mcp_statuses(self, request: str) -> str:
        """The MCP servers, as a JSON list of `MCPStatus`."""
        statuses = await self._host.mcp_statuses(WorkspaceRequest.model_validate_json(request))
        return json.dumps([status.model_dump(mode="json") for status in statuses])

    async def add_mcp(self, request: str, config: str) -> None:
        """Register an MCP server."""
        req = WorkspaceRequest.model_validate_json(request)
        await self._host.add_mcp(req, MCPClientConfig.model_validate_json(config))

    async def remove_mcp(self, request: str, name: str) -> None:
        """Unregister an MCP server."""
        await self._host.remove_mcp(WorkspaceRequest.model_validate_json(request), name)

    async def installed_skills(self, request: str) -> str:
        """The skills, as a JSON list of `InstalledSkill`."""
        skills = await self._host.installed_skills(WorkspaceRequest.model_validate_json(request))
        return json.dumps([skill.model_dump(mode="json") for skill in skills])

    async def add_skill(self, request: str, bundle: str) -> str:
        """Install a skill bundle; the `InstalledSkill` as JSON."""
        req = WorkspaceRequest.model_validate_json(request)
        installed = await self._host.add_skill(req, SkillBundle.model_validate_json(bundle))
        return installed.model_dump_json()

    async def remove_skill(self, request: str, name: str) -> None:
        """Uninstall a skill."""
        await self._host.remove_skill(WorkspaceRequest.model_validate_json(request), name)

    async def list_directory(self, request: str, path: str) -> str:
        """One directory inside the workspace, as a `DirectoryListing` JSON."""
        req = WorkspaceRequest.model_validate_json(request)
        return (await self._host.list_directory(req, path)).model_dump_json()

    async def file_info(self, request: str, path: str) -> str:
        """A regular file inside the workspace, as a `FileInfo` JSON."""
        req = WorkspaceRequest.model_validate_json(request)
        return (await self._host.file_info(req, path)).model_dump_json()

    # File contents travel as raw bytes (not JSON); backpressure keeps a slow reader from
    # making the node read the whole file into the object store ahead of it.
    @ray.method(_generator_backpressure_num_objects=_FILE_CHUNKS_AHEAD)  # type: ignore[untyped-decorator]
    async def file_chunks(self, request: str, path: str, size: int) -> AsyncGenerator[bytes, None]:
        """Stream the first `size` bytes of a file inside the workspace."""
        chunks = self._host.file_chunks(WorkspaceRequest.model_validate_json(request), path, size)
        async with contextlib.aclosing(chunks):
            async for chunk in chunks:
                yield chunk

    def pid(self) -> int:
        """The worker process id (for operations and fault-injection tests)."""
        return os.getpid()

    def node_id(self) -> str:
        """The Ray node the actor runs on."""
        return str(ray.get_runtime_context().get_node_id())


def workspace_actor(settings: RuntimeSettings, node_id: str) -> Any:
    """Get or create the workspace host actor pinned to `node_id` (blocking)."""
    return WorkspaceActor.options(  # type: ignore[attr-defined]
        name=workspace_actor_name(node_id),
        namespace=settings.namespace,
        get_if_exists=True,
        lifetime="detached",
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
    ).remote(settings.model_dump())
