"""`RayWorkspaceService`: workspace requests sent to `WorkspaceActor`s on sandbox nodes.

Placement: nodes that advertise the `troupe_sandbox` resource (or the label
`troupe.io/node-role=sandbox`) host the workspaces, one `WorkspaceActor` per node, and never
agent nodes; without such nodes (a laptop) the actor runs on the caller's node. Each workspace
is assigned to the least-loaded sandbox node on first use and the assignment is kept in Redis,
so every session and API replica reaches the same host. When that node is gone, the workspace
is re-created on another node; the agent is told, since files that lived only on the lost
node's disk are gone with it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator
from typing import Any

import ray
from ray.exceptions import ActorUnschedulableError, RayActorError, RayError, RayTaskError
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.bus.redis_connect import connect
from actors.settings import RuntimeSettings
from actors.workspaces.requests import (
    FileStream,
    SkillBundle,
    WorkspaceRequest,
    WorkspaceStatusView,
    WorkspaceView,
)
from agent_core.mcp import MCPClientConfig
from agent_core.message import Msg, ToolResultBlock
from agent_core.tool import ToolChunk
from agent_core.tool.execution import ToolInvocation, ToolOutput, final_error
from workspaces import DirectoryListing, FileInfo, InstalledSkill, MCPStatus
from workspaces.errors import WorkspaceError

log = logging.getLogger(__name__)

SANDBOX_RESOURCE = "troupe_sandbox"
SANDBOX_LABEL = ("troupe.io/node-role", "sandbox")

_NODES_TTL = 2.0


def is_sandbox_node(node: dict[str, Any]) -> bool:
    """Whether a `ray.nodes()` entry advertises itself as a sandbox node."""
    labels = node.get("Labels") or {}
    if labels.get(SANDBOX_LABEL[0]) == SANDBOX_LABEL[1]:
        return True
    return float((node.get("Resources") or {}).get(SANDBOX_RESOURCE, 0)) > 0


def placement_key(request: WorkspaceRequest) -> str:
    """The Redis field naming a workspace (its user and id under the per-agent policy)."""
    return json.dumps([request.user_id, request.workspace_id or request.agent_id])


class RayWorkspaceService:
    """`WorkspaceService` over Ray: each workspace is served by the actor of its node."""

    def __init__(self, settings: RuntimeSettings, redis: Redis | None = None) -> None:
        """Serve requests for the deployment of `settings` (Ray must be initialised)."""
        self._settings = settings
        self._redis = redis or connect(settings.redis_url)
        self._owns_redis = redis is None
        self._key = Keys(settings.key_prefix).workspace_placement()
        self._nodes: tuple[float, list[dict[str, Any]]] = (0.0, [])
        # Nodes Ray refused to schedule on although they were still listed alive (a node that
        # died is reported dead only after a while); node ids are never reused.
        self._lost: set[str] = set()
        self.loop: asyncio.AbstractEventLoop | None = None

    # placement
    async def _alive_nodes(self) -> list[dict[str, Any]]:
        stamp, nodes = self._nodes
        if time.monotonic() - stamp > _NODES_TTL:
            nodes = [n for n in await asyncio.to_thread(ray.nodes) if n.get("Alive")]
            self._nodes = (time.monotonic(), nodes)
        return nodes

    async def _candidates(self) -> list[str]:
        nodes = await self._alive_nodes()
        sandbox = [
            str(n["NodeID"]) for n in nodes if is_sandbox_node(n) and n["NodeID"] not in self._lost
        ]
        if sandbox:
            return sandbox
        return [str(ray.get_runtime_context().get_node_id())]

    async def _place(self, request: WorkspaceRequest) -> tuple[str, str | None]:
        """The node serving the workspace, and the node it moved from (if it just moved)."""
        field = placement_key(request)
        raw = await self._redis.hget(self._key, field)
        record = json.loads(raw) if raw else None
        candidates = await self._candidates()
        if record is not None and record["node"] in candidates:
            return record["node"], record.get("moved_from")
        load = collections.Counter(
            json.loads(value)["node"] for value in (await self._redis.hvals(self._key))
        )
        node = min(candidates, key=lambda n: (load[n], n))
        moved_from = record["node"] if record is not None else None
        update = {"node": node, "moved_from": moved_from, "at": time.time()}
        await self._redis.hset(self._key, field, json.dumps(update))
        if moved_from is not None:
            log.warning("workspace %s moved from node %s to %s", field, moved_from, node)
        return node, moved_from

    async def _actor(self, request: WorkspaceRequest) -> Any:
        from actors._remote.workspace_actor import workspace_actor

        node, _ = await self._place(request)
        return await asyncio.to_thread(workspace_actor, self._settings, node)

    def _forget_nodes(self) -> None:
        self._nodes = (0.0, [])

    async def _call(self, request: WorkspaceRequest, method: str, *args: Any) -> Any:
        """Call an actor method, re-placing the workspace once if its node is gone."""
        for attempt in (0, 1):
            actor = await self._actor(request)
            try:
                return await getattr(actor, method).remote(request.model_dump_json(), *args)
            except RayTaskError as exc:
                raise _workspace_error(exc) from None
            except (RayActorError, ActorUnschedulableError) as exc:
                if isinstance(exc, ActorUnschedulableError):
                    self._lost.add((await self._place(request))[0])
                self._forget_nodes()
                if attempt:
                    raise WorkspaceError(f"the workspace host is unavailable: {exc}") from exc
        raise AssertionError("unreachable")

    # WorkspaceService
    async def open(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceView:
        """Open the workspace on its node; say so in the prompt when it was re-created."""
        self.loop = self.loop or asyncio.get_running_loop()
        view = WorkspaceView.model_validate_json(await self._call(request, "open", cwd))
        _, moved_from = await self._place(request)
        if moved_from is not None:
            view.prompt_fragment += (
                "\n\nNote: this workspace was re-created on another machine after the one "
                "holding it was lost. Files written there before may be gone."
            )
        return view

    async def execute(
        self, request: WorkspaceRequest, invocation: ToolInvocation
    ) -> AsyncGenerator[ToolOutput, None]:
        """Stream the call from the workspace's actor; closing the stream cancels it there."""
        try:
            actor = await self._actor(request)
        except (RayError, WorkspaceError, OSError) as exc:
            yield final_error(f"The workspace is unavailable: {exc}")
            return
        stream = actor.execute.remote(request.model_dump_json(), invocation.model_dump_json())
        finished = False
        try:
            async for ref in stream:
                output = ToolOutput.model_validate_json(await ref)
                finished = finished or (output.chunk is not None and output.chunk.is_final)
                yield output
            finished = True
        except RayError as exc:
            self._forget_nodes()
            if not finished:
                finished = True
                yield final_error(
                    "The workspace host stopped while the call ran "
                    f"({type(exc).__name__}); the call's effects may be incomplete."
                )
        finally:
            if not finished:
                with contextlib.suppress(RayError):
                    actor.cancel.remote(invocation.call_id)

    async def call_mcp(
        self, request: WorkspaceRequest, server: str, tool: str, arguments: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        """Stream an MCP tool call from the workspace's actor."""
        try:
            actor = await self._actor(request)
            stream = actor.call_mcp.remote(
                request.model_dump_json(), server, tool, json.dumps(arguments)
            )
            async for ref in stream:
                yield ToolChunk.model_validate_json(await ref)
        except (RayError, WorkspaceError) as exc:
            chunk = final_error(f"The workspace's MCP server is unavailable: {exc}").chunk
            assert chunk is not None
            yield chunk

    async def adopt(self, request: WorkspaceRequest, tool_call_id: str) -> bool:
        """Hand a running call over to the workspace's actor (see `WorkspaceService.adopt`)."""
        try:
            return bool(await self._call(request, "adopt", tool_call_id))
        except WorkspaceError:
            return False

    async def stop_background(self, request: WorkspaceRequest, tool_call_id: str) -> bool:
        """Stop a call the workspace's actor adopted."""
        return bool(await self._call(request, "stop_background", tool_call_id))

    async def status(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceStatusView:
        """The session's working directory and its git state, from the workspace's actor."""
        return WorkspaceStatusView.model_validate_json(await self._call(request, "status", cwd))

    async def offload_context(
        self, request: WorkspaceRequest, session_id: str, msgs: list[Msg]
    ) -> str:
        """Persist compressed messages in the workspace."""
        payload = json.dumps([m.model_dump(mode="json") for m in msgs])
        return str(await self._call(request, "offload_context", session_id, payload))

    async def offload_tool_result(
        self, request: WorkspaceRequest, session_id: str, result: ToolResultBlock
    ) -> str:
        """Persist an oversized tool result in the workspace."""
        payload = result.model_dump_json()
        return str(await self._call(request, "offload_tool_result", session_id, payload))

    async def clear_session(self, request: WorkspaceRequest, session_id: str) -> None:
        """Delete what was offloaded for a session."""
        await self._call(request, "clear_session", session_id)

    async def mcp_statuses(self, request: WorkspaceRequest) -> list[MCPStatus]:
        """The workspace's MCP servers."""
        raw = json.loads(await self._call(request, "mcp_statuses"))
        return [MCPStatus.model_validate(item) for item in raw]

    async def add_mcp(self, request: WorkspaceRequest, config: MCPClientConfig) -> None:
        """Register an MCP server in the workspace."""
        await self._call(request, "add_mcp", config.model_dump_json())

    async def remove_mcp(self, request: WorkspaceRequest, name: str) -> None:
        """Unregister an MCP server."""
        await self._call(request, "remove_mcp", name)

    async def installed_skills(self, request: WorkspaceRequest) -> list[InstalledSkill]:
        """The workspace's skills."""
        raw = json.loads(await self._call(request, "installed_skills"))
        return [InstalledSkill.model_validate(item) for item in raw]

    async def add_skill(self, request: WorkspaceRequest, bundle: SkillBundle) -> InstalledSkill:
        """Install a skill in the workspace."""
        raw = await self._call(request, "add_skill", bundle.model_dump_json())
        return InstalledSkill.model_validate_json(raw)

    async def remove_skill(self, request: WorkspaceRequest, name: str) -> None:
        """Uninstall a skill."""
        await self._call(request, "remove_skill", name)

    async def list_directory(self, request: WorkspaceRequest, path: str) -> DirectoryListing:
        """List one directory inside the workspace, on its node."""
        raw = await self._call(request, "list_directory", path)
        return DirectoryListing.model_validate_json(raw)

    async def read_file(self, request: WorkspaceRequest, path: str) -> FileStream:
        """Describe the file on its node; its bytes stream from there as `chunks` is read."""
        info = FileInfo.model_validate_json(await self._call(request, "file_info", path))
        return FileStream(info, self._file_chunks(request, path, info.size_bytes))

    async def _file_chunks(
        self, request: WorkspaceRequest, path: str, size: int
    ) -> AsyncGenerator[bytes, None]:
        actor = await self._actor(request)
        stream = actor.file_chunks.remote(request.model_dump_json(), path, size)
        finished = False
        try:
            async for ref in stream:
                yield await ref
            finished = True
        except RayTaskError as exc:
            finished = True
            raise _workspace_error(exc) from None
        except RayError as exc:
            self._forget_nodes()
            raise WorkspaceError(f"the workspace host stopped while {path!r} was read") from exc
        finally:
            if not finished:  # the reader went away: stop reading on the node
                with contextlib.suppress(RayError):
                    ray.cancel(stream)

    async def aclose(self) -> None:
        """Close this process's Redis connection (the actors keep serving)."""
        if self._owns_redis:
            await self._redis.aclose()


def _workspace_error(exc: RayTaskError) -> WorkspaceError:
    """The workspace error an actor raised (any other failure wrapped in one)."""
    cause = exc.cause
    if isinstance(cause, WorkspaceError):
        return cause
    return WorkspaceError(f"{type(cause).__name__}: {cause}")
