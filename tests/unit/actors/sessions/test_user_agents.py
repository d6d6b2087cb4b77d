"""A host keeps each user's agents while they are unchanged: a reply reads one counter, and
any write of the user's agents (create, update, delete) is seen by the next read."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.bus.redis_connect import connect
from actors.sessions.user_agents import UserAgents
from actors.storage.records import AgentData
from actors.storage.redis_storage import RedisStorage

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def storage(redis_url: str) -> AsyncIterator[RedisStorage]:
    client: Redis = connect(redis_url)
    yield RedisStorage(client, Keys("user-agents"))
    await client.aclose()


async def record_reads(redis: Redis) -> int:
    """How many MGETs (the agent records' read) the server has run so far."""
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_mget", {}).get("calls", 0))


async def names(agents: UserAgents, user_id: str) -> list[str]:
    return [agent.data.name for agent in await agents.of(user_id)]


async def test_unchanged_agents_are_not_read_again(storage: RedisStorage) -> None:
    await storage.create_agent("alice", AgentData(name="A"))
    await storage.create_agent("alice", AgentData(name="B"))
    agents = UserAgents(storage)

    assert await names(agents, "alice") == ["A", "B"]
    reads = await record_reads(storage.redis)
    assert await names(agents, "alice") == ["A", "B"]
    assert await names(agents, "alice") == ["A", "B"]
    assert await record_reads(storage.redis) == reads


async def test_every_write_of_the_users_agents_is_seen(storage: RedisStorage) -> None:
    first = await storage.create_agent("alice", AgentData(name="A"))
    agents = UserAgents(storage)
    assert await names(agents, "alice") == ["A"]

    second = await storage.create_agent("alice", AgentData(name="B"))
    assert await names(agents, "alice") == ["A", "B"]
    await storage.update_agent("alice", first.id, AgentData(name="A2"))
    assert await names(agents, "alice") == ["A2", "B"]
    await storage.delete_agent("alice", second.id)
    assert await names(agents, "alice") == ["A2"]
    # Another user's writes are theirs alone.
    await storage.create_agent("bob", AgentData(name="C"))
    assert await names(agents, "alice") == ["A2"]
    assert await names(agents, "bob") == ["C"]


async def test_the_oldest_user_kept_makes_room(storage: RedisStorage) -> None:
    for user in ("u1", "u2", "u3"):
        await storage.create_agent(user, AgentData(name=user))
    agents = UserAgents(storage, capacity=2)

    assert [await names(agents, user) for user in ("u1", "u2", "u3")] == [["u1"], ["u2"], ["u3"]]
    reads = await record_reads(storage.redis)
    assert await names(agents, "u3") == ["u3"]
    assert await record_reads(storage.redis) == reads
    assert await names(agents, "u1") == ["u1"]  # made room for: read again
    assert await record_reads(storage.redis) == reads + 1
