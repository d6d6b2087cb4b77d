"""`MiddlewareChain`: composes an agent's middlewares around the loop's handlers.

Every `wrap_*` method takes the loop's own handler for a phase (the innermost layer) and returns
a handler with the same calling convention: keyword arguments only, named as in the hook's
`input_kwargs`. Middlewares are composed as an onion, the first listed outermost. A phase no
middleware hooks gets its handler back unchanged, so it costs nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from agent_core.event import AgentEvent
from agent_core.message import Msg, TextBlock, ThinkingBlock
from agent_core.middleware._base import (
    CompressHandler,
    EventHandler,
    MiddlewareBase,
    ModelCallHandler,
    ModelCallResult,
)
from agent_core.model.base import (
    ChatModelBase,
    ChatResponse,
    ModelChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallArgsChunk,
    ToolCallStartChunk,
    ToolSchema,
    UsageChunk,
)

if TYPE_CHECKING:
    from agent_core.agent import Agent
    from agent_core.tool import ToolBase

R = TypeVar("R")
Hook = Callable[["Agent", dict[str, Any], Callable[..., R]], R]
ModelStreamHandler = Callable[..., Awaitable[AsyncIterator[ModelChunk]]]
"""A model-call handler as the loop sees it: awaiting it yields a started chunk stream."""


def _implements(middleware: MiddlewareBase, hook: str) -> bool:
    return getattr(type(middleware), hook, None) not in (None, getattr(MiddlewareBase, hook))


def _layer(agent: Agent, hook: Hook[R], inner: Callable[..., R]) -> Callable[..., R]:
    def layer(**input_kwargs: Any) -> R:
        def next_handler(**overrides: Any) -> R:
            return inner(**{**input_kwargs, **overrides})

        return hook(agent, input_kwargs, next_handler)

    return layer


def _onion(agent: Agent, hooks: Sequence[Hook[R]], handler: Callable[..., R]) -> Callable[..., R]:
    for hook in reversed(hooks):
        handler = _layer(agent, hook, handler)
    return handler


async def _replay(chunks: Sequence[ModelChunk]) -> AsyncIterator[ModelChunk]:
    for chunk in chunks:
        yield chunk


async def _prepend(first: ModelChunk, rest: AsyncIterator[ModelChunk]) -> AsyncIterator[ModelChunk]:
    yield first
    async for chunk in rest:
        yield chunk


def response_chunks(response: ChatResponse) -> list[ModelChunk]:
    """Split a whole `ChatResponse` into the chunks a stream of it would have carried."""
    chunks: list[ModelChunk] = []
    for block in response.content:
        if isinstance(block, TextBlock):
            chunks.append(TextChunk(text=block.text))
        elif isinstance(block, ThinkingBlock):
            chunks.append(ThinkingChunk(text=block.thinking))
        else:
            chunks.append(ToolCallStartChunk(call_id=block.id, name=block.name))
            chunks.append(ToolCallArgsChunk(call_id=block.id, delta=block.input))
    chunks.append(UsageChunk(usage=response.usage))
    return chunks


async def call_model(
    *,
    messages: list[Msg],
    tools: list[ToolSchema],
    tool_choice: str | None,
    current_model: ChatModelBase,
) -> AsyncIterator[ModelChunk]:
    """The innermost model-call layer: start `current_model`'s stream.

    The first chunk is awaited here, so a request that fails before answering raises from the
    await (where an `on_model_call` middleware can retry or fall back) rather than later, from
    the middle of the loop's iteration.

    Raises:
        ModelError: the provider failed before its first chunk.
    """
    stream = aiter(current_model.stream(messages, tools or None, tool_choice))
    try:
        first = await anext(stream)
    except StopAsyncIteration:
        return _replay([])
    return _prepend(first, stream)


async def collect_tools(middlewares: Sequence[MiddlewareBase]) -> list[ToolBase]:
    """Collect the tools `middlewares` contribute through `list_tools`, in list order.

    The agent never does this itself: whoever assembles its toolkit calls this (no agent needs
    to exist yet) and registers the result.
    """
    tools: list[ToolBase] = []
    for middleware in middlewares:
        tools.extend(await middleware.list_tools())
    return tools


class MiddlewareChain:
    """An agent's middlewares, sorted once by the hooks each one implements.

    Args:
        agent: The agent the hooks receive as their first argument.
        middlewares: In order; the first is the outermost layer of every onion hook and the
            first stage of the `on_system_prompt` pipeline.
    """

    def __init__(self, agent: Agent, middlewares: Sequence[MiddlewareBase] = ()) -> None:
        self._agent = agent
        self.middlewares = tuple(middlewares)

        def implementers(hook: str) -> list[MiddlewareBase]:
            return [m for m in self.middlewares if _implements(m, hook)]

        self._reply: list[Hook[AsyncIterator[AgentEvent]]] = [
            m.on_reply for m in implementers("on_reply")
        ]
        self._reasoning: list[Hook[AsyncIterator[AgentEvent]]] = [
            m.on_reasoning for m in implementers("on_reasoning")
        ]
        self._acting: list[Hook[AsyncIterator[AgentEvent]]] = [
            m.on_acting for m in implementers("on_acting")
        ]
        self._model_call: list[Hook[Awaitable[ModelCallResult]]] = [
            m.on_model_call for m in implementers("on_model_call")
        ]
        self._compress: list[Hook[Awaitable[None]]] = [
            m.on_compress_context for m in implementers("on_compress_context")
        ]
        self._system_prompt = [m.on_system_prompt for m in implementers("on_system_prompt")]

    def wrap_reply(self, handler: EventHandler) -> EventHandler:
        """Wrap the whole-reply handler, called as `handler(inputs=...)`.

        `inputs` is a `Msg`, a list of them, a `UserConfirmResultEvent`, an
        `ExternalExecutionResultEvent` or None; the handler returns an async iterator of the
        reply's events.
        """
        return _onion(self._agent, self._reply, handler)

    def wrap_reasoning(self, handler: EventHandler) -> EventHandler:
        """Wrap one reasoning step's handler, called as `handler(tool_choice=...)`.

        The handler assembles the prompt (through `system_prompt`), calls the model and returns
        an async iterator of the step's events, not yet folded into the reply: fold what the
        wrapped handler yields, since middlewares may add events of their own.
        """
        return _onion(self._agent, self._reasoning, handler)

    def wrap_acting(self, handler: EventHandler) -> EventHandler:
        """Wrap one tool call's handler, called as `handler(tool_call=...)`.

        The handler executes the `ToolCallBlock` and returns an async iterator of its unfolded
        `ToolResult*` events; fold what the wrapped handler yields.
        """
        return _onion(self._agent, self._acting, handler)

    def wrap_model_call(self, handler: ModelStreamHandler) -> ModelStreamHandler:
        """Wrap the model-call handler (usually `call_model`).

        It is called as `await handler(messages=..., tools=..., tool_choice=...,
        current_model=...)` and returns a started chunk stream. Middlewares may answer with a
        whole `ChatResponse`; the wrapped handler turns that into chunks, so the loop always
        gets a stream.
        """
        if not self._model_call:
            return handler
        onion: ModelCallHandler = _onion(self._agent, self._model_call, handler)

        async def wrapped(**input_kwargs: Any) -> AsyncIterator[ModelChunk]:
            result = await onion(**input_kwargs)
            if isinstance(result, ChatResponse):
                return _replay(response_chunks(result))
            return result

        return wrapped

    def wrap_compress_context(self, handler: CompressHandler) -> CompressHandler:
        """Wrap the context-compression handler, called as `await handler(context_config=...)`.

        `context_config` is a `ContextConfig`, or None for the agent's own.
        """
        return _onion(self._agent, self._compress, handler)

    async def system_prompt(self, prompt: str) -> str:
        """Run `prompt` through every `on_system_prompt` hook, in list order."""
        for hook in self._system_prompt:
            prompt = await hook(self._agent, prompt)
        return prompt
