"""Batched script calls: one round trip, no SCRIPT EXISTS, and a flushed script cache survived."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from actors.bus.script_batch import run_scripts

pytestmark = [pytest.mark.redis]

INCR_BY = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
FAIL = "return redis.error_reply('REFUSED ' .. ARGV[1])"


async def calls_of(redis: Redis, command: str) -> int:
    stats = await redis.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


async def test_results_come_in_order_without_asking_which_scripts_exist(redis: Redis) -> None:
    incr = redis.register_script(INCR_BY)
    await redis.script_load(INCR_BY)
    await redis.config_resetstat()

    results = await run_scripts(redis, [(incr, ["a"], [1]), (incr, ["b"], [5]), (incr, ["a"], [2])])

    assert results == [1, 5, 3]
    assert await calls_of(redis, "script|exists") == 0
    assert await calls_of(redis, "evalsha") == 3


async def test_calls_refused_for_a_missing_script_are_run_once_after_loading_it(
    redis: Redis,
) -> None:
    incr = redis.register_script(INCR_BY)
    await redis.script_flush()  # as after a Redis restart: the cache is empty

    results = await run_scripts(redis, [(incr, ["a"], [1]), (incr, ["a"], [10])])

    assert results == [1, 11]
    assert int(await redis.get("a")) == 11  # each call ran exactly once


async def test_an_error_reply_is_returned_in_its_place(redis: Redis) -> None:
    incr = redis.register_script(INCR_BY)
    fail = redis.register_script(FAIL)

    results = await run_scripts(redis, [(incr, ["a"], [1]), (fail, [], ["x"]), (incr, ["a"], [1])])

    assert results[0] == 1
    assert results[2] == 2
    assert isinstance(results[1], ResponseError)
    assert "REFUSED x" in str(results[1])
