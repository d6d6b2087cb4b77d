"""`/workspace/directories`, `/workspace/files`: browsing and downloading a workspace's files.

Paths are absolute or relative to the workspace root, and confined to it: the workspace host
walks them without following symbolic links, so `..`, a link to `/etc` or to another tenant's
workspace is refused (403) rather than followed. A download can be authorized by a short-lived
token instead of the X-User-ID header (see `actors.storage.download_tokens`), so that a browser can
save it straight to disk.
"""

from __future__ import annotations

import contextlib
import mimetypes
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Header, HTTPException, Query
from fastapi.responses import StreamingResponse

from actors.client import DirectoryListing
from serve.deps import Runtime, UserId
from serve.library_schemas import DownloadTokenResponse
from serve.routes.workspace import SessionWorkspace

router = APIRouter(prefix="/workspace", tags=["workspace"])

AgentId = Annotated[str, Query(description="The session's agent.")]
SessionId = Annotated[str, Query(description="The session whose workspace is meant.")]
FilePath = Annotated[
    str, Query(description="Absolute path, or one relative to the workspace root.")
]

# A workspace file is the agent's, not the API's: never let a browser run it as a page of
# this origin (an HTML file previewed inline would otherwise script the API).
_UNTRUSTED = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox",
    "Cache-Control": "no-store",
}


@router.get("/directories")
async def list_workspace_directory(
    workspace: SessionWorkspace,
    path: Annotated[
        str,
        Query(
            description="Absolute path, or one relative to the workspace root. Empty lists the "
            "workspace root itself."
        ),
    ] = "",
) -> DirectoryListing:
    """List one directory level of the session's workspace (confined to the workspace)."""
    return await workspace.list_directory(path)


@router.post("/files/download-token")
async def create_download_token(
    user: UserId,
    runtime: Runtime,
    agent_id: AgentId,
    session_id: SessionId,
    path: Annotated[str, Query(description="The path the token will authorize.")],
) -> DownloadTokenResponse:
    """Mint a short-lived token for a browser-native download of one file.

    The session and the file are checked here, so that a mistake surfaces as an error the UI
    can show rather than as the browser's error page.
    """
    workspace = await runtime.sessions.workspace(user, agent_id, session_id)
    await workspace.read_file(path)
    token, expires_at = await runtime.download_tokens.sign(user, agent_id, session_id, path)
    return DownloadTokenResponse(token=token, expires_at=expires_at)


@router.get("/files")
async def read_workspace_file(
    runtime: Runtime,
    agent_id: AgentId,
    session_id: SessionId,
    path: FilePath,
    download: Annotated[bool, Query(description="Force a Content-Disposition attachment.")] = False,
    token: Annotated[
        str | None,
        Query(
            description="A token from `POST /workspace/files/download-token`, accepted in place "
            "of the X-User-ID header (for the same agent_id, session_id and path)."
        ),
    ] = None,
    x_user_id: Annotated[str | None, Header(description="The caller's user id.")] = None,
) -> StreamingResponse:
    """Stream one file out of the session's workspace, chunk by chunk."""
    if token is not None:
        user = await runtime.download_tokens.verify(token, agent_id, session_id, path)
    elif x_user_id and x_user_id.strip():
        user = x_user_id
    else:
        raise HTTPException(
            status_code=401, detail="an X-User-ID header or a download token is required"
        )
    workspace = await runtime.sessions.workspace(user, agent_id, session_id)
    stream = await workspace.read_file(path)
    name = stream.info.name
    headers = {**_UNTRUSTED, "Content-Length": str(stream.info.size_bytes)}
    if download:
        headers["Content-Disposition"] = f"attachment; filename*=UTF-8''{quote(name)}"
    return StreamingResponse(
        _closing(stream.chunks),
        media_type=mimetypes.guess_type(name)[0] or "application/octet-stream",
        headers=headers,
    )


async def _closing(chunks: AsyncGenerator[bytes, None]) -> AsyncIterator[bytes]:
    """`chunks`, closed (stopping the read on the workspace's node) however the send ends."""
    async with contextlib.aclosing(chunks):
        async for chunk in chunks:
            yield chunk
