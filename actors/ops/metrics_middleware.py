"""`MetricsMiddleware`: times every reply and tool call of an agent (`troupe_*_seconds`).

Apart from `actors.ops.metrics`, which processes count deliveries and sessions with: only a
process that runs agents loads the middleware interface.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from actors.ops.metrics import reply_took, tool_took
from agent_core.event import AgentEvent
from agent_core.middleware import EventHandler, MiddlewareBase

if TYPE_CHECKING:
    from agent_core.agent import Agent


async def _timed(
    handler: EventHandler, input_kwargs: dict[str, Any], observe: Callable[[float], None]
) -> AsyncIterator[AgentEvent]:
    """Pass `handler`'s events through, then `observe` the seconds it took (failures included)."""
    started = time.monotonic()
    try:
        async for event in handler(**input_kwargs):
            yield event
    finally:
        observe(time.monotonic() - started)


class MetricsMiddleware(MiddlewareBase):
    """Times every reply and tool call of the agent it wraps (`troupe_*_seconds`)."""

    def on_reply(
        self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        """Time the reply, parked and failed ones included."""
        return _timed(next_handler, input_kwargs, reply_took)

    def on_acting(
        self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        """Time the tool call, tagged with the tool's name."""
        tool = input_kwargs["tool_call"].name
        return _timed(next_handler, input_kwargs, lambda seconds: tool_took(tool, seconds))
