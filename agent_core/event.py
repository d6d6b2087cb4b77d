"""Events: the streamed, incremental view of a reply.

Every event serialises with a SCREAMING_CASE `type`, an `id`, `created_at` and `metadata`, plus
its own fields, exactly as AgentScope's Agent Service emits them on its SSE stream.
"""

from __future__ import annotations

import functools
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from agent_core._ids import new_id, now_iso
from agent_core.deferred_model import DeferredModel
from agent_core.message import (
    DataOrText,
    ErrorInfo,
    ReplyFinishedReason,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from agent_core.permission.types import PermissionRule


class EventType(StrEnum):
    """The `type` tag of every event."""

    REPLY_START = "REPLY_START"
    REPLY_END = "REPLY_END"
    EXCEED_MAX_ITERS = "EXCEED_MAX_ITERS"
    MODEL_CALL_START = "MODEL_CALL_START"
    MODEL_CALL_END = "MODEL_CALL_END"
    TEXT_BLOCK_START = "TEXT_BLOCK_START"
    TEXT_BLOCK_DELTA = "TEXT_BLOCK_DELTA"
    TEXT_BLOCK_END = "TEXT_BLOCK_END"
    THINKING_BLOCK_START = "THINKING_BLOCK_START"
    THINKING_BLOCK_DELTA = "THINKING_BLOCK_DELTA"
    THINKING_BLOCK_END = "THINKING_BLOCK_END"
    DATA_BLOCK_START = "DATA_BLOCK_START"
    DATA_BLOCK_DELTA = "DATA_BLOCK_DELTA"
    DATA_BLOCK_END = "DATA_BLOCK_END"
    TOOL_CALL_START = "TOOL_CALL_START"
    TOOL_CALL_DELTA = "TOOL_CALL_DELTA"
    TOOL_CALL_END = "TOOL_CALL_END"
    TOOL_RESULT_START = "TOOL_RESULT_START"
    TOOL_RESULT_TEXT_DELTA = "TOOL_RESULT_TEXT_DELTA"
    TOOL_RESULT_DATA_DELTA = "TOOL_RESULT_DATA_DELTA"
    TOOL_RESULT_END = "TOOL_RESULT_END"
    REQUIRE_USER_CONFIRM = "REQUIRE_USER_CONFIRM"
    REQUIRE_EXTERNAL_EXECUTION = "REQUIRE_EXTERNAL_EXECUTION"
    USER_CONFIRM_RESULT = "USER_CONFIRM_RESULT"
    EXTERNAL_EXECUTION_RESULT = "EXTERNAL_EXECUTION_RESULT"
    USER_INTERRUPT = "USER_INTERRUPT"
    HINT_BLOCK = "HINT_BLOCK"
    CUSTOM = "CUSTOM"


class EventBase(DeferredModel):
    """Fields every event carries."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id, description="Event identifier.")
    created_at: str = Field(default_factory=now_iso, description="ISO 8601 creation time.")
    metadata: dict[str, Any] = Field(default_factory=dict)


class _ReplyEvent(EventBase):
    reply_id: str = Field(description="Id of the reply (the assistant Msg) being built.")


class _BlockEvent(_ReplyEvent):
    block_id: str = Field(description="Id of the content block the event belongs to.")


class _ToolEvent(_ReplyEvent):
    tool_call_id: str = Field(description="Id of the tool call the event belongs to.")


def _one_source(data: str | None, url: str | None) -> None:
    if (data is None) == (url is None):
        raise ValueError("exactly one of `data` or `url` must be provided")


class ReplyStartEvent(_ReplyEvent):
    """The agent begins (or resumes) a reply."""

    type: Literal[EventType.REPLY_START] = EventType.REPLY_START
    session_id: str = ""
    name: str
    role: Literal["user", "assistant", "system"] = "assistant"


class ReplyEndEvent(_ReplyEvent):
    """The agent finished the reply."""

    type: Literal[EventType.REPLY_END] = EventType.REPLY_END
    session_id: str = ""
    finished_reason: ReplyFinishedReason = ReplyFinishedReason.COMPLETED
    error: ErrorInfo | None = None


class ExceedMaxItersEvent(_ReplyEvent):
    """The agent reached `max_iters` reasoning-acting iterations."""

    type: Literal[EventType.EXCEED_MAX_ITERS] = EventType.EXCEED_MAX_ITERS
    name: str


class ModelCallStartEvent(_ReplyEvent):
    """A model API call begins."""

    type: Literal[EventType.MODEL_CALL_START] = EventType.MODEL_CALL_START
    model_name: str


class ModelCallEndEvent(_ReplyEvent):
    """A model API call completed."""

    type: Literal[EventType.MODEL_CALL_END] = EventType.MODEL_CALL_END
    input_tokens: int = 0
    output_tokens: int = 0
    cache_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    finished_reason: Literal["completed", "interrupted"] = "completed"


class TextBlockStartEvent(_BlockEvent):
    """A text block begins."""

    type: Literal[EventType.TEXT_BLOCK_START] = EventType.TEXT_BLOCK_START


class TextBlockDeltaEvent(_BlockEvent):
    """Text arrives."""

    type: Literal[EventType.TEXT_BLOCK_DELTA] = EventType.TEXT_BLOCK_DELTA
    delta: str


class TextBlockEndEvent(_BlockEvent):
    """A text block is complete; `text`, when set, replaces the accumulated text."""

    type: Literal[EventType.TEXT_BLOCK_END] = EventType.TEXT_BLOCK_END
    text: str | None = None


class ThinkingBlockStartEvent(_BlockEvent):
    """A thinking block begins."""

    type: Literal[EventType.THINKING_BLOCK_START] = EventType.THINKING_BLOCK_START


class ThinkingBlockDeltaEvent(_BlockEvent):
    """Thinking text arrives."""

    type: Literal[EventType.THINKING_BLOCK_DELTA] = EventType.THINKING_BLOCK_DELTA
    delta: str


class ThinkingBlockEndEvent(_BlockEvent):
    """A thinking block is complete, with the provider's proof of it when one came.

    Anthropic signs its thinking (or sends it redacted) and OpenAI's Responses API encrypts it;
    the proof must go back with the block for the model to continue from it, so the fold keeps
    it on the `ThinkingBlock`. Absent proofs are left out of the JSON (AgentScope's shape).
    """

    type: Literal[EventType.THINKING_BLOCK_END] = EventType.THINKING_BLOCK_END
    signature: str | None = Field(
        default=None, description="The provider's signature or encrypted form of the reasoning."
    )
    redacted_thinking_data: str | None = Field(
        default=None, description="Reasoning the provider sent only encrypted (redacted)."
    )

    @model_serializer(mode="wrap")
    def _omit_absent_proofs(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("signature", "redacted_thinking_data"):
            if data.get(key, "") is None:
                del data[key]
        return data


class DataBlockStartEvent(_BlockEvent):
    """A data block (image, audio, ...) begins."""

    type: Literal[EventType.DATA_BLOCK_START] = EventType.DATA_BLOCK_START
    media_type: str
    name: str | None = Field(default=None, description="Name of the data, e.g. a file name.")


class DataBlockDeltaEvent(_BlockEvent):
    """A base64 chunk of the block's data, or the URL that is its whole content, arrives."""

    type: Literal[EventType.DATA_BLOCK_DELTA] = EventType.DATA_BLOCK_DELTA
    media_type: str
    data: str | None = Field(default=None, description="Base64 chunk, exclusive with `url`.")
    url: str | None = Field(default=None, description="URL of the data, exclusive with `data`.")

    @model_validator(mode="after")
    def _check_source(self) -> Self:
        _one_source(self.data, self.url)
        return self


class DataBlockEndEvent(_BlockEvent):
    """A data block is complete."""

    type: Literal[EventType.DATA_BLOCK_END] = EventType.DATA_BLOCK_END


class ToolCallStartEvent(_ToolEvent):
    """The model begins a tool call."""

    type: Literal[EventType.TOOL_CALL_START] = EventType.TOOL_CALL_START
    tool_call_name: str


class ToolCallDeltaEvent(_ToolEvent):
    """A JSON fragment of the tool call's input arrives."""

    type: Literal[EventType.TOOL_CALL_DELTA] = EventType.TOOL_CALL_DELTA
    delta: str


class ToolCallEndEvent(_ToolEvent):
    """The tool call's input is complete."""

    type: Literal[EventType.TOOL_CALL_END] = EventType.TOOL_CALL_END


class ToolResultStartEvent(_ToolEvent):
    """Tool execution begins."""

    type: Literal[EventType.TOOL_RESULT_START] = EventType.TOOL_RESULT_START
    tool_call_name: str


class ToolResultTextDeltaEvent(_ToolEvent):
    """Text output of the tool arrives."""

    type: Literal[EventType.TOOL_RESULT_TEXT_DELTA] = EventType.TOOL_RESULT_TEXT_DELTA
    delta: str


class ToolResultDataDeltaEvent(_ToolEvent):
    """Binary output of the tool arrives (base64 `data` or a `url`).

    Base64 chunks with the same `block_id` make up one data block.
    """

    type: Literal[EventType.TOOL_RESULT_DATA_DELTA] = EventType.TOOL_RESULT_DATA_DELTA
    block_id: str = Field(default_factory=new_id)
    media_type: str
    data: str | None = Field(default=None, description="Base64 data, exclusive with `url`.")
    url: str | None = Field(default=None, description="URL of the data, exclusive with `data`.")

    @model_validator(mode="after")
    def _check_source(self) -> Self:
        _one_source(self.data, self.url)
        return self


class ToolResultEndEvent(_ToolEvent):
    """Tool execution is complete; `metadata` carries the tool's result metadata."""

    type: Literal[EventType.TOOL_RESULT_END] = EventType.TOOL_RESULT_END
    state: ToolResultState


class RequireUserConfirmEvent(_ReplyEvent):
    """The reply parks until the user confirms or denies these tool calls."""

    type: Literal[EventType.REQUIRE_USER_CONFIRM] = EventType.REQUIRE_USER_CONFIRM
    tool_calls: list[ToolCallBlock]


class RequireExternalExecutionEvent(_ReplyEvent):
    """The reply parks until these tool calls are executed outside the agent."""

    type: Literal[EventType.REQUIRE_EXTERNAL_EXECUTION] = EventType.REQUIRE_EXTERNAL_EXECUTION
    tool_calls: list[ToolCallBlock]


class ConfirmResult(DeferredModel):
    """The user's verdict on one parked tool call."""

    model_config = ConfigDict(extra="forbid")

    confirmed: bool
    tool_call: ToolCallBlock
    rules: list[PermissionRule] | None = None


class UserConfirmResultEvent(_ReplyEvent):
    """Input event: the user's confirmations for a parked reply."""

    type: Literal[EventType.USER_CONFIRM_RESULT] = EventType.USER_CONFIRM_RESULT
    confirm_results: list[ConfirmResult]


class ExternalExecutionResultEvent(_ReplyEvent):
    """Input event: results of externally executed tool calls."""

    type: Literal[EventType.EXTERNAL_EXECUTION_RESULT] = EventType.EXTERNAL_EXECUTION_RESULT
    execution_results: list[ToolResultBlock]


class UserInterruptEvent(_ReplyEvent):
    """The user interrupted the running reply."""

    type: Literal[EventType.USER_INTERRUPT] = EventType.USER_INTERRUPT


class HintBlockEvent(_BlockEvent):
    """A hint block was injected into the agent's context."""

    type: Literal[EventType.HINT_BLOCK] = EventType.HINT_BLOCK
    hint: str | list[DataOrText]
    source: str | None = None


class CustomEvent(EventBase):
    """A named service-level signal (team_updated, session_updated, ...)."""

    type: Literal[EventType.CUSTOM] = EventType.CUSTOM
    name: str
    value: dict[str, Any] = Field(default_factory=dict)


AgentEvent = Annotated[
    ReplyStartEvent
    | ReplyEndEvent
    | ExceedMaxItersEvent
    | ModelCallStartEvent
    | ModelCallEndEvent
    | TextBlockStartEvent
    | TextBlockDeltaEvent
    | TextBlockEndEvent
    | ThinkingBlockStartEvent
    | ThinkingBlockDeltaEvent
    | ThinkingBlockEndEvent
    | DataBlockStartEvent
    | DataBlockDeltaEvent
    | DataBlockEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | ToolResultStartEvent
    | ToolResultTextDeltaEvent
    | ToolResultDataDeltaEvent
    | ToolResultEndEvent
    | RequireUserConfirmEvent
    | RequireExternalExecutionEvent
    | UserConfirmResultEvent
    | ExternalExecutionResultEvent
    | UserInterruptEvent
    | HintBlockEvent
    | CustomEvent,
    Field(discriminator="type"),
]


@functools.cache
def _event_adapter() -> TypeAdapter[AgentEvent]:
    # Built on first use: a validator of the whole union is a few MiB that a process which
    # only emits events (an agent's host) never needs.
    return TypeAdapter(AgentEvent)


def parse_event(data: str | bytes | dict[str, Any]) -> AgentEvent:
    """Parse one event from its JSON text or dict form.

    Raises:
        pydantic.ValidationError: the payload is not a known event.
    """
    if isinstance(data, dict):
        return _event_adapter().validate_python(data)
    return _event_adapter().validate_json(data)


def event_to_json(event: AgentEvent) -> str:
    """Serialise an event to its wire JSON (the SSE `data:` payload)."""
    return event.model_dump_json()
