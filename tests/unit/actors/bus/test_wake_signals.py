"""An inbox write signals the session's host over Redis; without a listener it wakes through the
dispatcher as before, and the listener outlives a lost connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.items import ChatItem
from actors.bus.keys import Keys
from actors.bus.mailbox import Mailbox
from actors.bus.message_bus import Put, RedisMessageBus
from actors.sessions.wake_listener import WakeListener
from agent_core.message import UserMsg
from tests.support.dispatchers import RecordingDispatcher

pytestmark = [pytest.mark.redis]

KEYS = Keys("wakes")
HOST = "session-host:node-0"


class Host:
    """A session host's listener, collecting the session ids signalled to it."""

    def __init__(self, redis: Redis, name: str) -> None:
        self.signalled: asyncio.Queue[str] = asyncio.Queue()
        self.listener = WakeListener(redis, KEYS.host_wakes(name), self._wake)

    async def _wake(self, session_ids: list[str]) -> None:
        for session_id in session_ids:
            self.signalled.put_nowait(session_id)

    async def next(self) -> str:
        return await asyncio.wait_for(self.signalled.get(), 10)


@pytest.fixture
async def host(redis: Redis) -> AsyncIterator[Host]:
    host = Host(redis, HOST)
    host.listener.start()
    await asyncio.wait_for(host.listener.subscribed.wait(), 10)
    yield host
    await host.listener.close()


def chat(text: str, item_id: str | None = None) -> ChatItem:
    if item_id is None:
        return ChatItem(input=[UserMsg("user", text)])
    return ChatItem(input=[UserMsg("user", text)], item_id=item_id)


async def place(redis: Redis, session_id: str, host: str) -> None:
    await redis.hset(KEYS.session_placement(), session_id, host)


async def test_a_placed_sessions_host_is_signalled_and_not_woken_again(
    redis: Redis, host: Host
) -> None:
    dispatcher = RecordingDispatcher()
    mailbox = Mailbox(RedisMessageBus(redis, KEYS), dispatcher)
    await place(redis, "s1", HOST)

    await mailbox.deliver("s1", chat("hello"))

    assert await host.next() == "s1"
    assert dispatcher.woken == []
    assert len(await mailbox.bus.pending("s1")) == 1  # the inbox still holds the truth


async def test_unplaced_or_unheard_sessions_are_woken_through_the_dispatcher(
    redis: Redis, host: Host
) -> None:
    dispatcher = RecordingDispatcher()
    bus = RedisMessageBus(redis, KEYS)
    mailbox = Mailbox(bus, dispatcher)
    await place(redis, "s-elsewhere", "session-host:gone")  # no listener: nobody hears it

    accepted = await mailbox.deliver_many(
        [("s-new", chat("one")), ("s-elsewhere", chat("two")), ("s-new", chat("three"))]
    )

    assert [put.accepted for put in accepted] == [True, True, True]
    assert dispatcher.woken == ["s-new", "s-elsewhere", "s-new"]
    assert host.signalled.empty()


async def test_a_full_inbox_refuses_and_a_duplicate_is_queued_not_signalled(
    redis: Redis, host: Host
) -> None:
    bus = RedisMessageBus(redis, KEYS, inbox_maxlen=1)
    await place(redis, "s1", HOST)

    first = await bus.put_many([("s1", chat("a", item_id="i-1"))])
    again = await bus.put_many([("s1", chat("a", item_id="i-1")), ("s1", chat("b"))])

    assert first == [Put.SIGNALLED]
    assert again == [Put.QUEUED, Put.REFUSED]
    assert await host.next() == "s1"
    assert host.signalled.empty()


async def test_the_listener_resubscribes_after_its_connection_is_killed(
    redis: Redis, host: Host
) -> None:
    bus = RedisMessageBus(redis, KEYS)
    await place(redis, "s1", HOST)

    assert await redis.client_kill_filter(_type="pubsub") >= 1
    deadline = asyncio.get_running_loop().time() + 10
    puts: list[Put] = []
    while asyncio.get_running_loop().time() < deadline:
        puts = await bus.put_many([("s1", chat("after the outage"))])
        if puts == [Put.SIGNALLED]:
            break
        await asyncio.sleep(0.05)

    assert puts == [Put.SIGNALLED]
    assert await host.next() == "s1"
