"""Calling tools as an agent does (through a `Toolkit`, with one agent state), and waiting."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
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


def bash_tool(tools: Sequence[ToolBase]) -> ToolBase:
    """The `Bash` tool among `tools`."""
    (bash,) = [t for t in tools if t.name == "Bash"]
    return bash


async def check_bash_output_streams(bash: ToolBase, go: Path) -> None:
    """Bash output arrives while the command runs: it waits for `go` (its `./go`) to finish."""
    command = "echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished"
    before_go, after_go = "", ""
    # A stat and a touch of a local file between chunks: too quick to need a thread.
    async with contextlib.aclosing(bash(command=command)) as stream:
        async for chunk in stream:
            if go.exists():  # noqa: ASYNC240
                after_go += text([chunk])
            else:
                before_go += text([chunk])
                if "started" in before_go:
                    # The command can only finish once its first output arrived.
                    go.touch()  # noqa: ASYNC240
            if chunk.is_last:
                break
    assert "started" in before_go
    assert "finished" not in before_go
    assert "finished" in after_go


async def check_cancelling_kills_the_command(bash: ToolBase, agent: Agent) -> None:
    """Closing a Bash call's stream early kills its command (as `agent` sees the processes)."""
    async with contextlib.aclosing(bash(command="echo up; sleep 4242")) as stream:
        async for chunk in stream:
            if "up" in text([chunk]):
                break

    async def gone() -> bool:
        ok, out = await agent("Bash", command="cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
        return ok and "sleep 4242" not in out

    assert await eventually(gone)
