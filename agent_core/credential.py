"""Credentials: how to reach a model provider, stored and sent as JSON tagged by `type`.

Each provider adds a `CredentialBase` subclass with a unique `type` literal and names its
chat-model class in `get_chat_model_class`. Shipped providers join the `Credential` union;
`register_credential` adds a custom one to `CREDENTIAL_TYPES`, which `parse_credential` and
`credential_json_schemas` read.
"""

from __future__ import annotations

import builtins
from abc import abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from agent_core.errors import CredentialError

if TYPE_CHECKING:
    from pathlib import Path

    from agent_core.model.base import ChatModelBase
    from agent_core.model.card import ModelCard

_SECRET_SCHEMA: dict[str, Any] = {"format": "password", "writeOnly": True}


def _api_root(value: str) -> str:
    """Refuse a base URL a request could not go to: it needs http(s) and a host."""
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError as exc:
        raise ValueError(f"not a URL: {exc}") from exc
    if parts.scheme not in ("http", "https"):
        raise ValueError("must start with http:// or https://, e.g. http://127.0.0.1:11434/v1")
    if not host:
        raise ValueError("has no host, e.g. http://127.0.0.1:11434/v1")
    return value


ApiRoot = Annotated[str, AfterValidator(_api_root)]
"""An http(s) URL with a host: where a provider's API lives."""


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
    def list_models(cls, custom_yaml_dir: str | Path | None = None) -> list[ModelCard]:
        """Return the model cards of this provider (those of its chat-model class).

        Args:
            custom_yaml_dir: Read the cards from this directory instead of the shipped ones.

        Raises:
            ValueError: a card file is malformed.
        """
        return cls.get_chat_model_class().list_models(custom_yaml_dir)

    @classmethod
    def secret_fields(cls) -> frozenset[str]:
        """Return the names of the fields holding secrets (`writeOnly` in the JSON schema).

        That is every `SecretStr` field and every field marked like `OpenAICredential.api_key`.
        """
        properties = cls.model_json_schema().get("properties", {})
        return frozenset(name for name, prop in properties.items() if prop.get("writeOnly"))


class OpenAICredential(CredentialBase):
    """An API key for OpenAI or any server speaking its Chat Completions protocol."""

    type: Literal["openai_credential"] = "openai_credential"
    api_key: str = Field(
        repr=False, description="Secret API key.", json_schema_extra=_SECRET_SCHEMA
    )
    base_url: ApiRoot = Field(
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


class DashScopeCredential(CredentialBase):
    """An API key for Alibaba Cloud DashScope (Qwen models), used over its OpenAI-compatible API."""

    type: Literal["dashscope_credential"] = "dashscope_credential"
    api_key: str = Field(
        repr=False, description="Secret API key.", json_schema_extra=_SECRET_SCHEMA
    )
    base_url: ApiRoot = Field(
        default="https://dashscope.aliyuncs.com/compatible-mode/v1",
        min_length=1,
        description="The OpenAI-compatible API root; `/chat/completions` is appended.",
    )

    @classmethod
    def get_chat_model_class(cls) -> builtins.type[ChatModelBase]:
        """Return `DashScopeChatModel`."""
        from agent_core.model.dashscope import DashScopeChatModel

        return DashScopeChatModel


# Grows into `OpenAICredential | AnthropicCredential | ...` as the service stores more providers.
Credential = Annotated[OpenAICredential, Field(discriminator="type")]

CREDENTIAL_TYPES: dict[str, type[CredentialBase]] = {"openai_credential": OpenAICredential}


def register_credential(cls: type[CredentialBase]) -> None:
    """Make a custom credential class known to `parse_credential` and `credential_json_schemas`.

    Raises:
        ValueError: the class has no `type` default, or another class has the same `type`.
    """
    kind = cls.model_fields["type"].default
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"{cls.__name__}.type needs a Literal default naming the credential")
    known = CREDENTIAL_TYPES.get(kind)
    if known is not None and known is not cls:
        raise ValueError(f"credential type {kind!r} is already {known.__name__}")
    CREDENTIAL_TYPES[kind] = cls


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
