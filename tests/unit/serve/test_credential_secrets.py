"""Credential keys are `SecretStr`: hidden in repr, logs and dumps, kept (sealed) when stored."""

import logging
from typing import Literal

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr, TypeAdapter

from actors.storage.crypto import SecretBox
from agent_core.credential import (
    CREDENTIAL_TYPES,
    AnthropicCredential,
    Credential,
    CredentialBase,
    OllamaCredential,
    parse_credential,
)
from agent_core.errors import CredentialError
from serve.credential_schemas import MASK, keep_masked_secrets

KEY = "sk-ant-very-secret"
STORED: TypeAdapter[CredentialBase] = TypeAdapter(Credential)


class VaultCredential(CredentialBase):
    """A custom credential with a SecretStr field of its own name."""

    type: Literal["vault_credential"] = "vault_credential"
    token: SecretStr


SHIPPED = [
    "anthropic_credential",
    "dashscope_credential",
    "deepseek_credential",
    "gemini_credential",
    "moonshot_credential",
    "ollama_credential",
    "openai_credential",
    "xai_credential",
]


@pytest.mark.parametrize("kind", SHIPPED)
def test_every_shipped_key_is_a_secret_str(kind: str) -> None:
    cls = CREDENTIAL_TYPES[kind]
    credential = parse_credential({"type": kind, "api_key": KEY})
    assert isinstance(credential.api_key, SecretStr)  # type: ignore[attr-defined]
    assert cls.secret_fields() == {"api_key"}
    assert credential.secret("api_key") == KEY
    assert KEY not in repr(credential)
    assert KEY not in str(credential)
    assert KEY not in credential.model_dump_json()


def test_logging_a_credential_shows_no_key(caplog: pytest.LogCaptureFixture) -> None:
    credential = AnthropicCredential(api_key=KEY)
    with caplog.at_level(logging.INFO):
        logging.getLogger("troupe.test").info("using %s / %r", credential, credential.api_key)
    assert KEY not in caplog.text


def test_validation_errors_do_not_echo_the_key() -> None:
    with pytest.raises(CredentialError) as info:
        parse_credential({"type": "anthropic_credential", "api_key": KEY, "base_url": 3})
    assert KEY not in str(info.value)


def test_the_stored_form_keeps_the_key_sealed() -> None:
    box = SecretBox(Fernet.generate_key().decode())
    credential = AnthropicCredential(api_key=KEY, base_url="http://127.0.0.1:9/v1")
    sealed = box.seal(credential)
    raw = STORED.dump_json(sealed)
    assert KEY.encode() not in raw
    assert b"http://127.0.0.1:9/v1" in raw
    restored = box.open(STORED.validate_json(raw))
    assert isinstance(restored, AnthropicCredential)
    assert restored.secret("api_key") == KEY
    assert isinstance(restored.api_key, SecretStr)


def test_custom_secret_str_fields_are_sealed_and_kept() -> None:
    box = SecretBox(Fernet.generate_key().decode())
    credential = VaultCredential(token=SecretStr("vault-token"))
    assert VaultCredential.secret_fields() == {"token"}
    sealed = box.seal(credential)
    assert sealed.secret("token") != "vault-token"
    assert box.open(sealed).secret("token") == "vault-token"


def test_optional_ollama_key_is_sealed_when_set_and_skipped_when_not() -> None:
    box = SecretBox(Fernet.generate_key().decode())
    assert OllamaCredential.secret_fields() == {"api_key"}
    assert box.seal(OllamaCredential()).api_key is None
    sealed = box.seal(OllamaCredential(api_key=SecretStr("ol")))
    assert box.open(sealed).secret("api_key") == "ol"


def test_a_masked_key_sent_back_keeps_the_stored_one() -> None:
    stored = AnthropicCredential(api_key=KEY)
    sent = AnthropicCredential(api_key=MASK, base_url="http://127.0.0.1:9/v1")
    kept = keep_masked_secrets(sent, stored)
    assert kept.secret("api_key") == KEY
    assert kept.base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(ValueError, match="stands for a stored secret"):
        keep_masked_secrets(sent, None)
