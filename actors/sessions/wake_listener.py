"""`WakeListener`: a session host hears of new inbox items of its sessions over Redis.

An inbox write (`RedisMessageBus.put_many`) publishes the session's id on the wake channel of
the host its placement names, in the same script: the host starts draining without a Ray call.
Pub/sub is not durable, and need not be: when no listener heard a write (the host is starting,
dead, or between reconnects), the writer wakes the session through Ray as before, and the
sweeper re-wakes any session whose inbox still holds items.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

_RETRY_FIRST = 0.1
_RETRY_MAX = 5.0


class WakeListener:
    """Hands each session id published on `channel` to `wake`, reconnecting after outages."""

    def __init__(
        self, redis: Redis, channel: str, wake: Callable[[list[str]], Awaitable[object]]
    ) -> None:
        self._redis = redis
        self._channel = channel
        self._wake = wake
        self._task: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()
        """Set while the channel is subscribed (cleared during reconnects)."""

    def start(self) -> None:
        """Listen in a background task (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._listen())

    async def close(self) -> None:
        """Stop listening."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _listen(self) -> None:
        delay = _RETRY_FIRST
        while True:
            try:
                async with self._redis.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(self._channel)
                    self.subscribed.set()
                    delay = _RETRY_FIRST
                    async for message in pubsub.listen():
                        await self._deliver(message["data"])
            except (RedisError, OSError) as exc:
                log.info("wake channel %s lost (%r); resubscribing", self._channel, exc)
            self.subscribed.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX)

    async def _deliver(self, data: bytes | str) -> None:
        session_id = data.decode() if isinstance(data, bytes) else data
        try:
            await self._wake([session_id])
        except Exception:  # one session's failed wake must not stop the others' (sweeper retries)
            log.exception("waking session %s from its wake channel failed", session_id)
