"""Shared set-up for benchmarks: embedded Redis, a local Ray, the Serve API, a model server."""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import ray
import redis
from _procs import serve_processes
from ray import serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.bus.keys import Keys
from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve import deployment
from tests.support.openai_server import OpenAIWireServer


@dataclass
class Stack:
    base_url: str
    settings: RuntimeSettings
    model_server: OpenAIWireServer
    redis: EmbeddedRedis
    uvicorn: subprocess.Popen[bytes] | None = None

    def server_processes(self) -> dict[str, psutil.Process]:
        """The processes that serve HTTP: Serve's proxy and replicas, or the uvicorn ones."""
        if self.uvicorn is None:
            return serve_processes()
        root = psutil.Process(self.uvicorn.pid)
        return {f"uvicorn:{p.pid}": p for p in [root, *root.children(recursive=True)]}


@contextmanager
def service_stack(
    num_cpus: int = 2, ingress: str = "serve", workers: int = 1, **overrides: Any
) -> Iterator[Stack]:
    """Redis + Ray + the API + an instant OpenAI-protocol model server, all on 127.0.0.1.

    Default settings: sessions are packed onto the pre-warmed session hosts; returns once the
    API answers and the hosts are started (a warm cluster). `ingress` is "serve" (the Serve
    deployment) or "uvicorn" (`workers` uvicorn processes); `overrides` are further
    `RuntimeSettings`.
    """
    with EmbeddedRedis(persistence=True) as store, OpenAIWireServer() as model_server:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            namespace="troupe-bench",
            log_to_driver=False,
        )
        try:
            settings = RuntimeSettings(
                redis_url=store.url,
                key_prefix=f"bench-{uuid.uuid4().hex[:6]}",
                namespace="troupe-bench",
                **overrides,
            )
            port = find_free_port()
            base_url = f"http://127.0.0.1:{port}"
            if ingress == "uvicorn":
                server = deployment.run_uvicorn(settings, "127.0.0.1", port, workers)
                try:
                    wait_warm(base_url, settings)
                    yield Stack(base_url, settings, model_server, store, server)
                finally:
                    server.terminate()
                    server.wait()
            else:
                deployment.deploy(settings, "127.0.0.1", port, access_log=False)
                wait_warm(base_url, settings)
                yield Stack(base_url, settings, model_server, store)
        finally:
            serve.shutdown()
            ray.shutdown()


def wait_warm(base_url: str, settings: RuntimeSettings, within: float = 120.0) -> None:
    """Wait until the API answers and a session host is registered (pre-warmed)."""
    keys = Keys(settings.key_prefix)
    client = redis.Redis.from_url(settings.redis_url)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                healthy = httpx.get(f"{base_url}/health", timeout=5).status_code == 200
                if healthy and client.hlen(keys.session_hosts()):
                    return
            time.sleep(0.2)
    finally:
        client.close()
    raise TimeoutError(f"the stack was not warm within {within:.0f} s")


def percentiles(samples_ms: list[float]) -> str:
    """p50/p90/p99/max of samples in milliseconds."""
    ordered = sorted(samples_ms)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return (
        f"p50={pick(0.5):.1f}ms p90={pick(0.9):.1f}ms p99={pick(0.99):.1f}ms "
        f"max={ordered[-1]:.1f}ms mean={statistics.fmean(ordered):.1f}ms"
    )
