"""`OpenAIChatModel`: OpenAI Chat Completions (and compatible servers) over httpx."""

from __future__ import annotations

import builtins
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from agent_core.credential import OpenAICredential
from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.model._chat_completions import DeltaDecoder
from agent_core.model._http import BodyArgs, HTTPChatModel, ResponseDecoder
from agent_core.model._knobs import (
    FrequencyPenalty,
    ParallelToolCalls,
    PresencePenalty,
    Seed,
    Temperature,
    TopP,
    thinking,
)
from agent_core.model._transport import parse_retry_after
from agent_core.model.base import TOOL_CHOICE_MODES, ChatModelBase

__all__ = ["OpenAIChatModel", "parse_retry_after"]


class OpenAIChatModel(HTTPChatModel):
    """A model served over the OpenAI Chat Completions protocol.

    Args:
        credential: API key, base URL and organization.
        model: Model name sent as `model`.
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer over SSE (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx or a network error.
        retry_delay: Seconds between those attempts.
        context_size: The model's context window in tokens.
        formatter: Turns messages into the request's `messages` (`OpenAIChatFormatter` by
            default; `OpenAIMultiAgentFormatter` for conversations among several agents).
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """Chat Completions request parameters; unknown ones pass through to compatible servers.

        `thinking_enable` is not sent: it gates `reasoning_effort`, which is sent only while
        thinking is enabled. `parallel_tool_calls` is sent only with tools.
        """

        model_config = ConfigDict(extra="allow")

        temperature: Temperature = None
        top_p: TopP = None
        max_tokens: int | None = Field(
            default=None, gt=0, description="Most tokens to generate (compatible servers)."
        )
        max_completion_tokens: int | None = Field(
            default=None, gt=0, description="Most tokens to generate, reasoning included."
        )
        frequency_penalty: FrequencyPenalty = None
        presence_penalty: PresencePenalty = None
        seed: Seed = None
        stop: list[str] | None = Field(
            default=None, max_length=4, description="Sequences that end the answer."
        )
        parallel_tool_calls: ParallelToolCalls = None
        thinking_enable: bool = thinking(
            "Let a reasoning model reason at `reasoning_effort` (o3, o4-mini, ...)."
        )
        reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = (
            Field(
                default=None,
                description="How hard a reasoning model thinks; sent only with thinking enabled.",
            )
        )

    type = "openai_chat"
    path = "/chat/completions"
    decoder: ClassVar[builtins.type[ResponseDecoder]] = DeltaDecoder
    cards_dir: ClassVar[Traversable | None] = files("agent_core.model") / "_cards" / "openai"

    def _default_formatter(self) -> FormatterBase:
        return OpenAIChatFormatter()

    def _auth_headers(self) -> dict[str, str]:
        headers = super()._auth_headers()
        if isinstance(self.credential, OpenAICredential) and self.credential.organization:
            headers["OpenAI-Organization"] = self.credential.organization
        return headers

    async def _body(self, call: BodyArgs) -> dict[str, Any]:
        fields = self.parameters.model_dump(exclude_none=True)
        parallel = fields.pop("parallel_tool_calls", None)
        body: dict[str, Any] = {
            **self._parameter_fields(fields),
            "model": call.model_name,
            "messages": await self.formatter.format(call.messages),
            "stream": self.stream,
        }
        body.update(call.extra)
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        if call.tools:
            body["tools"] = call.tools
            if parallel is not None:
                body["parallel_tool_calls"] = parallel
            if call.tool_choice is not None:
                mode = call.tool_choice.mode
                body["tool_choice"] = (
                    mode
                    if mode in TOOL_CHOICE_MODES
                    else {"type": "function", "function": {"name": mode}}
                )
        return body

    def _parameter_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Map the set parameters (`parallel_tool_calls` aside) to request body fields."""
        thinking = fields.pop("thinking_enable")
        effort = fields.pop("reasoning_effort", None)
        if thinking and effort is not None:
            fields["reasoning_effort"] = effort
        return fields
