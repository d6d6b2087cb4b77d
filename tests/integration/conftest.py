"""Ray + Serve fixtures: one local Ray and one deployed API per test module."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import ray
from ray import serve

from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve import deployment


@dataclass
class LiveService:
    """A Troupe API served by Ray Serve on a local Ray, backed by a test Redis."""

    base_url: str
    settings: RuntimeSettings


def deploy_service(redis_url: str, **overrides: Any) -> LiveService:
    """Deploy the API (Ray must be initialised) on a free port with a private key prefix."""
    settings = RuntimeSettings(
        redis_url=redis_url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace="troupe-test",
        stream_block_ms=1_000,
        **overrides,
    )
    port = find_free_port()
    deployment.deploy(settings, "127.0.0.1", port)
    return LiveService(f"http://127.0.0.1:{port}", settings)


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    """A private local Ray (2 CPUs, no dashboard) for the module."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="troupe-test")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def live_service(ray_local: None, redis_server: EmbeddedRedis) -> Iterator[LiveService]:
    """The API on Serve over the shared Redis (or `TROUPE_REDIS_URL` when set)."""
    yield deploy_service(os.environ.get("TROUPE_REDIS_URL") or redis_server.url)
    serve.shutdown()
