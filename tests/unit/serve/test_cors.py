"""`--cors-origin` / `TROUPE_CORS_ORIGINS`: which browser origins may call the API."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app, cors_middleware
from serve.cli import _parser

pytestmark = pytest.mark.redis

UI = "http://127.0.0.1:4173"
PREFLIGHT = {
    "Origin": UI,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "x-user-id,content-type",
}


async def serve(redis_url: str, origins: Sequence[str]) -> AsyncIterator[httpx.AsyncClient]:
    settings = RuntimeSettings(redis_url=redis_url)
    middlewares = [cors_middleware(origins)] if origins else []
    app = build_app(
        lambda: RuntimeClient(settings, InProcessDispatcher(settings)), middlewares=middlewares
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def test_a_listed_origin_may_call_the_api(redis_url: str) -> None:
    async for api in serve(redis_url, [UI]):
        preflight = await api.options("/agent/", headers=PREFLIGHT)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == UI
        assert "x-user-id" in preflight.headers["access-control-allow-headers"].lower()
        health = await api.get("/health", headers={"Origin": UI})
        assert health.headers["access-control-allow-origin"] == UI
        other = await api.get("/health", headers={"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in other.headers


async def test_without_origins_no_browser_origin_is_allowed(redis_url: str) -> None:
    async for api in serve(redis_url, []):
        health = await api.get("/health", headers={"Origin": UI})
        assert "access-control-allow-origin" not in health.headers
        assert (await api.options("/agent/", headers=PREFLIGHT)).status_code == 405


def test_origins_come_from_flags_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TROUPE_CORS_ORIGINS", raising=False)
    assert _parser().parse_args(["serve"]).cors_origins == []
    args = _parser().parse_args(["serve", "--cors-origin", UI, "--cors-origin", "http://b"])
    assert args.cors_origins == [UI, "http://b"]
    monkeypatch.setenv("TROUPE_CORS_ORIGINS", f"{UI}, http://c ,")
    assert _parser().parse_args(["serve"]).cors_origins == [UI, "http://c"]
