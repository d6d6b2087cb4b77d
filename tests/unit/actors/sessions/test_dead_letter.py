"""Which failed drains count against an inbox item, and which are not its fault."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from actors.bus.items import ChatItem, UnreadableItem, read_item
from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.errors import SessionFenced, StorageUnavailable
from actors.sessions.dead_letters import DeadLetters
from actors.storage.redis_storage import RedisStorage

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_only_failures_that_are_the_items_fault_are_counted(redis: Redis) -> None:
    keys = Keys("dead")
    bus = RedisMessageBus(redis, keys)
    letters = DeadLetters(RedisStorage(redis, keys), bus, "s1")
    for outage in (
        StorageUnavailable("down"),
        RedisConnectionError("reset"),
        SessionFenced("replaced"),
    ):
        await letters.count_failure(["1-0"], outage)
    assert await redis.hgetall(keys.attempts("s1")) == {}
    await letters.count_failure(["1-0", "2-0"], ValueError("bad input"))
    await letters.count_failure(["1-0"], ValueError("bad input"))
    assert await redis.hgetall(keys.attempts("s1")) == {b"1-0": b"2", b"2-0": b"1"}
    assert await redis.ttl(keys.attempts("s1")) > 0


def test_an_entry_that_does_not_parse_is_reported_with_its_stored_form() -> None:
    assert isinstance(read_item(ChatItem(input=None).model_dump_json()), ChatItem)
    deep = '{"type": "chat", "input": ' + "[" * 300 + "]" * 300 + "}"
    unreadable = read_item(deep.encode())
    assert isinstance(unreadable, UnreadableItem)
    assert unreadable.raw == deep
    assert "recursion limit" in unreadable.reason
    assert isinstance(read_item(b""), UnreadableItem)
