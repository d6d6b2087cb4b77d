"""`SchedulerActor`: the deployment's one scheduler as a Ray actor, and the control reaching it."""

from __future__ import annotations

import asyncio
import functools
import os
from datetime import datetime
from typing import Any

import ray
from ray.exceptions import RayActorError

from actors._remote.session_actor import RayDispatcher
from actors.errors import InvalidRequest
from actors.schedules.scheduler import DEFAULT_MISFIRE_GRACE, Scheduler
from actors.settings import RuntimeSettings
from actors.wiring import wire

SCHEDULER_ACTOR_NAME = "scheduler"


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=3)
class SchedulerActor:
    """Hosts the deployment's one `Scheduler` (detached, named `scheduler` in the namespace).

    Ray restarts the actor if its process dies. Nobody calls a restarted actor, so the
    constructor queues the actor's own `start`, which reloads every schedule and catches up on
    missed fires; the fire tokens in Redis keep due times that already fired from firing again.
    """

    def __init__(self, settings: dict[str, Any], misfire_grace: float) -> None:
        self._settings = RuntimeSettings.model_validate(settings)
        parts = wire(self._settings, functools.partial(RayDispatcher, self._settings))
        self._scheduler = Scheduler(parts.schedule_store(), parts.mailbox, misfire_grace)
        ray.get_runtime_context().current_actor.start.remote()

    async def start(self) -> None:
        """Start timing every schedule (idempotent)."""
        await self._scheduler.start()

    async def sync(self, schedule_id: str) -> None:
        """Apply the schedule's current record (created, changed or deleted)."""
        await self._scheduler.sync(schedule_id)

    async def fire(self, schedule_id: str, due: datetime) -> str | None:
        """Fire due time `due` unless it fired already; return the session it went to."""
        return await self._scheduler.fire(schedule_id, due)

    async def fire_now(self, schedule_id: str) -> str | None:
        """Fire the schedule now; return the session it went to."""
        return await self._scheduler.fire_now(schedule_id)

    async def ping(self) -> dict[str, Any]:
        """The worker pid, the key prefix served and each job's next run time (ISO, UTC)."""
        jobs = {
            schedule_id: None if next_run is None else next_run.isoformat()
            for schedule_id, next_run in self._scheduler.jobs().items()
        }
        return {"pid": os.getpid(), "key_prefix": self._settings.key_prefix, "jobs": jobs}


def ensure_scheduler(
    settings: RuntimeSettings, misfire_grace: float = DEFAULT_MISFIRE_GRACE
) -> Any:
    """Get or create the namespace's `SchedulerActor` and wait until it has started (blocks).

    `misfire_grace` applies only when this call creates the actor.

    Raises:
        InvalidRequest: the namespace's scheduler serves another key prefix.
    """
    handle = SchedulerActor.options(  # type: ignore[attr-defined]
        name=SCHEDULER_ACTOR_NAME,
        namespace=settings.namespace,
        get_if_exists=True,
        lifetime="detached",
    ).remote(settings.model_dump(), misfire_grace)
    served = ray.get(handle.ping.remote())["key_prefix"]
    if served != settings.key_prefix:
        raise InvalidRequest(
            f"the scheduler of Ray namespace {settings.namespace!r} serves key prefix "
            f"{served!r}, not {settings.key_prefix!r}"
        )
    ray.get(handle.start.remote())
    return handle


class RaySchedulerControl:
    """`SchedulerControl` over the `SchedulerActor`, created on first use."""

    def __init__(
        self, settings: RuntimeSettings, misfire_grace: float = DEFAULT_MISFIRE_GRACE
    ) -> None:
        self._settings = settings
        self._misfire_grace = misfire_grace
        self._handle: Any | None = None

    async def _actor(self) -> Any:
        if self._handle is None:
            self._handle = await asyncio.to_thread(
                ensure_scheduler, self._settings, self._misfire_grace
            )
        return self._handle

    async def start(self) -> None:
        """Get or create the scheduler actor and wait until it has started."""
        await self._actor()

    async def sync(self, schedule_id: str) -> None:
        """Make the actor apply the schedule's current record."""
        handle = await self._actor()
        try:
            await handle.sync.remote(schedule_id)
        except RayActorError:
            self._handle = None  # gone for good: get or create it again next time
            raise

    async def fire_now(self, schedule_id: str) -> str | None:
        """Make the actor fire the schedule now.

        Raises:
            ScheduleNotFound: no such schedule.
        """
        handle = await self._actor()
        try:
            session_id: str | None = await handle.fire_now.remote(schedule_id)
        except RayActorError:
            self._handle = None
            raise
        return session_id

    async def health(self) -> str:
        """`ok (N schedules)` when the actor answers; never creates it."""
        handle: Any = self._handle
        if handle is None:
            try:
                handle = await asyncio.to_thread(
                    ray.get_actor, SCHEDULER_ACTOR_NAME, namespace=self._settings.namespace
                )
            except ValueError:
                return "unavailable: the scheduler actor is not running"
        try:
            answer = await handle.ping.remote()
        except RayActorError:
            self._handle = None
            raise
        return f"ok ({len(answer['jobs'])} schedules)"

    async def close(self) -> None:
        """Forget the actor handle (the actor keeps running)."""
        self._handle = None
