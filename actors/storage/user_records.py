"""`UserRecords`: the records each user owns (agents, credentials), scoped by user id.

The base of `RedisStorage`: every record is one JSON string under its own key, listed in its
user's index (a zset by creation time), and each write bumps the user's version of that kind
(`records_version`), so a reader can tell that nothing changed without reading the records.
"""

from __future__ import annotations

import time
from typing import TypeVar

from pydantic import BaseModel
from redis.asyncio import Redis

from actors.bus.keys import DEFAULT_KEY_PREFIX, Keys
from actors.bus.redis_connect import RedisOwner
from actors.errors import AgentNotFound, CredentialNotFound, NotFound
from actors.storage.crypto import SecretBox
from actors.storage.records import AgentData, AgentRecord, CredentialRecord
from agent_core._ids import now_iso
from agent_core.credential import Credential

R = TypeVar("R", bound=BaseModel)


class UserRecords(RedisOwner):
    """Agents and credentials in Redis, every read scoped by user id (see `RedisStorage`)."""

    def __init__(
        self,
        redis: Redis | None,
        keys: Keys | None,
        secret_key: str | None,
        host: str,
        port: int,
        db: int,
        password: str | None,
    ) -> None:
        super().__init__(redis, host, port, db, password)
        self.keys = keys or Keys(DEFAULT_KEY_PREFIX)
        self.secret_key = secret_key
        self._box = SecretBox(secret_key) if secret_key else None

    async def secrets(self) -> SecretBox:
        """The deployment's `SecretBox` (its generated key is fetched on first use)."""
        if self._box is None:
            self._box = await SecretBox.for_deployment(self.redis, self.keys, self.secret_key)
        return self._box

    async def _put(
        self, key: str, user_id: str, kind: str, record: BaseModel, score: float
    ) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(key, record.model_dump_json())
            pipe.zadd(self.keys.user_index(user_id, kind), {record.id: score})  # type: ignore[attr-defined]
            pipe.incr(self.keys.user_index_version(user_id, kind))
            await pipe.execute()

    async def _get(
        self, key: str, model: type[R], user_id: str, missing: type[NotFound], record_id: str
    ) -> R:
        return owned_record(await self.redis.get(key), model, user_id, missing, record_id)

    async def _list(self, user_id: str, kind: str, key_of: str, model: type[R]) -> list[R]:
        ids = await self.redis.zrange(self.keys.user_index(user_id, kind), 0, -1)
        if not ids:
            return []
        raws = await self.redis.mget([getattr(self.keys, key_of)(i.decode()) for i in ids])
        return [model.model_validate_json(raw) for raw in raws if raw is not None]

    async def _replace(
        self, key: str, kind: str, record: BaseModel, missing: type[NotFound], record_id: str
    ) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            # XX: a record deleted meanwhile stays deleted instead of coming back.
            pipe.set(key, record.model_dump_json(), xx=True)
            pipe.incr(self.keys.user_index_version(record.user_id, kind))  # type: ignore[attr-defined]
            replaced, _ = await pipe.execute()
        if not replaced:
            raise missing(record_id)

    async def _delete(self, key: str, user_id: str, kind: str, record_id: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.zrem(self.keys.user_index(user_id, kind), record_id)
            pipe.incr(self.keys.user_index_version(user_id, kind))
            await pipe.execute()

    async def records_version(self, user_id: str, kind: str) -> int:
        """A number that changes whenever one of the user's records of `kind` is written.

        Kinds: `agents`, `credentials`. Equal numbers: `list_agents` (or `list_credentials`)
        would read the same records.
        """
        return int(await self.redis.get(self.keys.user_index_version(user_id, kind)) or 0)

    # agents
    async def create_agent(self, user_id: str, data: AgentData) -> AgentRecord:
        """Store a new agent."""
        record = AgentRecord(user_id=user_id, data=data)
        await self._put(self.keys.agent(record.id), user_id, "agents", record, score_now())
        return record

    async def get_agent(self, user_id: str, agent_id: str) -> AgentRecord:
        """Return one of the user's agents.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        return await self._get(
            self.keys.agent(agent_id), AgentRecord, user_id, AgentNotFound, agent_id
        )

    async def list_agents(self, user_id: str) -> list[AgentRecord]:
        """Return the user's agents, oldest first."""
        return await self._list(user_id, "agents", "agent", AgentRecord)

    async def update_agent(self, user_id: str, agent_id: str, data: AgentData) -> AgentRecord:
        """Replace the data of one of the user's agents.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        record = await self.get_agent(user_id, agent_id)
        record = record.model_copy(update={"data": data, "updated_at": now_iso()})
        await self._replace(self.keys.agent(agent_id), "agents", record, AgentNotFound, agent_id)
        return record

    async def delete_agent(self, user_id: str, agent_id: str) -> None:
        """Delete one of the user's agents (its sessions are the caller's to delete).

        Raises:
            AgentNotFound: no such agent for this user.
        """
        await self.get_agent(user_id, agent_id)
        await self._delete(self.keys.agent(agent_id), user_id, "agents", agent_id)

    # credentials
    async def create_credential(self, user_id: str, data: Credential) -> CredentialRecord:
        """Store a new credential, its secrets encrypted."""
        record = CredentialRecord(user_id=user_id, data=data)
        sealed = await self._sealed(record)
        key = self.keys.credential(record.id)
        await self._put(key, user_id, "credentials", sealed, score_now())
        return record

    async def _sealed(self, record: CredentialRecord) -> CredentialRecord:
        box = await self.secrets()
        return record.model_copy(update={"data": box.seal(record.data)})

    async def _opened(self, record: CredentialRecord) -> CredentialRecord:
        box = await self.secrets()
        return record.model_copy(update={"data": box.open(record.data)})

    async def get_credential(self, user_id: str, credential_id: str) -> CredentialRecord:
        """Return one of the user's credentials.

        Raises:
            CredentialNotFound: no such credential for this user.
            SecretKeyError: its secrets cannot be decrypted with the configured key.
        """
        record = await self._get(
            self.keys.credential(credential_id),
            CredentialRecord,
            user_id,
            CredentialNotFound,
            credential_id,
        )
        return await self._opened(record)

    async def list_credentials(self, user_id: str) -> list[CredentialRecord]:
        """Return the user's credentials, oldest first.

        Raises:
            SecretKeyError: secrets cannot be decrypted with the configured key.
        """
        records = await self._list(user_id, "credentials", "credential", CredentialRecord)
        return [await self._opened(record) for record in records]

    async def update_credential(
        self, user_id: str, credential_id: str, data: Credential
    ) -> CredentialRecord:
        """Replace the data of one of the user's credentials, its secrets encrypted.

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        key = self.keys.credential(credential_id)
        record = await self._get(key, CredentialRecord, user_id, CredentialNotFound, credential_id)
        record = record.model_copy(update={"data": data, "updated_at": now_iso()})
        sealed = await self._sealed(record)
        await self._replace(key, "credentials", sealed, CredentialNotFound, credential_id)
        return record

    async def delete_credential(self, user_id: str, credential_id: str) -> None:
        """Delete one of the user's credentials.

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        key = self.keys.credential(credential_id)
        await self._get(key, CredentialRecord, user_id, CredentialNotFound, credential_id)
        await self._delete(key, user_id, "credentials", credential_id)


def score_now() -> float:
    """A record's score in its user index: the time it was created."""
    return time.time()


def owned_record(
    raw: bytes | None, model: type[R], user_id: str, missing: type[NotFound], record_id: str
) -> R:
    """The record stored as `raw` if it is the user's; another user's does not exist for them."""
    if raw is None:
        raise missing(record_id)
    record = model.model_validate_json(raw)
    if getattr(record, "user_id", None) != user_id:
        raise missing(record_id)
    return record
