"""Browsing and downloading a workspace through Serve, served by a workspace actor elsewhere.

The API replica never touches workspace files: listings and file bytes come from the
`WorkspaceActor` (another process), the bytes streamed through Ray a chunk at a time.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import ray

from actors._remote.workspace_actor import workspace_actor_name
from tests.integration.conftest import LiveService

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}


@pytest.fixture
async def api(live_service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_service.base_url, timeout=60) as client:
        yield client


async def test_files_are_listed_and_downloaded_from_the_workspace_actor(
    api: httpx.AsyncClient, live_service: LiveService
) -> None:
    agent = await api.post("/agent/", json={"name": "A"}, headers=ALICE)
    agent_id = agent.json()["agent_id"]
    session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=ALICE)
    scope = {"agent_id": agent_id, "session_id": session.json()["session_id"]}

    opened = await api.get("/workspace/directories", params=scope, headers=ALICE)
    assert opened.status_code == 200, opened.text
    workdir = Path(opened.json()["path"])
    assert workdir.is_relative_to(live_service.settings.workspace_root)
    payload = os.urandom(5 * 1024 * 1024 + 3)  # many chunks through the object store
    (workdir / "out").mkdir()
    (workdir / "out" / "report.bin").write_bytes(payload)
    (workdir / "out" / "etc").symlink_to("/etc")

    listed = await api.get("/workspace/directories", params={**scope, "path": "out"}, headers=ALICE)
    entries = {e["name"]: e for e in listed.json()["entries"]}
    assert entries["report.bin"]["size_bytes"] == len(payload)
    assert entries["etc"]["is_dir"] is False

    file = {**scope, "path": "out/report.bin"}
    minted = await api.post("/workspace/files/download-token", params=file, headers=ALICE)
    assert minted.status_code == 200, minted.text
    got = await api.get("/workspace/files", params={**file, "token": minted.json()["token"]})
    assert got.status_code == 200
    assert got.headers["content-length"] == str(len(payload))
    assert got.content == payload

    # A reader that leaves early stops the read on the node; the workspace keeps serving.
    async with api.stream("GET", "/workspace/files", params=file, headers=ALICE) as partial:
        async for _ in partial.aiter_bytes():
            break
    again = await api.get("/workspace/files", params=file, headers=ALICE)
    assert again.content == payload

    for path in ("out/etc/passwd", "../../x", "/etc/passwd"):
        refused = await api.get("/workspace/files", params={**scope, "path": path}, headers=ALICE)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["type"] == "PathForbidden"
    missing = await api.get("/workspace/files", params={**scope, "path": "nope"}, headers=ALICE)
    assert missing.status_code == 404

    node = ray.get_runtime_context().get_node_id()
    host = ray.get_actor(workspace_actor_name(node), namespace=live_service.settings.namespace)
    assert ray.get(host.pid.remote()) != os.getpid()
