"""Configuration of the agent loop: iterations, model retries, context limits."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_core.model.base import ChatModelBase


class ReActConfig(BaseModel):
    """Reasoning-acting loop settings."""

    model_config = ConfigDict(extra="forbid")

    max_iters: int = Field(
        default=50, ge=1, description="Maximum reasoning-acting iterations in one reply."
    )
    structured_output_grace_iters: int = Field(
        default=5, gt=0, description="Grace iterations for structured output past max_iters."
    )
    stop_on_reject: bool = Field(
        default=False, description="Stop replying when a tool call is rejected."
    )
    interruption_message: str = Field(
        default="I notice the interruption. How can I help you?",
        description="The quick reply message when interrupted.",
    )
    interruption_raise_cancelled_error: bool = Field(
        default=False, description="Re-raise CancelledError after handling an interruption."
    )


class ContextConfig(BaseModel):
    """When and how the context is compressed, and how long tool results may be."""

    model_config = ConfigDict(extra="forbid")

    trigger_ratio: float = Field(
        default=0.8, gt=0.0, le=0.9, description="Compress when this share of context is used."
    )
    reserve_ratio: float = Field(
        default=0.1, gt=0.0, lt=0.9, description="Share of recent context kept verbatim."
    )
    tool_result_limit: int = Field(
        default=5000, gt=0, description="Tool results longer than this many tokens are truncated."
    )


class ModelConfig(BaseModel):
    """Retries and fallback for model calls."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    max_retries: int = Field(
        default=2, ge=0, description="Retries of a failed model call before giving up."
    )
    retry_backoff: float = Field(
        default=0.5, ge=0.0, description="Seconds before the first retry; doubles each time."
    )
    fallback_model: ChatModelBase | None = Field(
        default=None, description="Model used once the primary model's retries are exhausted."
    )
