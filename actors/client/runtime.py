"""`RuntimeClient`: the one door from the HTTP layer into the runtime.

It wires the runtime's parts for this process (`actors.wiring`) and offers them by resource:
`agents`, `credentials`, `sessions`, `chat`, `schedules`, `library` (small facades), plus
health and the sweeper. It reaches session actors through a `SessionDispatcher` — Ray actors
in production (`ray_dispatcher`), or runtimes in this process (`InProcessDispatcher`) for a
single-process host.
"""

from __future__ import annotations

import asyncio
import logging

from redis.asyncio import Redis

from actors.bus.mailbox import SessionDispatcher
from actors.bus.redis_errors import storage_errors
from actors.client.chat import ChatClient
from actors.client.records import AgentsClient, CredentialsClient
from actors.client.sessions import SessionsClient
from actors.inprocess import InProcessDispatcher
from actors.ops.health import Probe, check_all
from actors.schedules.service import ScheduleService
from actors.settings import RuntimeSettings
from actors.storage.download_tokens import DownloadTokens
from actors.wiring import wire
from actors.workspaces.backends import workspace_health
from actors.workspaces.library import Library
from actors.workspaces.session_workspaces import SessionWorkspaces, shared_workspaces

log = logging.getLogger(__name__)

MAX_CONCURRENT_UPLOADS = 4
"""Skill uploads one API process unpacks at once (each holds up to a bundle in memory)."""


@storage_errors
class RuntimeClient:
    """Typed access to Troupe's runtime for one deployment.

    Redis outages surface as `StorageUnavailable` from every public method.
    """

    def __init__(
        self,
        settings: RuntimeSettings,
        dispatcher: SessionDispatcher,
        workspaces: SessionWorkspaces | None = None,
    ) -> None:
        parts = wire(settings, lambda _redis: dispatcher)
        self.settings = settings
        self.redis: Redis = parts.redis
        self.storage = parts.storage
        self.bus = parts.bus
        self.dispatcher = dispatcher
        self.mailbox = parts.mailbox
        self.teams = parts.teams
        self.schedules = ScheduleService.build(parts)
        if isinstance(dispatcher, InProcessDispatcher) and dispatcher.schedules is None:
            dispatcher.schedules = self.schedules
        self._sweeper: asyncio.Task[None] | None = None
        self.workspaces = workspaces or shared_workspaces(settings)
        self.agents = AgentsClient(parts)
        self.credentials = CredentialsClient(parts)
        self.sessions = SessionsClient(parts, self.workspaces)
        self.chat = ChatClient(parts)
        self.library = Library(self.redis, parts.keys, self.storage.secrets)
        self.download_tokens = DownloadTokens(self.storage.secrets)
        self.upload_slots = asyncio.Semaphore(MAX_CONCURRENT_UPLOADS)
        checks = {
            "redis": self._redis_health,
            "workspaces": self._workspace_health,
            "scheduler": self.schedules.health,
            **dispatcher.health_checks(),
        }
        self._probes = {name: Probe(check) for name, check in checks.items()}

    def start_sweeper(self) -> None:
        """Keep session hosts warm and placed, and re-wake sessions with unread inbox items.

        Runs at once, then every `sweep_interval` seconds: it pre-warms hosts (on start and on
        agent nodes that join), moves sessions off nodes that left, and wakes inboxes left
        unread by crashes or lost wakes.
        """
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        while True:
            try:
                await self.dispatcher.maintain()
                await self.mailbox.sweep()
            except Exception:  # Redis outages and dead actors: try again next round
                log.warning("inbox sweep failed", exc_info=True)
            await asyncio.sleep(self.settings.sweep_interval)

    async def aclose(self) -> None:
        """Stop the sweeper, close the dispatcher, the workspaces and the Redis connection pool."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.schedules.aclose()
        await self.dispatcher.close()
        await self.workspaces.aclose()
        await self.chat.aclose()
        await self.redis.aclose()

    async def health(self) -> dict[str, str]:
        """Return each component's status ("ok ..." or why not), within about a second.

        Components: `redis`, `workspaces`, `scheduler`, and what the dispatcher relies on
        (`ray`). A component that does not answer in time is reported unavailable.
        """
        return await check_all(self._probes)

    async def _redis_health(self) -> str:
        await self.redis.ping()
        return "ok"

    async def _workspace_health(self) -> str:
        # A thread: checking a Docker daemon is a blocking round trip.
        return await asyncio.to_thread(workspace_health, self.settings)


def ray_workspaces(settings: RuntimeSettings) -> SessionWorkspaces:
    """Return the workspaces of a Ray deployment (served by workspace actors)."""
    from actors.workspaces.ray_service import RayWorkspaceService

    return SessionWorkspaces(RayWorkspaceService(settings))


def ray_dispatcher(settings: RuntimeSettings) -> SessionDispatcher:
    """Return a dispatcher that hosts sessions in named Ray actors (Ray must be initialised)."""
    from actors._remote.session_actor import RayDispatcher

    return RayDispatcher(settings)
