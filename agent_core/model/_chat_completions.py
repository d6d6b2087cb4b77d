"""The Chat Completions wire format: decoding answers into response blocks and usage.

Shared by every provider speaking OpenAI's protocol (`OpenAIChatModel` and its subclasses).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from agent_core.message import TextBlock, ThinkingBlock, ToolCallBlock
from agent_core.model._http import ResponseDecoder
from agent_core.model._response import ChatUsage, ResponseBlock


@dataclass
class _PendingCall:
    call_id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)
    started: bool = False


class DeltaDecoder(ResponseDecoder):
    """Turns Chat Completions deltas (or a whole message) into response blocks.

    Text and reasoning keep one block id while they continue; a new block starts when the other
    kind (or a tool call) came in between. Tool-call fragments are keyed by `index`. A call is
    announced once its id and name are known and its arguments begin (a name may arrive in
    pieces before that); arguments seen earlier are buffered and sent with the announcement.
    """

    ending = "[DONE] or a finish_reason"

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[int, _PendingCall] = {}
        self.raw_usage: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        """Whether a choice's `finish_reason` arrived."""
        return self.complete

    def usage(self, seconds: float) -> ChatUsage | None:
        """Return the `usage` the answer carried (in its last chunk, when streamed)."""
        if self.raw_usage is None:
            return None
        return parse_usage(self.raw_usage, seconds)

    def feed(self, payload: Any) -> list[ResponseBlock]:
        payload, usage = self._chunk(payload, "id", "usage")
        if usage is not None:
            self.raw_usage = usage
        choices = payload.get("choices") or []
        if not isinstance(choices, list):
            raise ValueError("`choices` is not a list")
        out: list[ResponseBlock] = []
        for choice in choices[:1]:
            delta = choice.get("delta") or choice.get("message") or {}
            out.extend(self._delta(delta))
            if choice.get("finish_reason"):
                self.complete = True
                out.extend(self.flush())
        return out

    def whole(self, payload: Any) -> list[ResponseBlock]:
        """Decode a `chat.completion` body (its choice's `message`)."""
        blocks = self.feed(payload)
        self.complete = True
        return blocks

    def flush(self) -> list[ResponseBlock]:
        """Announce every call still waiting for its arguments to begin."""
        out: list[ResponseBlock] = []
        for call in self._calls.values():
            if not call.started:
                if not call.name:
                    raise ValueError("a tool call ended without a name")
                out.append(self._start(call))
        return out

    def _delta(self, delta: dict[str, Any]) -> list[ResponseBlock]:
        out: list[ResponseBlock] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            out.append(ThinkingBlock(id=self._block_id("thinking"), thinking=str(reasoning)))
        text = "".join(str(delta[k]) for k in ("content", "refusal") if delta.get(k))
        if text:
            out.append(TextBlock(id=self._block_id("text"), text=text))
        for position, fragment in enumerate(delta.get("tool_calls") or []):
            out.extend(self._tool_fragment(position, fragment))
        return out

    def _tool_fragment(self, position: int, fragment: dict[str, Any]) -> list[ResponseBlock]:
        index = int(fragment.get("index", position))
        call_id = fragment.get("id") or ""
        function = fragment.get("function") or {}
        out: list[ResponseBlock] = []
        call = self._calls.get(index)
        if call is None or (call_id and call.call_id and call_id != call.call_id):
            # Some servers reuse an index for a new call; the old one is complete by now.
            if call is not None:
                out.extend(self.flush())
            call = self._calls[index] = _PendingCall(call_id=call_id)
        elif call_id and not call.call_id:
            call.call_id = call_id
        piece = function.get("name") or ""
        # Some servers repeat the whole name in every fragment instead of splitting it.
        if piece and not call.started and piece != call.name:
            call.name += piece
        args = function.get("arguments") or ""
        if call.started:
            if args:
                out.append(ToolCallBlock(id=call.call_id, name=call.name, input=args))
            return out
        if args:
            call.args.append(args)
        if call.args and call.name:
            out.append(self._start(call))
        return out

    def _start(self, call: _PendingCall) -> ToolCallBlock:
        call.call_id = call.call_id or f"call_{uuid.uuid4().hex[:24]}"
        call.started = True
        self._last_kind = "tool_call"
        block = ToolCallBlock(id=call.call_id, name=call.name, input="".join(call.args))
        call.args.clear()
        return block


def parse_usage(raw: dict[str, Any], seconds: float) -> ChatUsage:
    """Return a Chat Completions `usage` object as `ChatUsage` of a call that took `seconds`.

    Cached prompt tokens are OpenAI's `prompt_tokens_details.cached_tokens`, or DeepSeek's
    `prompt_cache_hit_tokens`, or Moonshot's `cached_tokens`.
    """
    details = raw.get("prompt_tokens_details") or {}
    cached = (
        details.get("cached_tokens")
        or raw.get("prompt_cache_hit_tokens")
        or raw.get("cached_tokens")
    )
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens")
    metadata = {"reasoning_tokens": int(reasoning)} if reasoning else None
    return ChatUsage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_input_tokens=int(cached or 0),
        time=seconds,
        metadata=metadata,
    )
