"""`RedisMessageBus`: per-session inboxes (durable mailboxes) and event logs on Redis Streams."""

from __future__ import annotations

from pydantic import TypeAdapter
from redis.asyncio import Redis

from actors.errors import InboxFull
from actors.items import InboxItem
from actors.keys import Keys
from agent_core.event import AgentEvent, event_to_json

_ITEM = TypeAdapter(InboxItem)

# Atomic accept: duplicate deliveries are no-ops, a full inbox refuses, otherwise XADD.
_DELIVER = """
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return '' end
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[2]) then return false end
local id = redis.call('XADD', KEYS[1], '*', 'i', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
return id
"""


class RedisMessageBus:
    """Inboxes and event logs of sessions, keyed by session id."""

    def __init__(self, redis: Redis, keys: Keys, inbox_maxlen: int, event_log_maxlen: int) -> None:
        self.redis = redis
        self.keys = keys
        self.inbox_maxlen = inbox_maxlen
        self.event_log_maxlen = event_log_maxlen
        self._deliver = redis.register_script(_DELIVER)

    async def put(self, session_id: str, item: InboxItem) -> str | None:
        """Append `item` to the session's inbox; return its stream id (None if a duplicate).

        Raises:
            InboxFull: the inbox holds `inbox_maxlen` unconsumed items.
        """
        keys = [self.keys.inbox(session_id), self.keys.inbox_seen(session_id)]
        args = [item.item_id, self.inbox_maxlen, item.model_dump_json()]
        result = await self._deliver(keys=keys, args=args)
        if result is None:
            raise InboxFull(
                f"inbox of session {session_id} is full ({self.inbox_maxlen} unconsumed items)"
            )
        text = result.decode() if isinstance(result, bytes) else str(result)
        return text or None

    async def pending(self, session_id: str) -> list[tuple[str, InboxItem]]:
        """Return the unconsumed inbox items, oldest first."""
        entries = await self.redis.xrange(self.keys.inbox(session_id), "-", "+")
        return [(eid.decode(), _ITEM.validate_json(fields[b"i"])) for eid, fields in entries]

    async def append_event(self, session_id: str, event: AgentEvent) -> str:
        """Append an event to the session's log; return its stream id (the SSE `id:`)."""
        eid = await self.redis.xadd(
            self.keys.events(session_id),
            {"e": event_to_json(event)},
            maxlen=self.event_log_maxlen,
            approximate=True,
        )
        return eid.decode() if isinstance(eid, bytes) else str(eid)

    async def read_events(
        self, session_id: str, after: str, block_ms: int | None = None, count: int = 500
    ) -> list[tuple[str, str]]:
        """Return up to `count` (id, event JSON) pairs after `after` ("0" = from the start).

        With `block_ms`, wait up to that long for new events when there are none.
        """
        key = self.keys.events(session_id)
        if block_ms is None:
            entries = await self.redis.xrange(
                key, f"({after}" if after != "0" else "-", "+", count=count
            )
        else:
            reply = await self.redis.xread({key: after}, count=count, block=block_ms)
            entries = reply[0][1] if reply else []
        return [(eid.decode(), fields[b"e"].decode()) for eid, fields in entries]

    async def last_event_id(self, session_id: str) -> str:
        """Return the id of the newest event ("0" for an empty log)."""
        entries = await self.redis.xrevrange(self.keys.events(session_id), "+", "-", count=1)
        return entries[0][0].decode() if entries else "0"

    async def mark_running(self, session_id: str, reply_id: str) -> None:
        """Record the reply about to start; call it before appending the reply's first event.

        The stored cursor is the log's newest id *before* the reply, so reading after it replays
        the whole reply.
        """
        cursor = await self.last_event_id(session_id)
        await self.redis.hset(
            self.keys.run(session_id), mapping={"reply_id": reply_id, "cursor": cursor}
        )

    async def clear_running(self, session_id: str) -> None:
        """Forget the reply in progress (after its last event is appended)."""
        await self.redis.delete(self.keys.run(session_id))

    async def running_reply(self, session_id: str) -> str | None:
        """Return the id of the reply in progress, or None when idle."""
        raw = await self.redis.hget(self.keys.run(session_id), "reply_id")
        return raw.decode() if raw else None

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
            return True, run_cursor.decode()
        return False, newest[0][0].decode() if newest else "0"
