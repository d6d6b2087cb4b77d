"""Session sub-routes take AgentScope's `agent_id` query parameter; messages page by `offset`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agent_core.message import AssistantMsg, UserMsg
from tests.support.asgi_server import served
from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}
SUB_ROUTES = [
    ("GET", "/sessions/{id}/messages", 200),
    ("GET", "/sessions/{id}/status", 200),
    ("PATCH", "/sessions/{id}", 200),
    ("POST", "/sessions/{id}/interrupt", 202),
    ("DELETE", "/sessions/{id}", 204),
]


async def agent_and_session(service: Service, name: str = "A") -> tuple[str, str]:
    agent = await service.api.post("/agent/", json={"name": name}, headers=ALICE)
    agent_id = agent.json()["agent_id"]
    session = await service.api.post("/sessions/", json={"agent_id": agent_id}, headers=ALICE)
    return agent_id, session.json()["session_id"]


def request_args(method: str) -> dict[str, Any]:
    return {"json": {"name": "renamed"}} if method == "PATCH" else {}


@pytest.mark.parametrize(("method", "path", "ok"), SUB_ROUTES)
async def test_agent_id_of_the_session_is_accepted(
    service: Service, method: str, path: str, ok: int
) -> None:
    agent_id, session_id = await agent_and_session(service)
    response = await service.api.request(
        method,
        path.format(id=session_id),
        params={"agent_id": agent_id},
        headers=ALICE,
        **request_args(method),
    )
    assert response.status_code == ok, response.text


@pytest.mark.parametrize(
    ("method", "path", "ok"), [*SUB_ROUTES, ("GET", "/sessions/{id}/stream", 0)]
)
async def test_another_agents_id_is_404(service: Service, method: str, path: str, ok: int) -> None:
    _, session_id = await agent_and_session(service)
    other_agent, _ = await agent_and_session(service, "B")
    response = await service.api.request(
        method,
        path.format(id=session_id),
        params={"agent_id": other_agent},
        headers=ALICE,
        **request_args(method),
    )
    assert response.status_code == 404, response.text
    assert response.json()["error"]["type"] == "SessionNotFound"
    # Nothing happened to the session.
    status = await service.api.get(f"/sessions/{session_id}/status", headers=ALICE)
    assert status.status_code == 200


async def test_stream_opens_with_the_sessions_agent_id(service: Service) -> None:
    agent_id, session_id = await agent_and_session(service)
    async with (
        served(service.app, lifespan=False) as base_url,
        httpx.AsyncClient(base_url=base_url) as client,
        client.stream(
            "GET", f"/sessions/{session_id}/stream", params={"agent_id": agent_id}, headers=ALICE
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")


async def test_messages_offset_skips_the_newest(service: Service) -> None:
    agent_id, session_id = await agent_and_session(service)
    transcript = [
        UserMsg("u", f"m{i}") if i % 2 == 0 else AssistantMsg("a", f"m{i}") for i in range(7)
    ]
    fence = await service.runtime.bus.acquire_lease(session_id)
    state = await service.runtime.storage.load_state(session_id)
    await service.runtime.storage.commit_turn(session_id, state, transcript, [], fence)

    async def page(**params: Any) -> tuple[list[str], bool]:
        response = await service.api.get(
            f"/sessions/{session_id}/messages",
            params={"agent_id": agent_id, **params},
            headers=ALICE,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        return [m["content"][0]["text"] for m in body["messages"]], body["has_more"]

    assert await page(limit=3) == (["m4", "m5", "m6"], True)
    assert await page(limit=3, offset=0) == (["m4", "m5", "m6"], True)
    assert await page(limit=3, offset=2) == (["m2", "m3", "m4"], True)
    assert await page(limit=3, offset=5) == (["m0", "m1"], False)
    assert await page(limit=3, offset=50) == ([], False)
    # With `before`, the offset counts back from it.
    assert await page(limit=2, offset=1, before=transcript[5].id) == (["m2", "m3"], True)
    negative = await service.api.get(
        f"/sessions/{session_id}/messages", params={"offset": -1}, headers=ALICE
    )
    assert negative.status_code == 422
    assert negative.json()["detail"][0]["loc"] == ["query", "offset"]
