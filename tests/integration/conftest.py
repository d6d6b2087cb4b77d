"""Ray + Serve fixtures: one local Ray and one deployed API per test module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import ray
from ray import serve

from actors._ports import find_free_port
from actors.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve import deployment


@dataclass
class LiveService:
    """A Troupe API served by Ray Serve on a local Ray, backed by the test Redis."""

    base_url: str
    settings: RuntimeSettings


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    """A private local Ray (2 CPUs, no dashboard) for the module."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="troupe-test")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def live_service(ray_local: None, redis_server: EmbeddedRedis) -> Iterator[LiveService]:
    """The API deployed on Serve, on a free 127.0.0.1 port, with a module-private key prefix."""
    settings = RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace="troupe-test",
        stream_block_ms=1_000,
    )
    port = find_free_port()
    deployment.deploy(settings, "127.0.0.1", port)
    yield LiveService(f"http://127.0.0.1:{port}", settings)
    serve.shutdown()
