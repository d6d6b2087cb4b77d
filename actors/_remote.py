"""The Ray side of the runtime: the only module that declares Ray actors or sets their options."""

from __future__ import annotations

import asyncio
from typing import Any

import ray
from ray.exceptions import RayActorError
from redis.asyncio import Redis

from actors.bus import RedisMessageBus
from actors.errors import SessionUnavailable
from actors.keys import Keys
from actors.session import SessionRuntime
from actors.settings import RuntimeSettings
from actors.storage import RedisStorage


def session_actor_name(session_id: str) -> str:
    """Ray actor name of a session."""
    return f"session:{session_id}"


@ray.remote(num_cpus=0)
class SessionActor:
    """Hosts one `SessionRuntime` in its own Ray worker process."""

    def __init__(self, settings: dict[str, Any], session_id: str) -> None:
        self._settings = RuntimeSettings.model_validate(settings)
        self._session_id = session_id
        self._runtime: SessionRuntime | None = None

    def _get_runtime(self) -> SessionRuntime:
        if self._runtime is None:
            redis = Redis.from_url(self._settings.redis_url, health_check_interval=10)
            keys = Keys(self._settings.key_prefix)
            bus = RedisMessageBus(
                redis, keys, self._settings.inbox_maxlen, self._settings.event_log_maxlen
            )
            self._runtime = SessionRuntime(self._session_id, RedisStorage(redis, keys), bus)
        return self._runtime

    async def wake(self) -> None:
        """Drain the inbox (returns at once; draining continues in the background)."""
        await self._get_runtime().wake()

    async def wait_idle(self) -> None:
        """Return once the inbox drain in progress, if any, has finished."""
        await self._get_runtime().wait_idle()

    def pid(self) -> int:
        """The worker process id (for operations and fault-injection tests)."""
        import os

        return os.getpid()


class RayDispatcher:
    """Wakes sessions by poking their named actors, activating them on first use."""

    def __init__(self, settings: RuntimeSettings) -> None:
        self._settings = settings
        self._payload = settings.model_dump()
        self._handles: dict[str, Any] = {}

    def _handle(self, session_id: str) -> Any:
        handle = self._handles.get(session_id)
        if handle is None:
            handle = SessionActor.options(  # type: ignore[attr-defined]
                name=session_actor_name(session_id),
                namespace=self._settings.namespace,
                get_if_exists=True,
                lifetime="detached",
            ).remote(self._payload, session_id)
            self._handles[session_id] = handle
        return handle

    async def wake(self, session_id: str) -> None:
        """Poke the session's actor, re-activating it once if it died.

        Raises:
            SessionUnavailable: the actor could not be reached.
        """
        for attempt in range(2):
            handle = await asyncio.to_thread(self._handle, session_id)
            try:
                await handle.wake.remote()
                return
            except RayActorError as exc:
                self._handles.pop(session_id, None)
                if attempt:
                    raise SessionUnavailable(f"session {session_id}: {exc}") from exc

    async def close(self) -> None:
        """Forget cached actor handles (the actors live on)."""
        self._handles.clear()
