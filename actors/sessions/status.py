"""Deriving a session's parked status from its persisted state."""

from __future__ import annotations

from actors.storage.records import SessionStatus
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
