"""Helpers for the built-in tool tests: run tool calls through a toolkit and read the results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent_core.message import DataBlock, TextBlock, ToolCallBlock, ToolResultState
from agent_core.state import AgentState
from agent_core.tool import ToolBase, ToolChunk, Toolkit


@dataclass
class Result:
    """Everything one call produced."""

    chunks: list[ToolChunk]
    text: str = field(init=False)

    def __post_init__(self) -> None:
        self.text = "".join(
            b.text for c in self.chunks for b in c.content if isinstance(b, TextBlock)
        )

    @property
    def state(self) -> ToolResultState:
        return self.chunks[-1].state

    @property
    def ok(self) -> bool:
        return self.state is ToolResultState.SUCCESS

    @property
    def metadata(self) -> dict[str, Any]:
        return self.chunks[-1].metadata

    @property
    def data(self) -> list[DataBlock]:
        return [b for c in self.chunks for b in c.content if isinstance(b, DataBlock)]


class Runner:
    """Calls tools through a `Toolkit` with one agent state, as the agent does."""

    def __init__(self, *tools: ToolBase) -> None:
        self.toolkit = Toolkit(list(tools))
        self.state = AgentState()

    async def __call__(self, name: str, **arguments: Any) -> Result:
        call = ToolCallBlock(id="call_1", name=name, input=json.dumps(arguments))
        chunks = [chunk async for chunk in self.toolkit.call(call, self.state)]
        assert chunks[-1].is_last
        assert not any(c.is_last for c in chunks[:-1])
        return Result(chunks)
