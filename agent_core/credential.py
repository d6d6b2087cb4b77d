"""Credentials: how to reach a model provider, stored and sent as JSON tagged by `type`.

Each provider adds a `CredentialBase` subclass with a unique `type` literal, joins the `Credential`
union and `CREDENTIAL_TYPES`, and names its chat-model class in `get_chat_model_class`.
"""

from __future__ import annotations

import builtins
from abc import abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_core.errors import CredentialError

if TYPE_CHECKING:
    from pathlib import Path

    from agent_core.model.base import ChatModelBase
    from agent_core.model.card import ModelCard

_SECRET_SCHEMA: dict[str, Any] = {"format": "password", "writeOnly": True}


class CredentialBase(BaseModel):
    """Connection details for one model provider."""

    # Validation errors must not echo the input: it holds the secret.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    type: str = Field(description="Credential kind; selects the provider.")
    name: str = Field(
        default="", max_length=200, description="User-facing display name for this credential."
    )

    @classmethod
    @abstractmethod
    def get_chat_model_class(cls) -> builtins.type[ChatModelBase]:
        """Return the chat-model class that accepts this credential."""

    @classmethod
    def list_models(cls, cards_dir: str | Path | None = None) -> list[ModelCard]:
        """Return the model cards of this provider (those of its chat-model class).

        Args:
            cards_dir: Read the cards from this directory instead of the shipped ones.

        Raises:
            ValueError: a card file is malformed.
        """
        return cls.get_chat_model_class().list_models(cards_dir)

    @classmethod
    def secret_fields(cls) -> frozenset[str]:
        """Return the names of the fields holding secrets (`writeOnly` in the JSON schema)."""
        return frozenset(
            name
            for name, info in cls.model_fields.items()
            if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("writeOnly")
        )


class OpenAICredential(CredentialBase):
    """An API key for OpenAI or any server speaking its Chat Completions protocol."""

    type: Literal["openai_credential"] = "openai_credential"
    api_key: str = Field(
        repr=False, description="Secret API key.", json_schema_extra=_SECRET_SCHEMA
    )
    base_url: str = Field(
        default="https://api.openai.com/v1",
        min_length=1,
        description="API root; `/chat/completions` is appended.",
    )
    organization: str | None = Field(default=None, description="Optional OpenAI organization id.")

    @classmethod
    def get_chat_model_class(cls) -> builtins.type[ChatModelBase]:
        """Return `OpenAIChatModel`."""
        from agent_core.model.openai import OpenAIChatModel

        return OpenAIChatModel


# Grows into `OpenAICredential | AnthropicCredential | ...` as providers are added.
Credential = Annotated[OpenAICredential, Field(discriminator="type")]

CREDENTIAL_TYPES: dict[str, type[CredentialBase]] = {"openai_credential": OpenAICredential}


def parse_credential(data: Mapping[str, Any]) -> CredentialBase:
    """Validate a credential from its JSON form, choosing the class by its `type`.

    Raises:
        CredentialError: the `type` is unknown or a field is invalid.
    """
    kind = data.get("type")
    cls = CREDENTIAL_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise CredentialError(f"unknown credential type {kind!r}")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise CredentialError(f"invalid {kind}: {exc}") from exc


def credential_json_schemas() -> list[dict[str, Any]]:
    """Return the JSON schema of every credential type (what `GET /credential/schemas` lists)."""
    return [cls.model_json_schema() for cls in CREDENTIAL_TYPES.values()]
