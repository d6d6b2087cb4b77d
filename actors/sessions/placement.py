"""`HostPlacement`: which session host actor runs which session, kept in Redis.

Every process that wakes sessions (API replicas, session hosts, workspace and scheduler actors)
reads and writes the same records, so a session has one host cluster-wide:

- the registry of host actors and the node each is pinned to;
- per host, the set of sessions live on it (its load);
- per session, the host running it, or `dedicated` for a session whose agent asked for a
  process of its own.

Moves are compare-and-set scripts, so two processes re-placing the same session agree. A
session leaves its host's set when the host closes it (idle) or the session is deleted; its
next wake places it afresh on the least-loaded host.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from actors.bus.keys import Keys
from actors.bus.script_batch import run_scripts

DEDICATED = "dedicated"
"""The placement of a session that runs in an actor of its own."""

# The least-loaded node's least-loaded host under the cap, unless the placement changed since
# it was read. KEYS: placement hash, the current host's set (or the hash again), each
# candidate host's set. ARGV: session, expected current host ('' = none), cap, then a
# (host, node) pair per candidate.
_PLACE = """
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return {2, current} end
local cap = tonumber(ARGV[3])
local n = (#ARGV - 3) / 2
local loads, totals = {}, {}
for i = 1, n do
  local node = ARGV[2 * i + 3]
  loads[i] = redis.call('SCARD', KEYS[i + 2])
  totals[node] = (totals[node] or 0) + loads[i]
end
local best = 0
for i = 1, n do
  if loads[i] < cap then
    local node = ARGV[2 * i + 3]
    if best == 0 then
      best = i
    else
      local held = totals[ARGV[2 * best + 3]]
      if totals[node] < held or (totals[node] == held and loads[i] < loads[best]) then
        best = i
      end
    end
  end
end
if best == 0 then return {0, ''} end
local host = ARGV[2 * best + 2]
if current ~= '' and current ~= host then redis.call('SREM', KEYS[2], ARGV[1]) end
redis.call('SADD', KEYS[best + 2], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], host)
return {1, host}
"""

# A host activating a session takes it unless another host holds it; returns the holder.
_CLAIM = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and current ~= ARGV[2] then return current end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return ARGV[2]
"""

_RELEASE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return redis.call('SREM', KEYS[2], ARGV[1])
"""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True)
class Placed:
    """The outcome of `HostPlacement.place`."""

    host: str | None
    """The host now running the session; None when every candidate is at its cap."""
    raced: bool = False
    """Another process changed the placement meanwhile (`host` is its choice)."""


class HostPlacement:
    """Session-to-host records of one deployment (see the module docstring)."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._place = redis.register_script(_PLACE)
        self._claim = redis.register_script(_CLAIM)
        self._release = redis.register_script(_RELEASE)

    # the registry
    async def register(self, host: str, node_id: str) -> None:
        """Record a host actor and the node it is pinned to."""
        await self._redis.hset(self._keys.session_hosts(), host, node_id)

    async def hosts(self) -> dict[str, str]:
        """Every registered host and its node."""
        raw = await self._redis.hgetall(self._keys.session_hosts())
        return {_text(k): _text(v) for k, v in raw.items()}

    async def loads(self, hosts: list[str]) -> dict[str, int]:
        """How many sessions each of `hosts` runs."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for host in hosts:
                pipe.scard(self._keys.host_sessions(host))
            counts = await pipe.execute()
        return dict(zip(hosts, (int(c) for c in counts), strict=True))

    async def sessions_of(self, host: str) -> list[str]:
        """The sessions a host runs."""
        return [_text(s) for s in await self._redis.smembers(self._keys.host_sessions(host))]

    async def unregister(self, host: str) -> list[str]:
        """Forget a host (its node is gone) and the placements of its sessions; return those."""
        sessions = await self.release_all(host)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hdel(self._keys.session_hosts(), host)
            pipe.delete(self._keys.host_sessions(host))
            await pipe.execute()
        return sessions

    # sessions
    async def current(self, session_id: str) -> str | None:
        """The host running the session (or `DEDICATED`), if placed."""
        raw = await self._redis.hget(self._keys.session_placement(), session_id)
        return None if raw is None else _text(raw)

    async def current_many(self, session_ids: list[str]) -> list[str | None]:
        """`current` of each session, in one round trip."""
        if not session_ids:
            return []
        raw = await self._redis.hmget(self._keys.session_placement(), session_ids)
        return [None if value is None else _text(value) for value in raw]

    async def dedicate(self, session_id: str) -> None:
        """Mark the session as running in an actor of its own."""
        await self._redis.hset(self._keys.session_placement(), session_id, DEDICATED)

    async def place(
        self, session_id: str, expected: str | None, candidates: dict[str, str], cap: int
    ) -> Placed:
        """Move the session from `expected` (None: unplaced) onto one of `candidates`.

        `candidates` maps hosts to their nodes. The least-loaded node wins, and on it the
        least-loaded host; hosts at `cap` sessions are skipped. Nothing changes when the
        placement is no longer `expected` (another process placed the session first): the
        result says so.
        """
        placement = self._keys.session_placement()
        current_set = self._keys.host_sessions(expected) if expected else placement
        keys = [placement, current_set, *(self._keys.host_sessions(h) for h in candidates)]
        pairs = [part for host, node in candidates.items() for part in (host, node)]
        code, host = await self._place(keys=keys, args=[session_id, expected or "", cap, *pairs])
        if int(code) == 2:
            return Placed(_text(host) or None, raced=True)
        return Placed(_text(host) if int(code) == 1 else None)

    async def claim(self, session_id: str, host: str) -> str:
        """Take the session for `host` unless another host holds it; return the holder."""
        keys = [self._keys.session_placement(), self._keys.host_sessions(host)]
        return _text(await self._claim(keys=keys, args=[session_id, host]))

    async def release(self, session_id: str, host: str) -> None:
        """`host` no longer runs the session (closed or deleted)."""
        keys = [self._keys.session_placement(), self._keys.host_sessions(host)]
        await self._release(keys=keys, args=[session_id, host])

    async def release_all(self, host: str) -> list[str]:
        """Release every session `host` held (it restarted empty, or its node is gone)."""
        sessions = await self.sessions_of(host)
        keys = [self._keys.session_placement(), self._keys.host_sessions(host)]
        for result in await run_scripts(
            self._redis, [(self._release, keys, [session_id, host]) for session_id in sessions]
        ):
            if isinstance(result, ResponseError):
                raise result
        return sessions

    async def forget(self, session_id: str) -> None:
        """Drop the session's placement (it is deleted), wherever it ran."""
        host = await self.current(session_id)
        if host is not None and host != DEDICATED:
            await self.release(session_id, host)
        await self._redis.hdel(self._keys.session_placement(), session_id)
