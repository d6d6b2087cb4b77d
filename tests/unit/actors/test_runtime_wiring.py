"""The composition root: a process's parts share one pool and layout; facades act on them."""

from __future__ import annotations

import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.errors import SessionNotFound
from actors.settings import RuntimeSettings
from actors.storage.records import AgentData, SessionConfig
from actors.wiring import wire

pytestmark = [pytest.mark.redis]


async def test_the_parts_of_a_process_share_one_pool_and_key_layout(redis_url: str) -> None:
    settings = RuntimeSettings(redis_url=redis_url, key_prefix="wired")
    dispatcher = InProcessDispatcher(settings)
    parts = wire(settings, lambda _redis: dispatcher)
    try:
        assert parts.storage.redis is parts.redis
        assert parts.bus.redis is parts.redis
        assert parts.dispatcher is parts.mailbox.dispatcher is dispatcher
        agent = await parts.storage.create_agent("alice", AgentData(name="a"))
        assert await parts.schedule_store().get_agent("alice", agent.id) == agent
        assert await parts.redis.keys("wired:agent:*") == [f"wired:agent:{agent.id}".encode()]
    finally:
        await dispatcher.close()
        await parts.redis.aclose()


async def test_deleting_an_agent_through_its_facade_deletes_its_sessions(redis_url: str) -> None:
    settings = RuntimeSettings(redis_url=redis_url)
    client = RuntimeClient(settings, InProcessDispatcher(settings))
    try:
        agent = await client.agents.create("alice", AgentData(name="a"))
        session = await client.sessions.create("alice", agent.id, SessionConfig())
        assert [o.session.id for o in await client.sessions.overviews("alice", agent.id)] == [
            session.id
        ]
        await client.agents.delete("alice", agent.id)
        with pytest.raises(SessionNotFound):
            await client.sessions.get("alice", session.id)
    finally:
        await client.aclose()
