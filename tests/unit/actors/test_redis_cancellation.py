"""Cancelling a task that is inside a Redis command cancels it.

Every shutdown in the runtime (the sweeper, event readers, the scheduler's loops) stops a loop by
cancelling it, often while it waits on Redis. A client library that swallows the cancellation
leaves that loop running and the shutdown waiting forever (redis-py 8 does, hence its pin).
"""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from actors.bus.redis_connect import connect

pytestmark = [pytest.mark.redis]


async def _query_forever(redis: Redis) -> None:
    while True:
        await redis.smembers("troupe:test:set")


@pytest.mark.parametrize("after_commands", [0, 1, 20, 200])
async def test_cancelling_a_loop_of_commands_stops_it(redis_url: str, after_commands: int) -> None:
    redis = connect(redis_url)
    try:
        await redis.ping()
        loop = asyncio.create_task(_query_forever(redis))
        # Let the loop run a varying number of commands, so the cancel lands at varying points.
        for _ in range(after_commands):
            await asyncio.sleep(0)
        loop.cancel()
        done, _ = await asyncio.wait([loop], timeout=10)
        assert done, "the task was cancelled inside a Redis command and kept running"
        assert loop.cancelled()
    finally:
        await redis.aclose()
