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
from agent_core.message import Msg
from agent_core.middleware._base import (
    CompressHandler,
    EventHandler,
    MiddlewareBase,
    ModelCallHandler,
    ModelCallResult,
)
from agent_core.model import ChatModelBase, ToolChoice

if TYPE_CHECKING:
    from agent_core.agent import Agent
    from agent_core.tool import ToolBase

R = TypeVar("R")
Hook = Callable[["Agent", dict[str, Any], Callable[..., R]], R]


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


async def call_model(
    *,
    messages: list[Msg],
    tools: list[dict[str, Any]],
    tool_choice: ToolChoice | str | None,
    current_model: ChatModelBase,
) -> ModelCallResult:
    """The innermost model-call layer: `await current_model(messages, tools, tool_choice)`.

    A request that fails before answering raises from the await (where an `on_model_call`
    middleware can retry or fall back), not later from the middle of the loop's iteration.

    Raises:
        ModelError: the provider failed before answering.
    """
    return await current_model(messages, tools or None, tool_choice)


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

    def wrap_model_call(self, handler: ModelCallHandler) -> ModelCallHandler:
        """Wrap the model-call handler (usually `call_model`).

        It is called as `await handler(messages=..., tools=..., tool_choice=...,
        current_model=...)` and returns a whole `ChatResponse` or a stream of deltas.
        """
        return _onion(self._agent, self._model_call, handler)

    def wrap_compress_context(self, handler: CompressHandler) -> CompressHandler:
        """Wrap the context-compression handler, called as `await handler(context_config=...)`.

        `context_config` is a `ContextConfig`, or None for the agent's own.
        """
        return _onion(self._agent, self._compress, handler)

    @property
    def wraps_reply(self) -> bool:
        """Whether a middleware hooks the whole reply (`wrap_reply` returns another handler)."""
        return bool(self._reply)

    @property
    def sees_compression(self) -> bool:
        """Whether a middleware hooks context compression or the prompt it measures."""
        return bool(self._compress or self._system_prompt)

    @property
    def rewrites_system_prompt(self) -> bool:
        """Whether a middleware hooks the system prompt (else `system_prompt` returns it as is)."""
        return bool(self._system_prompt)

    async def system_prompt(self, prompt: str) -> str:
        """Run `prompt` through every `on_system_prompt` hook, in list order."""
        for hook in self._system_prompt:
            prompt = await hook(self._agent, prompt)
        return prompt
