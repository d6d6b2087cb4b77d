"""What the provider model tests share: a tool, a greeting, a stream reader and a weather agent."""

from __future__ import annotations

from typing import Any

from agent_core.agent import Agent
from agent_core.message import SystemMsg, UserMsg
from agent_core.model import ChatModelBase, ChatResponse, ToolSchema
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from agent_core.tool import FunctionTool, Toolkit

WEATHER = ToolSchema(
    name="get_weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
HELLO = [SystemMsg("system", "You are terse."), UserMsg("user", "Hello?")]


async def chunks(model: ChatModelBase, *args: Any, **kwargs: Any) -> list[ChatResponse]:
    """Call a streaming `model` and read its whole stream."""
    result = await model(*args, **kwargs)
    assert not isinstance(result, ChatResponse)
    return [chunk async for chunk in result]


def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city name.
    """
    return f"Sunny in {city}"


def weather_agent(model: ChatModelBase) -> Agent:
    """An agent answering weather questions with `get_weather`, asking no permission."""
    return Agent(
        name="weather",
        system_prompt="Answer weather questions.",
        model=model,
        toolkit=Toolkit(tools=[FunctionTool(get_weather)]),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
    )
