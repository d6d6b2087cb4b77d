"""Configuration of the agent loop: iterations, model retries, context limits."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from agent_core.deferred_model import DeferredModel
from agent_core.model.base import ChatModelBase

# The default texts are AgentScope's, kept verbatim so prompts and summaries read the same.
DEFAULT_COMPRESSION_PROMPT = (
    "<system-hint>You have been working on the task described above. Now write a continuation "
    "summary that will allow you to resume work efficiently in a future context window where the "
    "conversation history will be replaced with this summary. Your summary should be structured, "
    "concise, and actionable.\n"
    "The current time is {current_time}.\n"
    "This summary may itself be summarized again later, and the conversation history it refers "
    "to will be gone, so every reference must be self-contained \u2014 resolve anything that "
    "depends on the vanished context into an absolute, fully-qualified form:\n"
    "- Time: convert relative expressions ('today', 'now', 'yesterday', 'tomorrow', 'recently') "
    "to absolute dates using the current time above; re-anchor them even if an earlier summary "
    "already wrote them relatively.\n"
    "- Names & pointers: use file paths, symbol names, PR/issue numbers, IDs, URLs, and exact "
    "commands/error strings verbatim instead of 'this file', 'the above', 'the second approach', "
    "'the 5 failing tests'.\n"
    "- In-flight work: record everything still pending, especially tools launched in the "
    "background whose results you are still waiting on \u2014 give each one's id and a short "
    "note of what it is doing \u2014 and mark each item's owner (user request vs your own "
    "decision) and status (done / pending / blocked).\n"
    "</system-hint>"
)

DEFAULT_SUMMARY_TEMPLATE = (
    "<system-info>Here is a summary of your previous work\n"
    "# Task Overview\n{task_overview}\n\n"
    "# Current State\n{current_state}\n\n"
    "# Important Discoveries\n{important_discoveries}\n\n"
    "# Next Steps\n{next_steps}\n\n"
    "# Context to Preserve\n{context_to_preserve}</system-info>"
)

_SUMMARY_FIELDS = {
    "task_overview": (
        "The user's core request and success criteria, with every clarification or constraint "
        "they stated."
    ),
    "current_state": (
        "What is done and what is in progress: files created or changed (full paths), commands "
        "run, results obtained."
    ),
    "important_discoveries": (
        "Facts learned, decisions taken and why, errors met and how they were resolved, "
        "approaches that failed."
    ),
    "next_steps": (
        "The concrete actions still needed to finish, in order, with blockers, owners and "
        "background tools still awaited."
    ),
    "context_to_preserve": (
        "User preferences, domain details, promises made and anything else that must survive "
        "the loss of the conversation history."
    ),
}


def default_summary_schema() -> dict[str, Any]:
    """Return the JSON schema of the five-field structured summary."""
    return {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": description}
            for name, description in _SUMMARY_FIELDS.items()
        },
        "required": list(_SUMMARY_FIELDS),
    }


class ReActConfig(DeferredModel):
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


class ContextConfig(DeferredModel):
    """When and how the context is compressed, and how long tool results may be."""

    model_config = ConfigDict(extra="forbid")

    trigger_ratio: float = Field(
        default=0.8,
        gt=0.0,
        le=0.9,
        description="Compress when this share of the model's context size is used.",
    )
    reserve_ratio: float = Field(
        default=0.1,
        gt=0.0,
        lt=0.9,
        description="Share of the model's context size kept verbatim as recent messages.",
    )
    context_buffer_ratio: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        title="Context Buffer",
        description=(
            "The buffer ahead of the 'trigger_ratio', within which the agent is told that a "
            "compression is near, and can compress by itself if the compression tool is "
            "enabled. It must be smaller than the 'trigger_ratio'."
        ),
    )
    compression_prompt: str = Field(
        default=DEFAULT_COMPRESSION_PROMPT,
        description="Prompt asking the model for the summary; `{current_time}` is filled in.",
        json_schema_extra={"format": "textarea"},
    )
    summary_template: str = Field(
        default=DEFAULT_SUMMARY_TEMPLATE,
        description="Template rendering the summary fields (`{field}`) into the context.",
        json_schema_extra={"format": "textarea"},
    )
    summary_schema: dict[str, Any] = Field(
        default_factory=default_summary_schema,
        description="JSON schema of the structured summary the model must produce.",
    )
    tool_result_limit: int = Field(
        default=50_000,
        gt=0,
        description=(
            "The maximum length of the tool results in tokens. If exceeded, the tool result "
            "will be truncated."
        ),
    )
    compression_fallback_to_truncation: bool = Field(
        default=True,
        description=(
            "Whether to truncate the oldest context when the compression summary cannot be "
            "generated. Turning it off raises the error instead, keeping the context intact at "
            "the cost of exceeding the context length."
        ),
    )
    compression_tool_enabled: bool = Field(
        default=False,
        description=(
            "Whether to expose a context compression tool to the agent. When runtime-state "
            "injection is enabled, the agent is prompted to use the tool between tasks as the "
            "context approaches the hard compression threshold."
        ),
    )
    max_image_num: int = Field(
        default=5,
        ge=0,
        title="Max Image Number",
        description=(
            "The maximum number of images kept in the context. The oldest images exceeding the "
            "limit will be removed."
        ),
    )

    @model_validator(mode="after")
    def _check_buffer(self) -> ContextConfig:
        if self.context_buffer_ratio >= self.trigger_ratio:
            raise ValueError("context_buffer_ratio must be smaller than trigger_ratio")
        return self


class ModelConfig(DeferredModel):
    """Retries and fallback for model calls."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    max_retries: int = Field(
        default=0,
        ge=0,
        description="Retries of a failed model call before falling back or giving up, on top "
        "of the model's own `max_retries` (hence 0 by default: the two would compound).",
    )
    retry_backoff: float = Field(
        default=0.5, ge=0.0, description="Seconds before the first retry; doubles each time."
    )
    fallback_model: ChatModelBase | None = Field(
        default=None, description="Model used once the primary model's retries are exhausted."
    )
