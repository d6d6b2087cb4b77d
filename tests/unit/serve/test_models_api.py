"""`GET /model/?provider=`: the model cards of a credential type."""

from __future__ import annotations

import pytest

from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

# The fields AgentScope's ModelCard requires (its recorded OpenAPI schema).
CARD_FIELDS = {
    "name",
    "label",
    "status",
    "context_size",
    "output_size",
    "parameter_schema",
    "parameters_overrides",
}


async def test_lists_the_cards_of_a_provider(service: Service) -> None:
    response = await service.api.get("/model/", params={"provider": "openai_credential"})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total"] == len(body["models"]) > 0
    cards = {card["name"]: card for card in body["models"]}
    assert {"gpt-4o", "gpt-4o-mini", "o3-mini"} <= set(cards)
    for card in cards.values():
        assert set(card) >= CARD_FIELDS
        assert card["type"] == "chat_model"
        assert card["model_class"] == "openai_chat"
    gpt = cards["gpt-4o"]
    assert "image/png" in gpt["input_types"]
    assert (
        gpt["parameter_schema"]["properties"]["max_completion_tokens"]["maximum"]
        == (gpt["output_size"])
    )
    assert "temperature" in gpt["parameter_schema"]["properties"]
    assert "temperature" not in cards["o3-mini"]["parameter_schema"]["properties"]
    assert cards["o3-mini"]["parameters_overrides"]["temperature"] is None


async def test_unknown_provider_is_404_and_missing_provider_is_422(service: Service) -> None:
    unknown = await service.api.get("/model/", params={"provider": "nope_credential"})
    assert unknown.status_code == 404
    assert "openai_credential" in unknown.json()["detail"]

    missing = await service.api.get("/model/")
    assert missing.status_code == 422
    assert [e["loc"] for e in missing.json()["detail"]] == [["query", "provider"]]
