"""The reply writer: inputs leave the inbox only with their commit, writes apply once, outages
are ridden out, and a cut reply is rebuilt as clients saw it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.commit import Commit, Committer, Op
from actors.bus.items import ChatItem, HintItem
from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.errors import SessionFenced
from actors.local.embedded_redis import EmbeddedRedis
from actors.sessions.reply_writer import ReplyWriter
from actors.storage.redis_storage import RedisStorage
from agent_core.event import (
    HintBlockEvent,
    ModelCallEndEvent,
    ModelCallStartEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockDeltaEvent,
    TextBlockStartEvent,
    parse_event,
)
from agent_core.message import AssistantMsg, Msg, ReplyFinishedReason, UserMsg
from agent_core.state import AgentState, ReplyContext

pytestmark = [pytest.mark.redis]

SID = "s1"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = connect(redis_url)
    yield client
    await client.aclose()


def parts(redis: Redis) -> tuple[RedisStorage, RedisMessageBus]:
    keys = Keys("rw")
    return RedisStorage(redis, keys), RedisMessageBus(redis, keys, 10, 1000)


async def event_names(bus: RedisMessageBus) -> list[str]:
    return [parse_event(e).type for _, e in await bus.read_events(SID, "0")]


def start_reply(state: AgentState, inputs: list[Msg]) -> tuple[ReplyStartEvent, Msg]:
    """What the agent does as a reply starts: observe, add the reply Msg, emit REPLY_START."""
    state.context.extend(inputs)
    start = ReplyStartEvent(reply_id="r1", session_id=SID, name="bot")
    msg = AssistantMsg("bot", [], id="r1", created_at=start.created_at)
    state.context.append(msg)
    state.reply_context = ReplyContext(reply_id="r1")
    return start, msg


async def test_inputs_leave_the_inbox_in_the_commit_that_saves_them(redis: Redis) -> None:
    storage, bus = parts(redis)
    item = ChatItem(input=[UserMsg("user", "hi", id="u1")])
    stream_id = await bus.put(SID, item)
    assert stream_id is not None
    writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    state = AgentState(session_id=SID)
    writer.expect_inputs(item.input or [], [stream_id])  # type: ignore[arg-type]
    start, _ = start_reply(state, item.input)  # type: ignore[arg-type]

    await writer.write(start, state)

    assert await bus.pending(SID) == []
    saved = await storage.load_state(SID)
    assert [m.id for m in saved.context] == ["u1", "r1"]
    messages, _ = await storage.list_messages(SID, None, 10)
    assert [m.id for m in messages] == ["u1"]
    marker = await bus.running(SID)
    assert marker is not None
    assert (marker.reply_id, marker.item_ids) == ("r1", [stream_id])


async def test_a_reply_opens_with_its_hints_in_the_commit_that_begins_it(redis: Redis) -> None:
    storage, bus = parts(redis)
    chat = ChatItem(input=[UserMsg("user", "hi", id="u1")])
    hint = HintItem(hint="the build is green")
    chat_id, hint_id = await bus.put(SID, chat), await bus.put(SID, hint)
    assert chat_id is not None
    assert hint_id is not None
    writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    state = AgentState(session_id=SID)
    writer.expect_inputs(chat.input or [], [chat_id])  # type: ignore[arg-type]
    start, msg = start_reply(state, chat.input)  # type: ignore[arg-type]
    injected = HintBlockEvent(reply_id="r1", block_id=hint.item_id, hint=hint.hint)
    msg.append_event(injected)
    writer.acknowledge([hint_id])

    await writer.write_many([start, injected], state)

    assert await event_names(bus) == ["REPLY_START", "HINT_BLOCK"]
    assert await bus.pending(SID) == []
    marker = await bus.running(SID)
    assert marker is not None
    last_id, _ = (await bus.read_events(SID, "0"))[-1]
    assert (marker.seq, marker.checkpoint) == (0, last_id)  # one commit, which saved both
    # A new owner continues the reply with the hint in it once.
    successor = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    loaded = await storage.load_state(SID)
    assert await successor.recover(loaded) is not None
    reply = loaded.current_reply()
    assert reply is not None
    assert [b.id for b in reply.get_content_blocks("hint")] == [hint.item_id]


async def test_a_run_that_begins_and_ends_in_one_batch_keeps_its_commits(redis: Redis) -> None:
    storage, bus = parts(redis)
    writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    state = AgentState(session_id=SID)
    start, msg = start_reply(state, [UserMsg("user", "hi", id="u1")])
    delta = TextBlockDeltaEvent(reply_id="r1", block_id="b1", delta="Hi")
    end = ReplyEndEvent(
        reply_id="r1", session_id=SID, finished_reason=ReplyFinishedReason.COMPLETED
    )
    for event in (TextBlockStartEvent(reply_id="r1", block_id="b1"), delta, end):
        msg.append_event(event)
    state.reply_context = ReplyContext()

    await writer.write_many(
        [start, TextBlockStartEvent(reply_id="r1", block_id="b1"), delta, end], state
    )

    assert await bus.running(SID) is None
    assert await event_names(bus) == [
        "REPLY_START",
        "TEXT_BLOCK_START",
        "TEXT_BLOCK_DELTA",
        "REPLY_END",
        "CUSTOM",
    ]
    messages, _ = await storage.list_messages(SID, None, 10)
    assert [m.get_text_content() for m in messages if m.id == "r1"] == ["Hi"]


async def test_a_retried_write_is_applied_once(redis: Redis) -> None:
    storage, bus = parts(redis)
    fence = await bus.acquire_lease(SID)
    committer = Committer(redis, storage.keys, 1000)
    begin = Commit(Op.BEGIN, reply_id="r1", seq=0)
    event = ReplyStartEvent(reply_id="r1", session_id=SID, name="bot").model_dump_json()
    append = Commit(Op.APPEND, reply_id="r1", seq=1, events=[event])
    assert (await committer.commit(SID, fence, begin))[0]
    assert not (await committer.commit(SID, fence, begin))[0]
    first = await committer.commit(SID, fence, append)
    again = await committer.commit(SID, fence, append)
    assert first[0]
    assert not again[0]
    assert first[1] == again[1]
    assert await event_names(bus) == ["REPLY_START"]

    with pytest.raises(SessionFenced):
        await committer.commit(SID, fence - 1, Commit(Op.APPEND, reply_id="r1", seq=2))


async def test_the_end_saves_the_reply_and_clears_the_run_at_once(redis: Redis) -> None:
    storage, bus = parts(redis)
    writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    state = AgentState(session_id=SID)
    inputs = [UserMsg("user", "hi", id="u1")]
    writer.expect_inputs(inputs, [])
    start, msg = start_reply(state, inputs)
    await writer.write(start, state)
    end = ReplyEndEvent(
        reply_id="r1", session_id=SID, finished_reason=ReplyFinishedReason.COMPLETED
    )
    msg.append_event(end)
    state.reply_context = ReplyContext()
    await writer.write(end, state)

    assert await bus.running(SID) is None
    assert await event_names(bus) == ["REPLY_START", "REPLY_END", "CUSTOM"]
    messages, _ = await storage.list_messages(SID, None, 10)
    assert [m.id for m in messages] == ["u1", "r1"]


async def test_a_cut_reply_is_rebuilt_from_its_checkpoint_and_the_log(redis: Redis) -> None:
    storage, bus = parts(redis)
    writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    state = AgentState(session_id=SID)
    start, msg = start_reply(state, [UserMsg("user", "hi", id="u1")])
    events = [
        start,
        ModelCallStartEvent(reply_id="r1", model_name="m"),
        TextBlockStartEvent(reply_id="r1", block_id="b1"),
        TextBlockDeltaEvent(reply_id="r1", block_id="b1", delta="Hello"),
        ModelCallEndEvent(reply_id="r1", input_tokens=1, output_tokens=1),
        TextBlockDeltaEvent(reply_id="r1", block_id="b1", delta=", world"),
    ]
    for event in events:
        if not isinstance(event, ReplyStartEvent):
            msg.append_event(event)
        await writer.write(event, state)
    # The process dies here; a new owner takes over.
    successor = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID))
    loaded = await storage.load_state(SID)
    recovered = await successor.recover(loaded)

    assert recovered is not None
    assert recovered.reply_id == "r1"
    reply = loaded.current_reply()
    assert reply is not None
    assert reply.get_text_content() == "Hello, world"
    with pytest.raises(SessionFenced):
        await writer.write(TextBlockDeltaEvent(reply_id="r1", block_id="b1", delta="!"), state)


async def test_writes_ride_out_a_redis_restart(tmp_path_factory: pytest.TempPathFactory) -> None:
    with EmbeddedRedis(persistence=True) as server:
        redis = connect(server.url)
        storage, bus = parts(redis)
        writer = ReplyWriter(storage, bus, SID, await bus.acquire_lease(SID), outage_grace=30)
        state = AgentState(session_id=SID)
        start, _ = start_reply(state, [UserMsg("user", "hi", id="u1")])
        await writer.write(start, state)
        server.stop()
        delta = TextBlockDeltaEvent(reply_id="r1", block_id="b1", delta="x")
        write = asyncio.create_task(writer.write(delta, state))
        await asyncio.sleep(0.5)  # the write is retrying while Redis is down
        assert not write.done()
        await asyncio.to_thread(server.start)
        await write
        assert await event_names(bus) == ["REPLY_START", "TEXT_BLOCK_DELTA"]
        await redis.aclose()
