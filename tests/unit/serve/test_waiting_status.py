"""A session whose inputs wait in its inbox says so: `starting`, then `queued`, never `idle`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from actors.bus.items import ChatItem
from agent_core.message import UserMsg
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve._service import Service

pytestmark = pytest.mark.redis

ALICE = {"X-User-ID": "alice"}


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=lambda _: ScriptedReply(text="Sure.")) as server:
        yield server


async def test_inputs_waiting_for_an_owner_are_starting_then_queued_then_answered(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    data = {"type": "openai_credential", "api_key": "sk-test", "base_url": model.base_url}
    credential = (await api.post("/credential/", json={"data": data}, headers=ALICE)).json()
    config = {
        "type": "openai_credential",
        "credential_id": credential["credential_id"],
        "model": "gpt-4o-mini",
    }
    agent_id = (await api.post("/agent/", json={"name": "A"}, headers=ALICE)).json()["agent_id"]
    created = await api.post(
        "/sessions/",
        json={"agent_id": agent_id, "name": "s", "chat_model_config": config},
        headers=ALICE,
    )
    session_id = created.json()["session_id"]
    bus = service.runtime.bus

    async def status() -> str:
        answer = await api.get(f"/sessions/{session_id}/status", headers=ALICE)
        return str(answer.json()["status"])

    async def listed() -> str:
        answer = await api.get("/sessions/", headers=ALICE)
        return str(answer.json()["sessions"][0]["status"])

    assert await status() == "idle"
    # Accepted into the inbox, the owner not yet woken (its actor is being created).
    await bus.put(session_id, ChatItem(input=[UserMsg("user", "hello")]))
    assert await status() == await listed() == "starting"
    # An owner exists (it took the lease) but has not taken the input yet.
    await bus.acquire_lease(session_id)
    assert await status() == await listed() == "queued"

    await service.dispatcher.wake(session_id)
    await asyncio.wait_for(service.dispatcher.runtime(session_id).wait_idle(), 15)
    assert await status() == await listed() == "idle"
    page = (await api.get(f"/sessions/{session_id}/messages", headers=ALICE)).json()
    assert [m["role"] for m in page["messages"]] == ["user", "assistant"]
