"""`RedisMessageBus`: per-session inboxes (durable mailboxes) and event logs on Redis Streams.

Writes of a session's owner carry its fencing token (the lease generation taken on
activation); a write with a stale token fails with `SessionFenced`, so an owner that was
replaced (a zombie after a crash or partition) can never append to the log. Accepts and owner
writes also carry the runtime's cluster generation (`actors.bus.generation`): those of a server
that a newer one replaced fail with `StaleGeneration`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from actors.bus.generation import UNFENCED, guard
from actors.bus.items import InboxItem, UnreadableItem, read_item
from actors.bus.keys import DEFAULT_KEY_PREFIX, Keys
from actors.bus.redis_connect import RedisOwner
from actors.bus.script_batch import ScriptCall, run_scripts
from actors.errors import InboxFull, SessionFenced, StaleGeneration
from agent_core.event import AgentEvent, event_to_json

# Atomic accept: with an owner given, a session that is not that user's and agent's refuses;
# duplicate deliveries are no-ops, a full inbox refuses, otherwise XADD. An accepted item that
# is a background call's result also clears that call's record.
# KEYS: inbox, seen, inboxes, background, placement, session record, generation
# ARGV: item id, cap, item JSON, session id, wake channel prefix, owner's user id and agent id
#       ('' for no owner check), generation
# Returns false (the inbox is full) or {stream id, or '' for a duplicate or a refusal; how
# many of the session's host's wake listeners were told, or -1 (not the user's session) or
# -2 (not the agent's)}.
_DELIVER = (
    guard(7, 8)
    + """
if ARGV[6] ~= '' then
  local raw = redis.call('GET', KEYS[6])
  if not raw then return {'', -1} end
  local record = cjson.decode(raw)
  if record['user_id'] ~= ARGV[6] then return {'', -1} end
  if record['agent_id'] ~= ARGV[7] then return {'', -2} end
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[4], ARGV[1])
  return {'', 0}
end
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[2]) then return false end
local id = redis.call('XADD', KEYS[1], '*', 'i', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('HDEL', KEYS[4], ARGV[1])
local host = redis.call('HGET', KEYS[5], ARGV[4])
if not host then return {id, 0} end
return {id, redis.call('PUBLISH', ARGV[5] .. host, ARGV[4])}
"""
)

_FENCE = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end\n"

# The fenced scripts below take the generation hash as their last key and argument.
_APPEND = (
    guard(3, 4)
    + _FENCE
    + """
return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[3])
"""
)

_MARK_RUNNING = (
    guard(4, 4)
    + _FENCE
    + """
local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local cursor = '0'
if newest[1] then cursor = newest[1][1] end
redis.call('HSET', KEYS[3], 'reply_id', ARGV[2], 'cursor', cursor, 'items', ARGV[3])
return cursor
"""
)

_CLEAR_RUNNING = guard(3, 2) + _FENCE + "return redis.call('DEL', KEYS[2])\n"

_ACQUIRE = guard(2, 1) + "return redis.call('INCR', KEYS[1])\n"

# Forget an inbox in the sweeper's set only when it is really empty and no background call
# still owes it a result (after a crash, the sweeper's wake settles such calls).
_FORGET_IF_EMPTY = """
if redis.call('XLEN', KEYS[1]) == 0 and redis.call('HLEN', KEYS[3]) == 0 then
  return redis.call('SREM', KEYS[2], ARGV[1])
end
return 0
"""


DEFAULT_INBOX_MAXLEN = 1_000
"""Most unconsumed items one inbox holds, unless configured."""
DEFAULT_EVENT_LOG_MAXLEN = 10_000
"""Approximate cap of one event log, unless configured."""


class Put(Enum):
    """What became of an item written to an inbox."""

    REFUSED = "refused"
    """The inbox is full: the item was not accepted."""
    NOT_OWNED = "not_owned"
    """The session does not exist or is not the `SessionOwner`'s user's: nothing was written."""
    OTHER_AGENT = "other_agent"
    """The session is the user's, but not of the `SessionOwner`'s agent: nothing was written."""
    QUEUED = "queued"
    """In the inbox (or a duplicate of an item it holds or held): the session needs a wake."""
    SIGNALLED = "signalled"
    """In the inbox, and the session's host was told over Redis: no other wake is needed."""

    @property
    def accepted(self) -> bool:
        """Whether the item is in the inbox."""
        return self is Put.QUEUED or self is Put.SIGNALLED


_OWNER_REFUSALS = {-1: Put.NOT_OWNED, -2: Put.OTHER_AGENT}


def _put(result: Any) -> Put:
    if not result:
        return Put.REFUSED
    code = int(result[1])
    return Put.SIGNALLED if code > 0 else _OWNER_REFUSALS.get(code, Put.QUEUED)


@dataclass(frozen=True)
class SessionOwner:
    """Whose session a delivery must reach: checked in the same atomic write as the item."""

    user_id: str
    agent_id: str


@dataclass(frozen=True)
class RunMarker:
    """The reply in progress: its id, the log cursor before it, the inbox items it consumes.

    `checkpoint` is the last event the saved state includes ("" = none after `cursor`) and
    `seq` the number of the run's last write (-1: none yet).
    """

    reply_id: str
    cursor: str
    item_ids: list[str]
    checkpoint: str = ""
    seq: int = -1


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def inbox_entries(raw: list[Any]) -> list[tuple[str, InboxItem | UnreadableItem]]:
    """The entries of an inbox's XRANGE reply (`RedisMessageBus.entries`)."""
    return [(_text(eid), read_item(fields.get(b"i", b""))) for eid, fields in raw]


def _raise_refusal(exc: ResponseError, key: str) -> None:
    """Raise the error a fenced script's refusal `exc` stands for (return if it is none)."""
    if "STALE_GENERATION" in str(exc):
        raise StaleGeneration(f"a newer server started; {key} refused a stale writer") from exc
    if "FENCED" in str(exc):
        raise SessionFenced(f"stale owner of {key}") from exc


class RedisMessageBus(RedisOwner):
    """Inboxes and event logs of sessions, keyed by session id.

    `RedisMessageBus(host=..., port=...)`, as the spec builds it, opens its own client and
    uses the default key prefix and caps; `create_app(message_bus=...)` reads its `url`.
    """

    def __init__(
        self,
        redis: Redis | None = None,
        keys: Keys | None = None,
        inbox_maxlen: int = DEFAULT_INBOX_MAXLEN,
        event_log_maxlen: int = DEFAULT_EVENT_LOG_MAXLEN,
        *,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: str | None = None,
        generation: int = UNFENCED,
    ) -> None:
        """Use `redis` (None: connect to `host:port/db`) under the layout of `keys`.

        Args:
            redis: An open client; None opens one from `host`, `port`, `db` and `password`.
            keys: The deployment's key layout (default: the default prefix).
            inbox_maxlen: Most unconsumed items one inbox holds.
            event_log_maxlen: Approximate cap of each session's event log.
            host: Redis host, when `redis` is None.
            port: Redis port, when `redis` is None.
            db: Redis database index, when `redis` is None.
            password: Redis password, when `redis` is None.
            generation: The cluster generation its accepts and owner writes carry.
        """
        super().__init__(redis, host, port, db, password)
        self.keys = keys or Keys(DEFAULT_KEY_PREFIX)
        self.generation = generation
        self.inbox_maxlen = inbox_maxlen
        self.event_log_maxlen = event_log_maxlen
        self._wake_channels = self.keys.host_wakes("")  # + a host's name: its channel
        self._deliver = self.redis.register_script(_DELIVER)
        self._append = self.redis.register_script(_APPEND)
        self._mark_running = self.redis.register_script(_MARK_RUNNING)
        self._clear_running = self.redis.register_script(_CLEAR_RUNNING)
        self._forget_if_empty = self.redis.register_script(_FORGET_IF_EMPTY)
        self._acquire = self.redis.register_script(_ACQUIRE)

    async def _fenced(self, script: object, keys: list[str], args: list[object]) -> Any:
        """Run a script that takes the generation last; raise ours for its refusals."""
        try:
            return await script(  # type: ignore[operator]
                keys=[*keys, self.keys.generation()], args=[*args, self.generation]
            )
        except ResponseError as exc:
            _raise_refusal(exc, keys[0])
            raise

    # inbox
    def inbox_full(self, session_id: str) -> InboxFull:
        """The error of a delivery the session's full inbox refused."""
        return InboxFull(
            f"inbox of session {session_id} is full ({self.inbox_maxlen} unconsumed items)"
        )

    def _delivery(
        self, session_id: str, item: InboxItem, owner: SessionOwner | None = None
    ) -> tuple[list[str], list[object]]:
        """The deliver script's keys and arguments for `item` (the generation's excluded)."""
        keys = [
            self.keys.inbox(session_id),
            self.keys.inbox_seen(session_id),
            self.keys.inboxes(),
            self.keys.background(session_id),
            self.keys.session_placement(),
            self.keys.session(session_id),
        ]
        args = [
            item.item_id,
            self.inbox_maxlen,
            item.model_dump_json(),
            session_id,
            self._wake_channels,
            owner.user_id if owner else "",
            owner.agent_id if owner else "",
        ]
        return keys, args

    async def put(self, session_id: str, item: InboxItem) -> str | None:
        """Append `item` to the session's inbox; return its stream id (None if a duplicate).

        Raises:
            InboxFull: the inbox holds `inbox_maxlen` unconsumed items.
            StaleGeneration: a newer server started on this Redis.
        """
        result = await self._fenced(self._deliver, *self._delivery(session_id, item))
        if not result:
            raise self.inbox_full(session_id)
        return _text(result[0]) or None

    async def put_many(
        self,
        deliveries: Sequence[tuple[str, InboxItem]],
        owners: Sequence[SessionOwner | None] = (),
    ) -> list[Put]:
        """`put` many items in one pipelined round trip; return what became of each.

        Duplicates are no-ops (queued), as with `put`; a full inbox refuses only its own item.
        A new item of a session live on a host that listens for wakes (`WakeListener`) is
        signalled to that host in the same write: it needs no other wake. `owners`, when given,
        holds one per delivery: an item with an owner is written only to a session of that
        user and agent.

        Raises:
            StaleGeneration: a newer server started on this Redis.
        """
        calls: list[ScriptCall] = []
        for index, (session_id, item) in enumerate(deliveries):
            owner = owners[index] if owners else None
            keys, args = self._delivery(session_id, item, owner)
            calls.append((self._deliver, [*keys, self.keys.generation()], [*args, self.generation]))
        results = await run_scripts(self.redis, calls)
        for result in results:
            if isinstance(result, ResponseError):
                _raise_refusal(result, "an inbox")
                raise result
        return [_put(result) for result in results]

    async def pending(self, session_id: str) -> list[tuple[str, InboxItem]]:
        """Return the unconsumed inbox items that can be read, oldest first.

        Entries that cannot be read are left out (`entries` shows them; the session's owner
        sets them aside).
        """
        return [
            (eid, item)
            for eid, item in await self.entries(session_id)
            if not isinstance(item, UnreadableItem)
        ]

    async def entries(self, session_id: str) -> list[tuple[str, InboxItem | UnreadableItem]]:
        """Return every unconsumed inbox entry, oldest first, readable or not."""
        return inbox_entries(await self.redis.xrange(self.keys.inbox(session_id), "-", "+"))

    async def inbox_depth(self, session_id: str) -> int:
        """Return how many items wait in the session's inbox (the reply in progress included)."""
        return int(await self.redis.xlen(self.keys.inbox(session_id)))

    async def sessions_with_inbox(self) -> list[str]:
        """Sessions whose inbox may hold items (the sweeper re-wakes them)."""
        return [_text(s) for s in await self.redis.smembers(self.keys.inboxes())]

    async def forget_inbox_if_empty(self, session_id: str) -> None:
        """Drop the session from the sweeper's set if its inbox is empty and no call is open."""
        keys = [self.keys.inbox(session_id), self.keys.inboxes(), self.keys.background(session_id)]
        await self._forget_if_empty(keys=keys, args=[session_id])

    # ownership
    async def acquire_lease(self, session_id: str) -> int:
        """Become the session's owner: return a fencing token newer than any before.

        Raises:
            StaleGeneration: a newer server started on this Redis.
        """
        lease = await self._fenced(self._acquire, [self.keys.lease(session_id)], [])
        return int(lease)

    async def activated(self, session_id: str) -> bool:
        """Whether the session has ever had an owner (a lease was taken)."""
        return bool(await self.redis.exists(self.keys.lease(session_id)))

    # event log
    async def append_event(self, session_id: str, event: AgentEvent, fence: int) -> str:
        """Append an event to the session's log; return its stream id (the SSE `id:`).

        Raises:
            SessionFenced: `fence` is not the session's current lease.
        """
        keys = [self.keys.lease(session_id), self.keys.events(session_id)]
        args = [fence, self.event_log_maxlen, event_to_json(event)]
        return _text(await self._fenced(self._append, keys, args))

    async def append_service_event(self, session_id: str, event: AgentEvent) -> str:
        """Append a service-level event (e.g. `CUSTOM session_updated`) from outside the owner."""
        eid = await self.redis.xadd(
            self.keys.events(session_id),
            {"e": event_to_json(event)},
            maxlen=self.event_log_maxlen,
            approximate=True,
        )
        return _text(eid)

    async def read_events(
        self, session_id: str, after: str, block_ms: int | None = None, count: int = 500
    ) -> list[tuple[str, str]]:
        """Return up to `count` (id, event JSON) pairs after `after` ("0" = from the start).

        With `block_ms`, wait up to that long for new events when there are none.
        """
        key = self.keys.events(session_id)
        if block_ms is None:
            start = f"({after}" if after != "0" else "-"
            entries = await self.redis.xrange(key, start, "+", count=count)
        else:
            reply = await self.redis.xread({key: after}, count=count, block=block_ms)
            entries = reply[0][1] if reply else []
        return [(_text(eid), _text(fields[b"e"])) for eid, fields in entries]

    # the reply in progress
    async def mark_running(
        self, session_id: str, reply_id: str, item_ids: list[str], fence: int
    ) -> None:
        """Record the reply about to start; call it before appending the reply's first event.

        The stored cursor is the log's newest id before the reply, so reading after it replays
        the whole reply; `item_ids` are the inbox items the reply consumes.
        """
        keys = [
            self.keys.lease(session_id),
            self.keys.events(session_id),
            self.keys.run(session_id),
        ]
        await self._fenced(self._mark_running, keys, [fence, reply_id, json.dumps(item_ids)])

    async def clear_running(self, session_id: str, fence: int) -> None:
        """Forget the reply in progress (after its last event is appended)."""
        keys = [self.keys.lease(session_id), self.keys.run(session_id)]
        await self._fenced(self._clear_running, keys, [fence])

    async def running(self, session_id: str) -> RunMarker | None:
        """Return the reply in progress, or None when idle."""
        raw = await self.redis.hgetall(self.keys.run(session_id))
        if not raw:
            return None
        fields = {_text(k): _text(v) for k, v in raw.items()}
        return RunMarker(
            fields["reply_id"],
            fields["cursor"],
            json.loads(fields["items"]),
            fields.get("checkpoint", ""),
            int(fields.get("seq", -1)),
        )

    async def cursor_snapshot(self, session_id: str) -> tuple[bool, str]:
        """Return (is_running, cursor): reading the log after `cursor` misses nothing.

        While a reply runs the cursor sits just before its first event; otherwise it is the
        newest event. Both are read in one transaction, so a reply that starts concurrently
        is either fully after the cursor or reported as running.
        """
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(self.keys.run(session_id), "cursor")
            pipe.xrevrange(self.keys.events(session_id), "+", "-", count=1)
            run_cursor, newest = await pipe.execute()
        if run_cursor is not None:
            return True, _text(run_cursor)
        return False, _text(newest[0][0]) if newest else "0"
