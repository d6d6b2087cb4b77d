"""`create_app(extra_credentials=[...])`: the spec's custom provider, through the HTTP API.

Spec text (service-and-team.md, "API credentials"):

    Register the credential class with the app — it becomes immediately usable by clients [...]
    The service automatically exposes the credential's JSON schema under GET
    /credential/schemas, and GET /model?provider=<name> routes to the chat model class
    returned by get_chat_model_class().

The example's classes are in `tests.support.custom_provider` (they travel by import path).
Sessions run in-process here; the import-path registration a session actor does on start is
the same call `InProcessDispatcher` makes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import httpx
import pytest

from actors.client import InProcessDispatcher
from actors.sessions.extensions import register_credential_types
from agent_core.credential import CredentialBase
from serve import create_app
from tests.support.api import USER, post_chat
from tests.support.custom_provider import MyProviderChatModel, MyProviderCredential
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

pytestmark = [pytest.mark.redis]


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def api(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    storage = redis_url  # Port: the spec's RedisStorage, by its URL
    app = create_app(
        storage=storage,
        extra_credentials=[MyProviderCredential],
        dispatcher=InProcessDispatcher,  # Port: sessions in this process
    )
    assert app.state.settings.credential_types == [
        "tests.support.custom_provider:MyProviderCredential"
    ]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def test_the_schema_is_listed(api: httpx.AsyncClient) -> None:
    schemas = (await api.get("/credential/schemas", headers=USER)).json()["schemas"]

    (mine,) = [s for s in schemas if s["properties"]["type"].get("default") == "my_provider"]
    assert mine == MyProviderCredential.model_json_schema()
    assert set(mine["required"]) >= {"api_key"}


async def test_the_provider_routes_to_its_chat_model_class(api: httpx.AsyncClient) -> None:
    response = await api.get("/model/", params={"provider": "my_provider"}, headers=USER)

    assert response.status_code == 200, response.text
    # The model class ships no card files, so its catalog is empty, as `list_models` says.
    assert response.json()["models"] == MyProviderChatModel.list_models() == []


async def test_a_session_replies_through_the_custom_provider(
    api: httpx.AsyncClient, model: OpenAIWireServer
) -> None:
    model.push(ScriptedReply(text="Hello from my provider."))
    agent = (await api.post("/agent/", json={"name": "Friday"}, headers=USER)).json()
    data = {"type": "my_provider", "api_key": "sk-mine", "endpoint": model.base_url}
    credential = await api.post("/credential/", json={"data": data}, headers=USER)
    assert credential.status_code == 201, credential.text
    session = await api.post(
        "/sessions/",
        json={
            "agent_id": agent["agent_id"],
            "name": "custom",
            "chat_model_config": {
                "type": "my_provider",
                "credential_id": credential.json()["credential_id"],
                "model": "my-model-v1",
            },
        },
        headers=USER,
    )
    assert session.status_code == 201, session.text
    session_id = session.json()["session_id"]

    started = await post_chat(api, agent["agent_id"], session_id, "Hi")
    assert started.status_code == 200, started.text
    reply = await finished_reply(api, session_id)

    assert reply["content"][-1]["text"] == "Hello from my provider."
    (request,) = model.requests
    assert request.headers["authorization"] == "Bearer sk-mine"
    assert request.body["model"] == "my-model-v1"


async def finished_reply(api: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    async with asyncio.timeout(30):
        while True:
            page = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
            if len(page["messages"]) == 2 and not page["is_running"]:
                return dict(page["messages"][-1])
            await asyncio.sleep(0.05)


def test_a_class_other_processes_cannot_import_is_refused() -> None:
    class Unimportable(CredentialBase):
        type: Literal["unimportable"] = "unimportable"

    with pytest.raises(ValueError, match="cannot be imported by another process"):
        create_app(storage="redis://x", extra_credentials=[Unimportable])


def test_a_path_naming_no_credential_class_is_refused() -> None:
    with pytest.raises(ValueError, match="is not a CredentialBase subclass"):
        register_credential_types(["tests.support.custom_provider:MyProviderChatModel"])
