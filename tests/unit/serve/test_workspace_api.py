"""`/workspace/mcp`, `/workspace/skill`: a session's workspace over HTTP (real Redis, real MCP)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app
from tests.support.mcp_servers import DEMO_SERVER, venv_script
from tests.unit.workspaces._helpers import write_skill

pytestmark = [pytest.mark.redis, pytest.mark.integration]

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}

DEMO: dict[str, Any] = {
    "name": "demo",
    "is_stateful": True,
    "mcp_config": {"type": "stdio_mcp", "command": sys.executable, "args": [str(DEMO_SERVER)]},
    "execution_timeout": 20,
}
TIME: dict[str, Any] = {
    "name": "time",
    "is_stateful": True,
    "mcp_config": {
        "type": "stdio_mcp",
        "command": venv_script("mcp-server-time"),
        "args": ["--local-timezone", "UTC"],
    },
    "enable_tools": ["convert_time"],
}


@pytest.fixture
async def api(redis_url: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    # The API semantics; MCP servers from tests/support exist only outside a sandbox.
    settings = RuntimeSettings(
        redis_url=redis_url, workspace_root=str(tmp_path / "root"), workspace_backend="local"
    )
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def make_session(api: httpx.AsyncClient, **session: Any) -> dict[str, str]:
    """Create an agent and a session of it; return the workspace routes' query parameters."""
    agent = await api.post("/agent/", json={"name": "A"}, headers=ALICE)
    agent_id = agent.json()["agent_id"]
    created = await api.post("/sessions/", json={"agent_id": agent_id, **session}, headers=ALICE)
    assert created.status_code == 201, created.text
    return {"agent_id": agent_id, "session_id": created.json()["session_id"]}


def field_errors(response: httpx.Response) -> list[tuple[Any, ...]]:
    assert response.status_code == 422, response.text
    return [tuple(e["loc"]) for e in response.json()["detail"]]


async def test_mcp_servers_are_added_listed_and_removed(
    api: httpx.AsyncClient, tmp_path: Path
) -> None:
    scope = await make_session(api)
    assert (await api.get("/workspace/mcp", params=scope, headers=ALICE)).json() == []

    added = await api.post("/workspace/mcp", params=scope, json=DEMO, headers=ALICE)
    assert added.status_code == 201, added.text
    body = added.json()
    assert body["is_healthy"] is True
    assert body["error"] is None
    assert body["mcp_config"]["type"] == "stdio_mcp"
    assert body["execution_timeout"] == 20
    assert {"echo", "add", "pid"} <= {tool["name"] for tool in body["tools"]}
    assert next(t for t in body["tools"] if t["name"] == "add")["description"] == (
        "Add two integers."
    )
    assert (await api.post("/workspace/mcp", params=scope, json=TIME, headers=ALICE)).is_success

    listed = (await api.get("/workspace/mcp", params=scope, headers=ALICE)).json()
    assert [m["name"] for m in listed] == ["demo", "time"]
    assert [t["name"] for t in listed[1]["tools"]] == ["convert_time"]
    assert listed[1]["enable_tools"] == ["convert_time"]

    mcp_file = tmp_path / "root" / "alice" / scope["agent_id"] / ".mcp"
    assert [entry["name"] for entry in json.loads(mcp_file.read_text())] == ["demo", "time"]

    removed = await api.delete("/workspace/mcp/demo", params=scope, headers=ALICE)
    assert removed.status_code == 204
    listed = (await api.get("/workspace/mcp", params=scope, headers=ALICE)).json()
    assert [m["name"] for m in listed] == ["time"]
    again = await api.delete("/workspace/mcp/demo", params=scope, headers=ALICE)
    assert again.status_code == 404
    assert "demo" in again.json()["detail"]


async def test_mcp_conflicts_and_unreachable_servers_are_refused(api: httpx.AsyncClient) -> None:
    scope = await make_session(api)
    assert (await api.post("/workspace/mcp", params=scope, json=DEMO, headers=ALICE)).is_success
    duplicate = await api.post("/workspace/mcp", params=scope, json=DEMO, headers=ALICE)
    assert duplicate.status_code == 409
    broken = {**DEMO, "name": "broken", "mcp_config": {"type": "stdio_mcp", "command": "/no/such"}}
    refused = await api.post("/workspace/mcp", params=scope, json=broken, headers=ALICE)
    assert refused.status_code == 400
    assert "broken" in refused.json()["detail"]
    listed = (await api.get("/workspace/mcp", params=scope, headers=ALICE)).json()
    assert [m["name"] for m in listed] == ["demo"]


async def test_skills_are_added_listed_and_removed(api: httpx.AsyncClient, tmp_path: Path) -> None:
    scope = await make_session(api)
    source = write_skill(tmp_path / "src" / "pdf", "pdf", "Extract text from PDFs.")
    added = await api.post(
        "/workspace/skill", params=scope, json={"skill_path": str(source)}, headers=ALICE
    )
    assert added.status_code == 201, added.text
    skill = added.json()
    assert set(skill) == {"name", "description", "dir", "markdown", "updated_at"}
    assert skill["name"] == "pdf"
    assert skill["dir"] == str(tmp_path / "root" / "alice" / scope["agent_id"] / "skills" / "pdf")
    assert "Extract text from PDFs." in skill["markdown"]

    listed = (await api.get("/workspace/skill", params=scope, headers=ALICE)).json()
    assert listed == [skill]

    bad = await api.post(
        "/workspace/skill", params=scope, json={"skill_path": str(tmp_path)}, headers=ALICE
    )
    assert bad.status_code == 400
    assert "SKILL.md" in bad.json()["detail"]

    assert (
        await api.delete("/workspace/skill/pdf", params=scope, headers=ALICE)
    ).status_code == 204
    assert (await api.get("/workspace/skill", params=scope, headers=ALICE)).json() == []
    assert (
        await api.delete("/workspace/skill/pdf", params=scope, headers=ALICE)
    ).status_code == 404


async def test_sessions_of_an_agent_share_its_workspace_unless_they_name_one(
    api: httpx.AsyncClient, tmp_path: Path
) -> None:
    first = await make_session(api)
    agent_id = first["agent_id"]
    second = await api.post("/sessions/", json={"agent_id": agent_id}, headers=ALICE)
    sibling = {"agent_id": agent_id, "session_id": second.json()["session_id"]}
    apart = await api.post(
        "/sessions/", json={"agent_id": agent_id, "workspace_id": "scratch"}, headers=ALICE
    )
    named = {"agent_id": agent_id, "session_id": apart.json()["session_id"]}

    source = write_skill(tmp_path / "review", "review", "Review code.")
    body = {"skill_path": str(source)}
    assert (await api.post("/workspace/skill", params=first, json=body, headers=ALICE)).is_success
    names = [
        s["name"] for s in (await api.get("/workspace/skill", params=sibling, headers=ALICE)).json()
    ]
    assert names == ["review"]
    assert (await api.get("/workspace/skill", params=named, headers=ALICE)).json() == []
    assert (tmp_path / "root" / "alice" / "scratch" / "skills").is_dir()


async def test_foreign_or_unknown_sessions_are_404(api: httpx.AsyncClient) -> None:
    scope = await make_session(api)
    assert (await api.get("/workspace/mcp", params=scope, headers=BOB)).status_code == 404
    assert (await api.get("/workspace/skill", params=scope, headers=BOB)).status_code == 404
    other_agent = {**scope, "agent_id": "someone-else"}
    assert (await api.get("/workspace/mcp", params=other_agent, headers=ALICE)).status_code == 404
    unknown = {**scope, "session_id": "nope"}
    response = await api.delete("/workspace/mcp/x", params=unknown, headers=ALICE)
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "SessionNotFound"


async def test_requests_are_validated(api: httpx.AsyncClient) -> None:
    scope = await make_session(api)
    missing = await api.get("/workspace/mcp", params={"agent_id": scope["agent_id"]}, headers=ALICE)
    assert ("query", "session_id") in field_errors(missing)
    assert (await api.get("/workspace/skill", params=scope)).status_code == 401

    async def post_mcp(body: dict[str, Any]) -> httpx.Response:
        return await api.post("/workspace/mcp", params=scope, json=body, headers=ALICE)

    assert ("body", "name") in field_errors(await post_mcp({**DEMO, "name": "has space"}))
    stateless_stdio = field_errors(await post_mcp({**DEMO, "is_stateful": False}))
    assert stateless_stdio == [("body",)]
    unknown_type = {**DEMO, "mcp_config": {"type": "carrier_pigeon", "command": "x"}}
    assert ("body", "mcp_config") in field_errors(await post_mcp(unknown_type))
    no_url = {"name": "web", "is_stateful": False, "mcp_config": {"type": "http_mcp"}}
    assert ("body", "mcp_config", "http_mcp", "url") in field_errors(await post_mcp(no_url))
    skill = await api.post("/workspace/skill", params=scope, json={}, headers=ALICE)
    assert ("body", "skill_path") in field_errors(skill)


async def test_openapi_matches_agentscopes_routes(api: httpx.AsyncClient) -> None:
    paths = (await api.get("/openapi.json")).json()["paths"]
    for path, methods in {
        "/workspace/mcp": ("get", "post"),
        "/workspace/mcp/{mcp_name}": ("delete",),
        "/workspace/skill": ("get", "post"),
        "/workspace/skill/{skill_name}": ("delete",),
    }.items():
        for method in methods:
            names = {p["name"] for p in paths[path][method]["parameters"]}
            assert {"agent_id", "session_id", "x-user-id"} <= names, (path, method)
    assert paths["/workspace/skill"]["post"]["deprecated"] is True
