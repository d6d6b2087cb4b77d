"""Shared set-up for benchmarks: embedded Redis, a local Ray, the Serve API, a model server."""

from __future__ import annotations

import statistics
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray import serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors._ports import find_free_port
from actors.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve import deployment
from tests.support.openai_server import OpenAIWireServer


@dataclass
class Stack:
    base_url: str
    settings: RuntimeSettings
    model_server: OpenAIWireServer
    redis: EmbeddedRedis


@contextmanager
def service_stack(num_cpus: int = 2, session_hosts: int = 0, **overrides: Any) -> Iterator[Stack]:
    """Redis + Ray + Serve API + an instant OpenAI-protocol model server, all on 127.0.0.1.

    `session_hosts` > 0 puts sessions on that many shared host actors instead of one each;
    `overrides` are further `RuntimeSettings`.
    """
    with EmbeddedRedis(persistence=True) as redis, OpenAIWireServer() as model_server:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            namespace="troupe-bench",
            log_to_driver=False,
        )
        try:
            settings = RuntimeSettings(
                redis_url=redis.url,
                key_prefix=f"bench-{uuid.uuid4().hex[:6]}",
                namespace="troupe-bench",
                session_hosts=session_hosts,
                **overrides,
            )
            port = find_free_port()
            deployment.deploy(settings, "127.0.0.1", port)
            yield Stack(f"http://127.0.0.1:{port}", settings, model_server, redis)
        finally:
            serve.shutdown()
            ray.shutdown()


def percentiles(samples_ms: list[float]) -> str:
    """p50/p90/p99/max of samples in milliseconds."""
    ordered = sorted(samples_ms)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return (
        f"p50={pick(0.5):.1f}ms p90={pick(0.9):.1f}ms p99={pick(0.99):.1f}ms "
        f"max={ordered[-1]:.1f}ms mean={statistics.fmean(ordered):.1f}ms"
    )
