"""`/health` answers at once and names the component that is down (real Redis, local sessions)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.local.embedded_redis import EmbeddedRedis
from actors.ops.health import Probe
from actors.settings import RuntimeSettings
from serve.app import build_app

pytestmark = pytest.mark.redis


async def test_every_component_is_reported_ok(redis_url: str) -> None:
    settings = RuntimeSettings(redis_url=redis_url)
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
            body = (await api.get("/health")).json()
    assert body["status"] == "ok", body
    assert body["components"]["redis"] == "ok"
    assert body["components"]["scheduler"].startswith("ok")
    assert body["components"]["workspaces"].startswith(("ok", "warning"))


async def test_a_stopped_redis_degrades_health_naming_redis() -> None:
    with EmbeddedRedis() as own:
        settings = RuntimeSettings(redis_url=own.url)
        app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
                own.stop()
                body = (await api.get("/health")).json()
                own.start()
                # The probe cut by the outage is still in its client's retry backoff: poll.
                for _ in range(50):
                    again = (await api.get("/health")).json()
                    if again["status"] == "ok":
                        break
                    await asyncio.sleep(0.2)
    assert body["status"] == "degraded"
    assert body["components"]["redis"].startswith("unavailable")
    assert again["status"] == "ok", again


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers (a Redis host dropping replies)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


async def test_a_redis_that_never_answers_is_reported_without_waiting_for_it(
    silent_port: int,
) -> None:
    settings = RuntimeSettings(redis_url=f"redis://127.0.0.1:{silent_port}/0")
    client = RuntimeClient(settings, InProcessDispatcher(settings))
    try:
        components = await asyncio.wait_for(client.health(), 30)
        # The hung check is still the one in flight: a second /health does not start another.
        again = await asyncio.wait_for(client.health(), 30)
    finally:
        await asyncio.wait_for(client.aclose(), 30)
    assert components["redis"] == "unavailable: no answer within 0.8 s"
    assert components["scheduler"] == "unavailable: the scheduler has not started"
    assert again["redis"] == "unavailable: no answer within 0.8 s"


@pytest.fixture
async def hung() -> AsyncIterator[asyncio.Event]:
    release = asyncio.Event()
    yield release
    release.set()


async def test_a_probe_runs_one_check_at_a_time_and_reports_failures(
    hung: asyncio.Event,
) -> None:
    calls = 0

    async def stuck() -> str:
        nonlocal calls
        calls += 1
        await hung.wait()
        return "ok (late)"

    probe = Probe(stuck)
    assert await probe(0.01) == "unavailable: no answer within 0.01 s"
    assert await probe(0.01) == "unavailable: no answer within 0.01 s"
    assert calls == 1
    hung.set()
    assert await probe(5) == "ok (late)"

    async def broken() -> str:
        raise ConnectionError("refused")

    assert await Probe(broken)() == "unavailable: ConnectionError: refused"
