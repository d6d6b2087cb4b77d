"""One way to connect to Redis, with the resilience every runtime process needs."""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff


def connect(url: str) -> Redis:
    """A client for `url` that rides out restarts and failovers.

    Pooled connections die when Redis restarts; commands retry on a fresh connection with
    jittered backoff for about three seconds before giving up, and idle connections are
    health-checked before use.
    """
    return Redis.from_url(
        url,
        health_check_interval=10,
        retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=6),
    )
