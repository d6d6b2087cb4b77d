"""Helpers for driving `/schedule/` in tests: an agent with a model, schedule bodies."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.api import USER


async def agent_and_model(
    api: httpx.AsyncClient, base_url: str, user: dict[str, str] = USER
) -> tuple[str, dict[str, Any]]:
    """Create an agent and a credential for `base_url`; return the agent id and a model config."""
    agent = await api.post("/agent/", json={"name": "Friday"}, headers=user)
    assert agent.status_code == 201, agent.text
    credential = await api.post(
        "/credential/",
        json={"data": {"type": "openai_credential", "api_key": "sk-test", "base_url": base_url}},
        headers=user,
    )
    assert credential.status_code == 201, credential.text
    model = {
        "type": "openai_credential",
        "credential_id": credential.json()["credential_id"],
        "model": "gpt-4o-mini",
        "parameters": {},
    }
    return str(agent.json()["agent_id"]), model


def schedule_body(agent_id: str, model: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A `POST /schedule/` body: a weekday-morning digest unless `fields` say otherwise."""
    return {
        "name": "digest",
        "description": "Summarise the news.",
        "cron_expression": "0 9 * * 1-5",
        "timezone": "Asia/Shanghai",
        "agent_id": agent_id,
        "chat_model_config": model,
        **fields,
    }


async def create_schedule(
    api: httpx.AsyncClient, body: dict[str, Any], user: dict[str, str] = USER
) -> str:
    """POST /schedule/ and return the new schedule's id."""
    response = await api.post("/schedule/", json=body, headers=user)
    assert response.status_code == 201, response.text
    assert set(response.json()) == {"schedule_id"}
    return str(response.json()["schedule_id"])


async def fired_session_ids(
    api: httpx.AsyncClient, schedule_id: str, user: dict[str, str] = USER
) -> list[str]:
    """Ids from GET /schedule/{id}/sessions, newest first."""
    response = await api.get(f"/schedule/{schedule_id}/sessions", headers=user)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total"] == len(body["sessions"])
    return [s["id"] for s in body["sessions"]]
