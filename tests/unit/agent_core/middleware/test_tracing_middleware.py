"""TracingMiddleware: the span tree, its attributes, error statuses and the no-provider path."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, SpanKind, StatusCode

from agent_core.agent import Agent
from agent_core.errors import ModelConnectionError
from agent_core.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from agent_core.message import (
    AssistantMsg,
    ErrorInfo,
    Msg,
    ReplyFinishedReason,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from agent_core.middleware import MiddlewareBase, MiddlewareChain, TracingMiddleware, call_model
from agent_core.model import ChatResponse, ChatUsage, collect_response
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


def make_agent(model: ScriptedChatModel) -> Agent:
    return Agent(
        name="assistant",
        system_prompt="Be brief.",
        model=model,
        state=AgentState(session_id="session-1"),
    )


def only(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    matching = [s for s in spans if s.name == name]
    assert len(matching) == 1, [s.name for s in spans]
    return matching[0]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


class FakeLoop:
    """A minimal loop wired the way the agent wires the chain: reply → model call → acting."""

    def __init__(
        self,
        agent: Agent,
        chain: MiddlewareChain,
        tool_state: ToolResultState = ToolResultState.SUCCESS,
        extra_events: Sequence[AgentEvent] = (),
        end: ReplyEndEvent | None = None,
    ) -> None:
        self.agent = agent
        self.chain = chain
        self.tool_state = tool_state
        self.extra_events = extra_events
        self.end = end or ReplyEndEvent(reply_id="r1", session_id="session-1")
        self.spans_seen_by_tools: list[trace.Span] = []

    async def _run_tool(self, tool_call: ToolCallBlock) -> AsyncIterator[AgentEvent]:
        self.spans_seen_by_tools.append(trace.get_current_span())
        rid, cid = "r1", tool_call.id
        yield ToolResultStartEvent(reply_id=rid, tool_call_id=cid, tool_call_name=tool_call.name)
        yield ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=cid, delta="4")
        yield ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=cid, delta="2")
        yield ToolResultEndEvent(reply_id=rid, tool_call_id=cid, state=self.tool_state)

    async def _reply(self, inputs: Msg | ExternalExecutionResultEvent) -> AsyncIterator[AgentEvent]:
        yield ReplyStartEvent(reply_id="r1", session_id="session-1", name=self.agent.name)
        if isinstance(inputs, Msg):
            call = self.chain.wrap_model_call(call_model)
            stream = await call(
                messages=[inputs], tools=[], tool_choice=None, current_model=self.agent.model
            )
            response = await collect_response(stream)
            acting = self.chain.wrap_acting(self._run_tool)
            for block in response.content:
                if isinstance(block, ToolCallBlock):
                    async for event in acting(tool_call=block):
                        yield event
        for event in self.extra_events:
            yield event
        yield self.end

    async def run(self, inputs: Msg | ExternalExecutionResultEvent) -> list[AgentEvent]:
        events = []
        async for event in self.chain.wrap_reply(self._reply)(inputs=inputs):
            # The consumer's own code must not run inside the agent's spans.
            assert not trace.get_current_span().get_span_context().is_valid
            events.append(event)
        return events


async def test_a_reply_nests_its_model_call_and_tool_spans(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    model = ScriptedChatModel(
        [
            ScriptedResponse(
                text="Adding.",
                tool_calls=[ScriptedToolCall("add", {"a": 1, "b": 2}, id="call_1")],
            )
        ],
        model="m-1",
    )
    agent = make_agent(model)
    loop = FakeLoop(agent, MiddlewareChain(agent, [TracingMiddleware(provider)]))

    await loop.run(UserMsg("user", "what is 1+2?"))

    spans = exporter.get_finished_spans()
    reply = only(spans, "invoke_agent assistant")
    chat = only(spans, "chat m-1")
    tool = only(spans, "execute_tool add")
    assert parent_id(reply) is None
    assert parent_id(chat) == span_id(reply)
    assert parent_id(tool) == span_id(reply)
    assert loop.spans_seen_by_tools[0].get_span_context().span_id == span_id(tool)

    assert chat.kind is SpanKind.CLIENT
    chat_attrs = attrs(chat)
    assert chat_attrs["gen_ai.operation.name"] == "chat"
    assert chat_attrs["gen_ai.request.model"] == "m-1"
    assert chat_attrs["gen_ai.provider.name"] == "scripted"
    assert chat_attrs["gen_ai.usage.input_tokens"] > 0
    assert "what is 1+2?" in chat_attrs["gen_ai.input.messages"]
    output = json.loads(chat_attrs["gen_ai.output.messages"])
    assert [b["type"] for b in output] == ["text", "tool_call"]
    assert output[0]["text"] == "Adding."

    assert attrs(tool) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": json.dumps({"a": 1, "b": 2}),
        "gen_ai.tool.call.result": "42",
        "agent_core.tool.result_state": "success",
    }
    assert tool.status.status_code is StatusCode.UNSET


async def test_the_reply_span_records_agent_session_input_and_final_output(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = make_agent(ScriptedChatModel(["Hello there."]))
    chain = MiddlewareChain(agent, [TracingMiddleware(provider)])

    events = [e async for e in chain.wrap_reply(agent.reply_stream)(inputs=UserMsg("u", "hi"))]

    assert isinstance(events[0], ReplyStartEvent)
    reply_id = events[0].reply_id
    span = only(exporter.get_finished_spans(), "invoke_agent assistant")
    span_attrs = attrs(span)
    assert span_attrs["gen_ai.operation.name"] == "invoke_agent"
    assert span_attrs["gen_ai.agent.name"] == "assistant"
    assert span_attrs["gen_ai.conversation.id"] == "session-1"
    assert span_attrs["agent_core.reply.id"] == reply_id
    assert span_attrs["agent_core.reply.finished_reason"] == "completed"
    [user_msg] = json.loads(span_attrs["gen_ai.input.messages"])
    assert user_msg["content"][0]["text"] == "hi"
    [final] = json.loads(span_attrs["gen_ai.output.messages"])
    assert final["id"] == reply_id
    [text] = [block for block in final["content"] if block["type"] == "text"]
    assert text["text"] == "Hello there."


async def test_a_failed_reply_marks_its_span_as_an_error(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = make_agent(ScriptedChatModel([""]))
    end = ReplyEndEvent(
        reply_id="r1",
        finished_reason=ReplyFinishedReason.ERROR,
        error=ErrorInfo(message="model unreachable"),
    )
    await FakeLoop(agent, MiddlewareChain(agent, [TracingMiddleware(provider)]), end=end).run(
        UserMsg("u", "hi")
    )

    span = only(exporter.get_finished_spans(), "invoke_agent assistant")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "model unreachable"
    assert attrs(span)["agent_core.reply.finished_reason"] == "error"


async def test_pending_confirmations_and_external_executions_are_recorded(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = make_agent(ScriptedChatModel([""]))
    bash = ToolCallBlock(id="c1", name="Bash", input='{"command": "rm x"}')
    approve = ToolCallBlock(id="c2", name="approve", input="{}")
    extra = [
        RequireUserConfirmEvent(reply_id="r1", tool_calls=[bash]),
        RequireExternalExecutionEvent(reply_id="r1", tool_calls=[approve]),
    ]
    chain = MiddlewareChain(agent, [TracingMiddleware(provider)])

    await FakeLoop(agent, chain, extra_events=extra).run(UserMsg("u", "clean up"))

    span_attrs = attrs(only(exporter.get_finished_spans(), "invoke_agent assistant"))
    assert json.loads(span_attrs["agent_core.reply.pending_confirm_tool_calls"]) == [
        {"id": "c1", "name": "Bash", "arguments": '{"command": "rm x"}'}
    ]
    assert json.loads(span_attrs["agent_core.reply.pending_external_tool_calls"]) == [
        {"id": "c2", "name": "approve", "arguments": "{}"}
    ]


async def test_resuming_with_external_results_adds_a_compensating_tool_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = make_agent(ScriptedChatModel([""]))
    parked_at = datetime(2025, 1, 1, 10, 0, tzinfo=UTC)
    done_at = datetime(2025, 1, 1, 10, 5, tzinfo=UTC)
    call = ToolCallBlock(
        id="ext_1", name="approve", input='{"doc": 7}', created_at=parked_at.isoformat()
    )
    agent.state.context.append(AssistantMsg("assistant", [call], id="r1"))
    result = ToolResultBlock(
        id="ext_1",
        name="approve",
        output=[TextBlock(text="approved")],
        state=ToolResultState.SUCCESS,
        created_at=done_at.isoformat(),
    )
    resume = ExternalExecutionResultEvent(reply_id="r1", execution_results=[result])

    await FakeLoop(agent, MiddlewareChain(agent, [TracingMiddleware(provider)])).run(resume)

    spans = exporter.get_finished_spans()
    reply = only(spans, "invoke_agent assistant")
    external = only(spans, "execute_tool approve")
    assert parent_id(external) == span_id(reply)
    assert external.start_time == int(parked_at.timestamp()) * 10**9
    assert external.end_time == int(done_at.timestamp()) * 10**9
    assert attrs(external) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "approve",
        "gen_ai.tool.call.id": "ext_1",
        "gen_ai.tool.call.arguments": '{"doc": 7}',
        "gen_ai.tool.call.result": "approved",
        "agent_core.tool.result_state": "success",
        "agent_core.tool.external": True,
    }
    assert "EXTERNAL_EXECUTION_RESULT" in attrs(reply)["agent_core.reply.input_event"]


async def test_a_tool_ending_in_error_marks_its_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    model = ScriptedChatModel([ScriptedResponse(tool_calls=[ScriptedToolCall("add", id="c1")])])
    agent = make_agent(model)
    chain = MiddlewareChain(agent, [TracingMiddleware(provider)])

    await FakeLoop(agent, chain, tool_state=ToolResultState.ERROR).run(UserMsg("u", "add"))

    tool = only(exporter.get_finished_spans(), "execute_tool add")
    assert tool.status.status_code is StatusCode.ERROR
    assert attrs(tool)["agent_core.tool.result_state"] == "error"


async def test_the_model_span_lasts_until_the_stream_is_consumed(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    model = ScriptedChatModel(["a long answer"], model="m-1")
    agent = make_agent(model)
    call = MiddlewareChain(agent, [TracingMiddleware(provider)]).wrap_model_call(call_model)

    stream = await call(messages=[], tools=[], tool_choice=None, current_model=model)
    assert exporter.get_finished_spans() == ()
    chunks = [c async for c in stream]

    assert len(chunks) > 1
    assert [s.name for s in exporter.get_finished_spans()] == ["chat m-1"]


async def test_a_failed_model_request_ends_its_span_as_an_error(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    model = ScriptedChatModel([ScriptedResponse(error=ModelConnectionError("refused"))])
    agent = make_agent(model)
    call = MiddlewareChain(agent, [TracingMiddleware(provider)]).wrap_model_call(call_model)

    with pytest.raises(ModelConnectionError):
        await call(messages=[], tools=[], tool_choice=None, current_model=model)

    span = only(exporter.get_finished_spans(), "chat scripted")
    assert span.status.status_code is StatusCode.ERROR
    assert [e.name for e in span.events] == ["exception"]


async def test_a_whole_response_from_an_inner_middleware_is_traced(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    class Cache(MiddlewareBase):
        async def on_model_call(self, agent, input_kwargs, next_handler):
            return ChatResponse(content=[TextBlock(text="cached")], usage=ChatUsage(input_tokens=9))

    model = ScriptedChatModel(model="m-1")
    agent = make_agent(model)
    chain = MiddlewareChain(agent, [TracingMiddleware(provider), Cache()])

    result = await chain.wrap_model_call(call_model)(
        messages=[], tools=[], tool_choice=None, current_model=model
    )

    span_attrs = attrs(only(exporter.get_finished_spans(), "chat m-1"))
    assert span_attrs["gen_ai.usage.input_tokens"] == 9
    assert "cached" in span_attrs["gen_ai.output.messages"]
    assert isinstance(result, ChatResponse)
    assert result.content[0].text == "cached"


@pytest.mark.parametrize("explicit", [True, False], ids=["noop-provider", "no-global-provider"])
async def test_without_a_provider_every_hook_passes_straight_through(explicit: bool) -> None:
    if not explicit:
        assert isinstance(trace.get_tracer_provider(), ProxyTracerProvider), "a test set one"
    tracing = TracingMiddleware(NoOpTracerProvider() if explicit else None)
    model = ScriptedChatModel([ScriptedResponse(tool_calls=[ScriptedToolCall("add", id="c1")])])
    agent = make_agent(model)
    loop = FakeLoop(agent, MiddlewareChain(agent, [tracing]))
    answer = ChatResponse(content=[TextBlock(text="x")])

    async def model_call(**_: Any) -> ChatResponse:
        return answer

    events = await loop.run(UserMsg("u", "add"))

    assert await tracing.on_model_call(agent, {}, model_call) is answer
    assert isinstance(events[-1], ReplyEndEvent)
    assert not loop.spans_seen_by_tools[0].get_span_context().is_valid
