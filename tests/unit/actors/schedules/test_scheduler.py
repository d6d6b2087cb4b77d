"""The in-process `Scheduler` on a real Redis: fires, sessions, exactly-once and catch-up.

Sessions are not run here (a recording dispatcher stands in for their owners); what a fire
leaves behind — sessions, inbox items, tokens — is read back from Redis.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from redis.asyncio import Redis

from actors.bus.items import HintItem
from actors.bus.mailbox import Mailbox
from actors.bus.message_bus import RedisMessageBus
from actors.schedules.scheduler import Scheduler
from actors.schedules.store import ScheduleData, ScheduleKeys, ScheduleRecord, ScheduleStore
from actors.storage.records import AgentData, ChatModelConfig
from agent_core.permission import PermissionMode
from tests.support.dispatchers import RecordingDispatcher

pytestmark = [pytest.mark.redis]

USER = "alice"
MODEL = ChatModelConfig(type="openai_credential", credential_id="c1", model="gpt-4o-mini")
# A due time of the yearly cron below; the real clock never reaches it during a test, so
# APScheduler's own timer stays out of the way and the injected clock decides what is due.
DUE = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
YEARLY = "0 12 1 1 *"


@dataclass
class Env:
    store: ScheduleStore
    bus: RedisMessageBus
    mailbox: Mailbox
    agent_id: str
    schedulers: list[Scheduler] = field(default_factory=list)

    def scheduler(self, now: datetime, grace: float = 60.0) -> Scheduler:
        scheduler = Scheduler(self.store, self.mailbox, misfire_grace=grace, clock=lambda: now)
        self.schedulers.append(scheduler)
        return scheduler

    async def schedule(self, **data: Any) -> ScheduleRecord:
        fields: dict[str, Any] = {
            "name": "digest",
            "description": "Summarise yesterday's news.",
            "cron_expression": YEARLY,
            "started_at": DUE - timedelta(days=1),
            "chat_model_config": MODEL,
            **data,
        }
        return await self.store.create_schedule(USER, self.agent_id, ScheduleData(**fields))

    async def hints(self, session_id: str) -> list[HintItem]:
        return [i for _, i in await self.bus.pending(session_id) if isinstance(i, HintItem)]


@pytest.fixture
async def env(redis_url: str) -> AsyncIterator[Env]:
    redis = Redis.from_url(redis_url)
    keys = ScheduleKeys("t")
    store = ScheduleStore(redis, keys)
    bus = RedisMessageBus(redis, keys, 100, 1_000)
    agent = await store.create_agent(USER, AgentData(name="Friday"))
    env = Env(store, bus, Mailbox(bus, RecordingDispatcher()), agent.id)
    yield env
    for scheduler in env.schedulers:
        await scheduler.close()
    await redis.aclose()


async def test_stateless_fires_open_a_session_each_and_deliver_the_task(env: Env) -> None:
    record = await env.schedule()
    scheduler = Scheduler(env.store, env.mailbox)  # real clock: each "run now" is a new time
    env.schedulers.append(scheduler)
    first = await scheduler.fire_now(record.id)
    second = await scheduler.fire_now(record.id)
    assert first is not None
    assert second is not None
    assert first != second

    (hint,) = await env.hints(first)
    assert (
        hint.hint
        == '<scheduled-task name="digest">\nSummarise yesterday\'s news.\n</scheduled-task>'
    )
    assert json.loads(hint.source or "") == {"label": "schedule", "sublabel": "digest"}
    session = await env.store.load_session(USER, first)
    assert session.origin.model_dump() == {"type": "schedule", "schedule_id": record.id}
    assert session.config.permission_mode is PermissionMode.DONT_ASK
    assert session.config.chat_model_config == MODEL
    assert session.agent_id == env.agent_id
    assert [s.id for s in await env.store.fired_sessions(USER, record.id)] == [second, first]
    assert await env.store.fired_sessions("mallory", record.id) == []


async def test_stateful_fires_share_one_session_until_it_is_deleted(env: Env) -> None:
    record = await env.schedule(stateful=True, permission_mode=PermissionMode.EXPLORE)
    scheduler = env.scheduler(DUE)
    first = await scheduler.fire(record.id, DUE)
    again = await scheduler.fire(record.id, DUE + timedelta(days=365))
    assert first is not None
    assert again == first
    assert len(await env.hints(first)) == 2
    session = await env.store.load_session(USER, first)
    assert session.config.permission_mode is PermissionMode.EXPLORE

    await env.store.delete_session(USER, first)
    replacement = await scheduler.fire(record.id, DUE + timedelta(days=730))
    assert replacement not in (None, first)
    assert [s.id for s in await env.store.fired_sessions(USER, record.id)] == [replacement]


async def test_a_due_time_fires_once_across_schedulers(env: Env) -> None:
    record = await env.schedule()
    old, new = env.scheduler(DUE), env.scheduler(DUE)
    results = await asyncio.gather(*(s.fire(record.id, DUE) for s in (old, new, old, new)))
    assert sum(r is not None for r in results) == 1
    assert await new.fire(record.id, DUE.astimezone(ZoneInfo("Asia/Shanghai"))) is None
    assert len(await env.store.fired_session_ids(record.id)) == 1


async def test_start_catches_up_a_recent_miss_once_even_after_a_restart(env: Env) -> None:
    record = await env.schedule()
    first = env.scheduler(DUE + timedelta(seconds=30))
    await first.start()
    (session_id,) = await env.store.fired_session_ids(record.id)
    assert [h.item_id for h in await env.hints(session_id)] == [
        f"schedule-{record.id}-20300101T120000.000000Z"
    ]
    assert await env.store.last_fire_at(record.id) == DUE
    await first.close()

    restarted = env.scheduler(DUE + timedelta(seconds=40))
    await restarted.start()
    assert await env.store.fired_session_ids(record.id) == [session_id]
    assert record.id in restarted.jobs()


async def test_misses_older_than_the_grace_are_skipped(env: Env) -> None:
    record = await env.schedule()
    late = env.scheduler(DUE + timedelta(minutes=5), grace=60)
    await late.start()
    assert await env.store.fired_session_ids(record.id) == []
    next_run = late.jobs()[record.id]  # the timer itself runs on the real clock
    assert next_run is not None
    assert (next_run.month, next_run.day, next_run.hour, next_run.minute) == (1, 1, 12, 0)


async def test_many_misses_coalesce_into_the_latest(env: Env) -> None:
    record = await env.schedule(cron_expression="* * * * *", started_at=DUE - timedelta(days=30))
    scheduler = env.scheduler(DUE + timedelta(minutes=10, seconds=20), grace=300)
    await scheduler.start()
    (session_id,) = await env.store.fired_session_ids(record.id)
    (hint,) = await env.hints(session_id)
    assert hint.item_id.endswith("20300101T121000.000000Z")


async def test_no_fire_before_the_start_after_the_end_or_a_fire_already_seen(env: Env) -> None:
    not_yet = await env.schedule(started_at=DUE + timedelta(seconds=1))
    ended = await env.schedule(ended_at=DUE - timedelta(seconds=1))
    scheduler = env.scheduler(DUE + timedelta(seconds=5))
    await scheduler.start()
    for record in (not_yet, ended):
        assert await env.store.fired_session_ids(record.id) == []
    assert ended.id not in scheduler.jobs()
    assert not_yet.id in scheduler.jobs()


async def test_sync_follows_disable_retime_and_delete(env: Env) -> None:
    record = await env.schedule(enabled=False)
    scheduler = env.scheduler(DUE + timedelta(days=10))
    await scheduler.start()
    assert scheduler.jobs() == {}

    async def change(**data: Any) -> None:
        updated = record.data.model_copy(update=data)
        await env.store.update_schedule(record.model_copy(update={"data": updated}))
        await scheduler.sync(record.id)

    await change(enabled=True, cron_expression="0 9 * * 1-5", timezone="America/New_York")
    next_run = scheduler.jobs()[record.id]
    assert next_run is not None
    local = next_run.astimezone(ZoneInfo("America/New_York"))
    assert (local.hour, local.minute) == (9, 0)
    assert local.strftime("%a") in {"Mon", "Tue", "Wed", "Thu", "Fri"}

    await change(enabled=False)
    assert scheduler.jobs() == {}
    await change(enabled=True)
    await env.store.delete_schedule(USER, record.id)
    await scheduler.sync(record.id)
    assert scheduler.jobs() == {}
