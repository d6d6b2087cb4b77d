"""`/workspace/directories`, `/workspace/files`: browsing a workspace, confined to it, over HTTP."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.support.api import make_session as session_with_model
from tests.support.api import post_chat
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve._workspace_api import (
    ALICE,
    BOB,
    WorkspaceAPI,
    make_session,
    open_workspace,
    serve_api,
)

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def service(redis_url: str, tmp_path: Path) -> AsyncIterator[WorkspaceAPI]:
    async with serve_api(redis_url, tmp_path / "root", workspace_backend="local") as service:
        yield service


@pytest.fixture
async def scope(service: WorkspaceAPI) -> dict[str, str]:
    """A session of alice's whose workspace holds files and, as an agent may leave them,
    symbolic links to /etc and to bob's workspace."""
    scope = await make_session(service.api)
    workdir = Path(await open_workspace(service.api, scope))
    bob = await make_session(service.api, BOB)
    bob_workdir = Path(await open_workspace(service.api, bob, BOB))
    (bob_workdir / "secret.txt").write_text("bob's secret\n")
    (workdir / "notes").mkdir()
    (workdir / "notes" / "todo.md").write_text("# todo\n")
    (workdir / "page.html").write_text("<script>alert(1)</script>")
    (workdir / "etc").symlink_to("/etc")
    (workdir / "bob").symlink_to(bob_workdir)
    (workdir / "bob-secret").symlink_to(bob_workdir / "secret.txt")
    return scope


def refused(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    for word in words:
        assert word in detail, detail


async def test_directories_are_listed_from_the_workspace_root(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    workdir = service.workdir("alice", scope)
    listed = await service.api.get("/workspace/directories", params=scope, headers=ALICE)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert set(body) == {"path", "entries"}
    assert body["path"] == str(workdir)
    entries = {e["name"]: e for e in body["entries"]}
    assert set(entries["notes"]) == {"name", "is_dir", "size_bytes", "updated_at"}
    assert entries["notes"]["is_dir"] is True
    assert entries["page.html"]["size_bytes"] == 25
    assert entries["etc"] == {**entries["etc"], "is_dir": False, "size_bytes": None}

    for path in ("notes", str(workdir / "notes"), "notes/../notes/."):
        nested = await service.api.get(
            "/workspace/directories", params={**scope, "path": path}, headers=ALICE
        )
        assert nested.json()["path"] == str(workdir / "notes")
        assert [e["name"] for e in nested.json()["entries"]] == ["todo.md"]


async def test_paths_leaving_the_workspace_are_refused(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    bob_root = str(service.root / "bob")

    async def listing(path: str) -> httpx.Response:
        params = {**scope, "path": path}
        return await service.api.get("/workspace/directories", params=params, headers=ALICE)

    async def download(path: str) -> httpx.Response:
        params = {**scope, "path": path}
        return await service.api.get("/workspace/files", params=params, headers=ALICE)

    for path in ("etc", "bob", "etc/ssl"):
        refused(await listing(path), 403, "symbolic link", "not followed")
    for path in ("etc/passwd", "bob/secret.txt", "bob-secret"):
        refused(await download(path), 403, "symbolic link")
    for path in ("..", "../..", "/etc", bob_root, "notes/../../"):
        refused(await listing(path), 403, "outside the workspace")
    for path in ("../../bob", "/etc/passwd", f"{bob_root}/x/secret.txt"):
        refused(await download(path), 403, "outside the workspace")
    assert (await download("../../bob")).json()["error"]["type"] == "PathForbidden"


async def test_missing_paths_and_wrong_kinds_are_clear(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    async def get(route: str, path: str) -> httpx.Response:
        return await service.api.get(route, params={**scope, "path": path}, headers=ALICE)

    refused(await get("/workspace/directories", "nope"), 404, "'nope'")
    refused(await get("/workspace/files", "notes/nope.md"), 404, "'notes/nope.md'")
    refused(await get("/workspace/directories", "page.html"), 400, "is a file, not a directory")
    refused(await get("/workspace/files", "notes"), 400, "is a directory, not a file")
    os.mkfifo(service.workdir("alice", scope) / "pipe")
    refused(await get("/workspace/files", "pipe"), 400, "not a regular file")
    missing = await service.api.get("/workspace/files", params=scope, headers=ALICE)
    assert missing.status_code == 422
    assert ["query", "path"] in [e["loc"] for e in missing.json()["detail"]]


async def test_files_stream_whole_with_safe_headers(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    workdir = service.workdir("alice", scope)
    payload = os.urandom(3 * 1024 * 1024 + 7)  # several chunks
    (workdir / "notes" / "data.bin").write_bytes(payload)
    got = await service.api.get(
        "/workspace/files", params={**scope, "path": "notes/data.bin"}, headers=ALICE
    )
    assert got.status_code == 200
    assert got.content == payload
    assert got.headers["content-length"] == str(len(payload))
    assert got.headers["content-type"] == "application/octet-stream"
    assert "content-disposition" not in got.headers

    page = await service.api.get(
        "/workspace/files",
        params={**scope, "path": str(workdir / "page.html"), "download": "true"},
        headers=ALICE,
    )
    assert page.text == "<script>alert(1)</script>"
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["content-security-policy"] == "sandbox"
    assert page.headers["content-disposition"] == "attachment; filename*=UTF-8''page.html"


async def test_another_users_session_is_not_found(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    for route in ("/workspace/directories", "/workspace/files"):
        response = await service.api.get(
            route, params={**scope, "path": "notes/todo.md"}, headers=BOB
        )
        assert response.status_code == 404
        assert response.json()["error"]["type"] == "SessionNotFound"
    minted = await service.api.post(
        "/workspace/files/download-token", params={**scope, "path": "notes/todo.md"}, headers=BOB
    )
    assert minted.status_code == 404
    other_agent = {**scope, "agent_id": "someone-else", "path": "notes/todo.md"}
    assert (
        await service.api.get("/workspace/files", params=other_agent, headers=ALICE)
    ).status_code == 404


async def test_download_tokens_stand_in_for_the_user_for_one_path(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    file = {**scope, "path": "notes/todo.md"}
    minted = await service.api.post("/workspace/files/download-token", params=file, headers=ALICE)
    assert minted.status_code == 200, minted.text
    assert set(minted.json()) == {"token", "expires_at"}
    token = minted.json()["token"]

    got = await service.api.get("/workspace/files", params={**file, "token": token})
    assert got.status_code == 200
    assert got.text == "# todo\n"

    async def with_token(params: dict[str, str], value: str = token) -> httpx.Response:
        return await service.api.get("/workspace/files", params={**params, "token": value})

    refused(await with_token({**file, "path": "page.html"}), 401, "another session or path")
    sibling = await service.api.post(
        "/sessions/", json={"agent_id": scope["agent_id"]}, headers=ALICE
    )
    other_session = {**file, "session_id": sibling.json()["session_id"]}
    refused(await with_token(other_session), 401, "another session or path")
    expiry, user, tag = token.split(".")
    flipped = tag[:-2] + ("A" if tag[-2] != "A" else "B") + tag[-1]
    refused(await with_token(file, f"{expiry}.{user}.{flipped}"), 401, "altered")
    later = str(int(expiry) + 3600)
    refused(await with_token(file, f"{later}.{user}.{tag}"), 401, "altered")
    as_bob = "Ym9i"  # base64url("bob")
    refused(await with_token(file, f"{expiry}.{as_bob}.{tag}"), 401, "altered")
    refused(await with_token(file, "garbage"), 401, "malformed")

    expired, _ = await service.runtime.download_tokens.sign(
        "alice", scope["agent_id"], scope["session_id"], "notes/todo.md", ttl=-1
    )
    refused(await with_token(file, expired), 401, "expired")
    refused(await service.api.get("/workspace/files", params=file), 401, "X-User-ID")


async def test_tokens_are_minted_only_for_files_the_user_may_read(
    service: WorkspaceAPI, scope: dict[str, str]
) -> None:
    async def mint(path: str) -> httpx.Response:
        params = {**scope, "path": path}
        return await service.api.post(
            "/workspace/files/download-token", params=params, headers=ALICE
        )

    refused(await mint("bob-secret"), 403, "symbolic link")
    refused(await mint("../../bob/x"), 403, "outside the workspace")
    refused(await mint("notes"), 400, "directory")
    refused(await mint("nope"), 404, "'nope'")
    no_path = await service.api.post("/workspace/files/download-token", params=scope, headers=ALICE)
    assert no_path.status_code == 422

    minted = await mint("notes/todo.md")
    await service.api.delete(f"/sessions/{scope['session_id']}", headers=ALICE)
    file = {**scope, "path": "notes/todo.md", "token": minted.json()["token"]}
    assert (await service.api.get("/workspace/files", params=file)).status_code == 404


async def test_links_an_agent_makes_in_its_sandbox_are_not_followed(
    redis_url: str, tmp_path: Path
) -> None:
    async with serve_api(redis_url, tmp_path / "root", workspace_backend="sandbox") as service:
        api = service.api
        bob = await make_session(api, BOB)
        bob_root = Path(await open_workspace(api, bob, BOB))
        (bob_root / "secret.txt").write_text("bob's secret\n")
        with OpenAIWireServer(default_text="done") as model:
            agent_id, session_id = await session_with_model(api, model.base_url)
            bypass = {"permission_mode": "bypass"}
            patched = await api.patch(f"/sessions/{session_id}", json=bypass, headers=ALICE)
            assert patched.status_code == 200, patched.text
            command = (
                f"echo made > made.txt && ln -s /etc etc && ln -s {bob_root}/secret.txt bob "
                "&& ln -s .. up"
            )
            model.push(ScriptedReply(tool_calls=[("c1", "Bash", {"command": command})]))
            assert (await post_chat(api, agent_id, session_id, "go")).status_code == 200
            await until_replied(api, session_id)
        scope = {"agent_id": agent_id, "session_id": session_id}

        listed = await api.get("/workspace/directories", params=scope, headers=ALICE)
        assert listed.json()["path"] == str(service.workdir("alice", scope))
        entries = {e["name"]: e for e in listed.json()["entries"]}
        assert entries["made.txt"]["size_bytes"] == 5
        for link in ("etc", "bob", "up"):
            assert (entries[link]["is_dir"], entries[link]["size_bytes"]) == (False, None)
        made = await api.get(
            "/workspace/files", params={**scope, "path": "made.txt"}, headers=ALICE
        )
        assert made.text == "made\n"
        for path in ("bob", "etc/passwd", "up/bob/secret.txt"):
            got = await api.get("/workspace/files", params={**scope, "path": path}, headers=ALICE)
            refused(got, 403, "symbolic link")
        up = await api.get("/workspace/directories", params={**scope, "path": "up"}, headers=ALICE)
        refused(up, 403, "symbolic link")


async def until_replied(api: httpx.AsyncClient, session_id: str) -> None:
    """Wait until the session's reply is over."""
    async with asyncio.timeout(60):
        while True:
            page = await api.get(f"/sessions/{session_id}/messages", headers=ALICE)
            body = page.json()
            if not body["is_running"] and any(m["role"] == "assistant" for m in body["messages"]):
                return
            await asyncio.sleep(0.05)
