"""One way to connect to Redis, with the resilience every runtime process needs."""

from __future__ import annotations

from typing import Self
from urllib.parse import quote

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

DEFAULT_MAX_CONNECTIONS = 100
"""Connections one client's pool opens at most, unless told otherwise."""


def connect(url: str, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> Redis:
    """A client for `url` that rides out restarts and failovers.

    Pooled connections die when Redis restarts; commands retry on a fresh connection with
    jittered backoff for about three seconds before giving up, and idle connections are
    health-checked before use. The pool holds at most `max_connections`; a burst beyond it
    waits (up to 10 s) for a free connection instead of failing.
    """
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=10,
        health_check_interval=10,
        retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=6),
    )
    return Redis.from_pool(pool)


def url_of(redis: Redis) -> str:
    """The URL `redis` connects to (what another process passes to `connect`)."""
    options = redis.connection_pool.connection_kwargs
    password = options.get("password")
    auth = f":{quote(str(password), safe='')}@" if password else ""
    db = options.get("db", 0)
    if "path" in options:
        return f"unix://{auth}{options['path']}?db={db}"
    return f"redis://{auth}{options.get('host', 'localhost')}:{options.get('port', 6379)}/{db}"


class RedisOwner:
    """A Redis client either handed over (the runtime's) or opened from `host`/`port`.

    The second form is AgentScope's `RedisStorage(host=..., port=...)`: the object owns its
    client and closes it on `aclose()` (or leaving `async with`).
    """

    def __init__(
        self,
        redis: Redis | None,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: str | None = None,
    ) -> None:
        self._owns_redis = redis is None
        if redis is None:
            auth = f":{quote(password, safe='')}@" if password else ""
            redis = connect(f"redis://{auth}{host}:{port}/{db}")
        self.redis = redis

    @property
    def url(self) -> str:
        """The Redis URL this object talks to."""
        return url_of(self.redis)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the client if this object opened it (a handed-over one stays open)."""
        if self._owns_redis:
            await self.redis.aclose()
