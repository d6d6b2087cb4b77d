"""The HTTP API's validation, identity and error shapes (real Redis, sessions in-process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app

pytestmark = [pytest.mark.redis]

USER = {"X-User-ID": "alice"}
SECRET = "sk-very-secret-value"


@pytest.fixture
async def api(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = RuntimeSettings(redis_url=redis_url)
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


def field_errors(response: httpx.Response) -> list[tuple[Any, ...]]:
    assert response.status_code == 422, response.text
    return [tuple(e["loc"]) for e in response.json()["detail"]]


async def make_session(api: httpx.AsyncClient) -> tuple[str, str]:
    agent_id = (await api.post("/agent/", json={"name": "A"}, headers=USER)).json()["agent_id"]
    session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=USER)
    return agent_id, session.json()["session_id"]


async def test_missing_or_empty_identity_is_401(api: httpx.AsyncClient) -> None:
    missing = await api.get("/agent/")
    empty = await api.get("/agent/", headers={"X-User-ID": " "})
    assert (missing.status_code, empty.status_code) == (401, 401)
    assert "X-User-ID" in missing.json()["error"]["message"]


async def test_malformed_bodies_name_the_field(api: httpx.AsyncClient) -> None:
    assert ("body", "name") in field_errors(await api.post("/agent/", json={}, headers=USER))
    bad_react = {"name": "A", "react_config": {"max_iters": 0}}
    errors = field_errors(await api.post("/agent/", json=bad_react, headers=USER))
    assert ("body", "react_config", "max_iters") in errors
    assert ("body", "agent_id") in field_errors(await api.post("/sessions/", json={}, headers=USER))
    not_json = await api.post(
        "/agent/", content=b"{nope", headers={**USER, "content-type": "application/json"}
    )
    assert not_json.status_code == 422


async def test_chat_input_is_validated(api: httpx.AsyncClient) -> None:
    agent_id, session_id = await make_session(api)
    base = {"agent_id": agent_id, "session_id": session_id}
    assert ("body", "input") in field_errors(await api.post("/chat/", json=base, headers=USER))
    assistant = {"name": "x", "role": "assistant", "content": "hi"}
    response = await api.post("/chat/", json={**base, "input": assistant}, headers=USER)
    assert response.status_code == 422
    assert "role 'user'" in response.text
    tool_in_user = {"name": "x", "role": "user", "content": [{"type": "thinking", "thinking": "?"}]}
    response = await api.post("/chat/", json={**base, "input": tool_in_user}, headers=USER)
    assert response.status_code == 422
    empty_list = await api.post("/chat/", json={**base, "input": []}, headers=USER)
    assert empty_list.status_code == 422


async def test_confirm_result_for_a_session_that_is_not_parked_is_409(
    api: httpx.AsyncClient,
) -> None:
    agent_id, session_id = await make_session(api)
    confirm = {"type": "USER_CONFIRM_RESULT", "reply_id": "r1", "confirm_results": []}
    body = {"agent_id": agent_id, "session_id": session_id, "input": confirm}
    response = await api.post("/chat/", json=body, headers=USER)
    assert response.status_code == 409
    assert "not awaiting" in response.json()["detail"]


async def test_unknown_and_foreign_resources_are_404(api: httpx.AsyncClient) -> None:
    agent_id, session_id = await make_session(api)
    missing = await api.post("/sessions/", json={"agent_id": "nope"}, headers=USER)
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "AgentNotFound"
    other = {"X-User-ID": "bob"}
    assert (
        await api.post("/sessions/", json={"agent_id": agent_id}, headers=other)
    ).status_code == 404
    assert (await api.get(f"/sessions/{session_id}/messages", headers=other)).status_code == 404
    assert (await api.get("/sessions/nope/messages", headers=USER)).status_code == 404
    msg = {"name": "u", "role": "user", "content": "hi"}
    body = {"agent_id": "other-agent", "session_id": session_id, "input": msg}
    assert (await api.post("/chat/", json=body, headers=USER)).status_code == 404


async def test_paging_and_cursor_parameters_are_validated(api: httpx.AsyncClient) -> None:
    _, session_id = await make_session(api)
    path = f"/sessions/{session_id}"
    assert ("query", "limit") in field_errors(
        await api.get(f"{path}/messages?limit=0", headers=USER)
    )
    assert ("query", "limit") in field_errors(
        await api.get(f"{path}/messages?limit=201", headers=USER)
    )
    assert ("query", "after") in field_errors(
        await api.get(f"{path}/stream?after=abc", headers=USER)
    )
    unknown_before = await api.get(f"{path}/messages?before=nope", headers=USER)
    assert unknown_before.status_code == 404


async def test_credentials_mask_secrets_and_never_echo_them(api: httpx.AsyncClient) -> None:
    body = {"data": {"type": "openai_credential", "api_key": SECRET, "base_url": "http://x/v1"}}
    assert (await api.post("/credential/", json=body, headers=USER)).status_code == 201
    listed = await api.get("/credential/", headers=USER)
    assert SECRET not in listed.text
    assert listed.json()["credentials"][0]["data"]["api_key"] == "********"
    assert listed.json()["credentials"][0]["data"]["base_url"] == "http://x/v1"
    bad = {"data": {"type": "nope_credential", "api_key": SECRET}}
    response = await api.post("/credential/", json=bad, headers=USER)
    assert response.status_code == 422
    assert SECRET not in response.text
    schemas = (await api.get("/credential/schemas")).json()["schemas"]
    assert any("openai_credential" in str(s) for s in schemas)


async def test_session_model_config_must_match_its_credential(api: httpx.AsyncClient) -> None:
    agent_id = (await api.post("/agent/", json={"name": "A"}, headers=USER)).json()["agent_id"]
    config = {
        "type": "openai_credential",
        "credential_id": "missing",
        "model": "m",
        "parameters": {},
    }
    body = {"agent_id": agent_id, "chat_model_config": config}
    response = await api.post("/sessions/", json=body, headers=USER)
    assert response.status_code == 404
    assert "credential" in response.json()["detail"]


async def test_health_reports_components(api: httpx.AsyncClient) -> None:
    body = (await api.get("/health")).json()
    assert body["status"] == "ok"
    assert body["components"] == {
        "redis": "ok",
        "workspaces": "ok (sandbox)",
        "scheduler": "ok (0 schedules)",
    }
    assert body["version"]


async def test_health_warns_when_tools_run_unsandboxed(redis_url: str) -> None:
    settings = RuntimeSettings(redis_url=redis_url, workspace_backend="local")
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
            body = (await api.get("/health")).json()
    assert body["status"] == "ok"
    assert body["components"]["workspaces"].startswith("warning (local): ")
    assert "unsandboxed" in body["components"]["workspaces"]
