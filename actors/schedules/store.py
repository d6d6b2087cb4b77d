"""Schedules: their records (AgentScope's shapes) and their storage in Redis.

Keys, under the deployment's prefix `{p}` (next to those in `actors.bus.keys`):

=====================================  ======  ================================================
key                                    type    holds
=====================================  ======  ================================================
{p}:schedule:{schedule_id}             string  ScheduleRecord JSON
{p}:user:{user_id}:schedules           zset    schedule ids by creation time
{p}:schedules                          set     every schedule id (what a scheduler loads)
{p}:schedule:{schedule_id}:sessions    zset    sessions the schedule fired into, by first fire
{p}:schedule:{schedule_id}:runs        hash    `last_fire_at` (epoch s), `session_id` (stateful)
{p}:schedule:{schedule_id}:fire:{due}  string  fire token of one due time (SET NX, expires)
=====================================  ======  ================================================
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import ConfigDict, Field, field_validator, model_validator
from redis.asyncio import Redis

from actors.bus.keys import Keys, checked_id
from actors.errors import NotFound, SessionNotFound
from actors.schedules.cron import cron_trigger
from actors.storage.records import ChatModelConfig, SessionRecord, _Record
from actors.storage.redis_storage import RedisStorage
from agent_core._ids import now_iso
from agent_core.deferred_model import DeferredModel
from agent_core.permission import PermissionMode


class ScheduleNotFound(NotFound):
    """No such schedule for this user."""

    kind = "schedule"


class ScheduleSource(StrEnum):
    """Who created a schedule."""

    USER = "USER"
    AGENT = "AGENT"


def check_timing(
    cron_expression: str,
    timezone: str,
    started_at: datetime | None = None,
    ended_at: datetime | None = None,
) -> None:
    """Check a schedule's timing: 5-field cron, IANA zone, and a window that is not empty.

    Raises:
        ValueError: one of them is invalid.
    """
    cron_trigger(cron_expression, timezone)
    if started_at is not None and ended_at is not None and ended_at <= started_at:
        raise ValueError("ended_at must be after started_at")


def to_utc(value: datetime) -> datetime:
    """Read a naive datetime as UTC; convert an aware one to UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class ScheduleData(DeferredModel):
    """What a schedule does and when (its `description` is the task the agent is given)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Display name of the schedule.")
    description: str = Field(
        default="", description="The task: what the agent is asked to do when the schedule fires."
    )
    enabled: bool = Field(default=True, description="Disabled schedules are kept but never fire.")
    timezone: str = Field(default="Etc/UTC", description="IANA zone the cron is evaluated in.")
    cron_expression: str = Field(description="Standard 5-field cron, e.g. '0 9 * * 1-5'.")
    started_at: datetime = Field(
        default_factory=lambda: datetime.now(UTC),
        description="No fire before this time (naive times are UTC).",
    )
    ended_at: datetime | None = Field(
        default=None, description="No fire after this time (naive times are UTC)."
    )
    chat_model_config: ChatModelConfig = Field(description="Model of the sessions it opens.")
    stateful: bool = Field(default=False, description="Whether every fire reuses one session.")
    permission_mode: PermissionMode = Field(
        default=PermissionMode.DONT_ASK, description="Permission mode of the fired sessions."
    )
    source: ScheduleSource = Field(default=ScheduleSource.USER, description="Who created it.")
    source_session_id: str = Field(default="", description="Session that created it, if any.")

    @field_validator("started_at", "ended_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else to_utc(value)

    @model_validator(mode="after")
    def _timing(self) -> ScheduleData:
        check_timing(self.cron_expression, self.timezone, self.started_at, self.ended_at)
        return self

    def fingerprint(self) -> tuple[str, str, datetime, datetime | None]:
        """What decides the fire times: a job is rebuilt only when this changes."""
        return (self.cron_expression, self.timezone, self.started_at, self.ended_at)


class ScheduleRecord(_Record):
    """A stored schedule."""

    user_id: str = Field(description="Owner user id.")
    agent_id: str = Field(description="The agent that runs when the schedule fires.")
    data: ScheduleData = Field(description="Schedule configuration.")


def fire_stamp(due: datetime) -> str:
    """A due time as it appears in keys and item ids (UTC, microseconds)."""
    return due.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


class ScheduleKeys(Keys):
    """`Keys` plus the keys of schedules (see the module docstring)."""

    def schedule(self, schedule_id: str) -> str:
        """ScheduleRecord JSON."""
        return f"{self.prefix}:schedule:{checked_id(schedule_id)}"

    def schedules(self) -> str:
        """Every schedule id."""
        return f"{self.prefix}:schedules"

    def schedule_sessions(self, schedule_id: str) -> str:
        """Sessions the schedule fired into, by first fire time."""
        return f"{self.schedule(schedule_id)}:sessions"

    def schedule_runs(self, schedule_id: str) -> str:
        """Last fire time and the stateful session."""
        return f"{self.schedule(schedule_id)}:runs"

    def fire_token(self, schedule_id: str, due: datetime) -> str:
        """Claimed by the one fire of `due`."""
        return f"{self.schedule(schedule_id)}:fire:{fire_stamp(due)}"


# Claim one due time: only the first claim wins; it also moves last_fire_at forward.
_CLAIM = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
local last = tonumber(redis.call('HGET', KEYS[2], 'last_fire_at') or '0')
if tonumber(ARGV[2]) > last then redis.call('HSET', KEYS[2], 'last_fire_at', ARGV[2]) end
return 1
"""


class ScheduleStore(RedisStorage):
    """`RedisStorage` plus schedule records, their fire tokens and fired sessions."""

    keys: ScheduleKeys

    def __init__(self, redis: Redis, keys: ScheduleKeys) -> None:
        super().__init__(redis, keys)
        self._claim = redis.register_script(_CLAIM)

    async def create_schedule(
        self, user_id: str, agent_id: str, data: ScheduleData
    ) -> ScheduleRecord:
        """Store a new schedule of one of the user's agents.

        Raises:
            AgentNotFound: the agent is not the user's.
        """
        await self.get_agent(user_id, agent_id)
        record = ScheduleRecord(user_id=user_id, agent_id=agent_id, data=data)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self.keys.schedule(record.id), record.model_dump_json())
            pipe.zadd(self.keys.user_index(user_id, "schedules"), {record.id: time.time()})
            pipe.sadd(self.keys.schedules(), record.id)
            await pipe.execute()
        return record

    async def get_schedule(self, user_id: str, schedule_id: str) -> ScheduleRecord:
        """Return one of the user's schedules.

        Raises:
            ScheduleNotFound: no such schedule for this user.
        """
        return await self._get(
            self.keys.schedule(schedule_id), ScheduleRecord, user_id, ScheduleNotFound, schedule_id
        )

    async def find_schedule(self, schedule_id: str) -> ScheduleRecord | None:
        """Return a schedule by id alone (for the scheduler), or None if it was deleted."""
        raw = await self.redis.get(self.keys.schedule(schedule_id))
        return None if raw is None else ScheduleRecord.model_validate_json(raw)

    async def list_schedules(self, user_id: str) -> list[ScheduleRecord]:
        """Return the user's schedules, oldest first."""
        return await self._list(user_id, "schedules", "schedule", ScheduleRecord)

    async def all_schedules(self) -> list[ScheduleRecord]:
        """Return every schedule of every user."""
        ids = sorted(i.decode() for i in await self.redis.smembers(self.keys.schedules()))
        if not ids:
            return []
        raws = await self.redis.mget([self.keys.schedule(i) for i in ids])
        return [ScheduleRecord.model_validate_json(raw) for raw in raws if raw is not None]

    async def update_schedule(self, record: ScheduleRecord) -> ScheduleRecord:
        """Store a changed schedule record."""
        record = record.model_copy(update={"updated_at": now_iso()})
        await self.redis.set(self.keys.schedule(record.id), record.model_dump_json())
        return record

    async def delete_schedule(self, user_id: str, schedule_id: str) -> list[str]:
        """Delete a schedule and its history; return the sessions it had fired into.

        Raises:
            ScheduleNotFound: no such schedule for this user.
        """
        await self.get_schedule(user_id, schedule_id)
        session_ids = await self.fired_session_ids(schedule_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(
                self.keys.schedule(schedule_id),
                self.keys.schedule_sessions(schedule_id),
                self.keys.schedule_runs(schedule_id),
            )
            pipe.zrem(self.keys.user_index(user_id, "schedules"), schedule_id)
            pipe.srem(self.keys.schedules(), schedule_id)
            await pipe.execute()
        return session_ids

    async def claim_fire(self, schedule_id: str, due: datetime, ttl: int) -> bool:
        """Claim the fire of `due` for this caller; False if it was claimed before.

        A won claim also records `due` as the schedule's last fire time (if it is later).
        The token expires after `ttl` seconds; `last_fire_at` keeps older due times fired.
        """
        keys = [self.keys.fire_token(schedule_id, due), self.keys.schedule_runs(schedule_id)]
        return bool(await self._claim(keys=keys, args=[ttl, repr(due.timestamp())]))

    async def last_fire_at(self, schedule_id: str) -> datetime | None:
        """The latest due time that fired (None before the first fire)."""
        raw = await self.redis.hget(self.keys.schedule_runs(schedule_id), "last_fire_at")
        return None if raw is None else datetime.fromtimestamp(float(raw), UTC)

    async def stateful_session(self, user_id: str, schedule_id: str) -> SessionRecord | None:
        """The session a stateful schedule fires into, if it still exists."""
        raw = await self.redis.hget(self.keys.schedule_runs(schedule_id), "session_id")
        if raw is None:
            return None
        try:
            return await self.load_session(user_id, raw.decode())
        except SessionNotFound:
            return None

    async def set_stateful_session(self, schedule_id: str, session_id: str) -> None:
        """Remember the session a stateful schedule fires into."""
        await self.redis.hset(self.keys.schedule_runs(schedule_id), "session_id", session_id)

    async def add_fired_session(self, schedule_id: str, session_id: str, due: datetime) -> None:
        """List `session_id` among the schedule's sessions (once, at its first fire)."""
        key = self.keys.schedule_sessions(schedule_id)
        await self.redis.zadd(key, {session_id: due.timestamp()}, nx=True)

    async def fired_session_ids(self, schedule_id: str) -> list[str]:
        """Ids of the sessions the schedule fired into, newest first."""
        ids = await self.redis.zrevrange(self.keys.schedule_sessions(schedule_id), 0, -1)
        return [i.decode() for i in ids]

    async def fired_sessions(self, user_id: str, schedule_id: str) -> list[SessionRecord]:
        """The sessions the schedule fired into that still exist, newest first."""
        ids = await self.fired_session_ids(schedule_id)
        if not ids:
            return []
        raws = await self.redis.mget([self.keys.session(i) for i in ids])
        sessions = [SessionRecord.model_validate_json(raw) for raw in raws if raw is not None]
        return [s for s in sessions if s.user_id == user_id]
