"""What the provider fixture generators share: common inputs, and running one case.

`record` calls an AgentScope model with a case's messages, tools and tool choice against a
local protocol server, and returns what the fixture stores: the final content (random ids left
out), the usage and the request the server received.
"""

from __future__ import annotations

from typing import Any, Protocol

from agentscope.message import Msg
from agentscope.tool import ToolChoice

from tests.support.recorded import recorded
from tests.support.scripted_http import RecordedRequest

API_KEY = "test-key"

SYSTEM = {"role": "system", "name": "system", "content": [{"type": "text", "text": "Be brief."}]}
ASK = {"role": "user", "name": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast of a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {"type": "integer", "default": 1},
            },
            "required": ["city"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the time.",
        "parameters": {"type": "object", "properties": {}},
    },
}


class _Server(Protocol):
    @property
    def requests(self) -> list[RecordedRequest]: ...


async def record(
    model: Any, server: _Server, case: dict[str, Any], **what: tuple[str, ...]
) -> dict[str, Any]:
    """Call `model` with the case's inputs (its one request going to `server`); return the record.

    Args:
        model: An AgentScope chat model pointed at `server`.
        server: The local protocol server holding the case's scripted answer.
        case: The case: `messages`, and `tools` and `tool_choice` if any.
        **what: What else to keep, as `recorded` takes it.
    """
    messages = [Msg.model_validate(m) for m in case["messages"]]
    result = await model(
        messages, tools=case.get("tools"), tool_choice=_tool_choice(case.get("tool_choice"))
    )
    final = await _final(result)
    (request,) = server.requests
    return recorded(final, request, **what)


def _tool_choice(spec: Any) -> ToolChoice | None:
    if spec is None:
        return None
    if isinstance(spec, str):
        return ToolChoice(mode=spec)
    return ToolChoice(**spec)


async def _final(result: Any) -> Any:
    if not hasattr(result, "__aiter__"):
        return result
    final = None
    async for chunk in result:
        if chunk.is_last:
            final = chunk
    return final
