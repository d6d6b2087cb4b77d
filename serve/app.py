"""`build_app`: the FastAPI application (no Ray here; the runtime comes from a factory)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

import agent_core
from actors.client import RuntimeClient
from serve.errors import install_error_handlers
from serve.routes import agents, chat, credentials, health, models, schedules, sessions, workspace

log = logging.getLogger(__name__)


def build_app(runtime_factory: Callable[[], RuntimeClient]) -> FastAPI:
    """Build the HTTP API; `runtime_factory` is called once at startup, closed at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.runtime = runtime_factory()
        app.state.runtime.start_sweeper()
        try:
            await app.state.runtime.schedules.start()
        except Exception:  # the first /schedule request starts it; serving must not wait
            log.warning("the scheduler could not be started yet", exc_info=True)
        try:
            yield
        finally:
            await app.state.runtime.aclose()

    app = FastAPI(title="Troupe", version=agent_core.__version__, lifespan=lifespan)
    install_error_handlers(app)
    for module in (health, agents, credentials, models, sessions, chat, schedules, workspace):
        app.include_router(module.router)
    return app
