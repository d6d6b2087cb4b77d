"""MiddlewareChain: onion order, overrides, pipelines, tool collection and the zero-cost path."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agent_core.agent import Agent, ContextConfig
from agent_core.errors import ModelConnectionError
from agent_core.event import AgentEvent, CustomEvent
from agent_core.message import Msg, TextBlock, ToolCallBlock, UserMsg
from agent_core.middleware import (
    EventHandler,
    MiddlewareBase,
    MiddlewareChain,
    call_model,
    collect_tools,
)
from agent_core.model import ChatResponse
from agent_core.testing import ScriptedChatModel, ScriptedResponse
from agent_core.tool import FunctionTool, ToolBase


def make_agent(model: ScriptedChatModel | None = None) -> Agent:
    return Agent(name="assistant", system_prompt="Be brief.", model=model or ScriptedChatModel())


def event(name: str) -> AgentEvent:
    return CustomEvent(name=name)


def names(events: list[AgentEvent]) -> list[str]:
    return [e.name for e in events if isinstance(e, CustomEvent)]


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [e async for e in stream]


async def text_of(stream: AsyncIterator[ChatResponse]) -> str:
    """The text of the stream's final, accumulated response."""
    chunks = [c async for c in stream]
    assert chunks[-1].is_last
    assert all(not c.is_last for c in chunks[:-1])
    return "".join(b.text for b in chunks[-1].content if isinstance(b, TextBlock))


class Recorder(MiddlewareBase):
    """Logs pre / each event / post for every event-yielding hook into a shared list."""

    def __init__(self, label: str, log: list[str]) -> None:
        self.label = label
        self.log = log

    async def _around(
        self, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        self.log.append(f"{self.label}_pre")
        async for item in next_handler(**input_kwargs):
            self.log.append(f"{self.label}_{names([item])[0]}")
            yield item
        self.log.append(f"{self.label}_post")

    def on_reply(
        self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        return self._around(input_kwargs, next_handler)

    def on_reasoning(
        self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        return self._around(input_kwargs, next_handler)

    def on_acting(
        self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
    ) -> AsyncIterator[AgentEvent]:
        return self._around(input_kwargs, next_handler)


WRAPS: dict[str, Callable[[MiddlewareChain, EventHandler], EventHandler]] = {
    "reply": MiddlewareChain.wrap_reply,
    "reasoning": MiddlewareChain.wrap_reasoning,
    "acting": MiddlewareChain.wrap_acting,
}


@pytest.mark.parametrize("phase", sorted(WRAPS))
async def test_first_middleware_is_the_outermost_layer_and_inner_sees_events_first(
    phase: str,
) -> None:
    log: list[str] = []

    async def inner(**_: Any) -> AsyncIterator[AgentEvent]:
        log.append("inner")
        yield event("e1")
        yield event("e2")

    chain = MiddlewareChain(make_agent(), [Recorder("mw1", log), Recorder("mw2", log)])
    events = await collect(WRAPS[phase](chain, inner)(tool_call=None))

    assert names(events) == ["e1", "e2"]
    assert log == [
        "mw1_pre",
        "mw2_pre",
        "inner",
        "mw2_e1",
        "mw1_e1",
        "mw2_e2",
        "mw1_e2",
        "mw2_post",
        "mw1_post",
    ]


async def test_overrides_flow_inward_and_plain_forwarding_keeps_them() -> None:
    seen: list[tuple[str, object]] = []

    class ForceNone(MiddlewareBase):
        async def on_reasoning(
            self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
        ) -> AsyncIterator[AgentEvent]:
            seen.append(("outer", input_kwargs["tool_choice"]))
            async for item in next_handler(tool_choice="none"):
                yield item

    class Observe(MiddlewareBase):
        async def on_reasoning(
            self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
        ) -> AsyncIterator[AgentEvent]:
            seen.append(("inner_mw", input_kwargs["tool_choice"]))
            async for item in next_handler():
                yield item

    async def reasoning(tool_choice: str | None) -> AsyncIterator[AgentEvent]:
        seen.append(("handler", tool_choice))
        yield event("done")

    chain = MiddlewareChain(make_agent(), [ForceNone(), Observe()])
    events = await collect(chain.wrap_reasoning(reasoning)(tool_choice="auto"))

    assert names(events) == ["done"]
    assert seen == [("outer", "auto"), ("inner_mw", "none"), ("handler", "none")]


async def test_an_acting_middleware_can_answer_without_running_the_tool() -> None:
    ran: list[str] = []

    class Offload(MiddlewareBase):
        async def on_acting(
            self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
        ) -> AsyncIterator[AgentEvent]:
            yield event(f"placeholder for {input_kwargs['tool_call'].name}")

    async def run_tool(tool_call: ToolCallBlock) -> AsyncIterator[AgentEvent]:
        ran.append(tool_call.id)
        yield event("real result")

    chain = MiddlewareChain(make_agent(), [Offload()])
    call = ToolCallBlock(id="c1", name="slow", input="{}")
    events = await collect(chain.wrap_acting(run_tool)(tool_call=call))

    assert names(events) == ["placeholder for slow"]
    assert ran == []


async def test_model_fallback_example_from_the_spec_switches_models_on_a_failed_request() -> None:
    class ModelFallbackMiddleware(MiddlewareBase):
        def __init__(self, fallback_model: ScriptedChatModel) -> None:
            self._fallback = fallback_model

        async def on_model_call(self, agent, input_kwargs, next_handler):
            try:
                return await next_handler()
            except Exception:
                return await next_handler(current_model=self._fallback)

    primary = ScriptedChatModel([ScriptedResponse(error=ModelConnectionError("refused"))])
    fallback = ScriptedChatModel(["from the fallback"])
    chain = MiddlewareChain(make_agent(primary), [ModelFallbackMiddleware(fallback)])
    call = chain.wrap_model_call(call_model)

    stream = await call(
        messages=[UserMsg("user", "hi")], tools=[], tool_choice=None, current_model=primary
    )

    assert await text_of(stream) == "from the fallback"
    assert len(primary.calls) == 1
    assert len(fallback.calls) == 1


async def test_timing_example_from_the_spec_measures_the_model_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    class TimingMiddleware(MiddlewareBase):
        async def on_model_call(self, agent, input_kwargs, next_handler):
            model_name = input_kwargs["current_model"].model
            start = time.time()
            result = await next_handler()
            elapsed = time.time() - start
            print(f"[timing] {agent.name} → {model_name}: {elapsed:.2f}s")
            return result

    model = ScriptedChatModel(["hello"], model="m-1")
    chain = MiddlewareChain(make_agent(model), [TimingMiddleware()])
    stream = await chain.wrap_model_call(call_model)(
        messages=[UserMsg("user", "hi")], tools=[], tool_choice=None, current_model=model
    )

    assert await text_of(stream) == "hello"
    assert capsys.readouterr().out.startswith("[timing] assistant → m-1: ")


async def test_a_whole_chat_response_from_a_middleware_reaches_the_loop() -> None:
    cached = ChatResponse(
        content=[TextBlock(text="cached"), ToolCallBlock(id="c1", name="add", input='{"a":1}')]
    )
    seen_by_outer: list[object] = []

    class Outer(MiddlewareBase):
        async def on_model_call(self, agent, input_kwargs, next_handler):
            result = await next_handler()
            seen_by_outer.append(result)
            return result

    class Cache(MiddlewareBase):
        async def on_model_call(self, agent, input_kwargs, next_handler):
            return cached

    model = ScriptedChatModel()
    chain = MiddlewareChain(make_agent(model), [Outer(), Cache()])
    result = await chain.wrap_model_call(call_model)(
        messages=[], tools=[], tool_choice=None, current_model=model
    )

    assert result is cached
    assert seen_by_outer == [cached]
    assert model.calls == []

    class CachedText(MiddlewareBase):
        async def on_model_call(self, agent, input_kwargs, next_handler):
            return ChatResponse(content=[TextBlock(text="from the cache")])

    agent = Agent(name="a", system_prompt="x", model=model, middlewares=[CachedText()])
    reply = await agent.reply(UserMsg("user", "hi"))

    assert reply.get_text_content() == "from the cache"
    assert model.calls == []


async def test_content_only_in_a_streams_final_response_still_shows() -> None:
    class FinalOnly(MiddlewareBase):
        async def on_model_call(self, agent, input_kwargs, next_handler):
            async def stream() -> AsyncIterator[ChatResponse]:
                yield ChatResponse(content=[TextBlock(id="t1", text="Hel")], is_last=False)
                final = [TextBlock(id="t1", text="Hello there."), TextBlock(text="Bye.")]
                yield ChatResponse(content=final, is_last=True)

            return stream()

    agent = Agent(name="a", system_prompt="x", model=ScriptedChatModel(), middlewares=[FinalOnly()])
    deltas = [
        e.delta async for e in agent.reply_stream(UserMsg("user", "hi")) if hasattr(e, "delta")
    ]
    reply = agent.state.context[-1]

    # What the final response adds to a streamed block, and blocks never streamed, still show.
    assert deltas == ["Hel", "lo there.", "Bye."]
    assert [b.text for b in reply.content if isinstance(b, TextBlock)] == ["Hello there.", "Bye."]


async def test_call_model_raises_a_failed_request_from_the_await() -> None:
    model = ScriptedChatModel([ScriptedResponse(error=ModelConnectionError("refused"))])

    with pytest.raises(ModelConnectionError, match="refused"):
        await call_model(messages=[], tools=[], tool_choice=None, current_model=model)


async def test_call_model_streams_an_empty_answer_as_one_final_response() -> None:
    model = ScriptedChatModel([""])
    stream = await call_model(messages=[], tools=[], tool_choice=None, current_model=model)
    assert not isinstance(stream, ChatResponse)

    (final,) = [c async for c in stream]
    assert final.is_last
    assert final.content == []
    assert final.usage is not None


async def test_compress_context_hooks_wrap_the_call_and_can_replace_the_config() -> None:
    log: list[str] = []
    tight = ContextConfig(trigger_ratio=0.5)

    class Tighten(MiddlewareBase):
        async def on_compress_context(self, agent, input_kwargs, next_handler):
            log.append("pre")
            await next_handler(context_config=tight)
            log.append("post")

    async def compress(context_config: ContextConfig | None) -> None:
        log.append(f"compress {context_config.trigger_ratio if context_config else None}")

    chain = MiddlewareChain(make_agent(), [Tighten()])
    await chain.wrap_compress_context(compress)(context_config=None)

    assert log == ["pre", "compress 0.5", "post"]


async def test_system_prompt_hooks_form_a_pipeline_in_list_order() -> None:
    class Append(MiddlewareBase):
        def __init__(self, suffix: str) -> None:
            self.suffix = suffix

        async def on_system_prompt(self, agent: Agent, current_prompt: str) -> str:
            return f"{current_prompt}\n{self.suffix} ({agent.name})"

    chain = MiddlewareChain(make_agent(), [Append("A"), MiddlewareBase(), Append("B")])

    assert await chain.system_prompt("Base.") == "Base.\nA (assistant)\nB (assistant)"


async def test_collect_tools_gathers_every_middlewares_tools_in_order() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    def pong() -> str:
        """Pong."""
        return "ping"

    class Provides(MiddlewareBase):
        def __init__(self, *tools: ToolBase) -> None:
            self.tools = list(tools)

        async def list_tools(self) -> list[ToolBase]:
            return self.tools

    middlewares = [Provides(FunctionTool(ping)), MiddlewareBase(), Provides(FunctionTool(pong))]

    assert [t.name for t in await collect_tools(middlewares)] == ["ping", "pong"]


async def test_phases_nobody_hooks_get_their_handler_back_unchanged() -> None:
    class PromptOnly(MiddlewareBase):
        async def on_system_prompt(self, agent: Agent, current_prompt: str) -> str:
            return current_prompt

    async def events(**_: Any) -> AsyncIterator[AgentEvent]:
        yield event("x")

    async def compress(**_: Any) -> None:
        return None

    for chain in (
        MiddlewareChain(make_agent()),
        MiddlewareChain(make_agent(), [MiddlewareBase(), PromptOnly()]),
    ):
        assert chain.wrap_reply(events) is events
        assert chain.wrap_reasoning(events) is events
        assert chain.wrap_acting(events) is events
        assert chain.wrap_model_call(call_model) is call_model
        assert chain.wrap_compress_context(compress) is compress


async def test_a_hook_inherited_from_a_parent_middleware_counts_as_implemented() -> None:
    seen: list[Msg | None] = []

    class Parent(MiddlewareBase):
        async def on_reply(
            self, agent: Agent, input_kwargs: dict[str, Any], next_handler: EventHandler
        ) -> AsyncIterator[AgentEvent]:
            seen.append(input_kwargs["inputs"])
            async for item in next_handler():
                yield item

    class Child(Parent):
        pass

    async def reply(inputs: Msg | None) -> AsyncIterator[AgentEvent]:
        yield event("end")

    msg = UserMsg("user", "hi")
    events = await collect(MiddlewareChain(make_agent(), [Child()]).wrap_reply(reply)(inputs=msg))

    assert names(events) == ["end"]
    assert seen == [msg]
