"""A replaced session owner (a zombie) can no longer write: the lease fences it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.errors import SessionFenced
from actors.storage.redis_storage import RedisStorage
from agent_core.event import CustomEvent
from agent_core.state import AgentState

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_only_the_newest_owner_may_write(redis: Redis) -> None:
    keys = Keys("fence")
    bus = RedisMessageBus(redis, keys, inbox_maxlen=10, event_log_maxlen=100)
    storage = RedisStorage(redis, keys)
    zombie = await bus.acquire_lease("s1")
    owner = await bus.acquire_lease("s1")
    assert owner > zombie

    await bus.append_event("s1", CustomEvent(name="ok"), owner)
    with pytest.raises(SessionFenced):
        await bus.append_event("s1", CustomEvent(name="stale"), zombie)
    with pytest.raises(SessionFenced):
        await bus.mark_running("s1", "r1", [], zombie)
    with pytest.raises(SessionFenced):
        await storage.commit_turn("s1", AgentState(session_id="s1"), [], [], zombie)
    await storage.commit_turn("s1", AgentState(session_id="s1"), [], [], owner)

    events = await bus.read_events("s1", "0")
    assert [e for _, e in events if '"stale"' in e] == []
    assert len(events) == 1
    assert await bus.running("s1") is None
