"""What the API tests get from the `service` fixture."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from cryptography.fernet import Fernet
from fastapi import FastAPI

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings

SECRET_KEY = Fernet.generate_key().decode()


class RecordingDispatcher(InProcessDispatcher):
    """An in-process dispatcher that remembers the sessions it was asked to stop."""

    def __init__(self, settings: RuntimeSettings) -> None:
        super().__init__(settings)
        self.stopped: list[str] = []

    async def stop(self, session_id: str) -> None:
        self.stopped.append(session_id)
        await super().stop(session_id)


@dataclass
class Service:
    app: FastAPI
    api: httpx.AsyncClient
    runtime: RuntimeClient
    dispatcher: RecordingDispatcher
