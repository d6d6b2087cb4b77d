"""`RayWorkspaceService`: workspace requests sent to `WorkspaceActor`s on sandbox nodes.

Placement: nodes that advertise the `troupe_sandbox` resource (or the label
`troupe.io/node-role=sandbox`) host the workspaces, one `WorkspaceActor` per node, and never
agent nodes; without such nodes (a laptop) the actor runs on the caller's node. Each workspace
is assigned to the least-loaded sandbox node on first use and the assignment is kept in Redis,
so every session and API replica reaches the same host. When that node is gone, the workspace
is re-created on another node; the agent is told, since files that lived only on the lost
node's disk are gone with it. What `open` returns is reused while the workspace's host reports
no change (`actors.workspaces.views`).
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
from actors.workspaces.views import ViewCache
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
_MOVED_NOTE = (
    "\n\nNote: this workspace was re-created on another machine after the one holding it was "
    "lost. Files written there before may be gone."
)


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
        self._handles: dict[str, Any] = {}
        self._views = ViewCache()
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

    async def _handle(self, node: str) -> Any:
        """The workspace actor of `node` (its handle kept until a call to it fails)."""
        from actors._remote.workspace_actor import workspace_actor

        handle = self._handles.get(node)
        if handle is None:
            handle = await asyncio.to_thread(workspace_actor, self._settings, node)
            self._handles[node] = handle
        return handle

    async def _actor(self, request: WorkspaceRequest) -> tuple[str, Any]:
        node, _ = await self._place(request)
        return node, await self._handle(node)

    def _forget(self, node: str) -> None:
        """A call to `node`'s actor failed: look nodes and the actor up afresh, drop its views."""
        self._nodes = (0.0, [])
        self._handles.pop(node, None)
        self._views.drop(node)

    async def _call(
        self, request: WorkspaceRequest, method: str, *args: Any, changes: bool = False
    ) -> Any:
        """Call an actor method, re-placing the workspace once if its node is gone.

        `changes`: the call may change what `open` describes (the views there are dropped).
        """
        return (await self._call_placed(request, method, *args, changes=changes))[2]

    async def _call_placed(
        self, request: WorkspaceRequest, method: str, *args: Any, changes: bool = False
    ) -> tuple[str, str | None, Any]:
        """`_call`, also returning the node that answered and the one the workspace left."""
        for attempt in (0, 1):
            node, moved_from = await self._place(request)
            actor = await self._handle(node)
            try:
                result = await getattr(actor, method).remote(request.model_dump_json(), *args)
            except RayTaskError as exc:
                raise _workspace_error(exc) from None
            except (RayActorError, ActorUnschedulableError) as exc:
                if isinstance(exc, ActorUnschedulableError):
                    self._lost.add(node)
                self._forget(node)
                if attempt:
                    raise WorkspaceError(f"the workspace host is unavailable: {exc}") from exc
            else:
                return node, moved_from, result
            finally:
                if changes:
                    self._views.drop(node)
        raise AssertionError("unreachable")

    # WorkspaceService
    async def open(self, request: WorkspaceRequest, cwd: str | None) -> WorkspaceView:
        """Open the workspace on its node; say so in the prompt when it was re-created.

        A view opened before is reused while it is valid (`actors.workspaces.views`).
        """
        self.loop = self.loop or asyncio.get_running_loop()
        node, _ = await self._place(request)
        key = request.model_dump_json()
        view = self._views.get(node, key, cwd)
        if view is not None:
            return view
        stamp = self._views.stamp(node, (await self._handle(node)).changed.remote)
        opened_at, moved_from, raw = await self._call_placed(request, "open", cwd)
        view = WorkspaceView.model_validate_json(raw)
        if moved_from is not None:
            view.prompt_fragment += _MOVED_NOTE
        if opened_at == node:
            self._views.put(node, key, cwd, stamp, view)
        return view

    async def execute(
        self, request: WorkspaceRequest, invocation: ToolInvocation
    ) -> AsyncGenerator[ToolOutput, None]:
        """Stream the call from the workspace's actor; closing the stream cancels it there."""
        try:
            node, actor = await self._actor(request)
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
            self._forget(node)
            if not finished:
                finished = True
                yield final_error(
                    "The workspace host stopped while the call ran "
                    f"({type(exc).__name__}); the call's effects may be incomplete."
                )
        finally:
            self._views.drop(node)  # the call may have changed the workspace's skills or MCPs
            if not finished:
                with contextlib.suppress(RayError):
                    actor.cancel.remote(invocation.call_id)

    async def call_mcp(
        self, request: WorkspaceRequest, server: str, tool: str, arguments: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        """Stream an MCP tool call from the workspace's actor."""
        node = None
        try:
            node, actor = await self._actor(request)
            stream = actor.call_mcp.remote(
                request.model_dump_json(), server, tool, json.dumps(arguments)
            )
            async for ref in stream:
                yield ToolChunk.model_validate_json(await ref)
        except (RayError, WorkspaceError) as exc:
            chunk = final_error(f"The workspace's MCP server is unavailable: {exc}").chunk
            assert chunk is not None
            yield chunk
        finally:
            if node is not None:
                self._views.drop(node)

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
        await self._call(request, "add_mcp", config.model_dump_json(), changes=True)

    async def remove_mcp(self, request: WorkspaceRequest, name: str) -> None:
        """Unregister an MCP server."""
        await self._call(request, "remove_mcp", name, changes=True)

    async def installed_skills(self, request: WorkspaceRequest) -> list[InstalledSkill]:
        """The workspace's skills."""
        raw = json.loads(await self._call(request, "installed_skills"))
        return [InstalledSkill.model_validate(item) for item in raw]

    async def add_skill(self, request: WorkspaceRequest, bundle: SkillBundle) -> InstalledSkill:
        """Install a skill in the workspace."""
        raw = await self._call(request, "add_skill", bundle.model_dump_json(), changes=True)
        return InstalledSkill.model_validate_json(raw)

    async def remove_skill(self, request: WorkspaceRequest, name: str) -> None:
        """Uninstall a skill."""
        await self._call(request, "remove_skill", name, changes=True)

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
        node, actor = await self._actor(request)
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
            self._forget(node)
            raise WorkspaceError(f"the workspace host stopped while {path!r} was read") from exc
        finally:
            if not finished:  # the reader went away: stop reading on the node
                with contextlib.suppress(RayError):
                    ray.cancel(stream)

    async def aclose(self) -> None:
        """Stop following the actors' changes and close this process's Redis connection.

        The actors keep serving.
        """
        await self._views.aclose()
        if self._owns_redis:
            await self._redis.aclose()


def _workspace_error(exc: RayTaskError) -> WorkspaceError:
    """The workspace error an actor raised (any other failure wrapped in one)."""
    cause = exc.cause
    if isinstance(cause, WorkspaceError):
        return cause
    return WorkspaceError(f"{type(cause).__name__}: {cause}")
