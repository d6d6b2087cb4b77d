"""Cost of one reply checkpoint (`ReplyWriter`'s commit) against the context's length.

A session's owner commits the state at every checkpoint of a reply (each model call's and tool
result's end). This bench writes replies over a context of N earlier messages (about 1 KB of
JSON each) against an embedded redis-server, and times each checkpoint write: the owner's CPU
and wall time, and the redis-server's CPU (from `INFO cpu` around the write). Every step of a
reply streams a short text (one APPEND commit, not timed) before its checkpoint. `load` is the
wall time of loading the state afterwards (a session's activation).

Run: python bench/commit.py [--lengths 10 100 1000] [--replies 5] [--steps 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.local.embedded_redis import EmbeddedRedis
from actors.sessions.reply_writer import ReplyWriter
from actors.storage.redis_storage import RedisStorage
from agent_core._ids import new_id
from agent_core.event import (
    AgentEvent,
    ModelCallEndEvent,
    ModelCallStartEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
)
from agent_core.message import AssistantMsg, Msg, ReplyFinishedReason, UserMsg
from agent_core.state import AgentState, ReplyContext

SID = "bench"
WORDS = "the quick brown fox jumps over the lazy dog while the model thinks about it "


def context(length: int) -> list[Msg]:
    """`length` alternating user and assistant messages of about 1 KB of JSON each."""
    return [
        UserMsg("user", WORDS * 10) if i % 2 == 0 else AssistantMsg("bot", WORDS * 10)
        for i in range(length)
    ]


async def server_cpu(redis: Redis) -> float:
    info = await redis.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def reply(
    writer: ReplyWriter, redis: Redis, state: AgentState, steps: int, samples: list[list[float]]
) -> None:
    """One reply of `steps` model calls; appends (owner CPU, wall, server CPU) per checkpoint."""
    rid = new_id()
    start = ReplyStartEvent(reply_id=rid, session_id=SID, name="bot")
    msg = AssistantMsg("bot", [], id=rid, created_at=start.created_at)
    state.context.append(UserMsg("user", "go on"))
    state.context.append(msg)
    state.reply_context = ReplyContext(reply_id=rid)
    await writer.write(start, state)
    for step in range(steps):
        block = f"b{step}"
        stream: list[AgentEvent] = [
            ModelCallStartEvent(reply_id=rid, model_name="m"),
            TextBlockStartEvent(reply_id=rid, block_id=block),
            TextBlockDeltaEvent(reply_id=rid, block_id=block, delta=WORDS * 3),
            TextBlockEndEvent(reply_id=rid, block_id=block),
        ]
        for event in stream:
            msg.append_event(event)
            await writer.write(event, state)
        end = ModelCallEndEvent(reply_id=rid, input_tokens=1, output_tokens=1)
        msg.append_event(end)
        state.reply_context.cur_iter += 1
        server = await server_cpu(redis)
        cpu, wall = time.process_time(), time.perf_counter()
        await writer.write(end, state)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        samples.append([cpu, wall, await server_cpu(redis) - server])
    done = ReplyEndEvent(
        reply_id=rid, session_id=SID, finished_reason=ReplyFinishedReason.COMPLETED
    )
    msg.append_event(done)
    state.reply_context = ReplyContext()
    await writer.write(done, state)


async def timed_load(storage: RedisStorage, state: AgentState) -> float:
    """Wall time of loading the state (checked equal to the one written)."""
    wall = time.perf_counter()
    loaded = await storage.load_state(SID)
    wall = time.perf_counter() - wall
    assert loaded == state
    return wall


async def run(lengths: list[int], replies: int, steps: int) -> None:
    with EmbeddedRedis(persistence=False) as server:
        redis = connect(server.url)
        keys = Keys("bench")
        storage, bus = RedisStorage(redis, keys), RedisMessageBus(redis, keys, 10, 1000)
        print(f"checkpoint commit, median over {replies} replies x {steps} steps (µs)")
        print(f"{'context':>8} {'owner CPU':>10} {'owner wall':>11} {'redis CPU':>10} {'load':>8}")
        for length in lengths:
            await redis.flushall()
            state = AgentState(session_id=SID, context=context(length))
            writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
            samples: list[list[float]] = []
            for _ in range(replies):
                await reply(writer, redis, state, steps, samples)
            cpu, wall, redis_cpu = (statistics.median(s) * 1e6 for s in zip(*samples, strict=True))
            load = statistics.median([await timed_load(storage, state) for _ in range(15)]) * 1e6
            print(f"{length:>8} {cpu:>10.0f} {wall:>11.0f} {redis_cpu:>10.0f} {load:>8.0f}")
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--replies", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(run(args.lengths, args.replies, args.steps))


if __name__ == "__main__":
    main()
