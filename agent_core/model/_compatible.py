"""What the OpenAI-compatible providers (DeepSeek, Moonshot, xAI, DashScope) have in common.

`CompatibleParameters` holds the Chat Completions parameters these providers accept alike;
`ThinkingChatModel` is a compatible model whose thinking is switched on or off explicitly and
which, thinking, takes no forced tool choice.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from agent_core.model._knobs import (
    FrequencyPenalty,
    ParallelToolCalls,
    PresencePenalty,
    Temperature,
    TopP,
)
from agent_core.model.base import ChatModelBase
from agent_core.model.openai import OpenAIChatModel


class CompatibleParameters(ChatModelBase.Parameters):
    """Request parameters of an OpenAI-compatible provider; unknown ones pass through."""

    model_config = ConfigDict(extra="allow")

    temperature: Temperature = None
    top_p: TopP = None
    max_tokens: int | None = Field(default=None, gt=0, description="Most tokens to generate.")
    frequency_penalty: FrequencyPenalty = None
    presence_penalty: PresencePenalty = None
    stop: list[str] | None = Field(default=None, description="Sequences that end the answer.")
    parallel_tool_calls: ParallelToolCalls = None


class ThinkingChatModel(OpenAIChatModel):
    """A compatible model sending `thinking_enable` as the `thinking` switch, on or off."""

    def _forces_tool_calls(self) -> bool:
        # In thinking mode these providers take only an `auto` or `none` tool choice.
        return not self.parameters.thinking_enable  # type: ignore[attr-defined]

    def _parameter_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`thinking_enable` is sent as the `thinking` switch; the rest as named."""
        on = fields.pop("thinking_enable")
        fields["thinking"] = {"type": "enabled" if on else "disabled"}
        return fields
