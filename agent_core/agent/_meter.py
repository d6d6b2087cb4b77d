"""The agent's prompt measured before every reasoning step, counting only what changed.

A prompt has four layers (`_tokens`): the system prompt, the summary, the context and the tool
schemas. Between steps, and between the replies of one conversation, the system prompt and the
summary are mostly the same text, and the schemas the same objects: `PromptMeter` keeps their
counts, so a measurement counts only the context's new messages (the counter remembers the
finished ones).
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_core.agent._config import ContextConfig
from agent_core.agent._tokens import (
    ContextUsage,
    TokenCounter,
    buffer_threshold,
    count_content,
    measure_context,
)
from agent_core.message import DataOrText, Msg
from agent_core.model.base import ToolSchema


class PromptMeter:
    """Measures one agent's prompts with one counter, remembering its unchanged layers.

    The count of the system prompt and a text summary is reused while both are equal texts: a
    counter's count of a text depends on the text alone. A summary made of blocks is counted
    every time (its blocks may change in place), and the schemas are left to the counter, which
    may remember them itself (`CachedTokenCounter.count_tools`).

    Args:
        counter: How tokens are counted.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        # (system prompt, text summary, their tokens)
        self._fixed: tuple[str, str, int] | None = None

    def measure_if_near(
        self,
        system_prompt: str,
        summary: str | Sequence[DataOrText],
        context: Sequence[Msg],
        tools: Sequence[ToolSchema],
        model_context_length: int,
        config: ContextConfig,
    ) -> ContextUsage | None:
        """The prompt's `ContextUsage` when it is near the compression threshold, else None.

        None means the prompt is within neither threshold (`near_compression` and so
        `needs_compression` would be False): the loop measures before every reasoning step, and
        a prompt far below the threshold is the common case, which needs no `ContextUsage`.
        """
        counter = self.counter
        fixed = self._fixed
        if (
            fixed is not None
            and type(summary) is str
            and fixed[0] == system_prompt
            and fixed[1] == summary
        ):
            tokens = fixed[2]
        elif type(summary) is str:
            tokens = counter.count_text(system_prompt) + counter.count_text(summary)
            self._fixed = (system_prompt, summary, tokens)
        else:
            tokens = counter.count_text(system_prompt) + count_content(summary, counter)
        tokens += counter.count_messages(context) + counter.count_tools(tools)
        if tokens <= buffer_threshold(config, model_context_length):
            return None
        # Near the threshold: the usage reports each layer (the kept ones are counted again).
        return measure_context(
            system_prompt, summary, context, tools, model_context_length, config, counter
        )
