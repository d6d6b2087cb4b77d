"""Credentials: how to reach a model provider, stored and sent as JSON tagged by `type`.

Each provider adds a `CredentialBase` subclass with a unique `type` literal and names its
chat-model classes in `chat_models` (type name → "module:Class", imported when asked for, so
this module imports no model). `register_credential` adds a class to `CREDENTIAL_TYPES`, which
`Credential` (the stored, validated form), `parse_credential` and `credential_json_schemas` read:
a registered type is one the service stores and lists.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    SecretStr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    WithJsonSchema,
    model_serializer,
)

from agent_core.deferred_model import DeferredModel
from agent_core.errors import CredentialError

if TYPE_CHECKING:
    from pathlib import Path

    from agent_core.model.base import ChatModelBase
    from agent_core.model.card import ModelCard


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

ApiKey = Annotated[SecretStr, Field(description="Secret API key.")]
"""A provider's secret API key."""


def _root_field(default: str, appended: str = "/chat/completions", what: str = "API root") -> Any:
    """The `base_url` field of a provider whose API lives at `default` unless told otherwise."""
    return Field(default=default, min_length=1, description=f"{what}; `{appended}` is appended.")


REVEAL_SECRETS = "reveal_secrets"
"""Serialisation context key: dump `SecretStr` fields in plain (only the stored form does)."""


class CredentialBase(DeferredModel):
    """Connection details for one model provider."""

    # Validation errors must not echo the input: it holds the secret.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    type: str = Field(description="Credential kind; selects the provider.")
    name: str = Field(
        default="", max_length=200, description="User-facing display name for this credential."
    )

    chat_models: ClassVar[dict[str, str]] = {}
    """The chat-model classes taking this credential: type name → "module:Class", default first."""

    @classmethod
    def get_chat_model_class(cls, model_class: str = "") -> builtins.type[ChatModelBase]:
        """Return the chat-model class that accepts this credential.

        Args:
            model_class: Its type name (e.g. "openai_response"); the default class when empty.

        Raises:
            CredentialError: this credential serves no class of that name.
        """
        if not cls.chat_models:
            raise CredentialError(f"{cls.__name__} names no chat model class")
        path = cls.chat_models.get(model_class or next(iter(cls.chat_models)))
        if path is None:
            known = ", ".join(cls.chat_models)
            raise CredentialError(f"{cls.__name__} serves {known}, not {model_class!r}")
        module, _, name = path.partition(":")
        found: builtins.type[ChatModelBase] = getattr(importlib.import_module(module), name)
        return found

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

        That is every `SecretStr` field and every field marked `writeOnly` by hand.
        """
        properties = cls.model_json_schema().get("properties", {})
        marked = {name for name, prop in properties.items() if prop.get("writeOnly")}
        return frozenset(marked | {name for name in cls.model_fields if cls._is_secret_field(name)})

    def secret(self, name: str) -> str | None:
        """Return the plain value of the secret field `name` (None when unset).

        Raises:
            AttributeError: the credential has no such field.
        """
        value = getattr(self, name)
        if isinstance(value, SecretStr):
            return value.get_secret_value()
        return value if isinstance(value, str) else None

    def with_secrets(self, secrets: Mapping[str, str]) -> Self:
        """Return a copy whose secret fields `secrets` names hold the given plain values."""
        update = {
            name: SecretStr(value) if self._is_secret_field(name) else value
            for name, value in secrets.items()
        }
        return self.model_copy(update=update)

    @classmethod
    def _is_secret_field(cls, name: str) -> bool:
        annotation = cls.model_fields[name].annotation
        return annotation is SecretStr or SecretStr in getattr(annotation, "__args__", ())

    @model_serializer(mode="wrap")
    def _reveal_secrets(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        context = info.context
        if isinstance(context, dict) and context.get(REVEAL_SECRETS):
            for name in type(self).model_fields:
                value = getattr(self, name, None)
                if isinstance(value, SecretStr) and name in data:
                    data[name] = value.get_secret_value()
        return data


class OpenAICredential(CredentialBase):
    """An API key for OpenAI or any server speaking its Chat Completions protocol."""

    type: Literal["openai_credential"] = "openai_credential"
    api_key: ApiKey
    base_url: ApiRoot = _root_field("https://api.openai.com/v1")
    organization: str | None = Field(default=None, description="Optional OpenAI organization id.")

    chat_models: ClassVar[dict[str, str]] = {
        "openai_chat": "agent_core.model.openai:OpenAIChatModel",
        "openai_response": "agent_core.model.openai_response:OpenAIResponseModel",
    }


class DashScopeCredential(CredentialBase):
    """An API key for Alibaba Cloud DashScope (Qwen models), used over its OpenAI-compatible API."""

    type: Literal["dashscope_credential"] = "dashscope_credential"
    api_key: ApiKey
    base_url: ApiRoot = _root_field(
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "/chat/completions",
        "The OpenAI-compatible API root",
    )

    chat_models: ClassVar[dict[str, str]] = {
        "dashscope_chat": "agent_core.model.dashscope:DashScopeChatModel"
    }


class AnthropicCredential(CredentialBase):
    """An API key for Anthropic's Messages API (Claude models)."""

    type: Literal["anthropic_credential"] = "anthropic_credential"
    api_key: ApiKey
    base_url: str = _root_field("https://api.anthropic.com/v1", "/messages")

    chat_models: ClassVar[dict[str, str]] = {
        "anthropic_chat": "agent_core.model.anthropic:AnthropicChatModel"
    }


class DeepSeekCredential(CredentialBase):
    """An API key for DeepSeek's (OpenAI-compatible) API."""

    type: Literal["deepseek_credential"] = "deepseek_credential"
    api_key: ApiKey
    base_url: str = _root_field("https://api.deepseek.com")

    chat_models: ClassVar[dict[str, str]] = {
        "deepseek_chat": "agent_core.model.deepseek:DeepSeekChatModel"
    }


class MoonshotCredential(CredentialBase):
    """An API key for Moonshot AI's (OpenAI-compatible) API (Kimi models)."""

    type: Literal["moonshot_credential"] = "moonshot_credential"
    api_key: ApiKey
    base_url: str = _root_field("https://api.moonshot.cn/v1")

    chat_models: ClassVar[dict[str, str]] = {
        "moonshot_chat": "agent_core.model.moonshot:MoonshotChatModel"
    }


class XAICredential(CredentialBase):
    """An API key for xAI's REST API (Grok models)."""

    type: Literal["xai_credential"] = "xai_credential"
    api_key: ApiKey
    api_host: str = Field(
        default="api.x.ai",
        min_length=1,
        description="API host (HTTPS), or a URL with its scheme; `/v1/chat/completions` is "
        "appended.",
    )

    chat_models: ClassVar[dict[str, str]] = {"xai_chat": "agent_core.model.xai:XAIChatModel"}

    @property
    def base_url(self) -> str:
        """The REST API root: `https://<api_host>/v1`."""
        host = self.api_host.rstrip("/")
        return f"{host if '://' in host else 'https://' + host}/v1"


class GeminiCredential(CredentialBase):
    """An API key for the Google Gemini API (Google AI Studio)."""

    type: Literal["gemini_credential"] = "gemini_credential"
    api_key: ApiKey
    base_url: str = _root_field(
        "https://generativelanguage.googleapis.com/v1beta", "/models/<model>:generateContent"
    )

    chat_models: ClassVar[dict[str, str]] = {
        "gemini_chat": "agent_core.model.gemini:GeminiChatModel"
    }


class OllamaCredential(CredentialBase):
    """Where an Ollama server listens, and the key of one that asks for it (e.g. ollama.com)."""

    type: Literal["ollama_credential"] = "ollama_credential"
    host: str | None = Field(
        default=None,
        description="The Ollama server's URL (http://localhost:11434 when unset); a bare "
        "`host:port` means http.",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="Secret API key, sent as a Bearer token (only servers that ask need one).",
        # A nullable SecretStr marks only its string branch; the field itself is the secret.
        json_schema_extra={"format": "password", "writeOnly": True},
    )

    chat_models: ClassVar[dict[str, str]] = {
        "ollama_chat": "agent_core.model.ollama:OllamaChatModel"
    }

    @property
    def base_url(self) -> str:
        """The server's root URL: `host` with a scheme (and port 11434 when it has none)."""
        host = (self.host or "").strip().rstrip("/") or "http://localhost:11434"
        if "://" not in host:
            host = f"http://{host}"
        scheme, _, rest = host.partition("://")
        netloc, slash, path = rest.partition("/")
        if not netloc.rpartition("]")[2].count(":"):
            netloc = f"{netloc}:{443 if scheme == 'https' else 11434}"
        return f"{scheme}://{netloc}{slash}{path}"


CREDENTIAL_TYPES: dict[str, type[CredentialBase]] = {}


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


for _shipped in (
    OpenAICredential,
    DashScopeCredential,
    AnthropicCredential,
    DeepSeekCredential,
    MoonshotCredential,
    XAICredential,
    GeminiCredential,
    OllamaCredential,
):
    register_credential(_shipped)


def _validate_credential(value: Any) -> CredentialBase:
    if isinstance(value, CredentialBase):
        if CREDENTIAL_TYPES.get(value.type) is not type(value):
            raise ValueError(f"unknown credential type {value.type!r}")
        return value
    if not isinstance(value, Mapping):
        raise ValueError("a credential must be an object with a `type`")
    kind = value.get("type")
    cls = CREDENTIAL_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        known = ", ".join(sorted(CREDENTIAL_TYPES))
        raise ValueError(f"unknown credential type {kind!r}; known: {known}")
    # Its ValidationError joins the outer one, each error located under the field it names.
    return cls.model_validate(value)


Credential = Annotated[
    CredentialBase,
    PlainValidator(_validate_credential),
    # The stored form keeps the secrets (sealed by the service before they reach Redis);
    # anywhere else a `SecretStr` dumps masked.
    PlainSerializer(
        lambda c: c.model_dump(mode="json", context={REVEAL_SECRETS: True}),
        return_type=dict[str, Any],
    ),
    WithJsonSchema(
        {
            "type": "object",
            "description": "A credential tagged by `type`; see GET /credential/schemas.",
            "properties": {"type": {"type": "string"}},
            "required": ["type"],
        }
    ),
]
"""A credential of any registered type, validated by its `type` (what the service stores)."""
