"""Looking up the actors running a test service's sessions (namespace `troupe-test` by default)."""

from __future__ import annotations

import asyncio
from typing import Any

import ray
import redis

from actors.bus.keys import Keys
from actors.sessions.hosts import session_actor_name
from actors.sessions.placement import DEDICATED
from actors.settings import RuntimeSettings

NAMESPACE = "troupe-test"


def _redis(settings: RuntimeSettings) -> redis.Redis:
    return redis.Redis.from_url(settings.redis_url)


def placements(settings: RuntimeSettings) -> dict[str, str]:
    """Every session's placement: session id -> host actor name (or `dedicated`)."""
    client = _redis(settings)
    try:
        raw = client.hgetall(Keys(settings.key_prefix).session_placement())
    finally:
        client.close()
    return {k.decode(): v.decode() for k, v in raw.items()}  # type: ignore[union-attr]


def host_nodes(settings: RuntimeSettings) -> dict[str, str]:
    """The registered session hosts: actor name -> node id."""
    client = _redis(settings)
    try:
        raw = client.hgetall(Keys(settings.key_prefix).session_hosts())
    finally:
        client.close()
    return {k.decode(): v.decode() for k, v in raw.items()}  # type: ignore[union-attr]


def home_name(settings: RuntimeSettings, session_id: str) -> str | None:
    """The name of the actor running the session now (None: not placed)."""
    placed = placements(settings).get(session_id)
    return session_actor_name(session_id) if placed == DEDICATED else placed


def home_actor(settings: RuntimeSettings, session_id: str, namespace: str = NAMESPACE) -> Any:
    """The actor running the session now.

    Raises:
        AssertionError: the session is not placed.
    """
    name = home_name(settings, session_id)
    assert name is not None, f"session {session_id} is not placed"
    return ray.get_actor(name, namespace=namespace)


def home_pid(settings: RuntimeSettings, session_id: str, namespace: str = NAMESPACE) -> int:
    """The process id of the actor running the session now."""
    return int(ray.get(home_actor(settings, session_id, namespace).pid.remote()))


def session_actor_alive(session_id: str) -> bool:
    """Whether the session has a live actor of its own."""
    try:
        ray.get_actor(session_actor_name(session_id), namespace=NAMESPACE)
    except ValueError:
        return False
    return True


async def wait_until_gone(session_id: str, within: float = 10.0) -> bool:
    """Poll until the session's own actor is gone; return whether it went."""
    for _ in range(int(within / 0.1)):
        if not session_actor_alive(session_id):
            return True
        await asyncio.sleep(0.1)
    return not session_actor_alive(session_id)


async def wait_until_unplaced(
    settings: RuntimeSettings, session_id: str, within: float = 10.0
) -> bool:
    """Poll until the session's host has closed it; return whether it did."""
    for _ in range(int(within / 0.1)):
        if session_id not in placements(settings):
            return True
        await asyncio.sleep(0.1)
    return session_id not in placements(settings)
