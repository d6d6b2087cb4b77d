"""`/workspace/{mcp,skill}/from-library`, `/workspace/skill/upload`: filling a workspace.

From the library, items are added one at a time and the response says which landed. An upload
is a folder sent as multipart parts (see `actors.workspaces.skill_upload`), checked before it is
sent to the workspace as a `SkillBundle`, then recorded in the user's library (see
`actors.workspaces.library`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, UploadFile
from pydantic import ValidationError

from actors.client import InvalidSkill, UploadManifest, check_manifest, pack_upload
from serve.deps import Runtime, UserId
from serve.library_schemas import (
    AddFromLibraryRequest,
    AddFromLibraryResponse,
    AddSkillsFromLibraryRequest,
)
from serve.routes.workspace import SessionWorkspace
from serve.workspace_schemas import SkillBody

router = APIRouter(prefix="/workspace", tags=["workspace"])

UPLOAD_PATH = f"{router.prefix}/skill/upload"


@router.post("/mcp/from-library", status_code=201)
async def add_mcps_from_library(
    body: AddFromLibraryRequest, user: UserId, runtime: Runtime, workspace: SessionWorkspace
) -> AddFromLibraryResponse:
    """Put MCPs of the user's library into the session's workspace (by library id).

    One that cannot be added does not cancel the rest; one already there is skipped.
    """
    result = await runtime.library.add_mcps_to(user, workspace, body.mcp_ids)
    return AddFromLibraryResponse.of(result)


@router.post("/skill/from-library", status_code=201)
async def add_skills_from_library(
    body: AddSkillsFromLibraryRequest, user: UserId, runtime: Runtime, workspace: SessionWorkspace
) -> AddFromLibraryResponse:
    """Put skills of the user's library into the session's workspace (by library id)."""
    result = await runtime.library.add_skills_to(user, workspace, body.skill_ids)
    return AddFromLibraryResponse.of(result)


@router.post("/skill/upload", status_code=201)
async def upload_skill(
    manifest: Annotated[
        str,
        Form(
            description="JSON `{entries: [{path, size}]}` describing the parts, in the order "
            "they are sent; every path under one folder holding SKILL.md."
        ),
    ],
    files: Annotated[list[UploadFile], File(description="The folder's files.")],
    user: UserId,
    runtime: Runtime,
    workspace: SessionWorkspace,
) -> SkillBody:
    """Install a skill from an uploaded folder, and keep it in the user's library.

    The manifest is what the client claims: its limits are checked before a part is read, and
    each part's size against it. Anything wrong is a 422 saying what.
    """
    try:
        parsed = UploadManifest.model_validate_json(manifest)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'manifest'}: {e['msg']}"
            for e in exc.errors(include_input=False)
        )
        raise HTTPException(status_code=422, detail=f"invalid manifest: {problems}") from exc
    async with runtime.upload_slots:
        try:
            root = check_manifest(parsed, len(files))
            contents = [
                await part.read(entry.size + 1)
                for entry, part in zip(parsed.entries, files, strict=True)
            ]
            bundle = pack_upload(parsed, root, contents)
            installed = await workspace.add_skill_bundle(bundle)
        except InvalidSkill as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        await runtime.library.remember_skill(user, installed.skill, bundle)
    return SkillBody.of(installed)
