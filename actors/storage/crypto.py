"""`SecretBox`: encrypts the secret fields of credentials before they reach Redis, signs tokens.

The key comes from `RuntimeSettings.secret_key` (`TROUPE_SECRET_KEY`): one or more Fernet keys,
comma-separated; the first encrypts, every one decrypts, so a key is rotated by putting the new
one first and re-saving the credentials. Without a configured key, a key is generated once and
kept in Redis under `{prefix}:secret_key` so that every replica and actor agrees on it — that
protects nothing against someone who can read Redis, so it is for development only; production
sets the variable.

Generate a key with
`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.errors import SecretKeyError
from agent_core.credential import CredentialBase

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

log = logging.getLogger(__name__)

GENERATED_KEY_WARNING = (
    "TROUPE_SECRET_KEY is unset: credentials are encrypted with a key kept in Redis "
    "(fine for development; set TROUPE_SECRET_KEY in production)"
)

_MALFORMED_KEY = (
    "the secret key must be one or more comma-separated Fernet keys "
    "(32 url-safe base64-encoded bytes)"
)

C = TypeVar("C", bound=CredentialBase)


def generate_key() -> bytes:
    """Return a new Fernet key (32 random bytes, url-safe base64-encoded, as Fernet makes)."""
    return base64.urlsafe_b64encode(os.urandom(32))


class SecretBox:
    """Encrypts and decrypts short secrets with the deployment's Fernet key(s).

    Args:
        secret_key: Comma-separated Fernet keys, the first one encrypting.

    Raises:
        SecretKeyError: a key is not a Fernet key (32 url-safe base64-encoded bytes).
    """

    def __init__(self, secret_key: str) -> None:
        self._raw_keys = [_raw_key(k.strip()) for k in secret_key.split(",") if k.strip()]
        if not self._raw_keys:
            raise SecretKeyError(_MALFORMED_KEY)
        # Built with the first secret encrypted or decrypted: a process that only signs, or
        # holds no secret yet, does not load the cipher.
        self._fernet: MultiFernet | None = None

    @classmethod
    async def for_deployment(cls, redis: Redis, keys: Keys, secret_key: str | None) -> SecretBox:
        """Return the box for `secret_key`, or for the deployment's generated key when unset.

        Raises:
            SecretKeyError: the key is malformed.
        """
        if secret_key:
            return cls(secret_key)
        # NX: of several replicas starting at once, the first one's key wins for all.
        created = await redis.set(keys.secret_key(), generate_key(), nx=True)
        stored = await redis.get(keys.secret_key())
        if created:
            # Only where the key is made: every session process opens the box, and `troupe
            # serve` says it once at start-up (GENERATED_KEY_WARNING).
            log.warning(GENERATED_KEY_WARNING)
        return cls(stored.decode())

    def encrypt(self, plaintext: str) -> str:
        """Return the token of `plaintext`."""
        return self._cipher().encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        """Return the plaintext of `token`.

        Raises:
            SecretKeyError: no configured key decrypts it (the key changed, or data is corrupt).
        """
        from cryptography.fernet import InvalidToken

        try:
            return self._cipher().decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise SecretKeyError(
                "a stored secret cannot be decrypted with the configured secret key "
                "(was TROUPE_SECRET_KEY changed without keeping the old key?)"
            ) from exc

    def sign(self, purpose: str, message: bytes) -> bytes:
        """Return the HMAC-SHA256 tag of `message` for `purpose`, keyed by the first key.

        Each purpose gets a key of its own derived from the Fernet key, so a tag made for
        one purpose never verifies for another.
        """
        return _mac(self._raw_keys[0], purpose, message)

    def verify(self, purpose: str, message: bytes, tag: bytes) -> bool:
        """Whether `tag` is the tag of `message` for `purpose` under any configured key."""
        return any(hmac.compare_digest(_mac(key, purpose, message), tag) for key in self._raw_keys)

    def seal(self, credential: C) -> C:
        """Return a copy of `credential` whose secret fields hold tokens."""
        return self._map_secrets(credential, self.encrypt)

    def open(self, credential: C) -> C:
        """Return a copy of a sealed `credential` with its secrets in plaintext.

        Raises:
            SecretKeyError: a secret cannot be decrypted.
        """
        return self._map_secrets(credential, self.decrypt)

    def _cipher(self) -> MultiFernet:
        if self._fernet is None:
            from cryptography.fernet import Fernet, MultiFernet

            self._fernet = MultiFernet(
                [Fernet(base64.urlsafe_b64encode(key)) for key in self._raw_keys]
            )
        return self._fernet

    @staticmethod
    def _map_secrets(credential: C, transform: Callable[[str], str]) -> C:
        update = {
            name: transform(value)
            for name in credential.secret_fields()
            if (value := credential.secret(name)) is not None
        }
        return credential.with_secrets(update)


def _mac(key: bytes, purpose: str, message: bytes) -> bytes:
    derived = hmac.new(key, f"troupe:{purpose}".encode(), hashlib.sha256).digest()
    return hmac.new(derived, message, hashlib.sha256).digest()


def _raw_key(key: str) -> bytes:
    """The 32 bytes of the Fernet key `key`, checked as `Fernet` checks it.

    Raises:
        SecretKeyError: `key` is not 32 url-safe base64-encoded bytes (the message never
            includes the key).
    """
    try:
        raw = base64.urlsafe_b64decode(key)
    except ValueError as exc:  # binascii.Error, or a str that is not ASCII
        raise SecretKeyError(_MALFORMED_KEY) from exc
    if len(raw) != 32:
        raise SecretKeyError(_MALFORMED_KEY)
    return raw
