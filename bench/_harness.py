"""Shared set-up for benchmarks: embedded Redis, a local Ray, the Serve API, a model server."""

from __future__ import annotations

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
from _procs import serve_processes
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
    uvicorn: subprocess.Popen[bytes] | None = None

    def server_processes(self) -> dict[str, psutil.Process]:
        """The processes that serve HTTP: Serve's proxy and replicas, or the uvicorn ones."""
        if self.uvicorn is None:
            return serve_processes()
        root = psutil.Process(self.uvicorn.pid)
        return {f"uvicorn:{p.pid}": p for p in [root, *root.children(recursive=True)]}


def _wait_up(url: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


@contextmanager
def service_stack(
    num_cpus: int = 2,
    session_hosts: int = 0,
    ingress: str = "serve",
    workers: int = 1,
    **overrides: Any,
) -> Iterator[Stack]:
    """Redis + Ray + the API + an instant OpenAI-protocol model server, all on 127.0.0.1.

    `session_hosts` > 0 puts sessions on that many shared host actors instead of one each.
    `ingress` is "serve" (the Serve deployment) or "uvicorn" (`workers` uvicorn processes);
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
            base_url = f"http://127.0.0.1:{port}"
            if ingress == "uvicorn":
                server = deployment.run_uvicorn(settings, "127.0.0.1", port, workers)
                try:
                    _wait_up(f"{base_url}/health")
                    yield Stack(base_url, settings, model_server, redis, server)
                finally:
                    server.terminate()
                    server.wait()
            else:
                deployment.deploy(settings, "127.0.0.1", port, access_log=False)
                _wait_up(f"{base_url}/health")
                yield Stack(base_url, settings, model_server, redis)
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
