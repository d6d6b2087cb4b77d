"""The one atomic write of a session's owner: state, transcript, inbox, event log, run marker.

A Lua script does it all or nothing, after checking the owner's fencing token and its cluster
generation (`actors.bus.generation`). A write that
belongs to a reply carries a sequence number stored in the run marker, so a write retried after
a lost connection (it may have been applied) is applied once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from actors.bus.generation import UNFENCED, guard
from actors.bus.keys import Keys
from actors.errors import SessionFenced, StaleGeneration, StateDiverged
from agent_core.message import Msg

# KEYS: lease, events, run, state (older layout), messages, message index, inbox, generation,
#       state head, state context
# ARGV: fence, op, reply id, seq, log cap, state head JSON ('' = keep), [[msg id, msg JSON]...],
#       [inbox ids], [event JSON...], [item ids the reply consumed] (begin), generation,
#       state mode ('' = keep, 'rewrite', 'update'), version the update applies to, new version,
#       n, n pairs (position, context Msg JSON) replaced in place, context Msg JSON appended...
_COMMIT = (
    guard(8, 11)
    + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end
local op, reply_id, seq = ARGV[2], ARGV[3], tonumber(ARGV[4])
if op ~= 'turn' then
  local running = redis.call('HGET', KEYS[3], 'reply_id')
  if op == 'begin' then
    if running == reply_id then return {'dup', redis.call('HGET', KEYS[3], 'last') or ''} end
    if running then return redis.error_reply('RUNNING ' .. running) end
  else
    if running ~= reply_id then return {'dup', ''} end
    if tonumber(redis.call('HGET', KEYS[3], 'seq') or '-1') >= seq then
      return {'dup', redis.call('HGET', KEYS[3], 'last') or ''}
    end
  end
end
local mode = ARGV[12] or ''
if mode == 'update' and redis.call('HGET', KEYS[9], 'version') ~= ARGV[13] then
  return {'diverged', ''}
end
if op == 'begin' then
  local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  local cursor = '0'
  if newest[1] then cursor = newest[1][1] end
  redis.call('HSET', KEYS[3], 'reply_id', reply_id, 'cursor', cursor, 'items', ARGV[10])
end
if mode ~= '' then
  if mode == 'rewrite' then redis.call('DEL', KEYS[4], KEYS[10]) end
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[9], 'state', ARGV[6]) end
  redis.call('HSET', KEYS[9], 'version', ARGV[14])
  local appended = 16 + 2 * tonumber(ARGV[15])
  for i = 16, appended - 1, 2 do redis.call('LSET', KEYS[10], ARGV[i], ARGV[i + 1]) end
  for i = appended, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[10], unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
end
for _, m in ipairs(cjson.decode(ARGV[7])) do
  local position = redis.call('HGET', KEYS[6], m[1])
  if position then
    redis.call('LSET', KEYS[5], tonumber(position), m[2])
  else
    local length = redis.call('RPUSH', KEYS[5], m[2])
    redis.call('HSET', KEYS[6], m[1], length - 1)
  end
end
local ids = cjson.decode(ARGV[8])
if #ids > 0 then redis.call('XDEL', KEYS[7], unpack(ids)) end
local last = ''
for _, e in ipairs(cjson.decode(ARGV[9])) do
  last = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'e', e)
end
if op == 'close' then
  redis.call('DEL', KEYS[3])
elseif op ~= 'turn' then
  redis.call('HSET', KEYS[3], 'seq', seq, 'last', last)
  if op ~= 'append' then redis.call('HSET', KEYS[3], 'checkpoint', last) end
end
return {'ok', last}
"""
)


class Op(StrEnum):
    """What a commit does to the run marker."""

    TURN = "turn"
    """No reply involved: state, transcript and inbox only."""
    BEGIN = "begin"
    """Set the marker of a new run (fails if another reply runs)."""
    APPEND = "append"
    """Events of the running reply."""
    CHECKPOINT = "checkpoint"
    """Events and the state they lead to; the marker remembers the last event as checkpoint."""
    CLOSE = "close"
    """The run ends (reply ended or parked): the marker is deleted."""


@dataclass
class StateWrite:
    """A change of the stored AgentState: its head (the state without `context`) and context.

    A rewrite replaces the stored state with `head` and the `appended` messages. An update
    applies to the stored version `base` only (else the commit raises `StateDiverged`): it sets
    `head` (unless empty), replaces messages in place and appends others.
    """

    version: str
    """The version the stored state has after this write."""
    head: str = ""
    rewrite: bool = True
    base: str = ""
    replaced: list[tuple[int, str]] = field(default_factory=list)
    """(position, Msg JSON) pairs; a negative position counts from the end of the context."""
    appended: list[str] = field(default_factory=list)


@dataclass
class Commit:
    """One atomic write. Empty fields leave their part untouched."""

    op: Op
    reply_id: str = ""
    seq: int = 0
    state: StateWrite | None = None
    messages: list[Msg] = field(default_factory=list)
    inbox_ids: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)


class Committer:
    """Runs `Commit`s of one deployment's sessions."""

    def __init__(
        self, redis: Redis, keys: Keys, event_log_maxlen: int, generation: int = UNFENCED
    ) -> None:
        self._keys = keys
        self._maxlen = event_log_maxlen
        self._generation = generation
        self._script = redis.register_script(_COMMIT)

    async def commit(self, session_id: str, fence: int, commit: Commit) -> tuple[bool, str]:
        """Apply `commit`; return (applied, id of the last event appended or found).

        `applied` is False when the write was applied before (a retry) or its run has closed.

        Raises:
            StateDiverged: `commit.state` updates a version that is not the stored one (nothing
                was written).
            SessionFenced: `fence` is not the session's current lease.
            StaleGeneration: a newer server started on this Redis.
        """
        keys = self._keys
        redis_keys = [
            keys.lease(session_id),
            keys.events(session_id),
            keys.run(session_id),
            keys.state(session_id),
            keys.messages(session_id),
            keys.message_index(session_id),
            keys.inbox(session_id),
            keys.generation(),
            keys.state_head(session_id),
            keys.state_context(session_id),
        ]
        args: list[str | int] = [
            fence,
            commit.op.value,
            commit.reply_id,
            commit.seq,
            self._maxlen,
            "" if commit.state is None else commit.state.head,
            json.dumps([[m.id, m.model_dump_json()] for m in commit.messages]),
            json.dumps(commit.inbox_ids),
            json.dumps(commit.events),
            json.dumps(commit.items),
            self._generation,
        ]
        if commit.state is not None:
            args += _state_args(commit.state)
        try:
            status, last = await self._script(keys=redis_keys, args=args)
        except ResponseError as exc:
            if "STALE_GENERATION" in str(exc):
                raise StaleGeneration(f"stale server writing session {session_id}") from exc
            if "FENCED" in str(exc):
                raise SessionFenced(f"stale owner of session {session_id}") from exc
            raise
        if _text(status) == "diverged":
            raise StateDiverged(f"the stored state of session {session_id} is not the writer's")
        return _text(status) == "ok", _text(last)


def _state_args(write: StateWrite) -> list[str | int]:
    mode = "rewrite" if write.rewrite else "update"
    args: list[str | int] = [mode, write.base, write.version, len(write.replaced)]
    for position, msg in write.replaced:
        args += [position, msg]
    return args + write.appended


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
