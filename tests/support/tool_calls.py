"""Calling tools as an agent does (through a `Toolkit`, with one agent state), and waiting."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.state import AgentState
from agent_core.tool import ToolBase, ToolChunk, Toolkit


class Agent:
    """Calls tools through a `Toolkit` with one agent state."""

    def __init__(self, tools: list[ToolBase]) -> None:
        self.toolkit = Toolkit(tools)
        self.state = AgentState()

    async def __call__(self, name: str, **arguments: Any) -> tuple[bool, str]:
        """Run one call; return whether it succeeded and its text."""
        call = ToolCallBlock(id="call_1", name=name, input=json.dumps(arguments))
        chunks = [chunk async for chunk in self.toolkit.call(call, self.state)]
        return chunks[-1].state is ToolResultState.SUCCESS, text(chunks)


def text(chunks: list[ToolChunk]) -> str:
    """The text of every chunk."""
    return "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> bool:
    """Poll until `check()` holds; return whether it did within `within` seconds."""
    for _ in range(int(within / 0.1)):
        if await check():
            return True
        await asyncio.sleep(0.1)
    return await check()
