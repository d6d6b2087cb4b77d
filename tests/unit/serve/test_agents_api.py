"""`/agent/`: partial updates, deletion cascading to sessions, and the agent form schemas."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}


async def create_agent(api: httpx.AsyncClient, **body: Any) -> str:
    response = await api.post("/agent/", json={"name": "Friday", **body}, headers=ALICE)
    assert response.status_code == 201, response.text
    return str(response.json()["agent_id"])


async def get_agent(api: httpx.AsyncClient, agent_id: str) -> dict[str, Any]:
    agents = (await api.get("/agent/", headers=ALICE)).json()["agents"]
    return next(a for a in agents if a["id"] == agent_id)


def field_errors(response: httpx.Response) -> list[tuple[Any, ...]]:
    assert response.status_code == 422, response.text
    return [tuple(e["loc"]) for e in response.json()["detail"]]


async def test_patch_changes_only_what_is_sent(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(
        api,
        system_prompt="Be brief.",
        chat_config={"react_config": {"max_iters": 7}, "context_config": {"trigger_ratio": 0.5}},
    )
    before = await get_agent(api, agent_id)

    response = await api.patch(f"/agent/{agent_id}", json={"name": "Saturday"}, headers=ALICE)

    assert response.status_code == 200, response.text
    view = response.json()
    assert view["id"] == agent_id
    assert view["editable"] is True
    assert view["user_id"] == "alice"
    assert view["data"]["name"] == "Saturday"
    assert view["data"]["system_prompt"] == "Be brief."
    assert view["data"]["chat_config"] == before["data"]["chat_config"]
    assert view["created_at"] == before["created_at"]
    assert view["updated_at"] >= before["updated_at"]
    assert await get_agent(api, agent_id) == view


async def test_chat_config_replaces_only_the_sub_configs_sent(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(
        api,
        chat_config={"react_config": {"max_iters": 7}, "context_config": {"trigger_ratio": 0.5}},
    )

    body = {"chat_config": {"react_config": {"max_iters": 3}}}
    chat = (await api.patch(f"/agent/{agent_id}", json=body, headers=ALICE)).json()["data"][
        "chat_config"
    ]

    assert chat["react_config"]["max_iters"] == 3
    assert chat["context_config"]["trigger_ratio"] == 0.5


async def test_deprecated_top_level_configs_are_honoured_and_win(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api, chat_config={"react_config": {"max_iters": 7}})

    body = {
        "context_config": {"trigger_ratio": 0.6},
        "chat_config": {"context_config": {"trigger_ratio": 0.3}},
    }
    chat = (await api.patch(f"/agent/{agent_id}", json=body, headers=ALICE)).json()["data"][
        "chat_config"
    ]

    assert chat["context_config"]["trigger_ratio"] == 0.6
    assert chat["react_config"]["max_iters"] == 7
    flat_react = {"react_config": {"max_iters": 2}}
    chat = (await api.patch(f"/agent/{agent_id}", json=flat_react, headers=ALICE)).json()["data"][
        "chat_config"
    ]
    assert chat["react_config"]["max_iters"] == 2
    assert chat["context_config"]["trigger_ratio"] == 0.6


async def test_dedicated_process_is_optional_stored_and_patchable(service: Service) -> None:
    api = service.api
    shared = await create_agent(api)
    dedicated = await create_agent(api, dedicated_process=True)

    assert (await get_agent(api, shared))["data"]["dedicated_process"] is False
    assert (await get_agent(api, dedicated))["data"]["dedicated_process"] is True
    stored = await service.runtime.storage.get_agent("alice", dedicated)
    assert stored.data.dedicated_process is True

    renamed = await api.patch(f"/agent/{dedicated}", json={"name": "Sunday"}, headers=ALICE)
    assert renamed.json()["data"]["dedicated_process"] is True  # omitted: kept
    body = {"dedicated_process": False}
    assert (await api.patch(f"/agent/{dedicated}", json=body, headers=ALICE)).json()["data"][
        "dedicated_process"
    ] is False
    body = {"dedicated_process": True}
    assert (await api.patch(f"/agent/{shared}", json=body, headers=ALICE)).json()["data"][
        "dedicated_process"
    ] is True
    refused = await api.post(
        "/agent/", json={"name": "x", "dedicated_process": "sometimes"}, headers=ALICE
    )
    assert ("body", "dedicated_process") in field_errors(refused)


async def test_patch_validation_names_the_field(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    path = f"/agent/{agent_id}"

    assert ("body", "name") in field_errors(await api.patch(path, json={"name": ""}, headers=ALICE))
    bad_react = {"chat_config": {"react_config": {"max_iters": 0}}}
    assert ("body", "chat_config", "react_config", "max_iters") in field_errors(
        await api.patch(path, json=bad_react, headers=ALICE)
    )
    assert ("body", "colour") in field_errors(
        await api.patch(path, json={"colour": "red"}, headers=ALICE)
    )
    assert (await get_agent(api, agent_id))["data"]["name"] == "Friday"


async def test_unknown_and_foreign_agents_are_404(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)

    foreign_patch = await api.patch(f"/agent/{agent_id}", json={"name": "x"}, headers=BOB)
    foreign_delete = await api.delete(f"/agent/{agent_id}", headers=BOB)
    unknown_patch = await api.patch("/agent/nope", json={"name": "x"}, headers=ALICE)
    unknown_delete = await api.delete("/agent/nope", headers=ALICE)

    for response in (foreign_patch, foreign_delete, unknown_patch, unknown_delete):
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "AgentNotFound"
    assert (await get_agent(api, agent_id))["data"]["name"] == "Friday"
    assert (await api.get("/agent/", headers=BOB)).json() == {"agents": [], "total": 0}


async def test_delete_removes_the_agent(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    kept = await create_agent(api)

    response = await api.delete(f"/agent/{agent_id}", headers=ALICE)

    assert response.status_code == 204
    assert response.content == b""
    listed = (await api.get("/agent/", headers=ALICE)).json()
    assert [a["id"] for a in listed["agents"]] == [kept]
    assert listed["total"] == 1
    assert (await api.delete(f"/agent/{agent_id}", headers=ALICE)).status_code == 404
    patch = await api.patch(f"/agent/{agent_id}", json={"name": "x"}, headers=ALICE)
    assert patch.status_code == 404
    new_session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=ALICE)
    assert new_session.status_code == 404


async def wait_for_reply(api: httpx.AsyncClient, session_id: str) -> None:
    async with asyncio.timeout(10):
        while True:
            page = await api.get(f"/sessions/{session_id}/messages", headers=ALICE)
            roles = [m["role"] for m in page.json()["messages"]]
            if "assistant" in roles and not page.json()["is_running"]:
                return
            await asyncio.sleep(0.02)


async def test_delete_cascades_to_the_agents_sessions(service: Service) -> None:
    api = service.api
    agent_id = await create_agent(api)
    other_agent = await create_agent(api)
    sessions = []
    for agent in (agent_id, agent_id, other_agent):
        response = await api.post("/sessions/", json={"agent_id": agent}, headers=ALICE)
        sessions.append(response.json()["session_id"])
    doomed, survivor = sessions[:2], sessions[2]
    # A reply makes the session live (its runtime hosted) and gives it a transcript and events.
    msg = {"name": "user", "role": "user", "content": "hi"}
    chat = {"agent_id": agent_id, "session_id": doomed[0], "input": msg}
    assert (await api.post("/chat/", json=chat, headers=ALICE)).status_code == 200
    await wait_for_reply(api, doomed[0])

    assert (await api.delete(f"/agent/{agent_id}", headers=ALICE)).status_code == 204

    assert set(doomed) <= set(service.dispatcher.stopped)
    listed = (await api.get("/sessions/", headers=ALICE)).json()
    assert [s["session"]["id"] for s in listed["sessions"]] == [survivor]
    for session_id in doomed:
        status = await api.get(f"/sessions/{session_id}/status", headers=ALICE)
        assert status.status_code == 404
        chat = {"agent_id": agent_id, "session_id": session_id, "input": msg}
        assert (await api.post("/chat/", json=chat, headers=ALICE)).status_code == 404
        assert await service.runtime.redis.keys(f"*{session_id}*") == []
    assert (await api.get(f"/sessions/{survivor}/status", headers=ALICE)).status_code == 200


def all_refs(node: Any) -> list[str]:
    return [m for m in json.dumps(node).split('"') if m == "$ref"]


async def test_schema_v2_is_the_whole_agent_form_self_contained(service: Service) -> None:
    response = await service.api.get("/agent/schema/v2")

    assert response.status_code == 200
    schema = response.json()["schema"]
    assert set(schema["properties"]) == {"name", "system_prompt", "chat_config"}
    assert schema["required"] == ["name"]
    chat = schema["properties"]["chat_config"]["properties"]
    assert "trigger_ratio" in chat["context_config"]["properties"]
    assert "summary_schema" not in chat["context_config"]["properties"]
    assert "max_iters" in chat["react_config"]["properties"]
    assert all_refs(schema) == []
    assert "$defs" not in schema


async def test_legacy_schema_has_three_sections(service: Service) -> None:
    response = await service.api.get("/agent/schema")

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"identity", "context_config", "react_config"}
    assert set(body["identity"]["properties"]) == {"name", "system_prompt"}
    assert "trigger_ratio" in body["context_config"]["properties"]
    assert "summary_schema" not in body["context_config"]["properties"]
    assert "max_iters" in body["react_config"]["properties"]
    assert all_refs(body) == []


async def test_openapi_documents_the_agent_routes_with_agentscope_names(service: Service) -> None:
    spec = (await service.api.get("/openapi.json")).json()

    assert {"patch", "delete"} <= set(spec["paths"]["/agent/{agent_id}"])
    assert spec["paths"]["/agent/schema"]["get"]["deprecated"] is True
    v2 = spec["components"]["schemas"]["AgentSchemaV2Response"]
    assert v2["required"] == ["schema"]
    update = spec["components"]["schemas"]["UpdateAgentRequest"]["properties"]
    assert update["context_config"]["deprecated"] is True
