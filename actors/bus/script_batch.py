"""`run_scripts`: many Lua script calls in one pipelined round trip.

redis-py's pipeline asks Redis `SCRIPT EXISTS` for its scripts before every execution: a
second round trip on each batch. Here the calls go out as plain `EVALSHA`s; a call refused
with `NOSCRIPT` (Redis restarted or flushed its script cache) did not run, so it is sent
again, in order, after the script is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

ScriptCall = tuple[AsyncScript, Sequence[Any], Sequence[Any]]
"""A script with its keys and arguments."""


async def run_scripts(redis: Redis, calls: Sequence[ScriptCall]) -> list[Any]:
    """Run `calls` in one pipelined round trip (two if a script had to be loaded).

    Returns each call's result in order; an error reply of a call is returned in its place
    (as `redis.exceptions.ResponseError`), never raised.
    """
    results: list[Any] = [None] * len(calls)
    pending = list(range(len(calls)))
    for attempt in range(2):
        async with redis.pipeline(transaction=False) as pipe:
            for index in pending:
                script, keys, args = calls[index]
                pipe.evalsha(script.sha, len(keys), *keys, *args)
            replies = await pipe.execute(raise_on_error=False)
        missing = []
        for index, reply in zip(pending, replies, strict=True):
            if isinstance(reply, NoScriptError) and attempt == 0:
                missing.append(index)
            else:
                results[index] = reply
        if not missing:
            break
        for script in {id(calls[i][0]): calls[i][0] for i in missing}.values():
            script.sha = await redis.script_load(script.script)
        pending = missing
    return results
