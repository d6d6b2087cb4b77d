"""The cluster generation: which server's processes may accept and write.

A server claims a generation when it deploys: a number newer than any before, kept in Redis
with the Ray cluster that claimed it (a second deployment on the same Ray cluster gets the same
one). Every inbox accept and every write of a session's owner carries the generation of the
runtime that makes it, and Redis refuses one older than the current: after a whole-server crash
and restart, a process of the old server that still runs (a Ray worker outliving its raylet for
a moment, a zombie replica) can neither accept a turn nor write to a session.

Generation 0 is unfenced: runtimes built without a deployment (tests, the library's
`RedisMessageBus(host=..., port=...)`) write as before.
"""

from __future__ import annotations

import redis

from actors.bus.keys import Keys

UNFENCED = 0
"""The generation of a runtime that no deployment claimed: its writes are not checked."""

# KEYS: generation hash; ARGV: cluster id. Same cluster: its generation; else the next one.
_CLAIM = """
if redis.call('HGET', KEYS[1], 'cluster') == ARGV[1] then
  return tonumber(redis.call('HGET', KEYS[1], 'generation'))
end
local generation = redis.call('HINCRBY', KEYS[1], 'generation', 1)
redis.call('HSET', KEYS[1], 'cluster', ARGV[1])
return generation
"""


def guard(key: int, arg: int) -> str:
    """Lua that refuses the script when ARGV[`arg`] is a stale generation (KEYS[`key`] the hash).

    The error reply reads `STALE_GENERATION`.
    """
    return (
        f"if ARGV[{arg}] ~= '0' and "
        f"redis.call('HGET', KEYS[{key}], 'generation') ~= ARGV[{arg}] then "
        "return redis.error_reply('STALE_GENERATION') end\n"
    )


def claim_generation(redis_url: str, keys: Keys, cluster_id: str) -> int:
    """Return the generation of the Ray cluster `cluster_id`, claiming a new one if it has none.

    A new claim makes every earlier generation stale.
    """
    client = redis.Redis.from_url(redis_url)
    try:
        return int(client.eval(_CLAIM, 1, keys.generation(), cluster_id))
    finally:
        client.close()
