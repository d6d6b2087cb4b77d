"""`Scheduler`: fires schedules on their cron; a fire is a mailbox delivery of a hint.

Plain asyncio: the Ray actor `SchedulerActor` (in `actors._remote`) hosts one, and a single-process
host (or a test) can run one directly. The schedule records in Redis are the truth. The
scheduler keeps one in-memory APScheduler job per enabled schedule and rebuilds its jobs from
the records on `start`, on `sync` (after each change) and every `reconcile_interval`, so a
change it was not told about is applied within that interval.

A fire of due time `t`:

1. claims `(schedule_id, t)` with a Redis `SET NX` token: only one claim ever wins, so a
   restarted scheduler (or a zombie one) evaluating the same due time does nothing. A crash
   between the claim and step 3 loses that one fire rather than risking a double.
2. picks the session: a new one per fire (stateless), or the schedule's one session, created
   on the first fire (stateful). New sessions have `origin = ScheduleOrigin` and the
   schedule's permission mode (`dont_ask` by default: nobody is there to answer).
3. delivers a `HintItem` — `<scheduled-task name="...">` + the schedule's description — to
   the session's inbox (`Mailbox.deliver`); the session wakes and replies to it.

Catch-up policy (missed fires). Each time a schedule's job is built — on start, hence after
every restart; when the schedule is created, re-enabled or re-timed — and each time its job
runs, the scheduler fires the schedule's *latest* due time `t` with

    max(started_at, now - misfire_grace) <= t <= min(now, ended_at)   and   t > last_fire_at

once. Older due times are skipped, and several missed ones coalesce into that one: a scheduler
that was down for an hour does not replay sixty fires of an every-minute schedule, and a
daily schedule missed by more than the grace period waits for its next day.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from html import escape
from typing import TYPE_CHECKING

from actors.bus.items import HintItem
from actors.bus.mailbox import Mailbox
from actors.schedules.cron import cron_trigger, latest_fire_time
from actors.schedules.store import (
    ScheduleNotFound,
    ScheduleRecord,
    ScheduleStore,
    fire_stamp,
    to_utc,
)
from actors.storage.records import ScheduleOrigin, SessionConfig

if TYPE_CHECKING:
    # APScheduler loads in the process that starts timing, not in every one importing this.
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

log = logging.getLogger(__name__)

DEFAULT_MISFIRE_GRACE = 60.0
"""Seconds a due time may be late and still fire (see the catch-up policy)."""

_TOKEN_TTL = 86_400  # fire tokens outlive any window in which their due time is re-evaluated


def _utc_now() -> datetime:
    return datetime.now(UTC)


def scheduled_task_hint(record: ScheduleRecord, due: datetime) -> HintItem:
    """The hint a fire of `due` delivers (its id is stable, so a redelivery is a no-op)."""
    name = record.data.name
    task = record.data.description or name
    return HintItem(
        item_id=f"schedule-{record.id}-{fire_stamp(due)}",
        hint=f'<scheduled-task name="{escape(name)}">\n{task}\n</scheduled-task>',
        source=json.dumps({"label": "schedule", "sublabel": name}),
    )


class Scheduler:
    """Times every enabled schedule and fires it into sessions.

    Args:
        store: Schedule records, fire tokens, sessions.
        mailbox: The delivery path (inbox append + wake).
        misfire_grace: Seconds a due time may be late and still fire.
        reconcile_interval: Seconds between rebuilds of the jobs from the records.
        clock: Current time (UTC); tests replace it to decide what is due.
    """

    def __init__(
        self,
        store: ScheduleStore,
        mailbox: Mailbox,
        misfire_grace: float = DEFAULT_MISFIRE_GRACE,
        reconcile_interval: float = 30.0,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._store = store
        self._mailbox = mailbox
        self._grace = timedelta(seconds=misfire_grace)
        self._token_ttl = max(_TOKEN_TTL, math.ceil(2 * misfire_grace))
        self._reconcile_interval = reconcile_interval
        self._clock = clock
        self._aps: AsyncIOScheduler | None = None
        self._jobs: dict[str, tuple[object, ...]] = {}  # schedule id -> timing of its job
        self._starting = asyncio.Lock()
        self._sessions = asyncio.Lock()  # one stateful session per schedule, even under races
        self._reconciler: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start timing: load every schedule, catch up, and keep reconciling (idempotent).

        Raises:
            redis.exceptions.RedisError: the first load failed (the reconcile loop retries).
        """
        async with self._starting:
            if self._aps is not None:
                return
            from apscheduler.schedulers.asyncio import AsyncIOScheduler

            aps = AsyncIOScheduler(timezone=UTC)
            aps.start()
            self._aps = aps
            self._reconciler = asyncio.get_running_loop().create_task(self._reconcile_forever())
            await self.reconcile()

    async def health(self) -> str:
        """`ok (N schedules)` while timing, else not started."""
        if self._aps is None:
            return "unavailable: the scheduler has not started"
        return f"ok ({len(self._jobs)} schedules)"

    async def close(self) -> None:
        """Stop timing (the records stay; the next `start` resumes from them)."""
        if self._reconciler is not None:
            self._reconciler.cancel()
            await asyncio.gather(self._reconciler, return_exceptions=True)
            self._reconciler = None
        if self._aps is not None:
            self._aps.shutdown(wait=False)
            self._aps = None
        self._jobs.clear()

    async def sync(self, schedule_id: str) -> None:
        """Apply the current record of one schedule (created, changed or deleted)."""
        await self.start()
        record = await self._store.find_schedule(schedule_id)
        if record is None:
            self._drop(schedule_id)
        else:
            await self._apply(record)

    async def reconcile(self) -> None:
        """Rebuild the jobs from the records: add new ones, re-time changed, drop deleted."""
        records = await self._store.all_schedules()
        for stale in set(self._jobs) - {record.id for record in records}:
            self._drop(stale)
        for record in records:
            try:
                await self._apply(record)
            except Exception:  # one broken schedule (e.g. its agent deleted) must not stop others
                log.exception("schedule %s could not be applied", record.id)

    async def fire(self, schedule_id: str, due: datetime) -> str | None:
        """Fire the schedule for due time `due`, unless that due time fired already.

        Returns:
            The session the hint went to, or None if `due` had fired before.

        Raises:
            ScheduleNotFound: no such schedule.
            AgentNotFound: the schedule's agent was deleted.
        """
        record = await self._store.find_schedule(schedule_id)
        if record is None:
            raise ScheduleNotFound(schedule_id)
        return await self._fire(record, to_utc(due))

    async def fire_now(self, schedule_id: str) -> str | None:
        """Fire the schedule once now ("run now"), whatever its cron, window or `enabled` say.

        Raises:
            ScheduleNotFound: no such schedule.
            AgentNotFound: the schedule's agent was deleted.
        """
        return await self.fire(schedule_id, self._clock())

    def jobs(self) -> dict[str, datetime | None]:
        """The next run time (UTC) of every schedule being timed."""
        if self._aps is None:
            return {}
        return {
            job.id: None if job.next_run_time is None else to_utc(job.next_run_time)
            for job in self._aps.get_jobs()
        }

    async def _reconcile_forever(self) -> None:
        while True:
            await asyncio.sleep(self._reconcile_interval)
            try:
                await self.reconcile()
            except Exception:  # Redis outages: the records are still the truth next round
                log.warning("reconciling schedules failed", exc_info=True)

    async def _apply(self, record: ScheduleRecord) -> None:
        data = record.data
        if not data.enabled or (data.ended_at is not None and data.ended_at <= self._clock()):
            self._drop(record.id)
            return
        timing = data.fingerprint()
        if self._jobs.get(record.id) == timing:
            return
        assert self._aps is not None  # _apply runs only after start()
        # The job is added before the catch-up so that no due time falls between the two.
        self._aps.add_job(
            self._on_due,
            trigger=cron_trigger(data.cron_expression, data.timezone),
            args=[record.id],
            id=record.id,
            name=data.name,
            replace_existing=True,
            misfire_grace_time=max(1, math.ceil(self._grace.total_seconds())),
            coalesce=True,
            max_instances=1,
        )
        self._jobs[record.id] = timing
        await self._fire_latest_due(record)

    def _drop(self, schedule_id: str) -> None:
        self._jobs.pop(schedule_id, None)
        if self._aps is not None and self._aps.get_job(schedule_id) is not None:
            self._aps.remove_job(schedule_id)

    async def _on_due(self, schedule_id: str) -> None:
        try:
            record = await self._store.find_schedule(schedule_id)
            if record is None or not record.data.enabled:
                self._drop(schedule_id)
                return
            await self._fire_latest_due(record)
        except Exception:
            log.exception("schedule %s: the fire failed", schedule_id)

    async def _fire_latest_due(self, record: ScheduleRecord) -> str | None:
        data = record.data
        now = self._clock()
        since = max(data.started_at, now - self._grace)
        until = now if data.ended_at is None else min(now, data.ended_at)
        if since > until:
            return None
        due = latest_fire_time(cron_trigger(data.cron_expression, data.timezone), since, until)
        if due is None:
            return None
        last = await self._store.last_fire_at(record.id)
        if last is not None and due <= last:
            return None
        return await self._fire(record, due)

    async def _fire(self, record: ScheduleRecord, due: datetime) -> str | None:
        if not await self._store.claim_fire(record.id, due, self._token_ttl):
            return None
        async with self._sessions:
            session_id = await self._session_for(record)
            await self._store.add_fired_session(record.id, session_id, due)
        await self._mailbox.deliver(session_id, scheduled_task_hint(record, due))
        log.info("schedule %s fired for %s into session %s", record.id, due, session_id)
        return session_id

    async def _session_for(self, record: ScheduleRecord) -> str:
        data = record.data
        if data.stateful:
            session = await self._store.stateful_session(record.user_id, record.id)
            if session is not None:
                if session.config.permission_mode != data.permission_mode:
                    config = session.config.model_copy(
                        update={"permission_mode": data.permission_mode}
                    )
                    await self._store.update_session(session.model_copy(update={"config": config}))
                return session.id
        config = SessionConfig(
            name=data.name,
            chat_model_config=data.chat_model_config,
            permission_mode=data.permission_mode,
        )
        session = await self._store.create_session(record.user_id, record.agent_id, config)
        origin = ScheduleOrigin(schedule_id=record.id)
        await self._store.update_session(session.model_copy(update={"origin": origin}))
        if data.stateful:
            await self._store.set_stateful_session(record.id, session.id)
        return session.id
