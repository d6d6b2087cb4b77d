"""Processes of a server that a newer one replaced can neither accept turns nor write."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.generation import claim_generation
from actors.bus.items import ChatItem
from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.errors import StaleGeneration
from actors.sessions.reply_writer import ReplyWriter
from actors.storage.redis_storage import RedisStorage
from agent_core.event import CustomEvent, ReplyStartEvent
from agent_core.message import AssistantMsg, UserMsg
from agent_core.state import AgentState

pytestmark = [pytest.mark.redis]

KEYS = Keys("generations")


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


def runtime(redis: Redis, generation: int) -> tuple[RedisMessageBus, RedisStorage]:
    bus = RedisMessageBus(redis, KEYS, 10, 100, generation=generation)
    return bus, RedisStorage(redis, KEYS, generation=generation)


def chat(text: str) -> ChatItem:
    return ChatItem(input=[UserMsg("user", text)])


def replying(state: AgentState) -> ReplyStartEvent:
    """The agent starts reply r1: its message is in the state, its first event comes."""
    start = ReplyStartEvent(reply_id="r1", session_id="s1", name="bot")
    state.context.append(AssistantMsg("bot", [], id="r1", created_at=start.created_at))
    return start


def test_a_cluster_keeps_its_generation_and_a_new_one_supersedes_it(redis_url: str) -> None:
    first = claim_generation(redis_url, KEYS, "cluster-a")
    assert claim_generation(redis_url, KEYS, "cluster-a") == first
    assert claim_generation(redis_url, KEYS, "cluster-b") == first + 1


async def test_the_old_servers_writers_are_refused_once_a_new_one_started(
    redis: Redis, redis_url: str
) -> None:
    old_bus, old_storage = runtime(redis, claim_generation(redis_url, KEYS, "old"))
    fence = await old_bus.acquire_lease("s1")
    assert await old_bus.put("s1", chat("before the crash"))
    await old_storage.commit_turn("s1", AgentState(session_id="s1"), [], [], fence)

    new_bus, _ = runtime(redis, claim_generation(redis_url, KEYS, "new"))

    with pytest.raises(StaleGeneration):
        await old_bus.put("s1", chat("accepted by a zombie"))
    with pytest.raises(StaleGeneration):
        await old_bus.put_many([("s1", chat("accepted by a zombie, in bulk"))])
    with pytest.raises(StaleGeneration):
        await old_bus.append_event("s1", CustomEvent(name="stale"), fence)
    with pytest.raises(StaleGeneration):
        await old_storage.commit_turn("s1", AgentState(session_id="s1"), [], [], fence)
    state = AgentState(session_id="s1")
    with pytest.raises(StaleGeneration):
        await ReplyWriter(old_storage, old_bus, "s1", fence).write(replying(state), state)
    with pytest.raises(StaleGeneration):  # nor can it fence out the new owner
        await old_bus.acquire_lease("s1")
    inbox = [item.input for _, item in await new_bus.pending("s1")]
    assert [m.get_text_content() for msgs in inbox for m in msgs] == ["before the crash"]  # type: ignore[union-attr]
    assert await new_bus.read_events("s1", "0") == []

    owner = await new_bus.acquire_lease("s1")
    assert owner == fence + 1
    await new_bus.append_event("s1", CustomEvent(name="ok"), owner)
    assert await new_bus.put("s1", chat("after the restart"))
