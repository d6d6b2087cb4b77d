"""Concurrent deliveries are group-committed: fewer rounds, same order, exact refusals."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from actors.bus.delivery_batcher import DeliveryBatcher
from actors.bus.items import ChatItem
from actors.bus.keys import Keys
from actors.bus.mailbox import Mailbox
from actors.bus.message_bus import Put, RedisMessageBus
from actors.errors import InboxFull
from agent_core.message import UserMsg
from tests.support.dispatchers import RecordingDispatcher

pytestmark = [pytest.mark.redis]

KEYS = Keys("batch")


def chat(text: str) -> ChatItem:
    return ChatItem(input=[UserMsg("user", text)])


def texts(bus_items: list[tuple[str, ChatItem]]) -> list[str]:
    return [m.get_text_content() or "" for _, item in bus_items for m in item.input]  # type: ignore[union-attr]


async def test_concurrent_deliveries_share_rounds_and_keep_their_order(redis: Redis) -> None:
    bus = RedisMessageBus(redis, KEYS)
    dispatcher = RecordingDispatcher()
    batcher = DeliveryBatcher(Mailbox(bus, dispatcher))

    await asyncio.gather(*(batcher.deliver(f"s{i % 3}", chat(f"m{i}")) for i in range(30)))

    for session in range(3):
        pending = await bus.pending(f"s{session}")
        assert texts(pending) == [f"m{i}" for i in range(30) if i % 3 == session]  # type: ignore[arg-type]
    # All thirty arrived before the first round started: one pipelined write, one batch of wakes.
    assert len(dispatcher.rounds) == 1
    assert sorted(s for woken in dispatcher.rounds for s in woken) == sorted(
        f"s{i % 3}" for i in range(30)
    )


async def test_a_full_inbox_refuses_exactly_the_items_past_its_bound(redis: Redis) -> None:
    bus = RedisMessageBus(redis, KEYS, inbox_maxlen=2)
    batcher = DeliveryBatcher(Mailbox(bus, RecordingDispatcher()))

    results = await asyncio.gather(
        *(batcher.deliver("s1", chat(f"m{i}")) for i in range(4)),
        batcher.deliver("s2", chat("other")),
        return_exceptions=True,
    )

    assert results[:2] == [Put.QUEUED, Put.QUEUED]
    assert all(isinstance(r, InboxFull) for r in results[2:4]), results
    assert results[4] is Put.QUEUED
    assert texts(await bus.pending("s1")) == ["m0", "m1"]  # type: ignore[arg-type]


async def test_a_failed_round_reaches_its_senders_and_the_next_round_runs(
    redis: Redis, redis_url: str
) -> None:
    dead = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    dispatcher = RecordingDispatcher()
    mailbox = Mailbox(RedisMessageBus(dead, KEYS), dispatcher)
    batcher = DeliveryBatcher(mailbox)

    results = await asyncio.gather(
        *(batcher.deliver("s1", chat(f"m{i}")) for i in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, (RedisConnectionError, OSError)) for r in results), results
    assert dispatcher.rounds == []

    mailbox.bus = RedisMessageBus(redis, KEYS)
    await batcher.deliver("s1", chat("after"))
    assert texts(await mailbox.bus.pending("s1")) == ["after"]  # type: ignore[arg-type]
    await dead.aclose()


async def test_a_sender_that_goes_away_does_not_hold_up_the_others(redis: Redis) -> None:
    bus = RedisMessageBus(redis, KEYS)
    batcher = DeliveryBatcher(Mailbox(bus, RecordingDispatcher()))

    first = asyncio.ensure_future(batcher.deliver("s1", chat("first")))
    gone = asyncio.ensure_future(batcher.deliver("s1", chat("gone")))
    last = asyncio.ensure_future(batcher.deliver("s1", chat("last")))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.gather(first, last)

    # Its item was already in the round: delivered, like a request cut after its write.
    assert texts(await bus.pending("s1")) == ["first", "gone", "last"]  # type: ignore[arg-type]
