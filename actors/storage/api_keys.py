"""`ApiKeyStore`: bearer API keys mapped to user ids, kept in Redis as hashes of their secrets.

A key reads `trp_{key_id}.{secret}`: the id finds its record, the secret (32 random bytes) is
checked against the SHA-256 stored there. The secret itself is shown once, when the key is
created, and is never stored: someone who reads Redis learns who has keys, not the keys. A
plain hash suffices because the secret is random, not a password (nothing to brute-force).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime
from typing import Literal

from pydantic import ConfigDict, Field
from redis.asyncio import Redis

from actors.bus.keys import Keys
from agent_core.deferred_model import DeferredModel

TOKEN_PREFIX = "trp_"
"""What every Troupe API key starts with (so secret scanners and people recognise one)."""


class ApiKey(DeferredModel):
    """Who an API key identifies (the secret's hash included, the secret never)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["api_key"] = "api_key"
    key_id: str = Field(description="Public id of the key (the part before the dot).")
    user_id: str = Field(min_length=1, description="The user a request with this key acts as.")
    name: str = Field(default="", description="The operator's label for the key.")
    admin: bool = Field(default=False, description="May read cluster-wide status (/admin/...).")
    created_at: str = Field(description="ISO-8601 creation time (UTC).")
    secret_sha256: str = Field(description="Hex SHA-256 of the key's secret.")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _split(token: str) -> tuple[str, str] | None:
    if not token.startswith(TOKEN_PREFIX):
        return None
    key_id, dot, secret = token.removeprefix(TOKEN_PREFIX).partition(".")
    if not dot or not key_id.isalnum() or not secret:
        return None
    return key_id, secret


class ApiKeyStore:
    """Creates, resolves, lists and revokes the deployment's API keys."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def create(self, user_id: str, name: str = "", admin: bool = False) -> tuple[str, ApiKey]:
        """Make a key for `user_id`; return the token (shown once) and its record.

        Raises:
            ValueError: `user_id` is empty.
        """
        if not user_id.strip():
            raise ValueError("an API key needs a user id")
        key_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
        record = ApiKey(
            key_id=key_id,
            user_id=user_id,
            name=name,
            admin=admin,
            created_at=datetime.now(UTC).isoformat(),
            secret_sha256=_digest(secret),
        )
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._keys.api_key(key_id), record.model_dump_json())
            pipe.zadd(self._keys.api_keys(), {key_id: datetime.now(UTC).timestamp()})
            await pipe.execute()
        return f"{TOKEN_PREFIX}{key_id}.{secret}", record

    async def resolve(self, token: str) -> ApiKey | None:
        """The key `token` is, or None when it is malformed, unknown, revoked or wrong."""
        parts = _split(token.strip())
        if parts is None:
            return None
        key_id, secret = parts
        raw = await self._redis.get(self._keys.api_key(key_id))
        if raw is None:
            return None
        record = ApiKey.model_validate_json(raw)
        if not hmac.compare_digest(record.secret_sha256, _digest(secret)):
            return None
        return record

    async def list(self, user_id: str | None = None) -> list[ApiKey]:
        """Every key (of `user_id` only, when given), oldest first."""
        ids = [i.decode() for i in await self._redis.zrange(self._keys.api_keys(), 0, -1)]
        if not ids:
            return []
        raws = await self._redis.mget([self._keys.api_key(i) for i in ids])
        records = [ApiKey.model_validate_json(raw) for raw in raws if raw is not None]
        return [r for r in records if user_id is None or r.user_id == user_id]

    async def revoke(self, key_id: str) -> bool:
        """Delete a key; return whether it existed. Requests with it fail from now on."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._keys.api_key(key_id))
            pipe.zrem(self._keys.api_keys(), key_id)
            deleted, _ = await pipe.execute()
        return bool(deleted)
