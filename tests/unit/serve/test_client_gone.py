"""A stream whose client left ends quietly under Serve (no Ray started: the ASGI layer only)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from ray.exceptions import TaskCancelledError
from starlette.types import Message

from actors.settings import RuntimeSettings
from serve.deployment import ClientGone, _app_builder
from serve.errors import install_error_handlers
from serve.sse import KEEPALIVE


async def test_a_cancelled_receive_ends_a_stream_as_a_disconnect(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = FastAPI()
    install_error_handlers(app)
    stopped = asyncio.Event()

    async def endless() -> AsyncIterator[str]:
        try:
            while True:
                yield KEEPALIVE
                await asyncio.sleep(0.01)
        finally:
            stopped.set()

    @app.get("/stream")
    async def stream() -> StreamingResponse:
        return StreamingResponse(endless(), media_type="text/event-stream")

    sent: list[Message] = []
    asked = 0

    async def receive() -> Message:
        # What a Serve replica's receive does once the proxy cancelled the request.
        nonlocal asked
        asked += 1
        if asked == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(0.05)
        raise TaskCancelledError()

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/stream",
        "raw_path": b"/stream",
        "root_path": "",
        "query_string": b"",
        "headers": [],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    with caplog.at_level(logging.ERROR):
        await asyncio.wait_for(ClientGone(app)(scope, receive, send), 30)
    assert stopped.is_set()
    assert sent[0]["status"] == 200
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_the_serve_app_is_built_with_the_disconnect_middleware() -> None:
    settings = RuntimeSettings(redis_url="redis://127.0.0.1:1/0").model_dump()
    build = _app_builder(settings, [], "dev")
    app = build()
    assert ClientGone in [middleware.cls for middleware in app.user_middleware]
