"""Concurrent session lookups share one MGET per round and still refuse foreign sessions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.errors import SessionNotFound
from actors.storage.records import AgentData, SessionConfig
from actors.storage.redis_storage import RedisStorage

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def calls(redis: Redis, command: str) -> int:
    stats = await redis.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


async def test_concurrent_lookups_are_one_mget_each_caller_gets_its_own(redis: Redis) -> None:
    storage = RedisStorage(redis, Keys("grouped"))
    agent = await storage.create_agent("alice", AgentData(name="Friday"))
    other = await storage.create_agent("bob", AgentData(name="Jarvis"))
    alice = [await storage.create_session("alice", agent.id, SessionConfig()) for _ in range(10)]
    bob = await storage.create_session("bob", other.id, SessionConfig())
    before = await calls(redis, "mget")

    found = await asyncio.gather(*(storage.load_session("alice", s.id) for s in alice))
    foreign = await asyncio.gather(
        storage.load_session("alice", bob.id),
        storage.load_session("alice", "no-such-session"),
        return_exceptions=True,
    )

    assert [record.id for record in found] == [s.id for s in alice]
    assert all(isinstance(error, SessionNotFound) for error in foreign), foreign
    assert await calls(redis, "mget") - before == 2  # one per round, not one per caller


async def test_session_agent_names_the_agent_of_the_callers_session_only(redis: Redis) -> None:
    storage = RedisStorage(redis, Keys("owner"))
    agent = await storage.create_agent("alice", AgentData(name="Friday"))
    session = await storage.create_session("alice", agent.id, SessionConfig())

    assert await storage.session_agent("alice", session.id) == agent.id
    for user, session_id in (("bob", session.id), ("alice", "no-such-session")):
        with pytest.raises(SessionNotFound):
            await storage.session_agent(user, session_id)
