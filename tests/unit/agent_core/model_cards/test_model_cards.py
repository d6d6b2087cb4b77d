"""Model cards: the shipped OpenAI cards, override merging, card files, and model Parameters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agent_core.credential import OpenAICredential
from agent_core.model.card import ModelCard
from agent_core.model.openai import OpenAIChatModel
from agent_core.testing import ScriptedChatModel


def write_card(directory: Path, name: str, **fields: Any) -> None:
    card = {
        "name": name,
        "label": name.upper(),
        "status": "active",
        "context_size": 8000,
        "output_size": 1000,
        **fields,
    }
    (directory / f"{name}.json").write_text(json.dumps(card))


def test_shipped_openai_cards_load_through_every_entry_point() -> None:
    cards = OpenAICredential.list_models()

    assert cards == OpenAIChatModel.list_models()
    assert cards == OpenAICredential.get_chat_model_class().list_models()
    names = [card.name for card in cards]
    assert len(names) == len(set(names))
    assert {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini"} <= set(names)
    for card in cards:
        assert card.model_class == "openai_chat"
        assert card.output_size <= card.context_size
        assert "text/plain" in card.input_types
        properties = card.parameter_schema["properties"]
        assert properties["max_completion_tokens"]["maximum"] == card.output_size
        assert "max_tokens" not in properties  # OpenAI's own API takes max_completion_tokens


def test_reasoning_cards_drop_sampling_parameters() -> None:
    cards = {card.name: card for card in OpenAICredential.list_models()}

    reasoning = cards["o3-mini"].parameter_schema["properties"]
    chat = cards["gpt-4o"].parameter_schema["properties"]

    assert "temperature" not in reasoning
    assert "reasoning_effort" in reasoning
    assert "temperature" in chat
    assert "reasoning_effort" not in chat


def test_overrides_merge_hide_and_remove(tmp_path: Path) -> None:
    overrides = {
        "max_tokens": {"maximum": 512, "default": 256},
        "seed": {"hidden": True},
        "temperature": None,
    }
    write_card(tmp_path, "tiny", parameter_overrides=overrides)

    (card,) = OpenAIChatModel.list_models(tmp_path)

    properties = card.parameter_schema["properties"]
    base = OpenAIChatModel.Parameters.model_json_schema()["properties"]
    assert properties["max_tokens"] == {**base["max_tokens"], "maximum": 512, "default": 256}
    assert properties["seed"] == {**base["seed"], "hidden": True}
    assert "temperature" not in properties
    assert properties["top_p"] == base["top_p"]
    assert card.parameters_overrides == overrides


def test_cards_are_read_in_file_name_order_and_other_files_are_ignored(tmp_path: Path) -> None:
    write_card(tmp_path, "b-model")
    write_card(tmp_path, "a-model", input_types=["text/plain", "image/png"])
    (tmp_path / "README.md").write_text("not a card")

    cards = OpenAIChatModel.list_models(str(tmp_path))

    assert [card.name for card in cards] == ["a-model", "b-model"]
    assert cards[0].input_types == ["text/plain", "image/png"]
    assert cards[1].input_types == cards[1].output_types == ["text/plain"]
    assert cards[1].parameters_overrides == {}
    assert cards[1].deprecated_at is None


def test_the_spec_field_name_for_overrides_is_accepted(tmp_path: Path) -> None:
    write_card(tmp_path, "m", parameters_overrides={"seed": None})

    (card,) = OpenAIChatModel.list_models(tmp_path)

    assert "seed" not in card.parameter_schema["properties"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"parameter_overrides": {"warp_speed": {"maximum": 9}}}, "warp_speed"),
        ({"status": "retired"}, "status"),
        ({"context_size": 0}, "context_size"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_malformed_card_names_its_file_and_problem(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    write_card(tmp_path, "broken", **fields)

    with pytest.raises(ValueError, match=message) as caught:
        OpenAIChatModel.list_models(tmp_path)
    assert "broken.json" in str(caught.value)


def test_a_card_file_that_is_not_json_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "garbled.json").write_text("{name: nope")

    with pytest.raises(ValueError, match=r"garbled\.json"):
        OpenAIChatModel.list_models(tmp_path)


def test_a_model_without_cards_lists_none() -> None:
    assert ScriptedChatModel.list_models() == []


def test_card_serialises_with_agentscope_field_names() -> None:
    card = OpenAICredential.list_models()[0]

    dumped = card.model_dump(mode="json")

    assert dumped["type"] == "chat_model"
    assert ModelCard.model_validate(dumped) == card
    assert {"parameter_schema", "parameters_overrides", "deprecated_at"} <= set(dumped)


async def test_parameters_fill_the_request_body_and_are_validated() -> None:
    credential = OpenAICredential(api_key="sk-test")
    params = OpenAIChatModel.Parameters(temperature=0.2, max_completion_tokens=64, top_k=5)

    model = OpenAIChatModel(credential, "gpt-4o", parameters=params)
    body = await model.build_request_body([])

    assert body["temperature"] == 0.2
    assert body["max_completion_tokens"] == 64
    assert body["top_k"] == 5  # unknown fields pass through to compatible servers
    assert "top_p" not in body
    with pytest.raises(ValidationError, match="temperature"):
        OpenAIChatModel.Parameters(temperature=3)
    with pytest.raises(ValidationError, match="reasoning_effort"):
        OpenAIChatModel.Parameters(reasoning_effort="extreme")
    await model.aclose()


def test_the_api_key_is_the_secret_field() -> None:
    assert OpenAICredential.secret_fields() == frozenset({"api_key"})
