"""Building a session's chat model from its stored config and credential."""

from __future__ import annotations

from actors.errors import InvalidRequest
from actors.records import ChatModelConfig, CredentialRecord
from agent_core.model.base import ChatModelBase


def build_chat_model(config: ChatModelConfig, credential: CredentialRecord) -> ChatModelBase:
    """Instantiate the chat model `config` names, authenticated by `credential`.

    Raises:
        InvalidRequest: the config's type does not match the credential's.
    """
    data = credential.data
    if config.type != data.type:
        raise InvalidRequest(
            f"chat_model_config.type is {config.type!r} but credential "
            f"{credential.id!r} is a {data.type!r}"
        )
    model_class = data.get_chat_model_class()
    return model_class(credential=data, model=config.model, parameters=config.parameters)
