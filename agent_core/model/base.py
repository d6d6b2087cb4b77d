"""The chat-model interface: a provider answers messages + tools with `ChatResponse`s.

`ChatModelBase.__call__` is what callers use: it normalises the tools and the tool choice,
retries a request that failed before answering, and for a streaming model wraps the provider's
deltas so the stream ends with one accumulated `is_last=True` response. Providers implement only
`_call_api`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_core.credential import CredentialBase
from agent_core.deferred_model import DeferredModel
from agent_core.errors import ModelConnectionError, ModelHTTPError
from agent_core.message import Msg
from agent_core.model._response import ChatResponse, ResponseAccumulator
from agent_core.model.card import ModelCard, load_model_cards

if TYPE_CHECKING:
    from agent_core.model._structured import StructuredModel, StructuredResponse

logger = logging.getLogger(__name__)

TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_CARDS_DIR_NAME = "_models"


class ToolSchema(DeferredModel):
    """A tool as the model sees it: name, description and JSON schema of its input."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Return the tool as a function-tool dict (the `tools` shape models take)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolChoice(DeferredModel):
    """Which tools the model may, or must, call.

    `mode` is "auto" (the model decides), "none" (no tool), "required" (at least one tool) or a
    tool name (exactly that tool). `tools`, when given, narrows the tools offered to those names.
    """

    model_config = ConfigDict(extra="forbid")

    mode: Literal["auto", "none", "required"] | str = Field(
        description='"auto", "none", "required", or the name of the tool to force.'
    )
    tools: list[str] | None = Field(
        default=None, description="Offer only these tools (by name); all when None."
    )


ToolLike = ToolSchema | Mapping[str, Any]
"""A tool given to a model: a `ToolSchema` or a function-tool dict."""


def tool_dicts(tools: Sequence[ToolLike] | None) -> list[dict[str, Any]]:
    """Return `tools` as function-tool dicts: `{"type": "function", "function": {...}}`.

    Raises:
        ValueError: a dict is not a function tool with a `function.name` string and, when
            present, a `function.parameters` object; the message names the field.
    """
    out = []
    for index, tool in enumerate(tools or []):
        if isinstance(tool, ToolSchema):
            out.append(tool.to_dict())
            continue
        # `type(...) is dict` first: the abstract `Mapping` check is slow for the common dicts.
        if type(tool) is not dict and not isinstance(tool, Mapping):
            raise ValueError(f"tools[{index}] must be a dict or a ToolSchema, not {type(tool)}")
        function = tool.get("function")
        if tool.get("type", "function") != "function" or (
            type(function) is not dict and not isinstance(function, Mapping)
        ):
            raise ValueError(f'tools[{index}] must be {{"type": "function", "function": {{...}}}}')
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise ValueError(f"tools[{index}].function.name must be a non-empty string")
        parameters = function.get("parameters", {})
        if type(parameters) is not dict and not isinstance(parameters, Mapping):
            raise ValueError(f"tools[{index}].function.parameters must be a JSON schema object")
        out.append({**tool, "type": "function", "function": dict(function)})
    return out


def select_tools(
    tools: list[dict[str, Any]], tool_choice: ToolChoice | str | None
) -> tuple[list[dict[str, Any]], ToolChoice | None]:
    """Validate `tool_choice` against `tools` and narrow `tools` to `tool_choice.tools`.

    Returns:
        The tools to offer and the choice as a `ToolChoice` (a string is its `mode`).

    Raises:
        ValueError: the choice names a tool that is not offered.
    """
    if tool_choice is None:
        return tools, None
    choice = ToolChoice(mode=tool_choice) if isinstance(tool_choice, str) else tool_choice
    names = [tool["function"]["name"] for tool in tools]
    if choice.tools is not None:
        unknown = sorted(set(choice.tools) - set(names))
        if unknown:
            raise ValueError(
                f"tool_choice.tools names unknown tools {unknown}; offered: {sorted(names)}"
            )
        tools = [tool for tool in tools if tool["function"]["name"] in choice.tools]
        names = [tool["function"]["name"] for tool in tools]
    if choice.mode not in TOOL_CHOICE_MODES and choice.mode not in names:
        raise ValueError(f"tool_choice forces {choice.mode!r}, which is not among {sorted(names)}")
    return tools, choice


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed model call may succeed when tried again (rate limits, 5xx, network)."""
    if isinstance(exc, ModelHTTPError):
        return exc.status in (408, 409, 429) or exc.status >= 500
    return isinstance(exc, ModelConnectionError)


MAX_RETRY_WAIT = 60.0
"""Longest wait before a retry, whatever `Retry-After` asks."""


def retry_wait(exc: BaseException, attempt: int, retry_delay: float) -> float:
    """Seconds to wait before retry number `attempt` (1-based) after `exc`.

    The provider's `Retry-After` (`ModelHTTPError.retry_after`) wins; otherwise the delay
    doubles from `retry_delay` with each attempt. Both are capped at `MAX_RETRY_WAIT`.
    """
    hinted = exc.retry_after if isinstance(exc, ModelHTTPError) else None
    wait = hinted if hinted is not None else retry_delay * 2 ** (attempt - 1)
    return min(wait, MAX_RETRY_WAIT)


async def collect_response(result: ChatResponse | AsyncIterator[ChatResponse]) -> ChatResponse:
    """Return the whole answer from what a model call returned.

    A `ChatResponse` is returned as is; a stream is drained and its final (`is_last=True`)
    response returned, or the accumulated deltas when a stream ends without one.
    """
    if isinstance(result, ChatResponse):
        return result
    accumulator = ResponseAccumulator()
    final: ChatResponse | None = None
    # Drained to its end, so the stream (and whatever wraps it, e.g. a tracing span) finishes.
    async for chunk in result:
        if chunk.is_last:
            final = chunk
        else:
            accumulator.add(chunk)
    return final or accumulator.build()


class ChatModelBase(ABC):
    """A chat model: answers a conversation with text, thinking, tool calls and data.

    A provider subclasses this, narrows `Parameters` to the request parameters it accepts,
    names itself in `type` (recorded on its model cards) and implements `_call_api`. Its model
    cards are the `*.yaml` / `*.json` files in `cards_dir`, by default the `_models` directory
    next to the subclass's module.

    Args:
        credential: How to reach the provider (None for providers that need none).
        model: The provider's model name.
        parameters: Request parameters: a `Parameters`, or a dict validated into one (its
            defaults when None).
        stream: Stream the answer as deltas (see `__call__`).
        max_retries: Retries of a request that failed retryably before any answer (rate limit,
            server error, network); 0 tries once.
        retry_delay: Seconds before the first retry, doubling with each (a provider's
            `Retry-After` wins; see `retry_wait`).
        context_size: The model's context window in tokens (what context compression uses).
    """

    class Parameters(DeferredModel):
        """Provider request parameters (temperature, max_tokens, ...); none by default."""

        model_config = ConfigDict(extra="forbid")

    type: str = ""
    """The implementation's type name, e.g. "openai_chat" (cards record it as `model_class`)."""

    cards_dir: ClassVar[Traversable | None] = None

    def __init__(
        self,
        credential: CredentialBase | None,
        model: str,
        parameters: BaseModel | Mapping[str, Any] | None = None,
        stream: bool = True,
        max_retries: int = 3,
        retry_delay: float = 1.0,
        context_size: int = 32_768,
    ) -> None:
        """Set the fields every chat model has.

        Raises:
            pydantic.ValidationError: a `parameters` dict does not fit `Parameters`.
            TypeError: `parameters` is another class's `Parameters`.
            ValueError: a number is out of range.
        """
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        if retry_delay < 0:
            raise ValueError("retry_delay must not be negative")
        if context_size <= 0:
            raise ValueError("context_size must be positive")
        self.credential = credential
        self.model = model
        if isinstance(parameters, BaseModel) and not isinstance(parameters, self.Parameters):
            raise TypeError(
                f"parameters must be a {type(self).__name__}.Parameters, "
                f"not {type(parameters).__qualname__}"
            )
        self.parameters = (
            parameters
            if isinstance(parameters, BaseModel)
            else self.Parameters.model_validate(parameters or {})
        )
        self.stream = stream
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.context_size = context_size

    @property
    def context_length(self) -> int:
        """The context window in tokens (the spec's other name for `context_size`)."""
        return self.context_size

    @classmethod
    def list_models(cls, custom_yaml_dir: str | Path | None = None) -> list[ModelCard]:
        """Return the cards of the models this class serves (none if it ships no cards).

        Args:
            custom_yaml_dir: Read the cards from this directory instead of the shipped ones.

        Raises:
            ValueError: a card file is malformed.
        """
        directory: Traversable | None
        if custom_yaml_dir is not None:
            directory = Path(custom_yaml_dir)
        elif cls.cards_dir is not None:
            directory = cls.cards_dir
        else:
            directory = Path(inspect.getfile(cls)).parent / _CARDS_DIR_NAME
            if not directory.is_dir():
                return []
        return load_model_cards(directory, cls.Parameters, cls.type)

    async def __call__(
        self,
        messages: list[Msg],
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        """Answer `messages`.

        Args:
            messages: The conversation, system prompt first.
            tools: Tools the model may call: function-tool dicts or `ToolSchema`s.
            tool_choice: A `ToolChoice`, or its mode as a string ("auto", "none", "required"
                or a tool name).
            **kwargs: Extra provider request fields.

        Returns:
            With `stream=False`, one `ChatResponse` holding the whole answer. With
            `stream=True`, an async generator of `ChatResponse` deltas (`is_last=False`, each
            carrying only what one step produced), ending with one `is_last=True` response
            carrying the whole accumulated content.

        Raises:
            ValueError: `tools` or `tool_choice` is malformed.
            ModelHTTPError: the provider answered with an error status.
            ModelConnectionError: the provider could not be reached or the stream broke.
            ModelResponseError: the provider's answer was malformed.
        """
        result = await self._request(messages, tools, tool_choice, **kwargs)
        if isinstance(result, ChatResponse):
            return result
        return _accumulating(result)

    async def _request(
        self,
        messages: list[Msg],
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncIterator[ChatResponse]:
        """`__call__` without the final accumulated response: the provider's own answer.

        For a caller that folds the deltas itself (the agent loop, when nothing else sees
        the stream); the raising contract is `__call__`'s.
        """
        offered, choice = select_tools(tool_dicts(tools), tool_choice)
        attempt = 0
        while True:
            try:
                result = self._call_api(self.model, messages, offered or None, choice, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
                break
            except Exception as exc:
                if attempt >= self.max_retries or not self._is_retryable(exc):
                    raise
                attempt += 1
                delay = retry_wait(exc, attempt, self.retry_delay)
                logger.warning(
                    "model %s failed (%s); retry %d of %d in %.1fs",
                    self.model,
                    exc,
                    attempt,
                    self.max_retries,
                    delay,
                )
                await asyncio.sleep(delay)
        return result

    @abstractmethod
    def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> (
        Awaitable[ChatResponse | AsyncIterator[ChatResponse]]
        | AsyncIterator[ChatResponse]
        | ChatResponse
    ):
        """Send one request (no retries) and return its answer.

        Usually an `async def` returning a whole `ChatResponse` (`stream=False`) or an async
        iterator of deltas (`stream=True`; `is_last=False`, one `id` per block across its
        deltas); an async generator function works too. An error the provider reports before
        answering should be raised here, before any delta, so `__call__` can retry it.

        Args:
            model_name: The model to ask (`self.model`).
            messages: The conversation, system prompt first.
            tools: Function-tool dicts, already narrowed by `tool_choice.tools`.
            tool_choice: The validated tool choice.
            **kwargs: Extra provider request fields.
        """

    def _is_retryable(self, exc: Exception) -> bool:
        """Whether `__call__` may retry after `exc` (see `is_retryable`)."""
        return is_retryable(exc)

    async def generate_structured_output(
        self,
        messages: list[Msg],
        structured_model: StructuredModel,
        *,
        max_repairs: int = 1,
    ) -> StructuredResponse:
        """Answer `messages` with output validated against `structured_model`.

        The model is forced to call a tool whose input schema is the pydantic model's (or the
        given JSON schema), or, where its provider refuses a forced call with the current
        parameters (see `_forces_tool_calls`), offered that tool alone and told to call it;
        invalid output gets a repair round telling the model what was wrong.

        Raises:
            StructuredOutputError: the output is still invalid after `max_repairs` repairs.
        """
        from agent_core.model._structured import generate_structured_output

        return await generate_structured_output(
            self,
            messages,
            structured_model,
            max_repairs=max_repairs,
            forced=self._forces_tool_calls(),
        )

    def _forces_tool_calls(self) -> bool:
        """Whether the provider accepts a forced tool choice with the current parameters.

        Anthropic, DashScope, Moonshot and DeepSeek refuse one while thinking is enabled.
        """
        return True

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most models hold nothing
        """Release network resources held by the model (no-op by default)."""


async def _accumulating(
    deltas: AsyncIterator[ChatResponse],
) -> AsyncGenerator[ChatResponse, None]:
    """Pass `deltas` on, then the accumulated final response (unless the provider sent one)."""
    accumulator = ResponseAccumulator()
    try:
        async for chunk in deltas:
            if chunk.is_last:
                yield chunk
                return
            accumulator.add(chunk)
            # Content-less deltas only carry usage or an id: fold them in, show nothing.
            if chunk.content:
                yield chunk
    finally:
        aclose = getattr(deltas, "aclose", None)
        if aclose is not None:
            await aclose()
    yield accumulator.build()
