"""Middleware, tracing and context compression inside real agent runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_core.agent import Agent, ContextConfig
from agent_core.agent._config import _SUMMARY_FIELDS
from agent_core.event import AgentEvent
from agent_core.message import Msg, UserMsg
from agent_core.middleware import MiddlewareBase, TracingMiddleware
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import Toolkit


def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: First.
        b: Second.
    """
    return a + b


def trusted() -> AgentState:
    return AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS))


class Recorder(MiddlewareBase):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    async def on_reply(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any
    ) -> AsyncIterator[AgentEvent]:
        self.log.append(f"{self.name}:reply>")
        async for event in next_handler():
            yield event
        self.log.append(f"{self.name}:reply<")

    async def on_acting(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any
    ) -> AsyncIterator[AgentEvent]:
        self.log.append(f"{self.name}:act:{input_kwargs['tool_call'].name}")
        async for event in next_handler():
            yield event

    async def on_model_call(
        self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any
    ) -> Any:
        self.log.append(f"{self.name}:model")
        return await next_handler()

    async def on_system_prompt(self, agent: Any, current_prompt: str) -> str:
        return f"{current_prompt} [{self.name}]"


async def test_middlewares_wrap_the_real_loop_as_an_onion() -> None:
    log: list[str] = []
    model = ScriptedChatModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("add", {"a": 1, "b": 2})]), "3"]
    )
    agent = Agent(
        "bot",
        "Base.",
        model,
        Toolkit([add]),
        trusted(),
        middlewares=[Recorder("outer", log), Recorder("inner", log)],
    )
    msg = await agent.reply(UserMsg("u", "1+2"))
    assert msg.get_text_content() == "3"
    assert log == [
        "outer:reply>",
        "inner:reply>",
        "outer:model",
        "inner:model",
        "outer:act:add",
        "inner:act:add",
        "outer:model",
        "inner:model",
        "inner:reply<",
        "outer:reply<",
    ]
    assert model.calls[0][0].get_text_content() == "Base. [outer] [inner]"


async def test_tracing_spans_cover_reply_model_calls_and_tools() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = ScriptedChatModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("add", {"a": 2, "b": 2})]), "4"]
    )
    agent = Agent(
        "bot",
        "x",
        model,
        Toolkit([add]),
        trusted(),
        middlewares=[TracingMiddleware(tracer_provider=provider)],
    )
    await agent.reply(UserMsg("u", "2+2"))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {"invoke_agent bot", "chat scripted", "execute_tool add"} <= set(spans)
    reply = spans["invoke_agent bot"]
    assert spans["execute_tool add"].parent.span_id == reply.context.span_id
    assert spans["execute_tool add"].attributes["gen_ai.tool.name"] == "add"


def summary_when_asked(messages: list[Msg]) -> ScriptedResponse:
    """Answer compression calls with a summary, everything else with text."""
    last = messages[-1].get_text_content() or ""
    if "summary" in last.lower():
        fields = {name: f"{name} text" for name in _SUMMARY_FIELDS}
        return ScriptedResponse(tool_calls=[ScriptedToolCall("generate_summary", fields)])
    return ScriptedResponse(text="fine")


async def test_context_is_compressed_inside_the_loop_when_it_grows() -> None:
    model = ScriptedChatModel(default="unused", context_size=400)
    model.push(*[summary_when_asked] * 20)
    agent = Agent(
        "bot",
        "x",
        model,
        context_config=ContextConfig(
            trigger_ratio=0.5, context_buffer_ratio=0.1, reserve_ratio=0.2
        ),
    )
    for index in range(6):
        await agent.reply(UserMsg("u", f"message {index}: " + "words " * 40))
    assert agent.state.summary
    assert "task_overview text" in str(agent.state.summary)
    assert len(agent.state.context) < 12
    assert any(tool.name == "generate_summary" for tools in model.tool_schemas for tool in tools)


async def test_a_compression_hook_sees_every_reasoning_step_far_below_the_threshold() -> None:
    seen: list[int] = []

    class Watcher(MiddlewareBase):
        async def on_compress_context(
            self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any
        ) -> None:
            seen.append(agent.state.reply_context.cur_iter)
            await next_handler(**input_kwargs)

    call = ScriptedToolCall("add", {"a": 1, "b": 2})
    model = ScriptedChatModel([ScriptedResponse(tool_calls=[call]), "3"], context_size=100_000)
    agent = Agent("bot", "x", model, Toolkit([add]), state=trusted(), middlewares=[Watcher()])
    await agent.reply(UserMsg("u", "add 1 and 2"))
    assert seen == [1, 2]
    assert not agent.state.summary
