"""`MoonshotChatModel`: Moonshot AI (Kimi) models, over its OpenAI-compatible Chat Completions API.

The wire protocol is `OpenAIChatModel`'s; thinking models (kimi-k2-thinking, kimi-k2.6) stream
`reasoning_content`, which goes back on every assistant message (Kimi's preserved thinking);
`thinking` is switched on or off explicitly; `usage.cached_tokens` counts the cached prompt.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from pydantic import ConfigDict, Field

from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.model.base import ChatModelBase
from agent_core.model.openai import OpenAIChatModel


class MoonshotChatModel(OpenAIChatModel):
    """A Moonshot (Kimi) model (constructor as `OpenAIChatModel`'s, with a `MoonshotCredential`)."""

    class Parameters(ChatModelBase.Parameters):
        """Moonshot request parameters; unknown ones pass through as request fields."""

        model_config = ConfigDict(extra="allow")

        temperature: float | None = Field(
            default=None, ge=0, le=1, description="Sampling temperature; higher is more random."
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
        thinking_enable: bool = Field(
            default=False,
            title="Thinking",
            description="Let a hybrid model think first (kimi-k2-thinking always does).",
        )

    type = "moonshot_chat"
    cards_dir = files("agent_core.model") / "_cards" / "moonshot"

    def _default_formatter(self) -> FormatterBase:
        return OpenAIChatFormatter(reasoning_content=True)

    def _forces_tool_calls(self) -> bool:
        # Kimi's thinking mode takes only an `auto` or `none` tool choice.
        return not self.parameters.thinking_enable  # type: ignore[attr-defined]

    def _parameter_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`thinking_enable` is sent as Moonshot's `thinking` switch; the rest as named."""
        on = fields.pop("thinking_enable")
        fields["thinking"] = {"type": "enabled" if on else "disabled"}
        return fields
