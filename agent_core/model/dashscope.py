"""`DashScopeChatModel`: Qwen models on Alibaba Cloud DashScope, over its OpenAI-compatible API.

The wire protocol is Chat Completions (see `OpenAIChatModel`); what differs is the parameters:
thinking is switched by `enable_thinking` and bounded by `thinking_budget`, and `top_k` is
accepted.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from pydantic import ConfigDict, Field

from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.model._compatible import ThinkingChatModel
from agent_core.model._knobs import ParallelToolCalls, TopK, TopP, thinking
from agent_core.model.base import ChatModelBase


class DashScopeChatModel(ThinkingChatModel):
    """A Qwen model served by DashScope.

    Args:
        credential: API key and (OpenAI-compatible) base URL.
        model: Model name, e.g. "qwen-plus".
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer over SSE (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx or a network error.
        retry_delay: Seconds between those attempts.
        context_size: The model's context window in tokens.
        formatter: Turns messages into the request's `messages` (`OpenAIChatFormatter` by
            default).
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """DashScope request parameters; unknown ones pass through as request fields."""

        model_config = ConfigDict(extra="allow")

        max_tokens: int | None = Field(default=None, gt=0, description="Most tokens to generate.")
        thinking_enable: bool = thinking("Let a hybrid model (e.g. qwen3) think before answering.")
        thinking_budget: int | None = Field(
            default=None, gt=0, description="Most tokens the model may spend thinking."
        )
        temperature: float | None = Field(
            default=None, ge=0, lt=2, description="Sampling temperature; higher is more random."
        )
        top_p: TopP = None
        top_k: TopK = None
        parallel_tool_calls: ParallelToolCalls = None

    type = "dashscope_chat"
    default_context_size = 131_072
    cards_dir = files("agent_core.model") / "_cards" / "dashscope"

    def _default_formatter(self) -> FormatterBase:
        return OpenAIChatFormatter(names=False)

    def _parameter_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`thinking_enable` is sent as DashScope's `enable_thinking`."""
        fields["enable_thinking"] = fields.pop("thinking_enable")
        return fields
