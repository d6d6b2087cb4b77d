"""Parked states: a session's status comes from its state's head, its context read only when a
reply is parked, in every layout a state is stored in."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.bus.redis_connect import connect
from actors.sessions.status import parked_states
from actors.storage.records import SessionStatus
from actors.storage.redis_storage import RedisStorage
from agent_core.message import AssistantMsg, ToolCallBlock, ToolCallState, UserMsg
from agent_core.state import AgentState, ReplyContext

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def storage(redis_url: str) -> AsyncIterator[RedisStorage]:
    client: Redis = connect(redis_url)
    yield RedisStorage(client, Keys("parked"))
    await client.aclose()


def parked(session_id: str, state: ToolCallState) -> AgentState:
    """A state whose reply in progress holds one tool call in `state`."""
    call = ToolCallBlock(id="c1", name="Bash", input="{}", state=state)
    reply = AssistantMsg("bot", [call], id="r1")
    return AgentState(
        session_id=session_id,
        context=[UserMsg("user", "run it"), reply],
        reply_context=ReplyContext(reply_id="r1"),
    )


async def test_an_idle_state_comes_back_without_its_context(storage: RedisStorage) -> None:
    state = AgentState(session_id="idle", context=[UserMsg("user", "hi") for _ in range(50)])
    state.permission_context.extra_read_only_commands = ["date"]
    await storage.save_state("idle", state)

    [(light, status)] = await parked_states(storage, ["idle"])

    assert status is SessionStatus.IDLE
    assert light.context == []
    assert light.permission_context == state.permission_context


async def test_a_parked_reply_is_read_with_its_context(storage: RedisStorage) -> None:
    await storage.save_state("asking", parked("asking", ToolCallState.ASKING))
    await storage.save_state("external", parked("external", ToolCallState.SUBMITTED))

    found = await parked_states(storage, ["asking", "external"])

    assert [status for _, status in found] == [
        SessionStatus.AWAITING_PERMISSION,
        SessionStatus.AWAITING_EXTERNAL_RESULT,
    ]
    assert [len(state.context) for state, _ in found] == [2, 2]


async def test_a_reply_id_without_its_message_is_idle(storage: RedisStorage) -> None:
    state = AgentState(session_id="gone", reply_context=ReplyContext(reply_id="r9"))
    await storage.save_state("gone", state)

    assert [status for _, status in await parked_states(storage, ["gone"])] == [SessionStatus.IDLE]


async def test_older_layouts_and_unsaved_states_are_read_whole(storage: RedisStorage) -> None:
    older = parked("older", ToolCallState.ASKING)
    await storage.redis.set(storage.keys.state("older"), older.model_dump_json())

    found = await parked_states(storage, ["older", "never-saved"])

    assert [status for _, status in found] == [
        SessionStatus.AWAITING_PERMISSION,
        SessionStatus.IDLE,
    ]
    assert found[0][0].context == older.context
    assert found[1][0].session_id == "never-saved"
