"""Fixtures of the HTTP API tests: real Redis, sessions hosted in-process (no Ray).

``service`` (function)  the app, its runtime client and a dispatcher that records the sessions it
                        stopped; the runtime encrypts secrets with ``SECRET_KEY``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from actors.settings import RuntimeSettings
from serve.app import create_app
from tests.unit.serve._service import SECRET_KEY, RecordingDispatcher, Service


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[Service]:
    settings = RuntimeSettings(redis_url=redis_url, secret_key=SECRET_KEY)
    app = create_app(settings=settings, dispatcher=RecordingDispatcher)
    async with app.router.lifespan_context(app):
        dispatcher = app.state.runtime.dispatcher
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield Service(app, client, app.state.runtime, dispatcher)
