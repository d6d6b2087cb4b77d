"""`XAIChatModel`: xAI's Grok models, over its OpenAI-compatible Chat Completions API.

The wire protocol is `OpenAIChatModel`'s; reasoning models (grok-3-mini) take a
`reasoning_effort` and stream `reasoning_content`.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_core.model.base import ChatModelBase
from agent_core.model.openai import OpenAIChatModel


class XAIChatModel(OpenAIChatModel):
    """A Grok model (constructor as `OpenAIChatModel`'s, with an `XAICredential`)."""

    class Parameters(ChatModelBase.Parameters):
        """xAI request parameters; unknown ones pass through as request fields."""

        model_config = ConfigDict(extra="allow")

        temperature: float | None = Field(
            default=None, ge=0, le=2, description="Sampling temperature; higher is more random."
        )
        top_p: float | None = Field(
            default=None, gt=0, le=1, description="Nucleus sampling: the probability mass kept."
        )
        max_tokens: int | None = Field(default=None, gt=0, description="Most tokens to generate.")
        frequency_penalty: float | None = Field(
            default=None, ge=-2, le=2, description="Penalty on tokens by their frequency so far."
        )
        presence_penalty: float | None = Field(
            default=None, ge=-2, le=2, description="Penalty on tokens that appeared at all."
        )
        stop: list[str] | None = Field(default=None, description="Sequences that end the answer.")
        parallel_tool_calls: bool | None = Field(
            default=None, description="Whether the model may call several tools at once."
        )
        seed: int | None = Field(default=None, description="Seed for best-effort determinism.")
        thinking_enable: bool = Field(
            default=False,
            title="Thinking",
            description="Send `reasoning_effort` (models taking one, e.g. grok-3-mini).",
        )
        reasoning_effort: Literal["low", "high"] | None = Field(
            default=None, description="How hard the model reasons; sent only with thinking enabled."
        )

    type = "xai_chat"
    cards_dir = files("agent_core.model") / "_cards" / "xai"

    def _parameter_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`reasoning_effort` is sent only while thinking is enabled."""
        thinking = fields.pop("thinking_enable")
        effort = fields.pop("reasoning_effort", None)
        if thinking and effort is not None:
            fields["reasoning_effort"] = effort
        return fields
