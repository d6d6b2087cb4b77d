"""Building a session's chat model from its stored config and credential, and checking configs."""

from __future__ import annotations

from actors.errors import InvalidRequest
from actors.storage.records import ChatModelConfig, CredentialRecord, SessionConfig
from actors.storage.redis_storage import RedisStorage
from agent_core.errors import CredentialError
from agent_core.model.base import ChatModelBase


async def check_model_configs(storage: RedisStorage, user_id: str, config: SessionConfig) -> None:
    """Check that the config's chat models name credentials of the user, of their type.

    Raises:
        CredentialNotFound: a model config names a credential the user does not have.
        InvalidRequest: a model config's type does not match its credential.
    """
    for model_config in (config.chat_model_config, config.fallback_chat_model_config):
        if model_config is None:
            continue
        credential = await storage.get_credential(user_id, model_config.credential_id)
        if credential.data.type != model_config.type:
            raise InvalidRequest(
                f"chat_model_config.type {model_config.type!r} does not match credential "
                f"{credential.id!r} of type {credential.data.type!r}"
            )


def build_chat_model(config: ChatModelConfig, credential: CredentialRecord) -> ChatModelBase:
    """Instantiate the chat model `config` names, authenticated by `credential`.

    Raises:
        InvalidRequest: the config's type does not match the credential's, or its
            `model_class` is not one the credential serves.
    """
    data = credential.data
    if config.type != data.type:
        raise InvalidRequest(
            f"chat_model_config.type is {config.type!r} but credential "
            f"{credential.id!r} is a {data.type!r}"
        )
    try:
        # A class overriding it as the spec shows, `get_chat_model_class(cls)`, serves one class.
        model_class = (
            data.get_chat_model_class(config.model_class)
            if config.model_class
            else data.get_chat_model_class()
        )
    except CredentialError as exc:
        raise InvalidRequest(f"chat_model_config.model_class: {exc}") from exc
    return model_class(credential=data, model=config.model, parameters=config.parameters)


class ModelSlot:
    """One of a session's chat models, rebuilt only when its config changes (reused otherwise)."""

    def __init__(self) -> None:
        self._model: ChatModelBase | None = None
        self._config: ChatModelConfig | None = None

    async def get(
        self, storage: RedisStorage, user_id: str, config: ChatModelConfig | None
    ) -> ChatModelBase | None:
        """The model `config` names (None for no config), built once per config.

        Raises:
            CredentialNotFound: the config names a credential the user does not have.
            InvalidRequest: see `build_chat_model`.
        """
        if self._model is not None and config == self._config:
            return self._model
        await self.aclose()
        if config is not None:
            credential = await storage.get_credential(user_id, config.credential_id)
            self._model, self._config = build_chat_model(config, credential), config
        return self._model

    async def aclose(self) -> None:
        """Close the current model's connections, if any."""
        model, self._model, self._config = self._model, None, None
        if model is not None:
            await model.aclose()
