"""`build_app`: the FastAPI application (no Ray here; the runtime comes from a factory)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

import agent_core
from actors.client import RuntimeClient
from serve.errors import install_error_handlers
from serve.routes import (
    agents,
    chat,
    credentials,
    health,
    knowledge_bases,
    models,
    schedules,
    sessions,
    tts_models,
    workspace,
)

log = logging.getLogger(__name__)


def build_app(
    runtime_factory: Callable[[], RuntimeClient], cors_origins: Sequence[str] = ()
) -> FastAPI:
    """Build the HTTP API; `runtime_factory` is called once at startup, closed at shutdown.

    `cors_origins` are the browser origins (e.g. a web UI's) allowed to call the API.
    """

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
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["*"],
            allow_headers=["*"],
        )
    routers = (
        health,
        agents,
        credentials,
        models,
        tts_models,
        sessions,
        chat,
        schedules,
        workspace,
        knowledge_bases,
    )
    for module in routers:
        app.include_router(module.router)
    return app
