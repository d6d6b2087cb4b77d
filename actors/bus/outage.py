"""Riding out Redis outages: retry an operation until it succeeds or the grace period ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from actors.errors import StorageUnavailable

T = TypeVar("T")

OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, StorageUnavailable)
"""What a Redis outage raises (a restarting Redis that is still loading included)."""

_FIRST_DELAY = 0.1
_MAX_DELAY = 1.0


async def ride_out(operation: Callable[[], Awaitable[T]], grace: float) -> T:
    """Run `operation`, retrying it while Redis is unreachable, for up to `grace` seconds.

    The operation must be safe to repeat (a failed attempt may have been applied).

    Raises:
        StorageUnavailable: Redis stayed unreachable for `grace` seconds.
    """
    deadline = time.monotonic() + grace
    delay = _FIRST_DELAY
    while True:
        try:
            return await operation()
        except OUTAGE_ERRORS as exc:
            if time.monotonic() + delay > deadline:
                raise StorageUnavailable(f"Redis is unavailable: {exc}") from exc
        await asyncio.sleep(delay)
        delay = min(delay * 2, _MAX_DELAY)
