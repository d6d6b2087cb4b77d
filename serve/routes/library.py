"""`/mcp`, `/skill`: the user's own library of MCP servers and skills.

User-level, unlike `/workspace/mcp` and `/workspace/skill`, which manage one session's
workspace. Items get in when added to a workspace by hand (see `actors.workspaces.library`); another
user's item is a 404.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Response

from actors.client import SkillRecord
from serve.deps import Runtime, UserId
from serve.library_schemas import MCPView, SkillView, UpdateMCPRequest

router = APIRouter()


@router.get("/mcp", tags=["mcp"])
async def list_library_mcps(user: UserId, runtime: Runtime) -> list[MCPView]:
    """Return every MCP in the user's library, ordered by name."""
    return [MCPView.of(record) for record in await runtime.library.list_mcps(user)]


@router.patch("/mcp/{mcp_id}", tags=["mcp"])
async def update_library_mcp(
    mcp_id: str, body: UpdateMCPRequest, user: UserId, runtime: Runtime
) -> MCPView:
    """Rename, enable or disable an MCP of the user's library.

    404 if it is not in the caller's library, 409 if the new name is taken, 422 if the name is
    not made of [A-Za-z0-9_-], 400 for `values` (there is no hub card to re-render from).
    """
    await runtime.library.get_mcp(user, mcp_id)
    if body.values is not None:
        raise HTTPException(
            status_code=400,
            detail="This MCP has no card to re-render from: it was added by hand (Troupe has "
            "no hubs). Add it to a workspace again under a new name to change its config.",
        )
    record = await runtime.library.update_mcp(user, mcp_id, body.name, body.enabled)
    return MCPView.of(record)


@router.delete("/mcp/{mcp_id}", status_code=204, tags=["mcp"])
async def delete_library_mcp(mcp_id: str, user: UserId, runtime: Runtime) -> Response:
    """Remove an MCP from the user's library; workspaces holding it keep it."""
    await runtime.library.delete_mcp(user, mcp_id)
    return Response(status_code=204)


@router.get("/skill", tags=["skill"])
async def list_library_skills(user: UserId, runtime: Runtime) -> list[SkillView]:
    """Return every skill in the user's library, ordered by name."""
    return [SkillView.of(record) for record in await runtime.library.list_skills(user)]


@router.get("/skill/{skill_id}", tags=["skill"])
async def get_library_skill(skill_id: str, user: UserId, runtime: Runtime) -> SkillRecord:
    """Return one skill of the user's library, including its SKILL.md."""
    return await runtime.library.get_skill(user, skill_id)


@router.delete("/skill/{skill_id}", status_code=204, tags=["skill"])
async def delete_library_skill(skill_id: str, user: UserId, runtime: Runtime) -> Response:
    """Remove a skill from the user's library; workspaces holding it keep their copy."""
    await runtime.library.delete_skill(user, skill_id)
    return Response(status_code=204)
