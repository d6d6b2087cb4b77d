"""A reply reads the same events from a model stream whether or not a middleware sees it.

Without a model-call middleware the loop takes the provider's deltas itself, skipping the final
accumulated response `ChatModelBase.__call__` adds; with one, the middleware gets `__call__`'s
stream. The events and the folded reply must not tell the two apart.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from agent_core.agent import Agent
from agent_core.event import AgentEvent
from agent_core.message import Msg, TextBlock, ThinkingBlock, UserMsg
from agent_core.middleware import MiddlewareBase
from agent_core.model import ChatResponse, ChatUsage, ToolChoice
from agent_core.model.base import ChatModelBase
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import FunctionTool, Toolkit

_VOLATILE = {"id", "created_at", "finished_at", "block_id", "reply_id", "tool_call_id"}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


class PassThrough(MiddlewareBase):
    """Sees every model call and changes nothing."""

    async def on_model_call(self, agent: Any, input_kwargs: Any, next_handler: Any) -> Any:
        return await next_handler()


class FinalCarrier(ChatModelBase):
    """A provider whose stream ends with its own final response holding more than the deltas.

    The end of the text arrives only in the final response; a delta after it must not be read.
    """

    type = "final_carrier"

    def __init__(self) -> None:
        super().__init__(credential=None, model="carrier")

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[ChatResponse, None]:
        return self._stream()

    async def _stream(self) -> AsyncGenerator[ChatResponse, None]:
        yield ChatResponse(content=[ThinkingBlock(id="k", thinking="hm")], is_last=False)
        yield ChatResponse(content=[TextBlock(id="t", text="Hel")], is_last=False)
        yield ChatResponse(content=[], is_last=False, usage=ChatUsage(input_tokens=3))
        yield ChatResponse(
            content=[
                ThinkingBlock(id="k", thinking="hmm"),
                TextBlock(id="t", text="Hello"),
            ],
            usage=ChatUsage(input_tokens=3, output_tokens=2),
        )
        yield ChatResponse(content=[TextBlock(id="t", text=" never read")], is_last=False)


def _scripted() -> ChatModelBase:
    call = ScriptedToolCall("add", {"a": 1, "b": 2})
    return ScriptedChatModel([ScriptedResponse(text="Adding them.", tool_calls=[call]), "3."])


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


async def _reply(model: ChatModelBase, middlewares: list[MiddlewareBase]) -> tuple[Any, Any]:
    agent = Agent(
        "bot",
        "You add.",
        model,
        Toolkit([FunctionTool(add)]),
        middlewares=middlewares,
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
    )
    events: list[AgentEvent] = [e async for e in agent.reply_stream(UserMsg("user", "1+2?"))]
    reply = agent.state.context[-1]
    return _stable([e.model_dump() for e in events]), _stable(reply.model_dump())


@pytest.mark.parametrize("model", [_scripted, FinalCarrier])
async def test_the_events_and_the_reply_are_the_same_with_and_without_a_reader(
    model: Any,
) -> None:
    alone = await _reply(model(), [])
    watched = await _reply(model(), [PassThrough()])
    assert alone == watched


async def test_a_final_response_adds_what_the_deltas_lacked_and_ends_the_stream() -> None:
    _, reply = await _reply(FinalCarrier(), [])
    content = reply["content"]
    # What the final response adds comes after other blocks began: blocks of their own.
    assert "".join(b["thinking"] for b in content if b["type"] == "thinking") == "hmm"
    assert "".join(b["text"] for b in content if b["type"] == "text") == "Hello"
    assert reply["usage"]["output_tokens"] == 2


async def test_a_tool_call_streamed_by_the_model_is_run() -> None:
    _, reply = await _reply(_scripted(), [])
    calls = [b for b in reply["content"] if b["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["add"]
    assert reply["content"][-1]["text"] == "3."
