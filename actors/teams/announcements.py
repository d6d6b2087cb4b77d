"""Announcing service-level changes on a session's stream (`CUSTOM` events).

`team_updated` follows a tool call that changed the team; `state_updated` follows one that
changed state a UI shows beside the conversation (tasks, active tool groups).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from actors.teams.tools import TEAM_CHANGING_TOOLS
from agent_core.event import AgentEvent, CustomEvent
from agent_core.message import ToolCallBlock
from agent_core.middleware import EventHandler, MiddlewareBase

STATE_CHANGING_TOOLS = frozenset({"TaskCreate", "TaskUpdate", "reset_tools"})


class AnnounceChangesMiddleware(MiddlewareBase):
    """Follows team- and state-changing tool calls with a `CUSTOM` event naming the change."""

    async def on_acting(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        """Pass the call's events through, then announce what it changed."""
        async for event in next_handler():
            yield event
        call: ToolCallBlock = input_kwargs["tool_call"]
        if call.name in TEAM_CHANGING_TOOLS:
            yield CustomEvent(name="team_updated", value={})
        elif call.name in STATE_CHANGING_TOOLS:
            yield CustomEvent(name="state_updated", value={"tool": call.name})
