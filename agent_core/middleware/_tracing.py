"""`TracingMiddleware`: OpenTelemetry spans for replies, model calls and tool executions.

Each reply produces one span tree, named and attributed after the OpenTelemetry GenAI semantic
conventions (`gen_ai.*`), plus a few `agent_core.*` attributes the conventions have no name for::

    invoke_agent {agent name}        on_reply      agent, session, reply id, input/output, pending
    ├── chat {model name}            on_model_call model, provider, tokens, request/response
    ├── execute_tool {tool name}     on_acting     tool name, call id, arguments, result
    └── execute_tool {tool name}     compensating span for a call executed outside the agent
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import (
    NoOpTracerProvider,
    ProxyTracerProvider,
    Span,
    SpanKind,
    Status,
    StatusCode,
    Tracer,
    TracerProvider,
)
from pydantic import BaseModel

from agent_core import __version__
from agent_core.event import (
    AgentEvent,
    EventBase,
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
    ToolResultTextDeltaEvent,
)
from agent_core.message import Msg, ReplyFinishedReason, ToolCallBlock, ToolResultState
from agent_core.middleware._base import EventHandler, MiddlewareBase, ModelCallHandler
from agent_core.model import ChatModelBase, ChatResponse
from agent_core.model._response import ResponseAccumulator

if TYPE_CHECKING:
    from agent_core.agent import Agent
    from agent_core.middleware._base import ModelCallResult

T = TypeVar("T")

OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
REQUEST_MODEL = "gen_ai.request.model"
PROVIDER = "gen_ai.provider.name"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
REPLY_ID = "agent_core.reply.id"
REPLY_INPUT_EVENT = "agent_core.reply.input_event"
REPLY_FINISHED_REASON = "agent_core.reply.finished_reason"
PENDING_CONFIRM = "agent_core.reply.pending_confirm_tool_calls"
PENDING_EXTERNAL = "agent_core.reply.pending_external_tool_calls"
TOOL_RESULT_STATE = "agent_core.tool.result_state"
TOOL_EXTERNAL = "agent_core.tool.external"


def _json(items: Sequence[BaseModel]) -> str:
    return "[" + ",".join(item.model_dump_json() for item in items) + "]"


def _calls_json(calls: Sequence[ToolCallBlock]) -> str:
    return json.dumps([{"id": c.id, "name": c.name, "arguments": c.input} for c in calls])


def _fail(span: Span, exc: Exception) -> None:
    span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


def _ns(iso: str) -> int:
    moment = datetime.fromisoformat(iso)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1_000_000) * 1_000


def _provider_name(model: ChatModelBase) -> str:
    name = type(model).__name__
    return name.removesuffix("ChatModel").lower() or name.lower()


def _find_call(agent: Agent, reply_id: str, call_id: str) -> ToolCallBlock | None:
    for msg in reversed(agent.state.context):
        if msg.id == reply_id:
            return msg.find_block(call_id, ToolCallBlock)
    return None


def _record_inputs(span: Span, inputs: object) -> None:
    if isinstance(inputs, Msg):
        span.set_attribute(INPUT_MESSAGES, _json([inputs]))
    elif isinstance(inputs, EventBase):
        span.set_attribute(REPLY_INPUT_EVENT, inputs.model_dump_json())
    elif isinstance(inputs, Sequence):
        span.set_attribute(INPUT_MESSAGES, _json([m for m in inputs if isinstance(m, Msg)]))


def _record_response(span: Span, response: ChatResponse) -> None:
    if (usage := response.usage) is not None:
        span.set_attribute(INPUT_TOKENS, usage.input_tokens)
        span.set_attribute(OUTPUT_TOKENS, usage.output_tokens)
        span.set_attribute(CACHE_READ_TOKENS, usage.cache_input_tokens)
        span.set_attribute(CACHE_CREATION_TOKENS, usage.cache_creation_input_tokens)
    span.set_attribute(OUTPUT_MESSAGES, _json(response.content))


async def _in_span(span: Span, stream: AsyncIterator[T]) -> AsyncIterator[T]:
    """Iterate `stream` with `span` current only while the stream itself runs.

    Keeping a span attached across a `yield` would leak it into the consumer's code between
    items, and mis-parent spans when a consumer interleaves replies or resumes from another task.
    """
    ctx = trace.set_span_in_context(span)
    while True:
        token = otel_context.attach(ctx)
        try:
            item = await anext(stream)
        except StopAsyncIteration:
            return
        finally:
            otel_context.detach(token)
        yield item


async def _traced_chunks(
    span: Span, stream: AsyncIterator[ChatResponse]
) -> AsyncIterator[ChatResponse]:
    """Pass the stream on; record its final (accumulated) response when it ends."""
    recording = span.is_recording()
    accumulator = ResponseAccumulator()
    final: ChatResponse | None = None
    try:
        async for chunk in _in_span(span, stream):
            if recording and chunk.is_last:
                final = chunk
            elif recording:
                accumulator.add(chunk)
            yield chunk
    except Exception as exc:
        _fail(span, exc)
        raise
    finally:
        if recording:
            _record_response(span, final or accumulator.build())
        span.end()


class TracingMiddleware(MiddlewareBase):
    """Trace every reply, model call and tool execution with OpenTelemetry.

    Without a configured provider (neither `tracer_provider` nor a global one set with
    `trace.set_tracer_provider`), every hook passes straight through: no span is started and no
    attribute is computed. The provider is looked up on each call, so a global provider set
    after the agent was built is picked up.

    Args:
        tracer_provider: The provider to trace with; None uses the global one.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._provider = tracer_provider
        self._cached: tuple[TracerProvider, Tracer] | None = None

    def _tracer(self) -> Tracer | None:
        provider = self._provider or trace.get_tracer_provider()
        if isinstance(provider, ProxyTracerProvider | NoOpTracerProvider):
            return None
        if self._cached is None or self._cached[0] is not provider:
            self._cached = (provider, provider.get_tracer("agent_core", __version__))
        return self._cached[1]

    async def on_reply(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: EventHandler,
    ) -> AsyncIterator[AgentEvent]:
        """Trace the reply as an `invoke_agent` span (see the module docstring)."""
        tracer = self._tracer()
        if tracer is None:
            async for event in next_handler(**input_kwargs):
                yield event
            return
        span = tracer.start_span(
            f"invoke_agent {agent.name}",
            attributes={
                OPERATION: "invoke_agent",
                AGENT_NAME: agent.name,
                CONVERSATION_ID: agent.state.session_id,
            },
        )
        recording = span.is_recording()
        inputs = input_kwargs.get("inputs")
        if recording:
            _record_inputs(span, inputs)
            if isinstance(inputs, ExternalExecutionResultEvent):
                self._compensate(tracer, span, agent, inputs)
        reply_id = ""
        try:
            async for event in _in_span(span, next_handler(**input_kwargs)):
                if recording:
                    reply_id = _observe_reply(span, event) or reply_id
                yield event
        except Exception as exc:
            _fail(span, exc)
            raise
        finally:
            if recording and reply_id:
                output = [m for m in agent.state.context if m.id == reply_id]
                span.set_attribute(OUTPUT_MESSAGES, _json(output))
            span.end()

    def _compensate(
        self, tracer: Tracer, parent: Span, agent: Agent, event: ExternalExecutionResultEvent
    ) -> None:
        """Record one `execute_tool` span per externally executed call, from its timestamps.

        The span runs from the tool call's creation (when the reply parked) to the result's
        creation; both are read from the data, so the agent may have been rebuilt in between.
        """
        ctx = trace.set_span_in_context(parent)
        for result in event.execution_results:
            call = _find_call(agent, event.reply_id, result.id)
            end = _ns(result.finished_at or result.created_at)
            start = min(_ns(call.created_at), end) if call is not None else end
            span = tracer.start_span(
                f"execute_tool {result.name}",
                context=ctx,
                start_time=start,
                attributes={
                    OPERATION: "execute_tool",
                    TOOL_NAME: result.name,
                    TOOL_CALL_ID: result.id,
                    TOOL_RESULT: result.output_text(),
                    TOOL_RESULT_STATE: result.state.value,
                    TOOL_EXTERNAL: True,
                },
            )
            if call is not None:
                span.set_attribute(TOOL_ARGUMENTS, call.input)
            if result.state is ToolResultState.ERROR:
                span.set_status(Status(StatusCode.ERROR, "the external execution failed"))
            span.end(end_time=end)

    async def on_model_call(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: ModelCallHandler,
    ) -> ModelCallResult:
        """Trace the call as a `chat` span, ended when its stream is exhausted."""
        tracer = self._tracer()
        if tracer is None:
            return await next_handler(**input_kwargs)
        model: ChatModelBase = input_kwargs["current_model"]
        span = tracer.start_span(
            f"chat {model.model}",
            kind=SpanKind.CLIENT,
            attributes={
                OPERATION: "chat",
                REQUEST_MODEL: model.model,
                PROVIDER: _provider_name(model),
            },
        )
        if span.is_recording():
            span.set_attribute(INPUT_MESSAGES, _json(input_kwargs["messages"]))
        try:
            with trace.use_span(span):
                result = await next_handler(**input_kwargs)
        except BaseException:
            span.end()
            raise
        if isinstance(result, ChatResponse):
            if span.is_recording():
                _record_response(span, result)
            span.end()
            return result
        return _traced_chunks(span, result)

    async def on_acting(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: EventHandler,
    ) -> AsyncIterator[AgentEvent]:
        """Trace the tool call as an `execute_tool` span."""
        tracer = self._tracer()
        if tracer is None:
            async for event in next_handler(**input_kwargs):
                yield event
            return
        call: ToolCallBlock = input_kwargs["tool_call"]
        span = tracer.start_span(
            f"execute_tool {call.name}",
            attributes={
                OPERATION: "execute_tool",
                TOOL_NAME: call.name,
                TOOL_CALL_ID: call.id,
                TOOL_ARGUMENTS: call.input,
            },
        )
        recording = span.is_recording()
        output: list[str] = []
        try:
            async for event in _in_span(span, next_handler(**input_kwargs)):
                if recording and isinstance(event, ToolResultTextDeltaEvent):
                    output.append(event.delta)
                elif recording and isinstance(event, ToolResultEndEvent):
                    span.set_attribute(TOOL_RESULT_STATE, event.state.value)
                    if event.state is ToolResultState.ERROR:
                        span.set_status(Status(StatusCode.ERROR, "the tool failed"))
                yield event
        except Exception as exc:
            _fail(span, exc)
            raise
        finally:
            if recording:
                span.set_attribute(TOOL_RESULT, "".join(output))
            span.end()


def _observe_reply(span: Span, event: AgentEvent) -> str | None:
    """Record what `event` tells about the reply; return the reply id when it starts."""
    match event:
        case ReplyStartEvent():
            span.set_attribute(REPLY_ID, event.reply_id)
            return event.reply_id
        case RequireUserConfirmEvent():
            span.set_attribute(PENDING_CONFIRM, _calls_json(event.tool_calls))
        case RequireExternalExecutionEvent():
            span.set_attribute(PENDING_EXTERNAL, _calls_json(event.tool_calls))
        case ReplyEndEvent():
            span.set_attribute(REPLY_FINISHED_REASON, event.finished_reason.value)
            if event.finished_reason is ReplyFinishedReason.ERROR:
                message = event.error.message if event.error else "the reply failed"
                span.set_status(Status(StatusCode.ERROR, message))
    return None
