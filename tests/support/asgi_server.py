"""Serve an ASGI app with uvicorn on 127.0.0.1 in the test's event loop.

httpx's in-memory ASGI transport buffers whole responses, so an endless SSE stream (or a
browser's CORS preflight through real HTTP) needs a real server::

    async with served(app) as base_url:
        async with httpx.AsyncClient(base_url=base_url) as client:
            ...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from starlette.types import ASGIApp

from actors.local._ports import find_free_port


@asynccontextmanager
async def served(
    app: ASGIApp, lifespan: bool = True, startup_timeout: float = 30.0
) -> AsyncIterator[str]:
    """Run `app` until the block exits; yield its base URL.

    Args:
        app: The application.
        lifespan: Run its lifespan (off when the caller already entered it).
        startup_timeout: Seconds the server may take to start.
    """
    port = find_free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="on" if lifespan else "off"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(), name=f"uvicorn:{port}")
    try:
        async with asyncio.timeout(startup_timeout):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("the server stopped during start-up")
                await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        try:
            async with asyncio.timeout(10):
                await asyncio.shield(task)
        except TimeoutError:
            server.force_exit = True  # a stream still open would hold the shutdown forever
            await task
