"""The secret key is checked when the box is built; the cipher loads with the first secret."""

from __future__ import annotations

import base64

import pytest
from cryptography.fernet import Fernet

from actors.errors import SecretKeyError
from actors.storage.crypto import SecretBox, generate_key
from actors.storage.redis_storage import RedisStorage

GOOD = Fernet.generate_key().decode()
SHORT = base64.urlsafe_b64encode(b"x" * 16).decode()


@pytest.mark.parametrize(
    "key",
    [GOOD, f"{GOOD},{Fernet.generate_key().decode()}", f" {GOOD} ,", "not-a-key", SHORT, "é"],
)
def test_a_key_is_accepted_exactly_when_fernet_accepts_it(key: str) -> None:
    def fernet_accepts() -> bool:
        try:
            for part in key.split(","):
                if part.strip():
                    Fernet(part.strip())
        except ValueError:
            return False
        return True

    def box_accepts() -> bool:
        try:
            SecretBox(key)
        except SecretKeyError:
            return False
        return True

    assert box_accepts() == fernet_accepts()


@pytest.mark.parametrize("key", ["not-a-key", SHORT, f"{GOOD},{SHORT}", ","])
def test_a_malformed_key_fails_when_the_storage_is_built(key: str) -> None:
    with pytest.raises(SecretKeyError, match="Fernet") as caught:
        RedisStorage(secret_key=key)
    assert key not in str(caught.value)


def test_a_generated_key_is_a_fernet_key() -> None:
    key = generate_key()
    box = SecretBox(key.decode())
    assert box.decrypt(Fernet(key).encrypt(b"sk-secret").decode()) == "sk-secret"
    assert Fernet(key).decrypt(box.encrypt("sk-secret").encode()) == b"sk-secret"
