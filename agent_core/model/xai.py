"""`XAIChatModel`: xAI's Grok models, over its OpenAI-compatible Chat Completions API.

The wire protocol is `OpenAIChatModel`'s; reasoning models (grok-3-mini) take a
`reasoning_effort` and stream `reasoning_content`.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Literal

from pydantic import Field

from agent_core.model._compatible import CompatibleParameters
from agent_core.model._knobs import Seed, thinking
from agent_core.model.openai import OpenAIChatModel


class XAIChatModel(OpenAIChatModel):
    """A Grok model (constructor as `OpenAIChatModel`'s, with an `XAICredential`)."""

    class Parameters(CompatibleParameters):
        """xAI request parameters; unknown ones pass through as request fields."""

        seed: Seed = None
        thinking_enable: bool = thinking(
            "Send `reasoning_effort` (models taking one, e.g. grok-3-mini)."
        )
        reasoning_effort: Literal["low", "high"] | None = Field(
            default=None, description="How hard the model reasons; sent only with thinking enabled."
        )

    type = "xai_chat"
    cards_dir = files("agent_core.model") / "_cards" / "xai"
