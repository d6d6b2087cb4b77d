"""`ScheduleService`: the HTTP layer's door to schedules (CRUD scoped by user, fired sessions).

It writes the records (the truth) and then tells the scheduler through a `SchedulerControl`:
the `SchedulerActor` when sessions live in Ray, a `Scheduler` in this process otherwise.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pydantic import ValidationError

from actors.bus.mailbox import Mailbox, SessionDispatcher
from actors.bus.redis_errors import storage_errors
from actors.errors import InvalidRequest, SessionNotFound
from actors.inprocess import InProcessDispatcher
from actors.schedules.scheduler import Scheduler
from actors.schedules.store import ScheduleData, ScheduleRecord, ScheduleStore
from actors.sessions.chat_models import check_model_configs
from actors.sessions.lifecycle import delete_user_session
from actors.settings import RuntimeSettings
from actors.storage.records import SessionConfig, SessionRecord
from actors.wiring import RuntimeParts

log = logging.getLogger(__name__)

CheckModels = Callable[[str, SessionConfig], Awaitable[None]]
DeleteSession = Callable[[str, str], Awaitable[None]]


class SchedulerControl(Protocol):
    """Reaches the one scheduler of the deployment."""

    async def start(self) -> None:
        """Make sure the scheduler runs (loading every schedule)."""
        ...

    async def sync(self, schedule_id: str) -> None:
        """Make the scheduler apply the schedule's current record (or its deletion)."""
        ...

    async def fire_now(self, schedule_id: str) -> str | None:
        """Fire the schedule now; return the session the hint went to.

        Raises:
            ScheduleNotFound: no such schedule.
        """
        ...

    async def health(self) -> str:
        """`ok ...` when the scheduler is timing schedules; raises when it cannot be reached."""
        ...

    async def close(self) -> None:
        """Release what the control holds (a Ray-hosted scheduler keeps running)."""
        ...


def scheduler_control(
    settings: RuntimeSettings, store: ScheduleStore, mailbox: Mailbox
) -> SchedulerControl:
    """The scheduler next to the sessions: in this process, or the Ray `SchedulerActor`."""
    if isinstance(mailbox.dispatcher, InProcessDispatcher):
        return Scheduler(store, mailbox)
    from actors._remote.scheduler_actor import RaySchedulerControl

    return RaySchedulerControl(settings)


@storage_errors
class ScheduleService:
    """Schedules of users: every operation is scoped by user id (another user's is not found)."""

    def __init__(
        self,
        store: ScheduleStore,
        control: SchedulerControl,
        check_models: CheckModels,
        delete_session: DeleteSession,
    ) -> None:
        self._store = store
        self._control = control
        self._check_models = check_models
        self._delete_session = delete_session

    @classmethod
    def build(cls, parts: RuntimeParts[SessionDispatcher]) -> ScheduleService:
        """The service of one deployment, on its Redis and next to its sessions."""
        store = parts.schedule_store()
        return cls(
            store,
            scheduler_control(parts.settings, store, parts.mailbox),
            functools.partial(check_model_configs, parts.storage),
            functools.partial(delete_user_session, parts.storage, parts.teams, parts.dispatcher),
        )

    async def start(self) -> None:
        """Make sure the scheduler runs, so schedules fire without waiting for a request."""
        await self._control.start()

    async def health(self) -> str:
        """The scheduler's status for `/health` (`ok ...`, or raises when it cannot be reached)."""
        return await self._control.health()

    async def aclose(self) -> None:
        """Release the scheduler control (an in-process scheduler stops)."""
        await self._control.close()

    async def create(self, user_id: str, agent_id: str, data: ScheduleData) -> ScheduleRecord:
        """Store a schedule of one of the user's agents and start timing it.

        Raises:
            AgentNotFound: the agent is not the user's.
            CredentialNotFound: the model config names a credential the user does not have.
            InvalidRequest: the model config's type does not match its credential.
        """
        await self._store.get_agent(user_id, agent_id)
        await self._check_models(user_id, SessionConfig(chat_model_config=data.chat_model_config))
        record = await self._store.create_schedule(user_id, agent_id, data)
        await self._notify(record.id)
        return record

    async def list_schedules(self, user_id: str) -> list[ScheduleRecord]:
        """Return the user's schedules, oldest first."""
        return await self._store.list_schedules(user_id)

    async def get(self, user_id: str, schedule_id: str) -> ScheduleRecord:
        """Return one of the user's schedules.

        Raises:
            ScheduleNotFound: no such schedule for this user.
        """
        return await self._store.get_schedule(user_id, schedule_id)

    async def update(
        self, user_id: str, schedule_id: str, changes: dict[str, Any]
    ) -> ScheduleRecord:
        """Apply `changes` (fields of ScheduleData) and re-time the schedule.

        Raises:
            ScheduleNotFound: no such schedule for this user.
            InvalidRequest: the changed schedule is invalid (cron, zone or window).
        """
        record = await self._store.get_schedule(user_id, schedule_id)
        try:
            data = ScheduleData.model_validate({**record.data.model_dump(), **changes})
        except ValidationError as exc:
            raise InvalidRequest(f"invalid schedule: {exc}") from exc
        updated = await self._store.update_schedule(record.model_copy(update={"data": data}))
        await self._notify(schedule_id)
        return updated

    async def delete(self, user_id: str, schedule_id: str, keep_session: str | None = None) -> None:
        """Delete the schedule, stop timing it, and delete the sessions it fired into.

        Args:
            user_id: The owner.
            schedule_id: The schedule.
            keep_session: A fired session to keep (the one whose agent deletes the schedule).

        Raises:
            ScheduleNotFound: no such schedule for this user.
        """
        session_ids = await self._store.delete_schedule(user_id, schedule_id)
        await self._notify(schedule_id)
        for session_id in session_ids:
            if session_id == keep_session:
                continue
            try:
                await self._delete_session(user_id, session_id)
            except SessionNotFound:
                continue  # the user deleted it already

    async def sessions(self, user_id: str, schedule_id: str) -> list[SessionRecord]:
        """The sessions the schedule fired into, newest first.

        Raises:
            ScheduleNotFound: no such schedule for this user.
        """
        await self._store.get_schedule(user_id, schedule_id)
        return await self._store.fired_sessions(user_id, schedule_id)

    async def fire_now(self, user_id: str, schedule_id: str) -> str | None:
        """Fire the schedule now, whatever its cron says; return the session it went to.

        Raises:
            ScheduleNotFound: no such schedule for this user.
        """
        await self._store.get_schedule(user_id, schedule_id)
        return await self._control.fire_now(schedule_id)

    async def _notify(self, schedule_id: str) -> None:
        try:
            await self._control.sync(schedule_id)
        except Exception:  # the record is stored; the scheduler's reconcile loop applies it
            log.warning("scheduler not told about schedule %s", schedule_id, exc_info=True)
