"""What a chat model answers: `ChatResponse`s, their usage, and folding streamed deltas.

A streaming call yields `ChatResponse` deltas (`is_last=False`), each carrying only what that
step produced; blocks keep one `id` across their deltas. The stream ends with one `is_last=True`
response carrying the whole accumulated content, as `ResponseAccumulator` builds it.
"""

from __future__ import annotations

import base64
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from agent_core._ids import new_id, now_iso
from agent_core._trusted import trusted, trusted_copy
from agent_core.deferred_model import DeferredModel
from agent_core.message import (
    Base64Source,
    DataBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)

ResponseBlock = Annotated[
    TextBlock | ThinkingBlock | ToolCallBlock | DataBlock, Field(discriminator="type")
]
"""A block a model can produce."""


class ChatUsage(Usage):
    """Token usage of one model call, and how long it took."""

    type: Literal["chat"] = "chat"
    time: float = Field(default=0.0, ge=0, description="Seconds the call took.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Provider-specific usage details."
    )

    def to_usage(self) -> Usage:
        """Return the token counts alone, as messages and events record them."""
        return Usage.model_validate(self.model_dump(include=set(Usage.model_fields)))


class FinishedReason(StrEnum):
    """Why a model response ended."""

    COMPLETED = "completed"
    INTERRUPTED = "interrupted"


class ChatResponse(DeferredModel):
    """A model answer: the whole of it (`is_last=True`) or one streamed delta."""

    model_config = ConfigDict(extra="forbid")

    content: list[ResponseBlock] = Field(
        default_factory=list, description="Text, thinking, tool call and data blocks."
    )
    is_last: bool = Field(
        default=True,
        description="True for a whole answer (or a stream's final, accumulated chunk); "
        "False for a delta carrying only what one step produced.",
    )
    id: str = Field(default_factory=new_id, description="Response identifier.")
    created_at: str = Field(default_factory=now_iso, description="ISO 8601 creation time.")
    type: Literal["chat_response"] = "chat_response"
    usage: ChatUsage | None = Field(default=None, description="Usage, when the provider told.")
    finished_reason: FinishedReason = FinishedReason.COMPLETED
    metadata: dict[str, Any] = Field(default_factory=dict)


class _Block:
    """One block being accumulated: its first delta plus every fragment since."""

    def __init__(self, first: TextBlock | ThinkingBlock | ToolCallBlock | DataBlock) -> None:
        self.first = first
        self.parts: list[str] = [_fragment(first)]
        self.audio: list[bytes] = []
        if isinstance(first, DataBlock) and _is_audio(first):
            assert isinstance(first.source, Base64Source)  # _is_audio checks it
            self.audio.append(base64.b64decode(first.source.data))

    def add(self, delta: TextBlock | ThinkingBlock | ToolCallBlock | DataBlock) -> None:
        if type(delta) is TextBlock:  # most deltas: text adds its fragment, nothing else
            self.parts.append(delta.text)
            return
        if isinstance(delta, DataBlock):
            if self.audio and _is_audio(delta):
                assert isinstance(delta.source, Base64Source)  # _is_audio checks it
                self.audio.append(base64.b64decode(delta.source.data))
            else:
                # A picture or file is whole in every delta: the latest one wins.
                self.first, self.audio = delta, []
            return
        self.parts.append(_fragment(delta))
        first = self.first
        # A thinking block's signature (or encrypted form) arrives after its text.
        if isinstance(delta, ThinkingBlock) and isinstance(first, ThinkingBlock):
            update = {
                k: v
                for k in ("signature", "redacted_thinking_data")
                if (v := getattr(delta, k)) is not None
            }
            if update:
                self.first = first.model_copy(update=update)
        # Some providers name a tool call only after an empty first fragment.
        if isinstance(delta, ToolCallBlock) and isinstance(first, ToolCallBlock) and not first.name:
            self.first = first.model_copy(update={"name": delta.name})

    def build(self) -> TextBlock | ThinkingBlock | ToolCallBlock | DataBlock:
        block = self.first
        # Text and thinking blocks hold only immutable values: a shallow copy is a whole one.
        if isinstance(block, TextBlock):
            return trusted_copy(block, text="".join(self.parts))
        if isinstance(block, ThinkingBlock):
            return trusted_copy(block, thinking="".join(self.parts))
        if isinstance(block, ToolCallBlock):
            # Its one mutable field copied deep, as `model_copy(deep=True)` would.
            rules = [rule.model_copy(deep=True) for rule in block.suggested_rules]
            return trusted_copy(block, input="".join(self.parts), suggested_rules=rules)
        if self.audio:
            data = base64.b64encode(b"".join(self.audio)).decode("ascii")
            source = Base64Source(data=data, media_type=block.source.media_type)
            return block.model_copy(update={"source": source})
        return block.model_copy(deep=True)


def _fragment(block: TextBlock | ThinkingBlock | ToolCallBlock | DataBlock) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        return block.thinking
    if isinstance(block, ToolCallBlock):
        return block.input
    return ""


def _is_audio(block: DataBlock) -> bool:
    # Only audio streams as byte deltas that concatenate into one playable stream.
    return isinstance(block.source, Base64Source) and block.source.media_type.startswith("audio/")


class ResponseAccumulator:
    """Folds streamed `ChatResponse` deltas into the whole answer.

    Deltas of one block share its `id`: text, thinking and tool-call input are concatenated in
    arrival order (fragments are joined once, in `build`), audio bytes are concatenated, other
    data blocks are replaced by their latest delta. The last usage seen wins.
    """

    def __init__(self) -> None:
        self._blocks: dict[tuple[str, str], _Block] = {}
        self.id: str | None = None
        self.usage: ChatUsage | None = None

    def add(self, delta: ChatResponse) -> None:
        """Fold one delta in."""
        self.id = delta.id
        if delta.usage is not None:
            self.usage = delta.usage
        for block in delta.content:
            key = (block.type, block.id)
            if (known := self._blocks.get(key)) is None:
                self._blocks[key] = _Block(block)
            else:
                known.add(block)

    def build(self, finished_reason: FinishedReason = FinishedReason.COMPLETED) -> ChatResponse:
        """Return the accumulated answer as a final (`is_last=True`) response."""
        known = {} if self.id is None else {"id": self.id}
        return trusted(
            ChatResponse,
            content=[block.build() for block in self._blocks.values()],
            is_last=True,
            usage=self.usage,
            finished_reason=finished_reason,
            **known,
        )
