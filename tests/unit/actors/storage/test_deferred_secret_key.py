"""A storage told not to check its secret key checks it when a secret is first sealed or opened."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from actors.errors import SecretKeyError
from actors.storage.redis_storage import RedisStorage
from agent_core.credential import OpenAICredential


async def test_a_malformed_key_fails_at_the_first_secret_not_at_construction() -> None:
    with pytest.raises(SecretKeyError, match="Fernet"):
        RedisStorage(secret_key="not-a-key")
    storage = RedisStorage(secret_key="not-a-key", check_key=False)
    try:
        with pytest.raises(SecretKeyError, match="Fernet") as caught:
            await storage.secrets()
        assert "not-a-key" not in str(caught.value)
    finally:
        await storage.aclose()


async def test_a_deferred_key_seals_what_a_checked_one_opens() -> None:
    key = Fernet.generate_key().decode()
    deferred = RedisStorage(secret_key=key, check_key=False)
    checked = RedisStorage(secret_key=key)
    try:
        sealed = (await deferred.secrets()).seal(OpenAICredential(api_key="sk-secret"))
        assert sealed.secret("api_key") != "sk-secret"
        opened = (await checked.secrets()).open(sealed)
        assert opened.secret("api_key") == "sk-secret"
    finally:
        await deferred.aclose()
        await checked.aclose()
