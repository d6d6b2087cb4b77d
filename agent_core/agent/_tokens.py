"""Token estimates for context management: how much of the model's window a prompt uses.

The default estimate is AgentScope's: a quarter token per UTF-8 byte of text (rounded half up),
a flat 2,000 tokens per data block, and tool schemas counted as their JSON. It needs no
tokenizer, so it works for every provider; a host wanting exact counts plugs in its own
`TokenCounter`. `measure_context` adds up the four layers of a prompt (system prompt, summary,
context, tool schemas) and compares them with a `ContextConfig`'s thresholds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import ConfigDict, Field

from agent_core._trusted import trusted
from agent_core.agent._config import ContextConfig
from agent_core.deferred_model import DeferredModel
from agent_core.message import (
    ContentBlock,
    DataBlock,
    DataOrText,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from agent_core.model.base import ToolSchema

DATA_BLOCK_TOKENS = 2_000
"""Tokens charged for one data block (image, audio, file), whatever its size."""


class TokenCounter(Protocol):
    """Estimates how many tokens text, messages and tool schemas take in a model's window.

    `count_messages` must be additive over blocks (the tokens of a message are the sum of the
    tokens of its blocks): context compression sums block counts to decide where to cut.
    """

    def count_text(self, text: str) -> int:
        """Return the tokens of a plain string."""
        ...

    def count_blocks(self, blocks: Sequence[ContentBlock]) -> int:
        """Return the tokens of content blocks (as found in `Msg.content`)."""
        ...

    def count_messages(self, msgs: Sequence[Msg]) -> int:
        """Return the tokens of messages: the sum of their blocks' tokens."""
        ...

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Return the tokens of the tool schemas sent along with a prompt (0 for none)."""
        ...


class ByteTokenCounter:
    """AgentScope's estimate: UTF-8 bytes / 4 rounded half up; 2,000 tokens per data block."""

    def count_text(self, text: str) -> int:
        """Return the UTF-8 byte length of `text` divided by 4, rounded half up."""
        return (len(text.encode("utf-8")) + 2) // 4

    def count_blocks(self, blocks: Sequence[ContentBlock]) -> int:
        """Return the sum over blocks of their text tokens and 2,000 per data block."""
        total = 0
        for block in blocks:  # a loop, not sum() over a generator: counted before every step
            total += self._block(block)
        return total

    def count_messages(self, msgs: Sequence[Msg]) -> int:
        """Return the sum of the tokens of every block of every message."""
        return sum(self.count_blocks(msg.content) for msg in msgs)

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Return the tokens of the schemas' JSON (0 when there are none)."""
        if not tools:
            return 0
        payload = [
            {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            for tool in tools
        ]
        try:
            text = json.dumps(payload, ensure_ascii=False)
        except TypeError:  # a schema holding values only pydantic's JSON mode converts
            text = json.dumps([tool.model_dump(mode="json") for tool in tools], ensure_ascii=False)
        return self.count_text(text)

    def _block(self, block: ContentBlock) -> int:
        match block:
            case TextBlock():
                return self.count_text(block.text)
            case ThinkingBlock():
                return self.count_text(block.thinking)
            case DataBlock():
                return DATA_BLOCK_TOKENS
            case ToolCallBlock():
                return self.count_text(block.name + block.input)
            case ToolResultBlock():
                return self.count_text(block.name) + self._output(block.output)
            case HintBlock():
                return self._output(block.hint)
        return 0  # pragma: no cover - the match is exhaustive over ContentBlock

    def _output(self, output: str | Sequence[DataOrText]) -> int:
        if isinstance(output, str):
            return self.count_text(output)
        return self.count_blocks(output)


class CachedTokenCounter(ByteTokenCounter):
    """`ByteTokenCounter` that remembers finished messages and blocks.

    The loop measures the whole context before every reasoning step; finished messages and
    blocks never change, so counting them once keeps each measurement proportional to what is
    new. One instance belongs to one agent (its memory is bounded by `max_entries`).
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self._messages: dict[str, int] = {}
        self._blocks: dict[tuple[str, str], int] = {}
        # An unfinished message (the reply in progress): its finished leading blocks, counted.
        self._prefixes: dict[str, tuple[int, ContentBlock, int]] = {}
        self._tools: dict[tuple[tuple[str, str, int], ...], tuple[list[Any], int]] = {}
        # The schemas last counted, as (name, description, parameters), and their count.
        self._last_tools: tuple[list[tuple[str, str, Any]], int] = ([], 0)
        self._max_entries = max_entries

    def _remember(self, cache: dict[Any, Any], key: Any, value: Any) -> Any:
        if len(cache) >= self._max_entries:
            cache.clear()
        cache[key] = value
        return value

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """The tokens of the schemas' JSON, remembered while the same schemas are offered.

        A schema is recognised by its name, description and input-schema object: one changed
        in place keeps its count until the counter forgets it.
        """
        last, last_count = self._last_tools
        if len(last) == len(tools):
            # Most steps offer what the previous one did: check that before building a key.
            for (name, description, parameters), tool in zip(last, tools, strict=True):
                if (
                    tool.parameters is not parameters
                    or tool.name != name
                    or tool.description != description
                ):
                    break
            else:
                return last_count
        key = tuple((t.name, t.description, id(t.parameters)) for t in tools)
        cached = self._tools.get(key)
        if cached is not None and all(
            kept is t.parameters for kept, t in zip(cached[0], tools, strict=True)
        ):
            count = cached[1]
        else:
            count = super().count_tools(tools)
            self._remember(self._tools, key, ([t.parameters for t in tools], count))
        self._last_tools = ([(t.name, t.description, t.parameters) for t in tools], count)
        return count

    def _count_open(self, msg: Msg) -> int:
        """The tokens of a message still being written, its finished leading blocks once."""
        content = msg.content
        done, last, count = self._prefixes.get(msg.id, (0, None, 0))
        if done > len(content) or (done and content[done - 1] is not last):
            done, count = 0, 0  # changed in place: count it afresh
        start = done
        while done < len(content) and content[done].finished_at is not None:
            done += 1
        if done > start:
            count += self.count_blocks(content[start:done])
        if done:
            self._remember(self._prefixes, msg.id, (done, content[done - 1], count))
        return count + self.count_blocks(content[done:]) if done < len(content) else count

    def count_messages(self, msgs: Sequence[Msg]) -> int:
        """Sum of the messages' tokens, finished ones counted once."""
        total = 0
        for msg in msgs:
            cached = self._messages.get(msg.id)
            if cached is not None:
                total += cached
                continue
            if msg.finished_at is not None or msg.role != "assistant":
                count = self._remember(self._messages, msg.id, self.count_blocks(msg.content))
            else:
                count = self._count_open(msg)
            total += count
        return total

    def _block(self, block: ContentBlock) -> int:
        if block.finished_at is None:
            return super()._block(block)
        key = (block.type, block.id)
        cached = self._blocks.get(key)
        if cached is None:
            cached = self._remember(self._blocks, key, super()._block(block))
        return cached


DEFAULT_COUNTER: TokenCounter = ByteTokenCounter()
"""The counter used when none is given."""


def count_text(text: str, counter: TokenCounter | None = None) -> int:
    """Return the tokens of `text` (default counter unless `counter` is given)."""
    return (counter or DEFAULT_COUNTER).count_text(text)


def count_messages(msgs: Sequence[Msg], counter: TokenCounter | None = None) -> int:
    """Return the tokens of `msgs` (default counter unless `counter` is given)."""
    return (counter or DEFAULT_COUNTER).count_messages(msgs)


def count_tools(tools: Sequence[ToolSchema], counter: TokenCounter | None = None) -> int:
    """Return the tokens of the tool schemas (default counter unless `counter` is given)."""
    return (counter or DEFAULT_COUNTER).count_tools(tools)


def count_content(content: str | Sequence[DataOrText], counter: TokenCounter | None = None) -> int:
    """Return the tokens of text-or-blocks content (a summary, a tool result's output)."""
    counter = counter or DEFAULT_COUNTER
    if isinstance(content, str):
        return counter.count_text(content)
    return counter.count_blocks(content)


class ContextUsage(DeferredModel):
    """Tokens a prompt takes, measured against the compression thresholds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt_tokens: int
    summary_tokens: int
    context_tokens: int
    tools_tokens: int
    context_length: int = Field(description="The model's context length in tokens.")
    threshold: float = Field(description="trigger_ratio x context_length.")
    buffer_threshold: float = Field(
        description="(trigger_ratio - context_buffer_ratio) x context_length."
    )

    @property
    def total(self) -> int:
        """Tokens of the whole prompt."""
        layers = (self.system_prompt_tokens, self.summary_tokens, self.context_tokens)
        return sum(layers) + self.tools_tokens

    @property
    def needs_compression(self) -> bool:
        """Whether the prompt is past the compression threshold."""
        return self.total > self.threshold

    @property
    def near_compression(self) -> bool:
        """Whether the prompt is within the buffer ahead of the threshold (or past it)."""
        return self.total > self.buffer_threshold


def measure_context(
    system_prompt: str,
    summary: str | Sequence[DataOrText],
    context: Sequence[Msg],
    tools: Sequence[ToolSchema],
    model_context_length: int,
    config: ContextConfig,
    counter: TokenCounter | None = None,
) -> ContextUsage:
    """Count the prompt's tokens, layer by layer, against the thresholds of `config`."""
    counter = counter or DEFAULT_COUNTER
    layers = _layers(system_prompt, summary, context, tools, counter)
    return _usage(layers, model_context_length, config)


def _layers(
    system_prompt: str,
    summary: str | Sequence[DataOrText],
    context: Sequence[Msg],
    tools: Sequence[ToolSchema],
    counter: TokenCounter,
) -> tuple[int, int, int, int]:
    return (
        counter.count_text(system_prompt),
        count_content(summary, counter),
        counter.count_messages(context),
        counter.count_tools(tools),
    )


def _usage(
    layers: tuple[int, int, int, int], model_context_length: int, config: ContextConfig
) -> ContextUsage:
    system_prompt_tokens, summary_tokens, context_tokens, tools_tokens = layers
    # Measured before reasoning steps, from counts that are ints by construction.
    return trusted(
        ContextUsage,
        system_prompt_tokens=system_prompt_tokens,
        summary_tokens=summary_tokens,
        context_tokens=context_tokens,
        tools_tokens=tools_tokens,
        context_length=model_context_length,
        threshold=float(config.trigger_ratio * model_context_length),
        buffer_threshold=buffer_threshold(config, model_context_length),
    )


def buffer_threshold(config: ContextConfig, model_context_length: int) -> float:
    """Tokens past which a prompt is near compression: `ContextUsage.buffer_threshold`."""
    return float((config.trigger_ratio - config.context_buffer_ratio) * model_context_length)


def needs_compression(
    system_prompt: str,
    summary: str | Sequence[DataOrText],
    context: Sequence[Msg],
    tools: Sequence[ToolSchema],
    model_context_length: int,
    config: ContextConfig,
    counter: TokenCounter | None = None,
) -> bool:
    """Whether the prompt exceeds `trigger_ratio` x `model_context_length` tokens."""
    usage = measure_context(
        system_prompt, summary, context, tools, model_context_length, config, counter
    )
    return usage.needs_compression
