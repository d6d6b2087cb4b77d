"""`MiddlewareBase`: the hooks a middleware may implement around the agent's lifecycle."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agent_core.event import AgentEvent
from agent_core.model import ChatResponse

if TYPE_CHECKING:
    from agent_core.agent import Agent
    from agent_core.tool import ToolBase

EventHandler = Callable[..., AsyncIterator[AgentEvent]]
"""The inner layer of an event-yielding hook: call it with keyword arguments, iterate its events."""

ModelCallResult = ChatResponse | AsyncIterator[ChatResponse]
"""What a model call produces: a whole answer, or a stream of `ChatResponse` deltas ending with
one `is_last=True` response carrying the whole answer (what `ChatModelBase.__call__` returns)."""

ModelCallHandler = Callable[..., Awaitable[ModelCallResult]]
"""The inner layer of `on_model_call`: await it with keyword arguments."""

CompressHandler = Callable[..., Awaitable[None]]
"""The inner layer of `on_compress_context`: await it with keyword arguments."""


class MiddlewareBase:
    """Custom logic around an agent's reply, reasoning, acting, model calls and context.

    Subclasses override only the hooks they need: the agent scans each middleware once, when it
    is built, and a hook that is not overridden costs nothing at run time.

    Onion hooks (`on_reply`, `on_reasoning`, `on_acting`, `on_model_call`,
    `on_compress_context`) receive the agent, the `input_kwargs` flowing into the wrapped layer,
    and `next_handler`, the next layer inward. `next_handler(**overrides)` runs that layer with
    `input_kwargs` updated by `overrides`, so `next_handler()` forwards the input unchanged and
    `next_handler(tool_choice="none")` replaces one field. A hook may call `next_handler` several
    times (retry, fallback) or not at all (short-circuit). The first middleware in the agent's
    list is the outermost layer.

    The event-yielding hooks (`on_reply`, `on_reasoning`, `on_acting`) are async generators:
    `next_handler(...)` returns an async iterator of events, and whatever the hook yields is what
    the layer outside it sees, so a hook may observe, drop, rewrite or add events.
    """

    async def on_reply(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: EventHandler,
    ) -> AsyncIterator[AgentEvent]:
        """Wrap a whole reply: every reasoning-acting round and the final output.

        Args:
            agent: The agent replying.
            input_kwargs: `{"inputs": Msg | list[Msg] | UserConfirmResultEvent |
                ExternalExecutionResultEvent | None}`.
            next_handler: Runs the reply; returns an async iterator of its events, from
                `ReplyStartEvent` to `ReplyEndEvent`.

        Yields:
            The events the reply produces, as this middleware lets them through.
        """
        async for event in next_handler(**input_kwargs):
            yield event

    async def on_reasoning(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: EventHandler,
    ) -> AsyncIterator[AgentEvent]:
        """Wrap one reasoning step: system prompt and input assembly, model call, decoding.

        Args:
            agent: The agent reasoning.
            input_kwargs: `{"tool_choice": str | None}` ("auto", "none", "required", a tool
                name, or None for the model's default).
            next_handler: Runs the step; returns an async iterator of its events
                (`ModelCallStartEvent`, block events, `ModelCallEndEvent`).

        Yields:
            The step's events, as this middleware lets them through.
        """
        async for event in next_handler(**input_kwargs):
            yield event

    async def on_acting(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: EventHandler,
    ) -> AsyncIterator[AgentEvent]:
        """Wrap the execution of one tool call inside the agent.

        Tool calls executed outside the agent (external execution) never pass through here.

        Args:
            agent: The agent acting.
            input_kwargs: `{"tool_call": ToolCallBlock}`.
            next_handler: Runs the tool; returns an async iterator of its events
                (`ToolResultStartEvent`, result deltas, `ToolResultEndEvent`).

        Yields:
            The tool call's events, as this middleware lets them through.
        """
        async for event in next_handler(**input_kwargs):
            yield event

    async def on_model_call(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: ModelCallHandler,
    ) -> ModelCallResult:
        """Wrap one chat-model API call, the layer closest to the model.

        Awaiting `next_handler` sends the request: an error the provider reports before
        answering (HTTP status, connection refused) is raised by the await, so a middleware can
        retry or fall back by calling `next_handler` again. Errors in the middle of a stream are
        raised while the stream is iterated.

        Args:
            agent: The agent calling the model.
            input_kwargs: `{"messages": list[Msg], "tools": list[dict], "tool_choice":
                ToolChoice | str | None, "current_model": ChatModelBase}` (`tools` are
                function-tool dicts).
            next_handler: Performs the call: `await current_model(messages, tools,
                tool_choice)`.

        Returns:
            A `ChatResponse` (a whole answer, e.g. from a cache) or an async iterator of
            `ChatResponse` deltas ending with an `is_last=True` one; the agent accepts either.
        """
        return await next_handler(**input_kwargs)

    async def on_compress_context(
        self,
        agent: Agent,
        input_kwargs: dict[str, Any],
        next_handler: CompressHandler,
    ) -> None:
        """Wrap `Agent.compress_context()`, which runs before every reasoning step.

        Args:
            agent: The agent whose context may be compressed.
            input_kwargs: `{"context_config": ContextConfig | None}` (None: the agent's own).
            next_handler: Checks the context and compresses it if it is over the threshold.
        """
        await next_handler(**input_kwargs)

    async def on_system_prompt(self, agent: Agent, current_prompt: str) -> str:
        """Transform the system prompt each time it is assembled.

        Middlewares form a pipeline in list order: each receives the previous one's output.

        Args:
            agent: The agent whose prompt is assembled.
            current_prompt: The prompt so far.

        Returns:
            The prompt to pass on.
        """
        return current_prompt

    async def list_tools(self) -> list[ToolBase]:
        """Return tools this middleware contributes.

        The agent never calls this itself; whoever assembles the toolkit decides whether to
        collect these tools (see `collect_tools`).

        Returns:
            The contributed tools (none by default).
        """
        return []
