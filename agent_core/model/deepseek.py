"""`DeepSeekChatModel`: DeepSeek models, over its OpenAI-compatible Chat Completions API.

The wire protocol is `OpenAIChatModel`'s; reasoning arrives as `reasoning_content` (thinking
blocks) and goes back on every assistant message ("" when there was none), as thinking mode
with tool calls requires; messages carry no speaker `name`; `thinking` is switched on or off
explicitly; `usage.prompt_cache_hit_tokens` counts the cached prompt.
"""

from __future__ import annotations

from importlib.resources import files

from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.model._compatible import CompatibleParameters, ThinkingChatModel
from agent_core.model._knobs import thinking


class DeepSeekChatModel(ThinkingChatModel):
    """A DeepSeek model (constructor as `OpenAIChatModel`'s, with a `DeepSeekCredential`)."""

    class Parameters(CompatibleParameters):
        """DeepSeek request parameters; unknown ones pass through as request fields."""

        thinking_enable: bool = thinking(
            "Let deepseek-chat think first (deepseek-reasoner always does)."
        )

    type = "deepseek_chat"
    cards_dir = files("agent_core.model") / "_cards" / "deepseek"

    def _default_formatter(self) -> FormatterBase:
        return OpenAIChatFormatter(names=False, reasoning_content=True)
