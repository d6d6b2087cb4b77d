"""`DeadLetters`: inbox items a session cannot read, or keeps failing on, are set aside.

Without this, one poison item wedges its session for good: the inbox is drained oldest first,
so every later input waits behind an item that fails every time. Such an item is moved to the
session's dead-letter stream (`Keys.dead_letters`, kept for inspection) and answered by a
reply that ends with a readable error, so the user sees what happened; the session then goes
on with the next input.

* An entry that does not parse is set aside at once (no retry can make it readable).
* A readable item is set aside once `max_attempts` drains that took it failed. Failures caused
  by Redis being unreachable or by a newer owner are not the item's fault and are not counted.
"""

from __future__ import annotations

import logging

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from actors.bus.items import InboxItem, UnreadableItem
from actors.bus.message_bus import RedisMessageBus, inbox_entries
from actors.errors import SessionFenced, StorageUnavailable
from actors.sessions.reply_writer import ReplyWriter
from actors.storage.redis_storage import RedisStorage
from agent_core._ids import new_id
from agent_core.event import ReplyEndEvent, ReplyStartEvent
from agent_core.message import AssistantMsg, ErrorInfo, ErrorType, ReplyFinishedReason
from agent_core.state import AgentState

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
"""Failed drains of an inbox item before it is set aside."""
DEAD_LETTER_MAXLEN = 1_000
"""Approximate cap of a session's dead-letter stream."""
_ATTEMPTS_TTL = 86_400
"""Seconds failure counts are kept after the last failure (consumed items leave stale counts)."""
_NOT_THE_ITEMS_FAULT = (
    SessionFenced,
    StorageUnavailable,
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
)


class DeadLetters:
    """Screens one session's inbox for poison items (module docstring)."""

    def __init__(
        self,
        storage: RedisStorage,
        bus: RedisMessageBus,
        session_id: str,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self._storage = storage
        self._bus = bus
        self._session_id = session_id
        self.max_attempts = max_attempts

    async def screen(self, state: AgentState, writer: ReplyWriter) -> list[tuple[str, InboxItem]]:
        """Return the pending items, oldest first, after setting aside the poison ones.

        The items set aside are answered by one error reply, written to `state` (the
        session's owner's) by the owner's `writer`.

        Raises:
            SessionFenced: a newer owner holds the session.
        """
        keys = self._bus.keys
        async with self._bus.redis.pipeline(transaction=False) as pipe:
            pipe.xrange(keys.inbox(self._session_id), "-", "+")
            pipe.hgetall(keys.attempts(self._session_id))
            raw, counts = await pipe.execute()
        entries = inbox_entries(raw)
        if not entries:
            return []
        failed = {_text(k): int(v) for k, v in counts.items()}
        keep: list[tuple[str, InboxItem]] = []
        aside: list[tuple[str, str, str]] = []
        for stream_id, item in entries:
            if isinstance(item, UnreadableItem):
                aside.append((stream_id, item.raw, f"it cannot be read ({item.reason})"))
            elif failed.get(stream_id, 0) >= self.max_attempts:
                reason = f"processing it failed {failed[stream_id]} times"
                aside.append((stream_id, item.model_dump_json(), reason))
            else:
                keep.append((stream_id, item))
        if aside:
            await self._set_aside(state, writer, aside)
        return keep

    async def count_failure(self, stream_ids: list[str], exc: BaseException) -> None:
        """Count a failed drain against the items it took (never raises).

        Failures that are not the items' fault (Redis unreachable, a newer owner) are not
        counted.
        """
        if not stream_ids or isinstance(exc, _NOT_THE_ITEMS_FAULT):
            return
        key = self._bus.keys.attempts(self._session_id)
        try:
            async with self._bus.redis.pipeline(transaction=True) as pipe:
                for stream_id in stream_ids:
                    pipe.hincrby(key, stream_id, 1)
                pipe.expire(key, _ATTEMPTS_TTL)
                await pipe.execute()
        except Exception:
            log.warning("session %s: counting a failed drain failed", self._session_id)

    async def _set_aside(
        self, state: AgentState, writer: ReplyWriter, aside: list[tuple[str, str, str]]
    ) -> None:
        sid = self._session_id
        keys = self._bus.keys
        ids = [stream_id for stream_id, _, _ in aside]
        async with self._bus.redis.pipeline(transaction=True) as pipe:
            for stream_id, raw, reason in aside:
                fields = {"id": stream_id, "reason": reason, "i": raw}
                pipe.xadd(keys.dead_letters(sid), fields, maxlen=DEAD_LETTER_MAXLEN)
            await pipe.execute()
        log.warning("session %s: inbox items %s set aside", sid, ids)
        name = await self._agent_name()
        reply = AssistantMsg(name, [], id=new_id())
        start = ReplyStartEvent(reply_id=reply.id, session_id=sid, name=name)
        end = ReplyEndEvent(
            reply_id=reply.id,
            session_id=sid,
            finished_reason=ReplyFinishedReason.ERROR,
            error=ErrorInfo(type=ErrorType.INVALID_REQUEST, message=_message(aside)),
        )
        # The writer deletes the items in the same commit that begins the reply.
        writer.expect_inputs([], ids)
        await writer.write(start, state)
        reply.append_event(end)
        state.context.append(reply)
        await writer.write(end, state)
        await self._bus.redis.hdel(keys.attempts(sid), *ids)

    async def _agent_name(self) -> str:
        try:
            session = await self._storage.get_session_any_user(self._session_id)
            agent = await self._storage.get_agent(session.user_id, session.agent_id)
        except _NOT_THE_ITEMS_FAULT:
            raise
        except Exception:  # the records may be what fails: the error reply must still go out
            return "assistant"
        return agent.data.name


def _message(aside: list[tuple[str, str, str]]) -> str:
    """What the user reads: which inputs were set aside and why."""
    reasons = "; ".join(dict.fromkeys(reason for _, _, reason in aside))
    count = "An input" if len(aside) == 1 else f"{len(aside)} inputs"
    return (
        f"{count} to this session could not be handled and "
        f"{'was' if len(aside) == 1 else 'were'} set aside: {reasons}. "
        "The session goes on with the next input."
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
