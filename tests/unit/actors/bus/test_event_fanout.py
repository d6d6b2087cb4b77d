"""One reader per session log feeds every subscriber: each event once, in order, no gaps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus import event_fanout
from actors.bus.event_fanout import EventFanout, Frame
from actors.bus.keys import Keys
from actors.bus.redis_connect import connect
from actors.bus.stream_ids import ORIGIN, StreamId
from agent_core.event import CustomEvent, event_to_json

pytestmark = [pytest.mark.redis]

KEYS = Keys("fan")


@pytest.fixture
async def fanout(redis_url: str) -> AsyncIterator[EventFanout]:
    hub = EventFanout(
        connect(redis_url, max_connections=8),
        KEYS,
        block_ms=200,
        outage_grace=5,
        log_maxlen=10,
    )
    yield hub
    await hub.aclose()


async def append(redis: Redis, n: int, session: str = "s1", maxlen: int | None = None) -> list[str]:
    ids = []
    for i in range(n):
        payload = event_to_json(CustomEvent(name=f"e{i}"))
        eid = await redis.xadd(
            KEYS.events(session), {"e": payload}, maxlen=maxlen, approximate=False
        )
        ids.append(eid.decode())
    return ids


async def collect(frames: AsyncIterator[Frame], n: int) -> list[Frame]:
    """The first `n` frames that are events (idle marks skipped)."""
    got: list[Frame] = []
    async for frame in frames:
        if frame != ("", ""):
            got.append(frame)
            if len(got) == n:
                break
    await frames.aclose()  # type: ignore[attr-defined]
    return got


def names(frames: list[Frame]) -> list[str]:
    return [json.loads(payload)["name"] for _, payload in frames]


async def test_every_subscriber_gets_every_event_once_from_one_reader(
    fanout: EventFanout, redis: Redis
) -> None:
    before = await append(redis, 3)
    subscribers = [
        asyncio.create_task(collect(await fanout.subscribe("s1", StreamId.parse(before[0])), 12))
        for _ in range(50)
    ]
    await asyncio.sleep(0.3)
    assert fanout.watched == 1
    ids = await append(redis, 10)
    for task in subscribers:
        got = await task
        assert [eid for eid, _ in got] == [*before[1:], *ids]
    assert fanout.watched == 0  # the reader stops with its last subscriber


async def test_a_cursor_past_the_newest_event_waits_for_the_next(
    fanout: EventFanout, redis: Redis
) -> None:
    await append(redis, 2)
    future = StreamId(2**64 - 1, 0)
    task = asyncio.create_task(collect(await fanout.subscribe("s1", future), 1))
    await asyncio.sleep(0.3)
    (new,) = await append(redis, 1)
    assert [eid for eid, _ in await task] == [new]


async def test_a_cursor_older_than_the_log_is_told_what_was_dropped(
    fanout: EventFanout, redis: Redis
) -> None:
    ids = await append(redis, 25, maxlen=10)
    got = await collect(await fanout.subscribe("s1", ORIGIN), 11)
    notice = json.loads(got[0][1])
    assert got[0][0] == ""
    assert (notice["type"], notice["name"]) == ("CUSTOM", "events_dropped")
    assert notice["value"]["first_id"] == ids[15]
    assert [eid for eid, _ in got[1:]] == ids[15:]
    # A cursor inside what the log holds gets no notice.
    inside = await collect(await fanout.subscribe("s1", StreamId.parse(ids[20])), 4)
    assert [eid for eid, _ in inside] == ids[21:]


async def test_an_untrimmed_log_read_from_the_start_has_no_notice(
    fanout: EventFanout, redis: Redis
) -> None:
    ids = await append(redis, 3)
    assert [eid for eid, _ in await collect(await fanout.subscribe("s1", ORIGIN), 3)] == ids


async def test_a_subscriber_that_lags_past_the_buffer_catches_up_from_redis(
    fanout: EventFanout, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_fanout, "BUFFER", 4)
    slow = await fanout.subscribe("s1", ORIGIN)
    fast = asyncio.create_task(collect(await fanout.subscribe("s1", ORIGIN), 30))
    first = await anext(slow)  # subscribed, then stops reading while 30 events arrive
    assert first == ("", "")
    ids = await append(redis, 30)
    assert [eid for eid, _ in await fast] == ids
    assert [eid for eid, _ in await collect(slow, 30)] == ids


async def test_sessions_are_read_apart(fanout: EventFanout, redis: Redis) -> None:
    one = asyncio.create_task(collect(await fanout.subscribe("s1", ORIGIN), 2))
    two = asyncio.create_task(collect(await fanout.subscribe("s2", ORIGIN), 1))
    await asyncio.sleep(0.3)
    assert fanout.watched == 2
    await append(redis, 2, "s1")
    await append(redis, 1, "s2")
    assert names(await one) == ["e0", "e1"]
    assert names(await two) == ["e0"]


def test_stream_ids_parse_strictly() -> None:
    assert StreamId.parse("5") == StreamId(5, 0)
    assert StreamId.parse("18446744073709551615-3") == StreamId(2**64 - 1, 3)
    assert str(StreamId.parse("7-1")) == "7-1"
    for bad in [
        "18446744073709551616-0",
        "1-18446744073709551616",
        "\uff11\uff12",
        "1-",
        "-1",
        "a",
        "",
    ]:
        with pytest.raises(ValueError, match=r"stream id|out of range"):
            StreamId.parse(bad)
