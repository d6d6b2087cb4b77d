"""Deriving a session's parked status from its persisted state."""

from __future__ import annotations

import asyncio

from actors.storage.records import SessionStatus
from actors.storage.redis_storage import RedisStorage
from agent_core.message import ToolCallState
from agent_core.state import AgentState


def parked_status(state: AgentState) -> SessionStatus:
    """IDLE, or what the reply parked in the state is waiting for (no owner is running it)."""
    reply = state.current_reply()
    if reply is None:
        return SessionStatus.IDLE
    states = {call.state for call in reply.get_content_blocks("tool_call")}
    if ToolCallState.ASKING in states:
        return SessionStatus.AWAITING_PERMISSION
    if ToolCallState.SUBMITTED in states:
        return SessionStatus.AWAITING_EXTERNAL_RESULT
    return SessionStatus.IDLE


async def parked_states(
    storage: RedisStorage, session_ids: list[str]
) -> list[tuple[AgentState, SessionStatus]]:
    """Each session's state and parked status, reading a context only where a reply is parked.

    A state whose head names no reply in progress is idle whatever its context holds, so the
    context (the bulk of a long session) stays unread: such states come back without it.
    """
    heads = await storage.load_state_heads(session_ids)

    async def one(session_id: str, head: AgentState | None) -> tuple[AgentState, SessionStatus]:
        if head is not None and not head.reply_context.reply_id:
            return head, SessionStatus.IDLE
        state = await storage.load_state(session_id)
        return state, parked_status(state)

    return list(await asyncio.gather(*map(one, session_ids, heads)))
