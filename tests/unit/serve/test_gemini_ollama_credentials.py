"""Gemini and Ollama credentials through the service: schemas, storage with the key encrypted and
masked, model cards by provider, and a chat model built from the stored credential answering
from a local protocol server."""

from __future__ import annotations

import pytest

from actors.sessions.chat_models import build_chat_model
from actors.storage.records import ChatModelConfig
from agent_core.message import TextBlock, UserMsg
from agent_core.model import GeminiChatModel, OllamaChatModel, collect_response
from tests.support.gemini_server import GeminiReply, GeminiWireServer, Text
from tests.support.ollama_server import OllamaReply, OllamaWireServer
from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}


async def test_schemas_list_both_types(service: Service) -> None:
    schemas = (await service.api.get("/credential/schemas")).json()["schemas"]
    by_type = {s["properties"]["type"]["const"]: s for s in schemas}
    assert by_type["gemini_credential"]["required"] == ["api_key"]
    assert by_type["gemini_credential"]["properties"]["api_key"]["writeOnly"] is True
    assert "required" not in by_type["ollama_credential"]
    assert {"host", "api_key"} <= set(by_type["ollama_credential"]["properties"])


CARDS = [
    ("gemini_credential", "gemini_chat", "gemini-2.5-flash"),
    ("ollama_credential", "ollama_chat", "qwen3:8b"),
]


@pytest.mark.parametrize(("provider", "model_class", "name"), CARDS)
async def test_cards_by_provider(
    service: Service, provider: str, model_class: str, name: str
) -> None:
    response = await service.api.get("/model/", params={"provider": provider})
    assert response.status_code == 200, response.text
    cards = {card["name"]: card for card in response.json()["models"]}
    assert cards[name]["model_class"] == model_class
    assert "max_tokens" in cards[name]["parameter_schema"]["properties"]


async def test_stored_gemini_credential_drives_a_model(service: Service) -> None:
    with GeminiWireServer(api_key="gm-secret") as server:
        data = {"type": "gemini_credential", "api_key": "gm-secret", "base_url": server.base_url}
        created = await service.api.post("/credential/", json={"data": data}, headers=ALICE)
        assert created.status_code == 201, created.text
        credential_id = created.json()["credential_id"]
        (view,) = (await service.api.get("/credential/", headers=ALICE)).json()["credentials"]
        assert view["data"]["api_key"] == "********"

        record = await service.runtime.credentials.get("alice", credential_id)
        config = ChatModelConfig(
            type="gemini_credential",
            credential_id=credential_id,
            model="gemini-2.5-flash",
            parameters={"temperature": 0.2},
        )
        model = build_chat_model(config, record)
        assert isinstance(model, GeminiChatModel)
        server.push(GeminiReply([Text("stored key works")]))
        async with model:
            final = await collect_response(await model([UserMsg("user", "hi")]))
    assert isinstance(final.content[0], TextBlock)
    assert final.content[0].text == "stored key works"
    assert server.requests[0].headers["x-goog-api-key"] == "gm-secret"


async def test_stored_ollama_credential_drives_a_model(service: Service) -> None:
    with OllamaWireServer() as server:
        data = {"type": "ollama_credential", "host": server.base_url}
        created = await service.api.post("/credential/", json={"data": data}, headers=ALICE)
        assert created.status_code == 201, created.text
        record = await service.runtime.credentials.get("alice", created.json()["credential_id"])
        config = ChatModelConfig(
            type="ollama_credential", credential_id=record.id, model="qwen3:8b"
        )
        model = build_chat_model(config, record)
        assert isinstance(model, OllamaChatModel)
        server.push(OllamaReply(content="local"))
        async with model:
            final = await collect_response(await model([UserMsg("user", "hi")]))
    assert isinstance(final.content[0], TextBlock)
    assert final.content[0].text == "local"


async def test_bad_fields_are_a_422_naming_them(service: Service) -> None:
    body = {"data": {"type": "gemini_credential"}}
    response = await service.api.post("/credential/", json=body, headers=ALICE)
    assert response.status_code == 422
    assert "api_key" in response.text
    body = {"data": {"type": "ollama_credential", "host": 5}}
    response = await service.api.post("/credential/", json=body, headers=ALICE)
    assert response.status_code == 422
    assert "host" in response.text
