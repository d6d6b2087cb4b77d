"""`/workspace/...`: a session's workspace: its MCP servers, skills, and where it points.

The session is named by the `agent_id` and `session_id` query parameters (AgentScope's
contract); another user's session, or one of another agent, is a 404.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Response

from actors.client import WorkspaceHandle
from serve.deps import Runtime, UserId
from serve.workspace_schemas import (
    AddSkillRequest,
    MCPClientBody,
    MCPClientStatusBody,
    SkillBody,
    WorkspaceStatus,
)
from workspaces import (
    InvalidSkill,
    MCPExists,
    MCPUnavailable,
    WorkspaceClosed,
    WorkspaceError,
    WorkspaceItemNotFound,
)

router = APIRouter(prefix="/workspace", tags=["workspace"])

_STATUS: list[tuple[type[WorkspaceError], int]] = [
    (WorkspaceItemNotFound, 404),
    (MCPExists, 409),
    (MCPUnavailable, 400),
    (InvalidSkill, 400),
    (WorkspaceClosed, 503),  # evicted or shut down under the request; retrying opens it again
]


@contextlib.contextmanager
def _http_errors() -> Iterator[None]:
    """Turn the workspace errors a caller can act on into HTTP errors (others are 500s)."""
    try:
        yield
    except WorkspaceError as exc:
        for kind, status in _STATUS:
            if isinstance(exc, kind):
                raise HTTPException(status_code=status, detail=str(exc)) from exc
        raise


async def _session_workspace(
    user: UserId,
    runtime: Runtime,
    agent_id: Annotated[str, Query(description="The session's agent.")],
    session_id: Annotated[str, Query(description="The session whose workspace is meant.")],
) -> WorkspaceHandle:
    return await runtime.sessions.workspace(user, agent_id, session_id)


SessionWorkspace = Annotated[WorkspaceHandle, Depends(_session_workspace)]


@router.get("/mcp")
async def list_mcps(workspace: SessionWorkspace) -> list[MCPClientStatusBody]:
    """Return all MCP clients with live tool list and health status."""
    with _http_errors():
        statuses = await workspace.mcp_statuses()
    return [MCPClientStatusBody.of(status) for status in statuses]


@router.post("/mcp", status_code=201)
async def add_mcp(
    body: MCPClientBody, workspace: SessionWorkspace, user: UserId, runtime: Runtime
) -> MCPClientStatusBody:
    """Add an MCP client to the session's workspace (connected first when stateful).

    It is also kept in the user's library, unless the library has an MCP of that name.
    """
    with _http_errors():
        await workspace.add_mcp(body.to_config())
        statuses = await workspace.mcp_statuses()
    await runtime.library.remember_mcp(user, body.to_config())
    return next(MCPClientStatusBody.of(s) for s in statuses if s.config.name == body.name)


@router.delete("/mcp/{mcp_name}", status_code=204)
async def remove_mcp(mcp_name: str, workspace: SessionWorkspace) -> Response:
    """Remove an MCP client from the session's workspace by name."""
    with _http_errors():
        await workspace.remove_mcp(mcp_name)
    return Response(status_code=204)


@router.get("/skill")
async def list_skills(workspace: SessionWorkspace) -> list[SkillBody]:
    """Return all skills available in the session's workspace."""
    with _http_errors():
        installed = await workspace.installed_skills()
    return [SkillBody.of(skill) for skill in installed]


@router.post("/skill", status_code=201, deprecated=True)
async def add_skill(body: AddSkillRequest, workspace: SessionWorkspace) -> SkillBody:
    """Add a skill to the session's workspace from a directory on the server."""
    with _http_errors():
        installed = await workspace.add_skill(body.skill_path)
    return SkillBody.of(installed)


@router.delete("/skill/{skill_name}", status_code=204)
async def remove_skill(skill_name: str, workspace: SessionWorkspace) -> Response:
    """Remove a skill from the session's workspace by name."""
    with _http_errors():
        await workspace.remove_skill(skill_name)
    return Response(status_code=204)


@router.get("/status")
async def workspace_status(
    user: UserId,
    runtime: Runtime,
    agent_id: Annotated[str, Query(description="The session's agent.")],
    session_id: Annotated[str, Query(description="The session whose workspace is meant.")],
) -> WorkspaceStatus:
    """Report where a session is pointed (its `cwd`), and the git state of that place.

    Git is best effort: a directory that is not a repository is the normal case, so every git
    failure reads as `git: null` and the rest is still served.
    """
    with _http_errors():
        workspace = await runtime.sessions.workspace(user, agent_id, session_id)
        session = await runtime.sessions.get(user, session_id)
        view = await workspace.status(session.config.cwd)
    return WorkspaceStatus(workdir=view.workdir, cwd=view.cwd, git=view.git)
