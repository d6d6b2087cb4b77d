"""`SessionHosts.hosts_of(reuse=True)`: a wake reuses the host found lately until told otherwise."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import ray

from actors.bus.redis_connect import connect
from actors.local.embedded_redis import EmbeddedRedis
from actors.sessions.hosts import SessionHosts
from actors.settings import RuntimeSettings

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]


@pytest.fixture
async def hosts(ray_local: None, redis_server: EmbeddedRedis) -> AsyncIterator[SessionHosts]:
    settings = RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace="troupe-test",
    )
    redis = connect(settings.redis_url)
    session_hosts = SessionHosts(settings, redis)
    node = ray.get_runtime_context().get_node_id()
    for name in ("host-a", "host-b"):
        await session_hosts.placement.register(name, node)
    yield session_hosts
    await session_hosts.close()
    await redis.aclose()


async def test_a_found_host_is_reused_until_the_session_is_forgotten(
    hosts: SessionHosts,
) -> None:
    first = (await hosts.hosts_of(["s1"], reuse=True))["s1"]
    other = next(name for name in ("host-a", "host-b") if name != first)
    await hosts.placement.release("s1", first)  # the session moved meanwhile
    assert await hosts.placement.claim("s1", other) == other

    assert await hosts.hosts_of(["s1"], reuse=True) == {"s1": first}
    hosts.forget_hosts(["s1"])  # as a wake that found it elsewhere does
    assert await hosts.hosts_of(["s1"], reuse=True) == {"s1": other}


async def test_a_read_without_reuse_sees_a_move_at_once(hosts: SessionHosts) -> None:
    first = (await hosts.hosts_of(["s2"], reuse=True))["s2"]
    other = next(name for name in ("host-a", "host-b") if name != first)
    await hosts.placement.release("s2", first)
    await hosts.placement.claim("s2", other)

    assert await hosts.hosts_of(["s2"]) == {"s2": other}
    assert await hosts.hosts_of(["s2"], reuse=True) == {"s2": other}
