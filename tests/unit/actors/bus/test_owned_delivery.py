"""A delivery with an owner is written only to a session of that user and agent, in the same
atomic write: a refused one leaves no key behind."""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from actors.bus.items import ChatItem
from actors.bus.keys import Keys
from actors.bus.message_bus import Put, RedisMessageBus, SessionOwner
from agent_core.message import UserMsg

pytestmark = [pytest.mark.redis]

KEYS = Keys("owned")


def chat(text: str) -> ChatItem:
    return ChatItem(input=[UserMsg("user", text)])


async def test_only_the_owners_deliveries_reach_the_inbox(redis: Redis) -> None:
    record = {"id": "s1", "user_id": "alice", "agent_id": "a1", "config": {}}
    await redis.set(KEYS.session("s1"), json.dumps(record))
    bus = RedisMessageBus(redis, KEYS)
    owners = [
        SessionOwner("alice", "a1"),
        SessionOwner("bob", "a1"),
        SessionOwner("alice", "a2"),
        None,
        SessionOwner("alice", "a1"),
    ]

    puts = await bus.put_many(
        [("s1", chat("mine")), ("s1", chat("bob's")), ("s1", chat("other agent")),
         ("s1", chat("unchecked")), ("gone", chat("to nobody"))],
        owners,
    )  # fmt: skip

    assert puts == [Put.QUEUED, Put.NOT_OWNED, Put.OTHER_AGENT, Put.QUEUED, Put.NOT_OWNED]
    assert [put.accepted for put in puts] == [True, False, False, True, False]
    pending = [item.input[0].get_text_content() for _, item in await bus.pending("s1")]  # type: ignore[index]
    assert pending == ["mine", "unchecked"]
    assert await redis.keys(f"{KEYS.prefix}:*gone*") == []
    assert await bus.sessions_with_inbox() == ["s1"]


async def test_a_refused_delivery_does_not_consume_its_idempotency_key(redis: Redis) -> None:
    record = {"id": "s1", "user_id": "alice", "agent_id": "a1", "config": {}}
    await redis.set(KEYS.session("s1"), json.dumps(record))
    bus = RedisMessageBus(redis, KEYS)
    keyed = ChatItem(input=[UserMsg("user", "hi")], item_id="client:k1")

    assert await bus.put_many([("s1", keyed)], [SessionOwner("bob", "a1")]) == [Put.NOT_OWNED]
    assert await bus.put_many([("s1", keyed)], [SessionOwner("alice", "a1")]) == [Put.QUEUED]
    assert len(await bus.pending("s1")) == 1
