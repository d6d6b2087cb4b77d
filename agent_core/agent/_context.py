"""Keeping the prompt inside the model's window: context compression and tool-result truncation.

Before each reasoning step the loop measures the prompt (`measure_context`). Past
`trigger_ratio` of the model's context length, `compress_context` has the model
summarize the older messages into `AgentState.summary` and keeps the most recent
`reserve_ratio` share verbatim. After each tool call, `truncate_tool_result` caps the result at
`tool_result_limit` tokens. Both hand what they drop to an `Offloader` when one is attached.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ConfigDict, Field

from agent_core.agent._config import ContextConfig
from agent_core.agent._tokens import (
    DEFAULT_COUNTER,
    TokenCounter,
    count_content,
    measure_context,
)
from agent_core.deferred_model import DeferredModel
from agent_core.errors import ModelError, ModelResponseError
from agent_core.message import (
    DataOrText,
    Msg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
    UserMsg,
)
from agent_core.model.base import ChatModelBase, ToolSchema, collect_response
from agent_core.ports import Offloader
from agent_core.state import AgentState

SUMMARY_TOOL_NAME = "generate_summary"
"""The tool the model is forced to call to hand over the structured summary."""

TRUNCATION_MARKER = (
    "<<<TRUNCATED>>>\n"
    "<system-reminder>The remaining content has been omitted for limited context."
    "</system-reminder>"
)
OFFLOADED_TRUNCATION_MARKER = (
    "<<<TRUNCATED>>>\n"
    "<system-reminder>The remaining content has been omitted for limited context. You can refer "
    "to the file in '{path}' for the truncated content if needed.</system-reminder>"
)
OFFLOADED_CONTEXT_NOTE = (
    "<system-info>Earlier messages were removed from the context to free space; they are saved "
    "in '{path}'. Read that file if you need details that are not here.</system-info>"
)

_SUMMARY_TOOL_DESCRIPTION = "Hand over the continuation summary of the work so far."
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class CompressionResult(DeferredModel):
    """What one compression did (all zero / None when it had nothing to do)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    compressed_msgs: int = Field(
        default=0, description="Messages removed from the context (a split message counts once)."
    )
    kept_msgs: int = Field(default=0, description="Messages left in the context.")
    tokens_before: int = Field(description="Prompt tokens before compression.")
    tokens_after: int = Field(description="Prompt tokens after compression.")
    summarized: bool = Field(
        default=False, description="A new summary was written (False: no-op or truncation)."
    )
    offload_ref: str | None = Field(
        default=None, description="Where the offloader put the removed messages."
    )
    error: str | None = Field(
        default=None, description="Why the summary failed, when compression fell back."
    )
    usage: Usage = Field(default_factory=Usage, description="Usage of the summary model call.")

    @property
    def compressed(self) -> bool:
        """Whether anything left the context."""
        return self.compressed_msgs > 0


async def compress_context(
    model: ChatModelBase,
    system_prompt: str,
    state: AgentState,
    tools: Sequence[ToolSchema],
    config: ContextConfig,
    offloader: Offloader | None = None,
    *,
    force: bool = False,
    counter: TokenCounter | None = None,
) -> CompressionResult:
    """Summarize the older part of `state.context` into `state.summary`, if the prompt is too big.

    A no-op below the threshold unless `force`. Otherwise the most recent messages within
    `reserve_ratio` x `model.context_size` tokens stay verbatim; the cut falls between
    messages, or between reasoning steps when the last message alone is too big, and never
    separates a tool call from its result (nor drops an unanswered call). The model writes the
    summary through a forced `generate_summary` call shaped by `config.summary_schema`; it is
    rendered with `config.summary_template`. The removed messages go to `offloader`, and the
    summary says where. The Msg of the reply in progress is trimmed in place, never removed.

    Raises:
        RuntimeError: the system prompt alone exceeds the compression threshold.
        ModelError: the summary could not be generated and
            `config.compression_fallback_to_truncation` is off (the context is left intact).
    """
    counter = counter or DEFAULT_COUNTER
    ctx_len = model.context_size
    before = measure_context(
        system_prompt, state.summary, state.context, tools, ctx_len, config, counter
    )
    if not (force or before.needs_compression):
        return CompressionResult(
            kept_msgs=len(state.context), tokens_before=before.total, tokens_after=before.total
        )
    if before.system_prompt_tokens > before.threshold:
        raise RuntimeError(
            f"the system prompt alone ({before.system_prompt_tokens} tokens) exceeds the "
            f"compression threshold ({before.threshold:.0f} tokens)"
        )
    msg_index, block_index = _plan_cut(state.context, config.reserve_ratio * ctx_len, counter)
    compressed = [m for m in state.context[:msg_index] if m.content]
    if block_index:
        split = state.context[msg_index]
        compressed.append(split.model_copy(update={"content": split.content[:block_index]}))
    if not compressed:
        return CompressionResult(
            kept_msgs=len(state.context), tokens_before=before.total, tokens_after=before.total
        )

    fields: dict[str, Any] | None = None
    usage, error = Usage(), None
    try:
        fields, usage = await _summarize(model, system_prompt, state.summary, compressed, config)
    except ModelError as exc:
        if not config.compression_fallback_to_truncation:
            raise
        error = str(exc) or type(exc).__name__
    ref = await offloader.offload_context(state.session_id, compressed) if offloader else None

    _drop_compressed(state, msg_index, block_index)
    note = OFFLOADED_CONTEXT_NOTE.format(path=ref) if ref else None
    if fields is not None:
        rendered = render_summary(config.summary_template, fields, config.summary_schema)
        state.summary = f"{rendered}\n{note}" if note else rendered
    elif note:
        state.summary = _append_text(state.summary, note)
    after = measure_context(
        system_prompt, state.summary, state.context, tools, ctx_len, config, counter
    )
    return CompressionResult(
        compressed_msgs=len(compressed),
        kept_msgs=len(state.context),
        tokens_before=before.total,
        tokens_after=after.total,
        summarized=fields is not None,
        offload_ref=ref,
        error=error,
        usage=usage,
    )


def render_summary(
    template: str, fields: Mapping[str, Any], schema: Mapping[str, Any] | None = None
) -> str:
    """Fill `{name}` placeholders of `template` with the summary `fields`.

    A field the model left out renders empty when `schema` declares it; any other unknown
    placeholder (literal braces in a custom template) is left as written. Non-string values are
    rendered as JSON.
    """
    declared = set((schema or {}).get("properties", {}))

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fields:
            return "" if name in declared else match.group(0)
        value = fields[name]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _PLACEHOLDER.sub(fill, template)


async def truncate_tool_result(
    result: ToolResultBlock,
    limit_tokens: int,
    offloader: Offloader | None = None,
    *,
    session_id: str = "",
    counter: TokenCounter | None = None,
) -> ToolResultBlock:
    """Cap the output of `result` at `limit_tokens` tokens, marker included.

    Returns `result` itself when it fits. Otherwise the whole result goes to `offloader` (when
    given), and a copy is returned whose output is the leading part that fits followed by the
    truncation marker, which names the offloaded file when there is one.
    """
    counter = counter or DEFAULT_COUNTER
    if count_content(result.output, counter) <= limit_tokens:
        return result
    ref = await offloader.offload_tool_result(session_id, result) if offloader else None
    marker = OFFLOADED_TRUNCATION_MARKER.format(path=ref) if ref else TRUNCATION_MARKER
    output: str | list[DataOrText]
    if isinstance(result.output, str):
        kept = _clip_text(result.output, limit_tokens, counter, suffix="\n" + marker)
        output = f"{kept}\n{marker}" if kept else marker
    else:
        budget = max(limit_tokens - counter.count_text(marker), 0)
        output = [*_clip_blocks(result.output, budget, counter), TextBlock(text=marker)]
    return result.model_copy(update={"output": output})


def _plan_cut(context: Sequence[Msg], budget: float, counter: TokenCounter) -> tuple[int, int]:
    """Return where the kept part starts, as (message index, block index)."""
    starts: list[int] = []
    blocks: list[Any] = []
    for msg in context:
        starts.append(len(blocks))
        blocks.extend(msg.content)
    total = len(blocks)
    tail = [0] * (total + 1)
    for pos in range(total - 1, -1, -1):
        tail[pos] = tail[pos + 1] + counter.count_blocks([blocks[pos]])

    candidates = [(k, 0) for k in range(len(context))] + [(len(context), 0)]
    if context and context[-1].role == "assistant":
        last = len(context) - 1
        candidates += [(last, i) for i in _step_starts(context[last].content)]
    spans = _call_spans(blocks)

    def flat(cut: tuple[int, int]) -> int:
        return total if cut[0] == len(context) else starts[cut[0]] + cut[1]

    valid = sorted(
        (c for c in candidates if not any(call < flat(c) <= res for call, res in spans)),
        key=flat,
    )
    fitting = [c for c in valid if tail[flat(c)] <= budget]
    # Cutting at position 0 is always valid, so `valid` is never empty.
    return fitting[0] if fitting else valid[-1]


def _step_starts(content: Sequence[Any]) -> list[int]:
    """Block indices where a new reasoning step begins inside one assistant message."""
    return [
        i
        for i in range(1, len(content))
        if content[i - 1].type in ("tool_result", "hint") and content[i].type != "tool_result"
    ]


def _call_spans(blocks: Sequence[Any]) -> list[tuple[int, int]]:
    """(call position, result position) pairs; an unanswered call spans to the end.

    A cut at position p (keep blocks[p:]) separates a pair exactly when call < p <= result.
    """
    open_calls: dict[str, list[int]] = {}
    spans: list[tuple[int, int]] = []
    for pos, block in enumerate(blocks):
        if isinstance(block, ToolCallBlock):
            open_calls.setdefault(block.id, []).append(pos)
        elif isinstance(block, ToolResultBlock) and open_calls.get(block.id):
            spans.append((open_calls[block.id].pop(), pos))
    spans += [(pos, len(blocks)) for calls in open_calls.values() for pos in calls]
    return spans


def _drop_compressed(state: AgentState, msg_index: int, block_index: int) -> None:
    # The reply in progress is shared with the loop's ReplyBuilder: trim it, never drop it.
    live = state.reply_context.reply_id
    kept = [m for m in state.context[:msg_index] if live and m.id == live]
    for msg in kept:
        msg.content.clear()
    if block_index:
        del state.context[msg_index].content[:block_index]
    state.context[:] = kept + state.context[msg_index:]


async def _summarize(
    model: ChatModelBase,
    system_prompt: str,
    summary: str | list[DataOrText],
    compressed: list[Msg],
    config: ContextConfig,
) -> tuple[dict[str, Any], Usage]:
    now = datetime.now(UTC).astimezone().isoformat(timespec="seconds")
    prompt = [SystemMsg("system", system_prompt)] if system_prompt else []
    if summary:
        prompt.append(UserMsg("user", summary))
    prompt += compressed
    prompt.append(UserMsg("user", config.compression_prompt.replace("{current_time}", now)))
    tool = ToolSchema(
        name=SUMMARY_TOOL_NAME,
        description=_SUMMARY_TOOL_DESCRIPTION,
        parameters=config.summary_schema,
    )
    response = await collect_response(await model(prompt, [tool], SUMMARY_TOOL_NAME))
    usage = response.usage.to_usage() if response.usage is not None else Usage()
    for block in response.content:
        if isinstance(block, ToolCallBlock) and block.name == SUMMARY_TOOL_NAME:
            try:
                fields = json.loads(block.input or "{}")
            except json.JSONDecodeError as exc:
                raise ModelResponseError(f"the summary is not valid JSON: {exc}") from exc
            if isinstance(fields, dict):
                return fields, usage
            raise ModelResponseError("the summary is not a JSON object")
    raise ModelResponseError(f"the model did not call {SUMMARY_TOOL_NAME} to write the summary")


def _append_text(summary: str | list[DataOrText], text: str) -> str | list[DataOrText]:
    if isinstance(summary, str):
        return f"{summary}\n{text}" if summary else text
    return [*summary, TextBlock(text=text)]


def _clip_text(text: str, budget: int, counter: TokenCounter, suffix: str = "") -> str:
    """The longest prefix of `text` that, followed by `suffix`, fits in `budget` tokens.

    A binary search over prefix lengths, so it works with any counter.
    """
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if counter.count_text(text[:mid] + suffix) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def _clip_blocks(
    blocks: Sequence[DataOrText], budget: int, counter: TokenCounter
) -> list[DataOrText]:
    kept: list[DataOrText] = []
    for block in blocks:
        cost = counter.count_blocks([block])
        if cost <= budget:
            kept.append(block)
            budget -= cost
            continue
        if isinstance(block, TextBlock) and (clipped := _clip_text(block.text, budget, counter)):
            kept.append(block.model_copy(update={"text": clipped}))
        break
    return kept
