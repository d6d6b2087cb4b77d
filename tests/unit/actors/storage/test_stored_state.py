"""A session's state is stored as a head and a context list: the owner's commits write only what
changed, anything else rewrites it whole, and loading it gives back exactly what was written."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.commit import Commit, Committer, Op, StateWrite
from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.errors import StateDiverged
from actors.sessions.reply_writer import ReplyWriter
from actors.storage.redis_storage import RedisStorage
from agent_core.event import (
    AgentEvent,
    ModelCallEndEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockDeltaEvent,
    TextBlockStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from agent_core.message import (
    AssistantMsg,
    Msg,
    ReplyFinishedReason,
    TextBlock,
    ToolResultState,
    UserMsg,
)
from agent_core.state import AgentState, ReplyContext

pytestmark = [pytest.mark.redis]

SID = "s1"
UNTOUCHED = "untouched"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = connect(redis_url)
    yield client
    await client.aclose()


class Session:
    """An owner's writer over a state, with the live reply Msg the agent would build."""

    def __init__(self, redis: Redis) -> None:
        keys = Keys("st")
        self.redis, self.keys = redis, keys
        self.storage = RedisStorage(redis, keys)
        self.bus = RedisMessageBus(redis, keys, 10, 1000)
        self.state = AgentState(session_id=SID)
        self.writer: ReplyWriter | None = None
        self.reply: Msg | None = None

    async def own(self) -> ReplyWriter:
        self.writer = ReplyWriter(self.storage, self.bus, SID, await self.bus.acquire_lease(SID))
        return self.writer

    async def write(self, event: AgentEvent) -> None:
        assert self.writer is not None
        assert self.reply is not None
        if not isinstance(event, ReplyStartEvent):
            self.reply.append_event(event)
        if isinstance(event, ReplyEndEvent):
            self.state.reply_context = ReplyContext()
        await self.writer.write(event, self.state)

    async def start(self, reply_id: str, inputs: list[Msg]) -> None:
        assert self.writer is not None
        self.state.context.extend(inputs)
        start = ReplyStartEvent(reply_id=reply_id, session_id=SID, name="bot")
        self.reply = AssistantMsg("bot", [], id=reply_id, created_at=start.created_at)
        self.state.context.append(self.reply)
        self.state.reply_context = ReplyContext(reply_id=reply_id)
        self.writer.expect_inputs(inputs, [])
        await self.write(start)

    async def step(self, n: int, tool: bool = True) -> None:
        """One model call (text, and a tool call with its result)."""
        assert self.reply is not None
        rid = self.reply.id
        self.state.reply_context.cur_iter += 1
        await self.write(TextBlockStartEvent(reply_id=rid, block_id=f"t{n}"))
        await self.write(TextBlockDeltaEvent(reply_id=rid, block_id=f"t{n}", delta=f"step {n}"))
        if tool:
            call = f"c{n}"
            await self.write(
                ToolCallStartEvent(reply_id=rid, tool_call_id=call, tool_call_name="X")
            )
            await self.write(ToolCallEndEvent(reply_id=rid, tool_call_id=call))
        await self.write(ModelCallEndEvent(reply_id=rid, input_tokens=1, output_tokens=1))
        if tool:
            await self.write(
                ToolResultStartEvent(reply_id=rid, tool_call_id=call, tool_call_name="X")
            )
            await self.write(ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=call, delta="ok"))
            end = ToolResultEndEvent(reply_id=rid, tool_call_id=call, state=ToolResultState.SUCCESS)
            await self.write(end)

    async def end(self) -> None:
        assert self.reply is not None
        await self.write(
            ReplyEndEvent(
                reply_id=self.reply.id,
                session_id=SID,
                finished_reason=ReplyFinishedReason.COMPLETED,
            )
        )

    async def stored(self) -> list[str]:
        """The raw context list."""
        raws = await self.redis.lrange(self.keys.state_context(SID), 0, -1)
        return [raw.decode() for raw in raws]

    async def mark(self) -> None:
        """Overwrite every stored message and the head with markers a rewrite would replace."""
        for i in range(len(await self.stored())):
            await self.redis.lset(self.keys.state_context(SID), i, f"{UNTOUCHED} {i}")
        await self.redis.hset(self.keys.state_head(SID), "state", UNTOUCHED)


def users(*ids: str) -> list[Msg]:
    return [UserMsg("user", f"message {i}", id=i) for i in ids]


async def test_a_checkpoint_writes_only_the_running_reply_new_messages_and_a_changed_head(
    redis: Redis,
) -> None:
    session = Session(redis)
    session.state.context = users("u0", "u1", "u2")
    await session.own()
    await session.start("r1", users("u3"))
    await session.mark()

    await session.write(TextBlockStartEvent(reply_id="r1", block_id="t"))
    await session.write(TextBlockDeltaEvent(reply_id="r1", block_id="t", delta="Hello"))
    session.state.context.append(UserMsg("user", "meanwhile", id="late"))
    await session.write(ModelCallEndEvent(reply_id="r1"))

    stored = await session.stored()
    assert stored[:4] == [f"{UNTOUCHED} {i}" for i in range(4)]
    assert Msg.model_validate_json(stored[4]).get_text_content() == "Hello"
    assert Msg.model_validate_json(stored[5]).id == "late"
    assert len(stored) == 6
    assert await redis.hget(session.keys.state_head(SID), "state") == UNTOUCHED.encode()

    session.state.reply_context.cur_iter += 1
    await session.write(ModelCallEndEvent(reply_id="r1"))
    assert (await session.stored())[:4] == [f"{UNTOUCHED} {i}" for i in range(4)]
    head = await redis.hget(session.keys.state_head(SID), "state")
    assert AgentState.model_validate_json(head).reply_context.cur_iter == 1


async def test_a_message_losing_blocks_in_place_is_written_again(redis: Redis) -> None:
    session = Session(redis)
    first = AssistantMsg("bot", [TextBlock(text="a"), TextBlock(text="b")], id="a0")
    session.state.context = [first, *users("u1", "u2", "u3")]
    await session.own()
    await session.start("r1", [])
    await session.mark()

    del first.content[:1]  # what compression does to a message it cuts inside
    await session.write(ModelCallEndEvent(reply_id="r1"))

    stored = await session.stored()
    assert Msg.model_validate_json(stored[0]).get_text_content() == "b"
    assert stored[1:4] == [f"{UNTOUCHED} {i}" for i in range(1, 4)]
    assert len(stored) == 5


async def test_a_replaced_context_is_written_whole(redis: Redis) -> None:
    session = Session(redis)
    session.state.context = users("u0", "u1", "u2", "u3")
    await session.own()
    await session.start("r1", [])
    await session.mark()

    # Compression: the older messages leave the context, the summary takes their place.
    session.state.context[:] = session.state.context[2:]
    session.state.summary = "u0 and u1 said hello"
    await session.step(1)

    assert not any(raw.startswith(UNTOUCHED) for raw in await session.stored())
    assert await session.storage.load_state(SID) == session.state

    await session.mark()
    assert session.reply is not None
    session.state.context[:] = [session.reply]  # cleared but for the running reply
    await session.step(2)
    assert len(await session.stored()) == 1
    await session.end()
    assert await session.storage.load_state(SID) == session.state


async def test_the_loaded_state_is_the_written_one_after_every_commit(redis: Redis) -> None:
    session = Session(redis)
    await session.own()
    for reply in range(4):
        await session.start(f"r{reply}", users(f"u{reply}"))
        assert await session.storage.load_state(SID) == session.state
        for n in range(6):
            await session.step(n, tool=n % 2 == 0)
            assert await session.storage.load_state(SID) == session.state
        await session.end()
        assert await session.storage.load_state(SID) == session.state
    assert len(await session.stored()) == 8

    writer = await session.own()  # a new owner
    session.state = await writer.load()
    await session.start("r9", users("u9"))
    await session.step(0)
    await session.end()
    assert await session.storage.load_state(SID) == session.state


async def test_an_owner_that_loaded_the_state_writes_only_what_changed_from_it(
    redis: Redis,
) -> None:
    session = Session(redis)
    session.state.context = users("u0", "u1")
    await session.own()
    await session.start("r1", [])
    await session.end()

    writer = await session.own()
    session.state = await writer.load()
    await session.mark()
    await session.start("r2", users("u2"))

    stored = await session.stored()
    assert stored[:3] == [f"{UNTOUCHED} {i}" for i in range(3)]
    assert [Msg.model_validate_json(raw).id for raw in stored[3:]] == ["u2", "r2"]


async def test_a_reloaded_context_is_written_whole(redis: Redis) -> None:
    session = Session(redis)
    session.state.context = users("u0", "u1", "u2")
    await session.own()
    await session.start("r1", [])
    await session.end()
    await session.mark()

    # Equal messages, but other objects: written whole rather than one by one.
    session.state.context = [m.model_copy(deep=True) for m in session.state.context]
    await session.start("r2", [])

    assert not any(raw.startswith(UNTOUCHED) for raw in await session.stored())
    assert await session.storage.load_state(SID) == session.state


async def test_a_state_written_by_another_writer_is_rewritten_whole(redis: Redis) -> None:
    session = Session(redis)
    session.state.context = users("u0", "u1")
    await session.own()
    await session.start("r1", [])
    await session.storage.save_state(SID, AgentState(session_id=SID, context=users("x")))

    await session.step(1)

    assert await session.storage.load_state(SID) == session.state


async def test_an_update_of_a_version_not_stored_writes_nothing(redis: Redis) -> None:
    session = Session(redis)
    fence = await session.bus.acquire_lease(SID)
    committer = Committer(redis, session.keys, 1000)
    head = AgentState(session_id=SID).model_dump_json(exclude={"context"})
    await committer.commit(SID, fence, Commit(Op.TURN, state=StateWrite("v1", head)))
    update = StateWrite("v3", head, rewrite=False, base="v2", appended=["{}"])
    event = ReplyStartEvent(reply_id="r1", session_id=SID, name="bot").model_dump_json()

    with pytest.raises(StateDiverged):
        await committer.commit(SID, fence, Commit(Op.TURN, state=update, events=[event]))

    assert await session.stored() == []
    assert await session.bus.read_events(SID, "0") == []
    assert await redis.hget(session.keys.state_head(SID), "version") == b"v1"


async def test_a_state_in_the_older_layout_loads_and_the_next_write_replaces_it(
    redis: Redis,
) -> None:
    session = Session(redis)
    older = AgentState(session_id=SID, summary="before", context=users("u0", "u1"))
    await redis.set(session.keys.state(SID), older.model_dump_json())

    assert await session.storage.load_state(SID) == older

    session.state = older
    await session.own()
    await session.start("r1", users("u2"))
    assert not await redis.exists(session.keys.state(SID))
    assert len(await session.stored()) == 4
    assert await session.storage.load_state(SID) == session.state


async def test_a_session_never_written_loads_as_a_new_state(redis: Redis) -> None:
    storage = Session(redis).storage
    assert await storage.load_state(SID) == AgentState(session_id=SID)
