"""Hundreds of idle SSE subscribers share one reader and leave the API its Redis connections."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import httpx
import pytest

from agent_core.event import CustomEvent
from tests.support.asgi_server import served
from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}
SUBSCRIBERS = 300


class Subscriber:
    """A raw-socket SSE reader (cheap enough to open hundreds) collecting `data:` payloads."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, object]] = []
        self.received = asyncio.Event()
        self.status = b""

    async def run(self, url: str, opened: asyncio.Event) -> None:
        try:
            await self._read(url, opened)
        finally:
            opened.set()  # a failure shows as no status

    async def _read(self, url: str, opened: asyncio.Event) -> None:
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            target = f"{parts.path}?{parts.query}" if parts.query else parts.path
            request = f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\nX-User-ID: alice\r\n\r\n"
            writer.write(request.encode())
            head = await reader.readuntil(b"\r\n\r\n")
            self.status = head.split(b"\r\n", 1)[0]
            if b" 200 " not in self.status:
                self.status += await reader.read(1000)
            opened.set()
            buffer = b""
            while chunk := await reader.read(65536):
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if line.startswith(b"data: "):
                        payload = json.loads(line[6:])
                        self.payloads.append(payload)
                        if payload.get("name") == "ping":
                            self.received.set()
        finally:
            writer.close()


async def test_300_idle_subscribers_leave_chat_and_health_answering(service: Service) -> None:
    api = service.api
    agent_id = (await api.post("/agent/", json={"name": "A"}, headers=ALICE)).json()["agent_id"]
    session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=ALICE)
    session_id = session.json()["session_id"]
    runtime = service.runtime
    async with served(service.app, lifespan=False) as base_url:
        url = f"{base_url}/sessions/{session_id}/stream"
        subscribers = [Subscriber() for _ in range(SUBSCRIBERS)]
        opened = [asyncio.Event() for _ in subscribers]
        tasks = [
            asyncio.create_task(s.run(url, o)) for s, o in zip(subscribers, opened, strict=True)
        ]
        try:
            await asyncio.gather(*(o.wait() for o in opened))
            assert {s.status for s in subscribers} == {b"HTTP/1.1 200 OK"}
            assert runtime.chat._fanout is not None
            assert runtime.chat._fanout.watched == 1  # one reader for all of them
            async with httpx.AsyncClient(base_url=base_url, headers=ALICE, timeout=60) as client:
                health = await client.get("/health")
                assert health.status_code == 200, health.text
                message = {"name": "user", "role": "user", "content": "hi"}
                body = {"agent_id": agent_id, "session_id": session_id, "input": message}
                for _ in range(5):
                    chat = await client.post("/chat/", json=body)
                    assert chat.status_code == 200, chat.text
            # The requests' pool never lent a connection to a stream.
            assert len(runtime.redis.connection_pool._in_use_connections) == 0
            # And every subscriber still gets what the session logs.
            await runtime.bus.append_service_event(session_id, CustomEvent(name="ping"))
            await asyncio.gather(*(s.received.wait() for s in subscribers))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
