"""`RuntimeApi`: what the HTTP layer needs of the runtime (`RuntimeClient` is the one in use)."""

from __future__ import annotations

import asyncio
from typing import Protocol

from actors.bus.message_bus import RedisMessageBus
from actors.client.chat import ChatClient
from actors.client.records import AgentsClient, CredentialsClient
from actors.client.sessions import SessionsClient
from actors.schedules.service import ScheduleService
from actors.settings import RuntimeSettings
from actors.storage.download_tokens import DownloadTokens
from actors.storage.redis_storage import RedisStorage
from actors.workspaces.library import Library
from actors.workspaces.session_workspaces import SessionWorkspaces


class RuntimeApi(Protocol):
    """The runtime by resource, as routes and dependencies use it.

    Each attribute is a facade scoped by user id (another user's record is not found); Redis
    outages surface from every facade as `StorageUnavailable`.
    """

    settings: RuntimeSettings
    agents: AgentsClient
    credentials: CredentialsClient
    sessions: SessionsClient
    chat: ChatClient
    schedules: ScheduleService
    library: Library
    workspaces: SessionWorkspaces
    download_tokens: DownloadTokens
    upload_slots: asyncio.Semaphore
    storage: RedisStorage
    bus: RedisMessageBus

    def start_sweeper(self) -> None:
        """Start re-waking sessions whose inbox holds unread items, and keeping hosts placed."""
        ...

    async def health(self) -> dict[str, str]:
        """Each component's status (`ok ...` or why not), within about a second."""
        ...

    async def aclose(self) -> None:
        """Release everything the runtime holds in this process (sessions live on in Ray)."""
        ...
