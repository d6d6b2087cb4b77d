"""`MoonshotChatModel`: Moonshot AI (Kimi) models, over its OpenAI-compatible Chat Completions API.

The wire protocol is `OpenAIChatModel`'s; thinking models (kimi-k2-thinking, kimi-k2.6) stream
`reasoning_content`, which goes back on every assistant message (Kimi's preserved thinking);
`thinking` is switched on or off explicitly; `usage.cached_tokens` counts the cached prompt.
"""

from __future__ import annotations

from importlib.resources import files

from pydantic import Field

from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.model._compatible import CompatibleParameters, ThinkingChatModel
from agent_core.model._knobs import thinking


class MoonshotChatModel(ThinkingChatModel):
    """A Moonshot (Kimi) model (constructor as `OpenAIChatModel`'s, with a `MoonshotCredential`)."""

    class Parameters(CompatibleParameters):
        """Moonshot request parameters; unknown ones pass through as request fields."""

        temperature: float | None = Field(
            default=None, ge=0, le=1, description="Sampling temperature; higher is more random."
        )
        thinking_enable: bool = thinking(
            "Let a hybrid model think first (kimi-k2-thinking always does)."
        )

    type = "moonshot_chat"
    cards_dir = files("agent_core.model") / "_cards" / "moonshot"

    def _default_formatter(self) -> FormatterBase:
        return OpenAIChatFormatter(reasoning_content=True)
