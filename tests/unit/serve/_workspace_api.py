"""Serving the API for the workspace tests: real Redis, sessions and workspaces in-process."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}


@dataclass
class WorkspaceAPI:
    """The API client, the runtime behind it and the directory holding the workspaces."""

    api: httpx.AsyncClient
    runtime: RuntimeClient
    root: Path

    def workdir(self, user: str, scope: dict[str, str]) -> Path:
        """Where the workspace of a session (of the per-agent policy) lives."""
        return self.root / user / scope["agent_id"]


@contextlib.asynccontextmanager
async def serve_api(redis_url: str, root: Path, **settings: Any) -> AsyncIterator[WorkspaceAPI]:
    """The app over `redis_url`, its workspaces under `root`."""
    config = RuntimeSettings(redis_url=redis_url, workspace_root=str(root), **settings)
    app = build_app(lambda: RuntimeClient(config, InProcessDispatcher(config)))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield WorkspaceAPI(client, app.state.runtime, root)


async def make_session(
    api: httpx.AsyncClient, headers: dict[str, str] = ALICE, **session: Any
) -> dict[str, str]:
    """Create an agent and a session of it; return the workspace routes' query parameters."""
    agent = await api.post("/agent/", json={"name": "A"}, headers=headers)
    agent_id = agent.json()["agent_id"]
    created = await api.post("/sessions/", json={"agent_id": agent_id, **session}, headers=headers)
    assert created.status_code == 201, created.text
    return {"agent_id": agent_id, "session_id": created.json()["session_id"]}


async def open_workspace(
    api: httpx.AsyncClient, scope: dict[str, str], headers: dict[str, str] = ALICE
) -> str:
    """Open the session's workspace (by listing its root); return the root's path."""
    listed = await api.get("/workspace/directories", params=scope, headers=headers)
    assert listed.status_code == 200, listed.text
    return str(listed.json()["path"])
