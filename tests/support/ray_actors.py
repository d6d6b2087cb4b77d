"""Looking up the session actors a test's service started (namespace `troupe-test`)."""

from __future__ import annotations

import asyncio

import ray

from actors._remote import session_actor_name

NAMESPACE = "troupe-test"


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
