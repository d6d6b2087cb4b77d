"""Calling a Docker workspace's tools as an agent does, and looking into its container."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiodocker
from aiodocker.exceptions import DockerError

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


async def container_exists(docker_url: str, container_id: str) -> bool:
    """Whether the daemon still has the container."""
    docker = aiodocker.Docker(url=docker_url)
    try:
        await docker.containers.get(container_id)
    except DockerError as exc:
        if exc.status == 404:
            return False
        raise
    finally:
        await docker.close()
    return True


async def inspect(docker_url: str, container_id: str) -> dict[str, Any]:
    """The daemon's description of the container."""
    docker = aiodocker.Docker(url=docker_url)
    try:
        container = await docker.containers.get(container_id)
        return dict(container._container)
    finally:
        await docker.close()


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> bool:
    """Poll until `check()` holds; return whether it did within `within` seconds."""
    for _ in range(int(within / 0.1)):
        if await check():
            return True
        await asyncio.sleep(0.1)
    return await check()
