"""One reasoning step: call the model and translate its responses into block events."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

from agent_core._ids import new_id
from agent_core._trusted import trusted_maker
from agent_core.agent._config import ModelConfig
from agent_core.event import (
    AgentEvent,
    DataBlockDeltaEvent,
    DataBlockEndEvent,
    DataBlockStartEvent,
    ModelCallEndEvent,
    ModelCallStartEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agent_core.message import (
    Base64Source,
    DataBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from agent_core.middleware import ModelCallHandler, call_model
from agent_core.model import ChatModelBase, ChatResponse, ChatUsage, ToolSchema
from agent_core.model.base import is_retryable

log = logging.getLogger(__name__)

_Key = tuple[str, str]
"""A response block as the model identifies it: (block type, block id)."""

# Built from values the step holds already typed: without validation (`agent_core._trusted`).
_text_start = trusted_maker(TextBlockStartEvent, "reply_id", "block_id")
_text_delta = trusted_maker(TextBlockDeltaEvent, "reply_id", "block_id", "delta")
_text_end = trusted_maker(TextBlockEndEvent, "reply_id", "block_id")
_thinking_start = trusted_maker(ThinkingBlockStartEvent, "reply_id", "block_id")
_thinking_delta = trusted_maker(ThinkingBlockDeltaEvent, "reply_id", "block_id", "delta")
_data_end = trusted_maker(DataBlockEndEvent, "reply_id", "block_id")
_call_start = trusted_maker(ToolCallStartEvent, "reply_id", "tool_call_id", "tool_call_name")
_call_delta = trusted_maker(ToolCallDeltaEvent, "reply_id", "tool_call_id", "delta")
_call_end = trusted_maker(ToolCallEndEvent, "reply_id", "tool_call_id")
_model_call_start = trusted_maker(ModelCallStartEvent, "reply_id", "model_name")
_model_call_end = trusted_maker(
    ModelCallEndEvent,
    "reply_id",
    "input_tokens",
    "output_tokens",
    "cache_input_tokens",
    "cache_creation_input_tokens",
    "finished_reason",
)


def _fragment(block: TextBlock | ThinkingBlock | ToolCallBlock | DataBlock) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        return block.thinking
    if isinstance(block, ToolCallBlock):
        return block.input
    return block.source.data if isinstance(block.source, Base64Source) else ""


class _Translator:
    """Turns one model call's `ChatResponse`s into START/DELTA/END block events.

    Deltas are translated as they come. The final (`is_last`) response, or a whole one, only adds
    what the deltas did not carry, so a stream that sends its content only in the final response
    (e.g. from a middleware) still shows. Text and thinking blocks get fresh event block ids, so
    ids a provider reuses across calls never collide within a reply.
    """

    def __init__(self, reply_id: str) -> None:
        self._rid = reply_id
        self._open: _Key | None = None
        self._event_ids: dict[_Key, str] = {}
        self._emitted: dict[_Key, int] = {}
        self._proofs: dict[_Key, ThinkingBlock] = {}
        self.usage: ChatUsage | None = None

    def delta(self, chunk: ChatResponse) -> list[AgentEvent]:
        self.usage = chunk.usage or self.usage
        content = chunk.content
        if len(content) == 1:  # most deltas carry one block
            block = content[0]
            return self._piece(block, _fragment(block))
        events: list[AgentEvent] = []
        for block in content:
            events += self._piece(block, _fragment(block))
        return events

    def final(self, response: ChatResponse) -> list[AgentEvent]:
        self.usage = response.usage or self.usage
        events: list[AgentEvent] = []
        for block in response.content:
            full = _fragment(block)
            done = self._emitted.get((block.type, block.id))
            if done is None:
                events += self._piece(block, full)
            elif not isinstance(block, DataBlock) and len(full) > done:
                events += self._piece(block, full[done:])
        return [*events, *self.close()]

    def close(self) -> list[AgentEvent]:
        key, self._open = self._open, None
        if key is None:
            return []
        kind, block_id = key
        rid = self._rid
        if kind == "text":
            return [_text_end(reply_id=rid, block_id=self._event_ids[key])]
        if kind == "thinking":
            proof = self._proofs.get(key)
            return [
                ThinkingBlockEndEvent(
                    reply_id=rid,
                    block_id=self._event_ids[key],
                    signature=proof.signature if proof else None,
                    redacted_thinking_data=proof.redacted_thinking_data if proof else None,
                )
            ]
        if kind == "data":
            return [_data_end(reply_id=rid, block_id=self._event_ids[key])]
        return [_call_end(reply_id=rid, tool_call_id=block_id)]

    def _piece(
        self, block: TextBlock | ThinkingBlock | ToolCallBlock | DataBlock, fragment: str
    ) -> list[AgentEvent]:
        key: _Key = (block.type, block.id)
        rid = self._rid
        if self._open == key and isinstance(block, TextBlock):
            # The next delta of the text block streaming now: most of what a model sends.
            self._emitted[key] += len(fragment)
            if not fragment:
                return []
            event_id = self._event_ids[key]
            return [_text_delta(reply_id=rid, block_id=event_id, delta=fragment)]
        started = key in self._emitted
        if isinstance(block, ThinkingBlock) and (
            block.signature is not None or block.redacted_thinking_data is not None
        ):
            # The proof arrives after the text; the block's END event carries it.
            self._proofs[key] = block
        events: list[AgentEvent] = []
        if isinstance(block, ToolCallBlock):
            if not started:
                events += self.close()
                self._open = key
                events.append(
                    _call_start(reply_id=rid, tool_call_id=block.id, tool_call_name=block.name)
                )
            if fragment:
                events.append(_call_delta(reply_id=rid, tool_call_id=block.id, delta=fragment))
            self._emitted[key] = self._emitted.get(key, 0) + len(fragment)
            return events
        if isinstance(block, DataBlock) and not isinstance(block.source, Base64Source):
            # Data events carry base64 only: a model answering with a URL has nothing to stream.
            return events
        if self._open != key:
            events += self.close()
            # A block reopened after another one came in between continues as a new block.
            event_id = self._event_ids[key] = new_id()
            self._open = key
            if isinstance(block, TextBlock):
                events.append(_text_start(reply_id=rid, block_id=event_id))
            elif isinstance(block, ThinkingBlock):
                events.append(_thinking_start(reply_id=rid, block_id=event_id))
            else:
                media_type = block.source.media_type
                events.append(
                    DataBlockStartEvent(reply_id=rid, block_id=event_id, media_type=media_type)
                )
        event_id = self._event_ids[key]
        if fragment and isinstance(block, TextBlock):
            events.append(_text_delta(reply_id=rid, block_id=event_id, delta=fragment))
        elif fragment and isinstance(block, ThinkingBlock):
            events.append(_thinking_delta(reply_id=rid, block_id=event_id, delta=fragment))
        elif fragment and isinstance(block, DataBlock):
            events.append(
                DataBlockDeltaEvent(
                    reply_id=rid,
                    block_id=event_id,
                    data=fragment,
                    media_type=block.source.media_type,
                )
            )
        self._emitted[key] = self._emitted.get(key, 0) + len(fragment)
        return events


async def reason(
    reply_id: str,
    model: ChatModelBase,
    prompt: Callable[[], Awaitable[list[Msg]]],
    tools: Callable[[], list[ToolSchema]],
    model_config: ModelConfig,
    tool_choice: str | None = None,
    call: ModelCallHandler = call_model,
) -> AsyncIterator[AgentEvent]:
    """Run one model call (with retries and fallback) and yield its events, unfolded.

    The step's prompt and tools are assembled (`prompt()`, then `tools()`) as it starts.

    `call` is the (middleware-wrapped) model-call handler. A failed call is retried only while
    it has emitted no block yet, so a retry never duplicates streamed content. Every START gets
    its END, so a client can pair them: a failed call closes its open block and ends with
    `MODEL_CALL_END(interrupted)` (the wire format has no "error" reason; the failure itself is
    reported by the retry or the reply's end).

    Raises:
        ModelError: the call failed for good.
    """
    messages = await prompt()
    schemas = tools()
    offered: list[dict[str, Any]] | None = None  # the schemas as dicts, for the middleware path
    candidates = [model] + ([model_config.fallback_model] if model_config.fallback_model else [])
    for index, current in enumerate(candidates):
        attempt = 0
        while True:
            # One generator for the whole step, not one per call: every event passes through it.
            started = False
            try:
                yield _model_call_start(reply_id=reply_id, model_name=current.model)
                translator = _Translator(reply_id)
                try:
                    alone = _sees_stream_alone(call, current)
                    if alone:
                        # The model turns the schemas into dicts itself (`tool_dicts`).
                        result = await current._request(messages, schemas or None, tool_choice)
                    else:
                        if offered is None:
                            offered = [tool.to_dict() for tool in schemas]
                        result = await call(
                            messages=messages,
                            tools=offered,
                            tool_choice=tool_choice,
                            current_model=current,
                        )
                    if isinstance(result, ChatResponse):
                        for event in translator.final(result):
                            started = True
                            yield event
                    else:
                        try:
                            async for chunk in result:
                                events = (
                                    translator.final(chunk)
                                    if chunk.is_last
                                    else translator.delta(chunk)
                                )
                                for event in events:
                                    started = True
                                    yield event
                                if alone and chunk.is_last:
                                    break  # the provider's own final response ends the stream
                        finally:
                            if alone:
                                await _close(result)
                        for event in translator.close():
                            yield event
                except Exception as exc:
                    log.warning("model call failed: %s: %s", type(exc).__name__, exc)
                    for event in translator.close():
                        yield event
                    yield _ended(reply_id, translator, "interrupted")
                    raise
                yield _ended(reply_id, translator, "completed")
                return
            except Exception as exc:
                last_candidate = index == len(candidates) - 1
                if started or not is_retryable(exc):
                    raise
                if attempt >= model_config.max_retries:
                    if last_candidate:
                        raise
                    break
                await asyncio.sleep(model_config.retry_backoff * 2**attempt)
                attempt += 1


def _sees_stream_alone(call: ModelCallHandler, model: ChatModelBase) -> bool:
    """Whether this step is the only reader of the model's stream.

    Then it takes the provider's deltas as they come (`ChatModelBase._request`) rather than
    through `ChatModelBase.__call__`, whose final accumulated response would add nothing to
    what the translator made of the deltas: no middleware and no override of `__call__` can
    tell the difference.
    """
    return call is call_model and type(model).__call__ is ChatModelBase.__call__


async def _close(stream: AsyncIterator[ChatResponse]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def _ended(
    reply_id: str, translator: _Translator, reason: Literal["completed", "interrupted"]
) -> ModelCallEndEvent:
    usage = translator.usage or ChatUsage()
    return _model_call_end(
        reply_id=reply_id,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_input_tokens=usage.cache_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        finished_reason=reason,
    )


def tool_calls_since(msg: Msg, start_index: int) -> list[ToolCallBlock]:
    """Tool calls added to `msg` from content index `start_index` on (this step's calls)."""
    return [b for b in msg.content[start_index:] if isinstance(b, ToolCallBlock)]
