"""`build_app`: the FastAPI application (no Ray here; the runtime comes from a factory)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

import agent_core
from actors.client import MAX_UPLOAD_REQUEST_BYTES, RuntimeClient
from serve.body_limit import BodyLimit
from serve.errors import install_error_handlers
from serve.routes import (
    agents,
    chat,
    credentials,
    health,
    library,
    models,
    schedules,
    sessions,
    workspace,
    workspace_files,
    workspace_library,
)

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
    app.add_middleware(BodyLimit, limits={workspace_library.UPLOAD_PATH: MAX_UPLOAD_REQUEST_BYTES})
    routes = (health, agents, credentials, models, sessions, chat, schedules, library)
    for module in (*routes, workspace, workspace_library, workspace_files):
        app.include_router(module.router)
    return app
