"""`ModelCard`: what a model accepts, produces and lets a user tune — data for model pickers.

Cards are YAML (`*.yaml`, `*.yml`) or JSON (`*.json`) files, one per model, in a directory per
provider (Troupe ships its own as JSON in `_cards/<provider>/`)::

    {"name": "gpt-4o", "label": "GPT-4o", "status": "active",
     "input_types": ["text/plain", "image/png"], "output_types": ["text/plain"],
     "context_size": 128000, "output_size": 16384,
     "parameter_overrides": {"max_completion_tokens": {"maximum": 16384}, "max_tokens": null}}

A card's `parameter_schema` is the JSON schema of its chat model's `Parameters` class with the
card's overrides applied per parameter: an object is shallow-merged into the parameter's schema
(`{"hidden": true}` asks forms to hide it), `null` removes the parameter.
"""

from __future__ import annotations

from datetime import datetime
from importlib.resources.abc import Traversable
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from agent_core.deferred_model import DeferredModel

ModelStatus = Literal["active", "deprecated", "sunset"]
ParameterOverrides = dict[str, dict[str, Any] | None]
_SUFFIXES = (".json", ".yaml", ".yml")


class _CardFields(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="The name of the model")
    label: str = Field(min_length=1, description="The model label.")
    status: ModelStatus = Field(description="The model status")
    deprecated_at: datetime | None = Field(
        default=None, title="Deprecation date", description="The model deprecation date and time."
    )
    input_types: list[str] = Field(
        default_factory=lambda: ["text/plain"],
        title="Input types",
        description="The supported model input types.",
    )
    output_types: list[str] = Field(
        default_factory=lambda: ["text/plain"],
        title="Output types",
        description="The supported model output types.",
    )
    context_size: int = Field(gt=0, title="Context size", description="The context size.")
    output_size: int = Field(
        gt=0, title="Max output tokens", description="The maximum number of tokens."
    )


class _CardFile(_CardFields):
    """A card as written in a file (the spec's YAML key `parameter_overrides`)."""

    parameter_overrides: ParameterOverrides = Field(
        default_factory=dict,
        validation_alias=AliasChoices("parameter_overrides", "parameters_overrides"),
    )


class ModelCard(_CardFields):
    """A model of one provider, as `GET /model/?provider=` lists it."""

    type: Literal["chat_model"] = "chat_model"
    model_class: str = Field(
        default="", description="The model implementation class type (e.g. openai_chat)."
    )
    parameter_schema: dict[str, Any] = Field(
        description="JSON schema of the model's parameters, the card's overrides applied."
    )
    parameters_overrides: ParameterOverrides = Field(
        description="The card's per-parameter overrides, before merging (null removes one)."
    )


def parameter_schema(parameters: type[BaseModel], overrides: ParameterOverrides) -> dict[str, Any]:
    """Return the JSON schema of `parameters` with `overrides` applied (see the module doc).

    Raises:
        ValueError: an override names a parameter `parameters` does not have.
    """
    schema = parameters.model_json_schema()
    properties: dict[str, Any] = dict(schema.get("properties", {}))
    unknown = sorted(set(overrides) - set(properties))
    if unknown:
        raise ValueError(f"overrides of unknown parameters: {', '.join(unknown)}")
    for name, override in overrides.items():
        if override is None:
            del properties[name]
        else:
            properties[name] = {**properties[name], **override}
    schema["properties"] = properties
    if "required" in schema:
        schema["required"] = [name for name in schema["required"] if name in properties]
    return schema


def load_model_cards(
    directory: Traversable, parameters: type[BaseModel], model_class: str
) -> list[ModelCard]:
    """Read every YAML or JSON card in `directory`, in file-name order.

    Args:
        directory: Where the card files are.
        parameters: The chat model's `Parameters` class (the base of each `parameter_schema`).
        model_class: The chat model's class type, recorded on every card.

    Raises:
        ValueError: a card file is malformed (the message names the file).
    """
    import yaml  # only card files need it, and few processes read them

    cards = []
    files = sorted((f for f in directory.iterdir() if f.name.endswith(_SUFFIXES)), key=_name)
    for file in files:
        text = file.read_text(encoding="utf-8")
        try:
            if file.name.endswith(".json"):
                card = _CardFile.model_validate_json(text)
            else:
                card = _CardFile.model_validate(yaml.safe_load(text))
            schema = parameter_schema(parameters, card.parameter_overrides)
        except (ValueError, yaml.YAMLError) as exc:  # ValidationError is a ValueError
            raise ValueError(f"model card {file.name}: {exc}") from exc
        fields = card.model_dump(exclude={"parameter_overrides"})
        cards.append(
            ModelCard(
                **fields,
                model_class=model_class,
                parameter_schema=schema,
                parameters_overrides=card.parameter_overrides,
            )
        )
    return cards


def _name(file: Traversable) -> str:
    return file.name
